"""Claiming out (option ``claim_out``, Pollack): instead of a card, a player claims that his team
has reached the target; ``on-lead`` only when he leads a trick, ``any-turn`` at any turn to play.

The deal stops; his team's count is the total before the deal, plus ``floor(thirds taken so far /
3)``, plus this deal's melds (the last-trick bonus only counts once the last trick is played).
Reaching the target wins the match for his team, falling short loses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.position import Result, Said, deal_record, evolve, match_over
from engine.rules import ClaimOut

_ANY_TURN, _ON_LEAD = ClaimOut.ANY_TURN, ClaimOut.ON_LEAD  # globals: enum lookups are slow

if TYPE_CHECKING:
    from engine.state import State


def offered(rule: ClaimOut, mid_trick: bool) -> bool:
    """Whether a player about to play may claim instead."""
    return rule is _ANY_TURN or (rule is _ON_LEAD and not mid_trick)


def count(state: State, team: int) -> int:
    """What a claim by ``team`` would count now (the claim's total, not the other team's)."""
    return state.score[team] + state.taken[team] // 3 + state.melds[team]


def claim(state: State) -> State:
    """``to_move`` claims: the match ends, won by his team if its count reaches the target."""
    seat = state.to_move
    team = seat & 1
    said = (*state.said, Said(seat, len(state.tricks) + 1, "claim", -1))
    state = evolve(state, said=said)
    counted = (count(state, 0), count(state, 1))
    winner = team if counted[team] >= state.rules.target else 1 - team
    record = deal_record(state, counted, "claim")
    return match_over(state, record, Result(winner, "claim", counted, None))
