"""The rollout policy: ``greedy``'s one-trick heuristic on engine ints, for every seat.

It sees only what the seat to move would see: its own hand and the cards still out (the union
of the other hands in a sampled deal is exactly the unplayed cards it does not hold), so it
leaks nothing of the sample. Melds everything, announces every poule, claims only when the
count is sure, announces a politaine unless that would break its own run under way.
"""

from __future__ import annotations

from engine.actions import CLAIM, POLITAINE, REDEAL
from engine.cards import CARD_THIRDS, TNA_MASKS
from engine.state import MELD_PHASE, PLAY_PHASE, POULES_PHASE, REDEAL_PHASE, State

_HAND = (1 << 32) - 1
_THIRDS = CARD_THIRDS


def claim_is_sure(state: State, seat: int) -> bool:
    """The team's count (total + card points so far + melds this deal) reaches the target."""
    table = state[4]
    team = seat & 1
    return table.score[team] + table.taken[team] // 3 + table.melds[team] >= table.rules.target


def policy_action(state: State) -> int:
    """The policy's action in ``state`` (which must not be over)."""
    legal = state.legal()
    if len(legal) == 1:
        return legal[0]
    phase = state[0]
    if phase != PLAY_PHASE:
        if phase == MELD_PHASE:
            return legal[0]
        if phase == POULES_PHASE:
            return legal[-1]
        return REDEAL if phase == REDEAL_PHASE else legal[0]
    rules = state[4][0]
    if rules.plain_play:
        return choose_card(state, legal)
    seat = state[1]
    if legal[-1] == CLAIM and claim_is_sure(state, seat):
        return CLAIM
    cards = tuple(a for a in legal if a < 32)
    card = choose_card(state, cards)
    return with_flags(state, card, legal)


def with_flags(state: State, card: int, legal: tuple[int, ...]) -> int:
    """``card`` with a politaine announcement where legal and harmless; never a signal."""
    flagged = card | POLITAINE
    if flagged in legal:
        run = state[4].run
        if run is None or run[0] != state[1]:
            return flagged
    return card


def choose_card(state: State, cards: tuple[int, ...]) -> int:
    """Win cheap, feed a partner's sure trick, lead masters and politaines, else throw cheap."""
    seat = state[1]
    packed = state[2]
    hand = packed >> (seat << 5) & _HAND
    others = (packed | packed >> 32 | packed >> 64 | packed >> 96) & _HAND & ~hand
    trick = state[3]
    runs = state[4][0].politaine != "off"
    if not trick:
        if runs:
            run = _politaine_card(hand, cards)
            if run >= 0:
                return run
        best = -1
        best_key = (-1, 0)
        for c in cards:
            if not _STRONGER[c] & others:
                key = (_THIRDS[c], -c)
                if key > best_key:
                    best, best_key = c, key
        return best if best >= 0 else _cheapest(cards)
    led = trick[0] >> 3
    low = led << 3
    best = trick[0]
    pos = 0
    for i in range(1, len(trick)):
        c = trick[i]
        if low <= c < best:
            best, pos = c, i
    n = len(trick)
    partner_wins = (n - pos) & 1 == 0
    last = n == 3
    if partner_wins and (last or not _STRONGER[best] & others):
        return max(cards, key=_feed_key)
    beating = [c for c in cards if low <= c < best]
    if beating:
        if runs:
            run = _politaine_card(hand, beating)
            if run >= 0:
                return run
        if last or sum(_THIRDS[c] for c in trick) >= 3:
            return max(beating)
        masters = [c for c in beating if not _STRONGER[c] & others]
        if masters:
            return min(masters, key=_THIRDS.__getitem__)
    return _cheapest(cards)


#: For each card, the mask of the stronger cards of its suit.
_STRONGER = tuple(((1 << c) - 1) & ~((1 << (c & ~7)) - 1) for c in range(32))


def _feed_key(c: int) -> tuple[int, int, int]:
    return (_THIRDS[c], -(c & 7), -c)


def _cheapest(cards: tuple[int, ...] | list[int]) -> int:
    """The card that gives away least: lowest value, then lowest rank."""
    return min(cards, key=_cheap_key)


def _cheap_key(c: int) -> tuple[int, int]:
    return (_THIRDS[c], -(c & 7))


def _politaine_card(hand: int, cards: tuple[int, ...] | list[int]) -> int:
    """Start a run from the top (A, then T, then 9) in a suit of T, 9 and A; -1 if none."""
    for suit in range(4):
        if hand & TNA_MASKS[suit] == TNA_MASKS[suit]:
            base = suit << 3
            for card in (base + 2, base, base + 1):
                if card in cards:
                    return card
    return -1
