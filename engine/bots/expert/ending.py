"""The end of a deal read off its last card, without the engine dealing the next one.

Search finishes thousands of deals a decision; when the last card of the deal falls,
``State.apply`` scores the deal and then deals the next one (from the seed: instant wins,
redeal askers, the first turn), which search only reads the score of. ``deal_end`` computes what
search reads, the match's result or the new totals, by the engine's own rules: those of
``state._complete_trick`` for the last trick (its winner and thirds with the last-trick bonus,
the politaine run by ``politaine.advance``), the engine's own ``state.deal_scored`` for capot,
18-4, the target and the deal limit, and an instant win in the next deal's cards.
``last_trick_end`` does the same from anywhere in a last trick with nothing left to decide (one
card a hand, no claim), so the forced cards are not played one by one. Invariant: the outcome
equals that of the engine playing the cards (a test compares them).
"""

from __future__ import annotations

from engine.cards import CARD_THIRDS, LAST_TRICK_THIRDS
from engine.deck import seeded_hands
from engine.optional import instant
from engine.optional import politaine as politaine_rule
from engine.position import HAND, TRICKS_PER_DEAL, Table
from engine.rules import ClaimOut, Politaine
from engine.state import State, deal_scored

from .policy import claim_is_sure

_FIRST_CARD, _BEFORE_PLAY = Politaine.FIRST_CARD, Politaine.BEFORE_PLAY
_CLAIM_OFF = ClaimOut.OFF
_LAST = TRICKS_PER_DEAL - 1
#: ``(over, winner, score)``: whether the match is over and who won it (None: a draw), else
#: the totals the next deal starts from.
Outcome = tuple[bool, "int | None", tuple[int, int]]


def ends_deal(state: State, action: int) -> bool:
    """``action`` (a bare card) is the last card of the deal."""
    return action < 32 and len(state[3]) == 3 and len(state[4][8]) == _LAST


def deal_end(state: State, card: int) -> Outcome:
    """The outcome once ``card`` ends the deal (``ends_deal``)."""
    packed = state[2] ^ (1 << (card + (state[1] << 5)))
    return _scored(state[4], (*state[3], card), packed)


def last_trick_forced(state: State) -> bool:
    """In the play phase of the deal's last trick (under way or about to start), nothing is left
    to decide: each seat still to play holds one card (so no meld and no politaine to announce),
    and no team may claim (its count cannot change before the trick ends)."""
    if len(state[4][8]) != _LAST:
        return False
    rules = state[4][0]
    return rules.claim_out is _CLAIM_OFF or not (claim_is_sure(state, 0) or claim_is_sure(state, 1))


def last_trick_end(state: State) -> Outcome:
    """The outcome of the deal once its last trick is played out (``last_trick_forced``)."""
    packed = state[2]
    seat = state[1]
    trick = state[3]
    held = len(trick)  # cards down; the seats from ``seat`` on hold one card each
    a = (packed >> (seat << 5) & HAND).bit_length() - 1
    if held == 3:
        return _scored(state[4], (*trick, a), 0)
    b = (packed >> (((seat + 1) & 3) << 5) & HAND).bit_length() - 1
    if held == 2:
        return _scored(state[4], (*trick, a, b), 0)
    c = (packed >> (((seat + 2) & 3) << 5) & HAND).bit_length() - 1
    if held == 1:
        return _scored(state[4], (*trick, a, b, c), 0)
    d = (packed >> (((seat + 3) & 3) << 5) & HAND).bit_length() - 1
    return _scored(state[4], (a, b, c, d), 0)


def _scored(table: Table, trick: tuple[int, ...], packed: int) -> Outcome:
    """``(over, winner, score)`` once the last trick ``trick`` (in play order) is complete and
    the hands are ``packed``: whether the match is over and who won it (None: a draw), else the
    totals the next deal starts from."""
    (rules, seed, deal, dealer, _, score, _, leader, _, taken, won, _, _,
     run, announced, poules, bonus, meld_points, _, _, _, _) = table  # fmt: skip
    a, b, c, d = trick
    low = a & ~7
    best, pos = a, 0
    if low <= b < best:
        best, pos = b, 1
    if low <= c < best:
        best, pos = c, 2
    if low <= d < best:
        best, pos = d, 3
    winner = (leader + pos) & 3
    team = winner & 1
    thirds = CARD_THIRDS[a] + CARD_THIRDS[b] + CARD_THIRDS[c] + CARD_THIRDS[d]
    thirds += LAST_TRICK_THIRDS
    if team:
        taken = (taken[0], taken[1] + thirds)
        won = (won[0], won[1] + 1)
    else:
        taken = (taken[0] + thirds, taken[1])
        won = (won[0] + 1, won[1])
    mode = rules.politaine
    if run is not None or (
        announced if mode is _FIRST_CARD else mode is _BEFORE_PLAY and (best & 7) < 3
    ):
        hand = packed >> (winner << 5) & HAND
        run, bonus, poules = politaine_rule.advance(
            mode, run, announced, winner, best, hand, bonus, poules
        )
    score, winner, reason = deal_scored(rules, score, taken, bonus, meld_points, won, deal)
    if reason is not None:
        return True, winner, score
    if rules.four_sevens or rules.four_eights:
        hands = seeded_hands(seed, deal + 1, 0, (dealer + 1) & 3)
        won_at_once = instant.instant_win(rules, hands)
        if won_at_once is not None:
            return True, won_at_once[0], score
    return False, None, score
