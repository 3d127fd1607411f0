"""A model of the expert's own card play, learned from its games: how likely each legal card is.

``card_chances`` gives, for the seat to move in a state whose hands are known (a sampled deal),
a softmax over its legal cards of a linear score of a few features of each card (points,
masters, length, winning the trick, feeding the partner, the policy's own choice ...), one set
of weights for leads and one for the cards that follow. The weights are fitted to the full
expert's plays in self-play (``benchmarks/card_model_fit.py``), one set where melds count
(``pollack``) and one where they do not (``quatre-sept``), so the model reads a partner that
searches more closely than "the policy's card or not" does; reading the others' cards by it is
the option ``model`` of the expert, on by default where melds count (``docs/expert-log.md``,
rounds 25 and 28), by the set of the rules the expert was greeted with. Only the seat's own
hand and what is public enter the features, so a sampled deal's other hands leak nothing.
"""

from __future__ import annotations

import math

from engine.actions import PLAY_LIMIT
from engine.cards import CARD_THIRDS, RANK_MASKS, SUIT_MASKS, TNA_MASKS
from engine.state import State

from .policy import _STRONGER, _reading, _trick_so_far, play_action

#: For each card, the mask of the weaker cards of its suit.
_WEAKER = tuple(SUIT_MASKS[c >> 3] & ~((1 << (c + 1)) - 1) for c in range(32))

#: The features of a card, in order (each in about [0, 1]).
FEATURES = (
    "policy",  # the shrewd policy's card (with the public voids)
    "thirds",  # its points, in thirds / 3
    "master",  # no stronger card of its suit out in the other hands
    "stronger_out",  # how many stronger cards of its suit are out / 4
    "length",  # cards of its suit in hand / 8
    "lowest",  # the weakest card of its suit in hand
    "highest",  # the strongest card of its suit in hand
    "rank",  # rank / 7: 0 for T, 1 for 7
    "meld",  # part of a T-9-A of its suit or of three T, 9 or A held
    "suit_out",  # cards of its suit out in the other hands / 8
    "opponents_void",  # both opponents publicly lack its suit
    "partner_void",  # the partner publicly lacks its suit
    "follows",  # of the suit led (following only)
    "wins",  # beats the trick's best card so far (following only)
    "sure",  # wins, and no player still to play can hold a stronger card of the suit
    "feeds",  # the partner wins the trick so far: the card's points
    "wins_points",  # wins: the points on the table, in thirds / 6
)
SIZE = len(FEATURES)

#: A set of fitted weights (``benchmarks/card_model_fit.py``): for leads, then for the cards
#: that follow, one weight a feature.
CardWeights = tuple[tuple[float, ...], tuple[float, ...]]

#: The weights where melds count (``MELD_WEIGHTS``): fitted to 14,425 cards of the full expert's
#: ``pollack`` self-play (seeds 1-240): 1.245 nats a lead and 0.635 a card that follows, held
#: out, against 1.422 and 0.758 for "the policy's card or not" and 1.556 and 1.129 for a uniform
#: choice.
LEAD_WEIGHTS: tuple[float, ...] = (
    1.071,
    0.222,
    0.423,
    0.590,
    2.063,
    0.795,
    0.169,
    -0.828,
    -0.093,
    -2.643,
    0.946,
    -0.710,
    0.000,
    0.000,
    0.000,
    0.000,
    0.000,
)
FOLLOW_WEIGHTS: tuple[float, ...] = (
    1.795,
    0.036,
    -1.039,
    0.979,
    -2.960,
    0.603,
    0.359,
    0.126,
    -0.747,
    -1.266,
    0.639,
    0.347,
    0.000,
    1.601,
    -0.634,
    1.043,
    0.962,
)


#: The weights where melds do not count (``PLAIN_WEIGHTS``): fitted to 23,534 cards of the full
#: expert's ``quatre-sept`` self-play (seeds 1-240): 1.146 nats a lead and 0.588 a card that
#: follows, held out, against 1.356 and 0.727 for "the policy's card or not" and 1.515 and 1.135
#: for a uniform choice.
PLAIN_LEAD_WEIGHTS: tuple[float, ...] = (
    1.139,
    0.215,
    0.539,
    1.156,
    2.317,
    1.008,
    0.261,
    -1.233,
    -0.080,
    -3.450,
    1.081,
    -0.551,
    0.000,
    0.000,
    0.000,
    0.000,
    0.000,
)
PLAIN_FOLLOW_WEIGHTS: tuple[float, ...] = (
    1.938,
    0.008,
    -1.259,
    1.042,
    -4.063,
    0.633,
    0.260,
    0.237,
    -0.142,
    -1.716,
    0.537,
    0.187,
    0.000,
    1.928,
    -0.551,
    1.311,
    0.805,
)

#: The weights where melds count, and where they do not.
MELD_WEIGHTS: CardWeights = (LEAD_WEIGHTS, FOLLOW_WEIGHTS)
PLAIN_WEIGHTS: CardWeights = (PLAIN_LEAD_WEIGHTS, PLAIN_FOLLOW_WEIGHTS)


