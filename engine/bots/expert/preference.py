"""The pair's suit-preference convention (an option, off by default): a card played under an
opponent's winning card says whether the player holds the master of the other suit of its
colour.

Where a player follows the led suit while an opponent's card wins the trick, and its own card
does not beat that card (a **losing follow**), its choice among the losing cards its search
values alike (within ``margin`` in win chance) is spent on one message about the **named
suit**, the other suit of the same colour (clubs and spades, diamonds and hearts): it plays the
**strongest** of them if it holds the named suit's master (the strongest card of that suit not
yet played, the trick in progress counting as played), and the **weakest** otherwise. The named
suit is never the suit played, so the message does not depend on which card is played. With
the scope option (``DISCARDS``, ``FEEDS``) a discard speaks the same way among the cards of its
suit, and a losing follow under the player's own team's winning card among its losing follows.

A partner reads it in each sampled deal: a losing follow above a weaker losing card of the
player's says "I hold the master" (a deal that gives it no such master is unlikely); a losing
follow under a stronger losing card says "I do not" (less firmly: the stronger card may have
been valued worse). The convention is documented, so an opponent may read it too.
"""

from __future__ import annotations

from collections.abc import Sequence

from .policy import _trick_so_far
from .signals import master

#: Every card of the deck (32 bits).
_DECK = 0xFFFFFFFF


def named_suit(suit: int) -> int:
    """The suit a losing follow in ``suit`` speaks of: the other one of the same colour."""
    return 3 - suit


def holds_named_master(card: int, hand: int, gone: int, table: int) -> bool:
    """Whether ``hand`` holds the master of ``card``'s named suit (none left out: no).

    ``gone``: cards of the finished tricks; ``table``: the trick in progress."""
    top = master(named_suit(card >> 3), ~(gone | table) & _DECK)
    return top >= 0 and bool(hand >> top & 1)


#: Scope bits (an option, 0 by default: losing follows only): discards, where the player is
#: void in the led suit (the cards of the suit it discards from), and feeds, losing follows
#: under its own team's winning card.
DISCARDS, FEEDS = 1, 2


def message_cards(trick: Sequence[int], hand: int, card: int, scope: int = 0) -> list[int]:
    """The cards of ``hand`` (of the seat to play next to ``trick``, before its play) among
    which playing ``card`` carries the message: its losing follows, and within ``scope`` its
    discards' suit or its feeds; empty where ``card`` says nothing."""
    if not trick:
        return []
    _, best, partner_wins = _trick_so_far(trick)
    suit = card >> 3
    if suit != best >> 3:
        if not scope & DISCARDS:
            return []
        return [c for c in range(suit * 8, suit * 8 + 8) if hand >> c & 1]
    if partner_wins and not scope & FEEDS:
        return []
    losing = [c for c in range(suit * 8, suit * 8 + 8) if hand >> c & 1 and c > best]
    return losing if card in losing else []


def preferred(near: list[int], card: int, hand: int, gone: int, table: int) -> int:
    """Of the losing follows ``near`` (valued alike, ``card`` the search's choice among them),
    the one the convention plays."""
    if len(near) < 2:
        return card
    return min(near) if holds_named_master(card, hand, gone, table) else max(near)


def reading_factor(
    card: int, losing: list[int], hand: int, gone: int, table: int, high: float, low: float
) -> float:
    """The weight of a sampled deal given the partner's losing follow ``card`` (one of
    ``losing``, its losing follows in this deal; ``hand`` before the play): ``high`` where it
    played above a weaker one without the named master, ``low`` where it played under a
    stronger one holding it, else 1."""
    if card not in losing or len(losing) < 2:
        return 1.0
    holds = holds_named_master(card, hand, gone, table)
    if max(losing) > card:
        return 1.0 if holds else high
    return low if holds else 1.0
