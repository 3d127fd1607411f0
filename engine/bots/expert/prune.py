"""Equivalent cards: playing one or the other changes nothing, so search tries only one.

Two cards of one suit are equivalent when they are worth the same thirds and every card of that
suit ranked between them is out of the other hands and not on the table (played in an earlier
trick, or in the searching hand). Rank order also matters under the low-lead rule (which rank is
lowest), for melds and for politaines (T, 9, A: the T of a run under way is not the K below it);
there only K, Q, J, 8 and 7 merge, and with the low lead nothing.
"""

from __future__ import annotations

from engine.cards import CARD_THIRDS
from engine.rules import RuleSet


def tna_apart(rules: RuleSet) -> bool:
    """Whether T, 9 and A never merge under ``rules``: melds or politaines count."""
    return rules.melds or rules.politaine != "off"


def distinct_cards(cards: list[int], hand: int, gone: int, rules_low: bool, tna: bool) -> list[int]:
    """``cards`` (ints, no flags) minus those equivalent to a weaker one kept.

    ``gone`` is the mask of cards played in finished tricks; ``tna``: T, 9 and A never merge
    (where melds or politaines count). Keeps the weakest card of each run.
    """
    if rules_low:
        return cards
    kept: list[int] = []
    free = hand | gone  # cards that cannot separate two of ours
    for card in sorted(cards, reverse=True):  # weakest first within a suit
        if kept:
            prev = kept[-1]
            if (
                prev >> 3 == card >> 3
                and CARD_THIRDS[prev] == CARD_THIRDS[card]
                and not (tna and (card & 7) < 3)
                and _between(card, prev) & ~free == 0
            ):
                continue
        kept.append(card)
    return kept


def _between(strong: int, weak: int) -> int:
    """Mask of the cards strictly between two cards of one suit."""
    return ((1 << weak) - 1) & ~((1 << (strong + 1)) - 1)


def next_in_play(card: int, step: int, gone: int) -> int:
    """The next card of ``card``'s suit in direction ``step`` (+1 weaker, -1 stronger) that is
    not in ``gone``; -1 past the suit's end."""
    other = card + step
    while 0 <= other < 32 and other >> 3 == card >> 3:
        if not gone >> other & 1:
            return other
        other += step
    return -1


def equivalent(card: int, other: int, gone: int, tna: bool) -> bool:
    """``card`` and ``other`` (one hand's cards of one suit) are equivalent (no low lead)."""
    pair = (1 << card) | (1 << other)
    return len(distinct_cards([card, other], pair, gone, False, tna)) == 1
