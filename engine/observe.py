"""What one seat sees: the protocol's ``state`` object, and nothing else hands out hidden cards.

Besides protocol 1's first fields, the state carries what a bot would otherwise rebuild from
``said`` and ``tricks`` (added fields; none of the first changed meaning): this deal's
``bonus`` and ``melds`` per team, whether the ``low_lead`` rule binds the lead of the trick in
progress, the ``poules`` each seat may still score and the suits this seat's own poules may be
(``poule_suits``), and what a claim by this seat's team would count now (``claim_count``).
Each is public or the seat's own; a politaine run under way is not shown, since in before-play
it reveals whether its player holds the rest of the suit.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from typing import Any

from engine.cards import CODES, SUITS, codes
from engine.optional import claim, poules
from engine.position import Said, Trick
from engine.rules import Politaine
from engine.state import State


def observe(state: State, seat: int) -> dict[str, Any]:
    """Protocol 1's ``state`` for ``seat``: its own hand, everything public, no other hand."""
    before_play = state.rules.politaine is Politaine.BEFORE_PLAY
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
        "bonus": list(state.bonus),
        "melds": list(state.melds),
        "low_lead": state.low,
        "poules": list(state.poules),
        "poule_suits": [SUITS[s] for s in poules.covered_suits(state.dealt[seat])]
        if before_play
        else [],
        "claim_count": claim.count(state, seat & 1),
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
