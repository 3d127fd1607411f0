"""The redeal (option ``redeal``): a hand without T, 9 or A may call the deal off.

Eligible seats are asked in play order from the leader; the first ``redeal`` has the same
dealer deal again from the next deck of the seed (``deck.py``), and the deal keeps its number.
"""

from __future__ import annotations

from engine.cards import RANK_MASKS

#: [ruling, engine] After this many redeals of one deal nobody is offered another, so every
#: match is finite (the chance of reaching it is below 1e-100).
MAX_REDEALS = 50
#: Every T, 9 and A: a hand holding none of them may ask for a redeal.
HIGH = RANK_MASKS[0] | RANK_MASKS[1] | RANK_MASKS[2]


def next_asker(hands: tuple[int, ...], leader: int, after: int) -> int | None:
    """The next seat in play order from the leader, after position ``after`` (-1: from the
    start), that holds no T, 9 or A; None when nobody else may ask."""
    for pos in range(after + 1, 4):
        seat = (leader + pos) & 3
        if not hands[seat] & HIGH:
            return seat
    return None


def first_asker(hands: tuple[int, ...], leader: int, redeals_so_far: int) -> int | None:
    """The first seat to be asked at a new deal, or None (nobody eligible, or the cap reached)."""
    if redeals_so_far >= MAX_REDEALS:
        return None
    return next_asker(hands, leader, -1)
