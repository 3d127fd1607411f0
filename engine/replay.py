"""Replay format 1: built from a finished match's state, and re-checked by playing it again.

Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.cards import CODES, codes
from engine.observe import said_dict, trick_dict
from engine.state import DealRecord, Result, State

REPLAY_FORMAT = "quatresept-replay/1"


def hands_list(hands: Sequence[int]) -> list[list[str]]:
    return [codes(h) for h in hands]


def deal_dict(record: DealRecord) -> dict[str, Any]:
    """One entry of a replay's ``deals`` (and the body of the ``deal_end`` message).

    A deal cut short mid-trick (a forfeit, a claim at any turn) also keeps ``trick``, the trick
    in progress, so that the replay holds every card played.
    """
    out = {
        "number": record.number,
        "dealer": record.dealer,
        "redeals": [{"by": by, "hands": hands_list(hands)} for by, hands in record.redeals],
        "hands": hands_list(record.hands),
        "said": [said_dict(s) for s in record.said],
        "tricks": [trick_dict(t) for t in record.tricks],
        "thirds": list(record.thirds),
        "points": list(record.points),
        "bonus": list(record.bonus),
        "melds": list(record.melds),
        "score": list(record.score),
        "end": record.end,
    }
    leader, cards = record.trick
    if cards:
        out["trick"] = {"leader": leader, "cards": [CODES[c] for c in cards]}
    return out


def result_dict(result: Result) -> dict[str, Any]:
    fault = result.fault
    return {
        "score": list(result.score),
        "winner": result.winner,
        "reason": result.reason,
        "fault": None
        if fault is None
        else {
            "seat": fault.seat,
            "kind": fault.kind,
            "detail": fault.detail,
        },
    }


def build_replay(
    state: State,
    *,
    match_id: str,
    players: Sequence[dict[str, Any]],
    moves_ms: Sequence[Sequence[int]],
    clock: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Replay format 1 of a finished match; ``clock`` is the one announced in ``hello``."""
    if state.result is None:
        raise ValueError("the match is not over")
    return {
        "format": REPLAY_FORMAT,
        "match": match_id,
        "seed": state.seed,
        "rules": state.rules.to_dict(),
        "players": [dict(p) for p in players],
        "deals": [deal_dict(d) for d in state.history],
        "result": result_dict(state.result),
        "moves_ms": [list(m) for m in moves_ms],
        **({"clock": dict(clock)} if clock is not None else {}),
    }
