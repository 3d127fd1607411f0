"""The expert pair's signal convention where the rules have ``signals`` on.

A signal names a *master*: the strongest card of a suit that is still out (not played, the
trick in progress counting as played).

- ``tap`` with card c: after this play, I hold the master of c's suit;
- ``slide`` with card c: after this play, I hold the master of the other suit of c's colour
  (C and S, D and H).

A player signals at most once per suit and deal, the first time the convention lets it, ``tap``
before ``slide``; signals are always true. Reading one is a hard fact: the master at that moment
is a definite card (it depends only on the cards played before), so the partner's signal puts
that card in the signaller's hand until it is played (``view.py``). Opponents see the signals
too; the expert reads only its partner's (nothing obliges an opponent to be honest).
"""

from __future__ import annotations

from engine.actions import SLIDE, TAP
from engine.cards import SUIT_MASKS


def master(suit: int, out: int) -> int:
    """The strongest card of ``suit`` in ``out`` (lower ints rank higher); -1 if none."""
    cards = out & SUIT_MASKS[suit]
    return (cards & -cards).bit_length() - 1 if cards else -1


def named_suit(flag: int, card: int) -> int:
    """The suit a signal with ``card`` speaks of."""
    suit = card >> 3
    return suit if flag == TAP else 3 - suit


def choose_signal(card: int, hand: int, out: int, told: int) -> int:
    """The signal flag (``TAP``, ``SLIDE`` or 0) to add to playing ``card``.

    ``hand``: the player's cards before the play; ``out``: every card not played yet, the
    player's own included; ``told``: a mask of the suits (bit per suit) it signalled this deal.
    """
    left = hand & ~(1 << card)
    out &= ~(1 << card)
    for flag in (TAP, SLIDE):
        suit = named_suit(flag, card)
        if told >> suit & 1:
            continue
        top = master(suit, out)
        if top >= 0 and left >> top & 1:
            return flag
    return 0


def signalled_card(flag: int, card: int, out_before: int) -> int:
    """The card a true signal says the signaller holds after playing ``card``; -1 if none.

    ``out_before``: the cards not played before this play (``card`` included).
    """
    return master(named_suit(flag, card), out_before & ~(1 << card))


__all__ = ["SLIDE", "TAP", "choose_signal", "master", "named_suit", "signalled_card"]
