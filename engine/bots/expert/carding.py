"""The pair's carding convention: which of equivalent cards to play says one thing.

Equivalent cards (``prune.distinct_cards``) change nothing in the deal, so the choice among them
is free. Where a player holds two or more cards equivalent to the one it plays, it plays the
**strongest** of them if, after the play, it holds the **master** of that suit (the strongest card
of the suit not yet played, the trick in progress counting as played), and the **weakest**
otherwise. Which of the class is played does not change whether the master is held (the cards
between two equivalent cards are the player's own or out of play), so the message is well
defined. A partner who sees a card can tell, in each sampled deal, whether the card agrees with
the convention: where the deal gave the partner a weaker equivalent card, the play says "I hold
the master"; where it gave a stronger one, "I do not".
"""

from __future__ import annotations

from engine.cards import SUIT_MASKS

from .prune import equivalent, next_in_play


def twin_class(card: int, hand: int, gone: int, tna: bool) -> list[int]:
    """The cards of ``hand`` equivalent to ``card`` (itself included), strongest first.

    ``gone``: cards of the finished tricks; ``tna``: T, 9 and A never merge. (No low lead: under
    it no two cards are equivalent.)
    """
    members = [card]
    for step in (-1, 1):  # stronger cards have smaller ints within a suit
        edge = card
        other = next_in_play(edge, step, gone)
        while other >= 0 and hand >> other & 1 and equivalent(edge, other, gone, tna):
            members.append(other)
            edge = other
            other = next_in_play(edge, step, gone)
    return sorted(members)


def holds_master(card: int, hand: int, unplayed: int) -> bool:
    """After playing ``card`` from ``hand``: is the strongest unplayed card of its suit ours?

    ``unplayed``: cards in no finished trick and not on the table (``card`` itself counted out).
    """
    rest = unplayed & SUIT_MASKS[card >> 3] & ~(1 << card)
    if not rest:
        return False
    master = (rest & -rest).bit_length() - 1  # the strongest: the lowest int of the suit
    return bool((hand & ~(1 << card)) >> master & 1)


def carded(card: int, hand: int, gone: int, table: int, tna: bool) -> int:
    """The card of ``card``'s class the convention plays (``card`` itself if it has no twin).

    ``table``: the cards of the trick in progress.
    """
    members = twin_class(card, hand, gone, tna)
    if len(members) < 2:
        return card
    unplayed = ~(gone | table) & 0xFFFFFFFF
    return members[0] if holds_master(card, hand, unplayed) else members[-1]