def weights_for(melds: bool) -> CardWeights:
    """The fitted weights for a game where melds count (``True``) or do not."""
    return MELD_WEIGHTS if melds else PLAIN_WEIGHTS


def legal_cards(state: State) -> list[int]:
    """The distinct cards the seat to move may play (flags such as a politaine dropped)."""
    return sorted({a & 31 for a in state.legal() if a < PLAY_LIMIT})


def card_features(state: State, voids: list[int], cards: list[int]) -> list[list[float]]:
    """The features (``FEATURES``) of each of ``cards`` for the seat to move in ``state``."""
    policy = play_action(state, voids, True) & 31
    seat = state[1]
    hand, others = _reading(state)
    left, partner, right = (seat + 1) & 3, (seat + 2) & 3, (seat + 3) & 3
    both_void = voids[left] & voids[right]
    trick = state[3]
    if trick:
        _, best, partner_wins = _trick_so_far(trick)
        led = trick[0] >> 3
        points = sum(CARD_THIRDS[c] for c in trick) / 6
        threat = 0 if len(trick) == 3 else others & ~voids[left]
    rows = []
    for c in cards:
        suit = SUIT_MASKS[c >> 3]
        stronger = _STRONGER[c]
        rank = c & 7
        meld = 0.0
        if rank <= 2 and (
            hand & TNA_MASKS[c >> 3] == TNA_MASKS[c >> 3]
            or (hand & RANK_MASKS[rank]).bit_count() >= 3
        ):
            meld = 1.0
        row = [
            1.0 if c == policy else 0.0,
            CARD_THIRDS[c] / 3,
            0.0 if stronger & others else 1.0,
            min((stronger & others).bit_count(), 4) / 4,
            (hand & suit).bit_count() / 8,
            0.0 if _WEAKER[c] & hand else 1.0,
            0.0 if stronger & hand else 1.0,
            rank / 7,
            meld,
            (others & suit).bit_count() / 8,
            1.0 if both_void & suit else 0.0,
            1.0 if voids[partner] & suit else 0.0,
        ]
        if trick:
            wins = c >> 3 == led and c < best
            row += [
                1.0 if c >> 3 == led else 0.0,
                1.0 if wins else 0.0,
                1.0 if wins and not stronger & threat else 0.0,
                CARD_THIRDS[c] / 3 if partner_wins else 0.0,
                points if wins else 0.0,
            ]
        else:
            row += [0.0, 0.0, 0.0, 0.0, 0.0]
        rows.append(row)
    return rows


def card_chances(
    state: State, voids: list[int], cards: list[int], weights: CardWeights = MELD_WEIGHTS
) -> list[float]:
    """The model's chance of each of ``cards`` (the legal cards of the seat to move)."""
    scores = card_scores(state, voids, cards, weights[1] if state[3] else weights[0])
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def card_scores(
    state: State, voids: list[int], cards: list[int], w: tuple[float, ...]
) -> list[float]:
    """Each card's linear score: the weighted sum of its ``card_features`` row, bit for bit.

    The hot path of reading a sampled deal. It adds the same products in the same order as
    summing ``row[i] * w[i]`` from 0.0 and skips only the features that are exactly 0 (adding
    0.0 to a sum that starts at +0.0 changes nothing), so it never builds the rows.
    """
    w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15, w16 = w
    policy = play_action(state, voids, True) & 31
    seat = state[1]
    hand, others = _reading(state)
    both_void = voids[(seat + 1) & 3] & voids[(seat + 3) & 3]
    partner_void = voids[(seat + 2) & 3]
    trick = state[3]
    if trick:
        _, best, partner_wins = _trick_so_far(trick)
        led = trick[0] >> 3
        points = sum(CARD_THIRDS[c] for c in trick) / 6
        threat = 0 if len(trick) == 3 else others & ~voids[(seat + 1) & 3]
    scores = []
    for c in cards:
        suit = SUIT_MASKS[c >> 3]
        stronger = _STRONGER[c]
        rank = c & 7
        thirds = CARD_THIRDS[c]
        out = stronger & others
        s = 0.0
        if c == policy:
            s += w0
        if thirds:
            s += thirds / 3 * w1
        if not out:
            s += w2
        else:
            s += min(out.bit_count(), 4) / 4 * w3
        s += (hand & suit).bit_count() / 8 * w4
        if not _WEAKER[c] & hand:
            s += w5
        if not stronger & hand:
            s += w6
        if rank:
            s += rank / 7 * w7
        if rank <= 2 and (
            hand & TNA_MASKS[c >> 3] == TNA_MASKS[c >> 3]
            or (hand & RANK_MASKS[rank]).bit_count() >= 3
        ):
            s += w8
        suit_out = (others & suit).bit_count()
        if suit_out:
            s += suit_out / 8 * w9
        if both_void & suit:
            s += w10
        if partner_void & suit:
            s += w11
        if trick:
            follows = c >> 3 == led
            wins = follows and c < best
            if follows:
                s += w12
            if wins:
                s += w13
                if not stronger & threat:
                    s += w14
            if partner_wins and thirds:
                s += thirds / 3 * w15
            if wins and points:
                s += points * w16
        scores.append(s)
    return scores
