"""Instant wins at the deal (options ``four_sevens``, ``four_eights``).

A hand holding all four 7s (or, where switched on, all four 8s) wins the match for its team
before a card is played; the referee declares it. [ruling] Four 7s beat four 8s held in another
hand.
"""

from __future__ import annotations

from engine.cards import RANK_7, RANK_8, RANK_MASKS
from engine.rules import RuleSet

SEVENS = RANK_MASKS[RANK_7]
EIGHTS = RANK_MASKS[RANK_8]


def instant_win(rules: RuleSet, hands: tuple[int, ...]) -> tuple[int, str] | None:
    """``(team, reason)`` of the instant win these hands hold under ``rules``, or None."""
    h0, h1, h2, h3 = hands
    if rules.four_sevens:
        held = (h0 & SEVENS, h1 & SEVENS, h2 & SEVENS, h3 & SEVENS)
        if SEVENS in held:
            return held.index(SEVENS) & 1, "four-sevens"
    if rules.four_eights:
        held = (h0 & EIGHTS, h1 & EIGHTS, h2 & EIGHTS, h3 & EIGHTS)
        if EIGHTS in held:
            return held.index(EIGHTS) & 1, "four-eights"
    return None
