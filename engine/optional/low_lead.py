"""The low lead (option ``low_lead``, la poule): after a trick worth under 1 point (fewer than 3
thirds), its winner must lead a card of the lowest rank he holds, in any suit. ``first-trick``
applies it after trick 1 only. It overrides a politaine in progress.
"""

from __future__ import annotations

from engine.cards import RANK_MASKS
from engine.rules import LowLead

# Globals: enum class attributes are slow to look up, and this is asked once a trick.
_OFF, _EVERY_TRICK = LowLead.OFF, LowLead.EVERY_TRICK


def binds(rule: LowLead, trick_thirds: int, finished: int) -> bool:
    """Whether the next lead is bound, after the ``finished``-th trick (1-based), worth
    ``trick_thirds`` without the last-trick bonus."""
    if trick_thirds >= 3 or rule is _OFF:
        return False
    return rule is _EVERY_TRICK or finished == 1


def lowest_rank(hand: int) -> int:
    """The cards of the lowest rank held, in any suit: what a bound leader may lead."""
    for rank in range(7, -1, -1):
        cards = hand & RANK_MASKS[rank]
        if cards:
            return cards
    return 0
