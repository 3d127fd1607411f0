"""The politaine (option ``politaine``): 11 points for three consecutive tricks of the deal won by
one player with the T, 9 and A of one suit, in any order.

``first-card``: the run starts only with a card announced "politaine" (legal while its player
holds all three), and a completed run always pays. [ruling] A new announcement while a run is
under way ends that run; it never takes effect, since a trick won by another seat or with another
card already ends the run, and a failed announcement leaves it going. ``before-play``: any run
counts, paying while its player has poules left of those he announced (``poules.py``). A player
may score two runs in one deal.
"""

from __future__ import annotations

from engine.actions import POLITAINE
from engine.cards import TNA_ALL, TNA_MASKS
from engine.position import Said, Trick, add
from engine.rules import Politaine

POLITAINE_POINTS = 11
#: The lowest bit of each suit's byte.
SUIT_LOW_BITS = 0x01010101

_FIRST_CARD = Politaine.FIRST_CARD  # a global: enum class attributes are slow to look up
Run = tuple[int, int, int]  # (seat, suit, tricks won so far)


def announceable(hand: int) -> int:
    """The cards a politaine may be announced with: T, 9 and A of each suit held whole."""
    tna = hand & TNA_ALL
    if not tna & (tna >> 1) & (tna >> 2) & SUIT_LOW_BITS:
        return 0
    return sum(m for m in TNA_MASKS if tna & m == m)


def with_announcements(cards: tuple[int, ...], hand: int, playable: int) -> tuple[int, ...]:
    """The plays of ``cards``, each announceable one also with the ``POLITAINE`` flag after it."""
    announce = announceable(hand)
    if not announce & playable:
        return cards
    return tuple(a for c in cards for a in ((c, c | POLITAINE) if announce >> c & 1 else (c,)))


def announce(
    said: tuple[Said, ...],
    announced: tuple[tuple[int, int], ...],
    seat: int,
    trick: int,
    card: int,
) -> tuple[tuple[Said, ...], tuple[tuple[int, int], ...]]:
    """``said`` and this trick's ``announced`` once ``seat`` announced with ``card``."""
    return (*said, Said(seat, trick, "politaine", card)), (*announced, (seat, card))


def advance(
    mode: Politaine,
    run: Run | None,
    announced: tuple[tuple[int, int], ...],
    winner: int,
    best: int,
    hand: int,
    bonus: tuple[int, int],
    poules: tuple[int, int, int, int],
) -> tuple[Run | None, tuple[int, int], tuple[int, int, int, int]]:
    """``(run, bonus, poules)`` once ``winner`` took a trick with ``best``, holding ``hand`` after.

    The run advances, completes (paying ``POLITAINE_POINTS`` as the mode says), breaks, or starts.
    """
    suit = best >> 3
    tna = (best & 7) < 3
    if run is not None and run[0] == winner and run[1] == suit and tna:
        count = run[2] + 1
        if count < 3:
            return (winner, suit, count), bonus, poules
        if mode is _FIRST_CARD:
            paid = True
        else:
            paid = poules[winner] > 0
            if paid:
                poules = (*poules[:winner], poules[winner] - 1, *poules[winner + 1 :])
        if paid:
            bonus = add(bonus, winner & 1, POLITAINE_POINTS)
        return None, bonus, poules
    run = None
    if tna:
        if mode is _FIRST_CARD:
            if (winner, best) in announced:
                run = (winner, suit, 1)
        elif (hand | (1 << best)) & TNA_MASKS[suit] == TNA_MASKS[suit]:
            run = (winner, suit, 1)
    return run, bonus, poules


def trailing_run(
    tricks: tuple[Trick, ...], trick: tuple[int, ...], hands: tuple[int, int, int, int]
) -> Run | None:
    """The before-play run after this deal's finished ``tricks`` if the seats hold ``hands`` now
    (``trick`` in progress): what ``advance`` gives trick by trick on the hands these imply.

    Any trick won otherwise breaks a run, so only the last tricks count: a run ``(seat, suit,
    k)`` is under way iff the last ``k`` tricks (1 or 2, not 3: the third completes it) were won
    by ``seat`` with a T, 9 or A of ``suit``, and after the first of them ``seat`` held the rest
    of that T-9-A: among the cards it won them with, the card it led to the trick in progress
    (the last winner leads) and its hand now. A seat that could not start the run with the
    first of those tricks cannot start it with the next either."""
    if not tricks:
        return None
    last = tricks[-1]
    seat = last.winner
    best = last.cards[(seat - last.leader) & 3]
    if (best & 7) > 2:
        return None
    suit = best >> 3
    held = hands[seat] | 1 << best
    if trick:
        held |= 1 << trick[0]
    count = 1
    for earlier in reversed(tricks[-3:-1]):  # the two tricks before the last, latest first
        card = earlier.cards[(seat - earlier.leader) & 3]
        if earlier.winner != seat or card >> 3 != suit or (card & 7) > 2:
            break
        count += 1
        held |= 1 << card
    if count == 3:
        return None  # the run was completed by the last trick
    full = TNA_MASKS[suit]
    return (seat, suit, count) if held & full == full else None
