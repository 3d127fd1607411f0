"""What one seat sees: the protocol's ``state`` object, and nothing else hands out hidden cards.

Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from typing import Any

from engine.cards import CODES, codes
from engine.state import Said, State, Trick


def observe(state: State, seat: int) -> dict[str, Any]:
    """Protocol 1's ``state`` for ``seat``: its own hand, everything public, no other hand."""
    return {
        "deal": state.deal,
        "dealer": state.dealer,
        "seat": seat,
        "score": list(state.score),
        "hand": codes(state.hands[seat]),
        "tricks": [trick_dict(t) for t in state.tricks],
        "trick": {"leader": state.leader, "cards": [CODES[c] for c in state.trick]},
        "taken": list(state.taken),
        "said": [said_dict(s) for s in state.said],
        "redeals": len(state.redeals),
    }


def trick_dict(trick: Trick) -> dict[str, Any]:
    return {
        "leader": trick.leader,
        "cards": [CODES[c] for c in trick.cards],
        "winner": trick.winner,
        "thirds": trick.thirds,
    }


def said_dict(said: Said) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": said.seat, "trick": said.trick, "say": said.say}
    if said.card >= 0:
        out["card"] = CODES[said.card]
    return out
