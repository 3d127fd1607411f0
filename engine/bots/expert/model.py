"""A model of the expert's own card play, learned from its games: how likely each legal card is.

``card_chances`` gives, for the seat to move in a state whose hands are known (a sampled deal),
a softmax over its legal cards of a linear score of a few features of each card (points,
masters, length, winning the trick, feeding the partner, the policy's own choice ...), one set
of weights for leads and one for the cards that follow. The weights are fitted to the full
expert's plays in self-play (``benchmarks/card_model_fit.py``), so the model reads a partner
that searches more closely than "the policy's card or not" does; reading the partner's cards by
it is the option ``model`` of the expert (``docs/expert-log.md``, round 25). Only the seat's own
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
    "policy_early",  # the policy's card, times the cards in hand / 8
    "partner_led",  # the partner has led its suit in this deal
    "opponent_led",  # an opponent has led its suit in this deal
    "singleton",  # the only card of its suit in hand
    "wins_first",  # wins, and the team has won no trick yet in this deal
    "wins_last",  # wins as the trick's last player
    "master_length",  # a master, times the cards of its suit in hand / 8
    "one_void",  # exactly one opponent publicly lacks its suit
    "one_stronger",  # exactly one stronger card of its suit out
    "discard_thirds",  # not of the suit led: its points, in thirds / 3
    "discard_length",  # not of the suit led: the cards of its suit in hand / 8
    "wins_second",  # wins as the trick's second player
    "thirds_early",  # its points, in thirds / 3, times the cards in hand / 8
    "touching",  # the next weaker card of its suit (still unplayed) is in hand too
    "low_long",  # the weakest of its suit in hand, times the cards of its suit in hand / 8
    "gives",  # an opponent wins the trick so far and it does not beat it: its points / 3
    "feeds_last",  # the partner wins the trick and it is the last card: its points / 3
)
SIZE = len(FEATURES)

#: Fitted weights (``benchmarks/card_model_fit.py``): leads, then the cards that follow.
#: Fitted to 23,987 cards of the full expert's ``pollack`` self-play (seeds 1-400, round 26):
#: 1.218 nats a lead and 0.627 a card that follows, held out, against 1.252 and 0.653 for round
#: 25's 17 features on the same cards, 1.419 and 0.766 for "the policy's card or not" and 1.554
#: and 1.127 for a uniform choice.
LEAD_WEIGHTS: tuple[float, ...] = (
    2.503,
    1.396,
    -0.453,
    0.314,
    1.534,
    0.217,
    -0.101,
    -1.180,
    -0.175,
    -2.278,
    0.936,
    -0.511,
    0.000,
    0.000,
    0.000,
    0.000,
    0.000,
    -2.117,
    0.100,
    -0.414,
    0.687,
    0.000,
    0.000,
    2.861,
    0.423,
    -0.149,
    0.000,
    0.000,
    0.000,
    -1.945,
    0.245,
    2.080,
    0.000,
    0.000,
)
FOLLOW_WEIGHTS: tuple[float, ...] = (
    2.654,
    1.655,
    -1.808,
    1.183,
    -2.054,
    -0.510,
    -0.030,
    -0.317,
    -0.803,
    -1.643,
    0.742,
    0.155,
    0.000,
    1.863,
    -0.503,
    -0.818,
    0.991,
    -1.396,
    -0.108,
    -0.079,
    0.835,
    -0.044,
    -1.761,
    3.171,
    0.343,
    -0.068,
    0.736,
    -2.054,
    -1.623,
    -0.108,
    -0.382,
    2.289,
    -2.648,
    -0.269,
)


def _next_weaker(card: int, unplayed: int) -> int:
    """The mask of the strongest card of ``card``'s suit weaker than it among ``unplayed``."""
    weaker = _WEAKER[card] & unplayed
    return weaker & -weaker


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
    size = hand.bit_count() / 8
    led_by_partner = led_by_opponent = 0
    for done in state[4].tricks:
        if done.leader == partner:
            led_by_partner |= SUIT_MASKS[done.cards[0] >> 3]
        elif done.leader != seat:
            led_by_opponent |= SUIT_MASKS[done.cards[0] >> 3]
    no_trick = state[4].won[seat & 1] == 0
    one_void = voids[left] ^ voids[right]
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
            wins = False
            row += [0.0, 0.0, 0.0, 0.0, 0.0]
        row += [
            size if c == policy else 0.0,
            1.0 if led_by_partner & suit else 0.0,
            1.0 if led_by_opponent & suit else 0.0,
            1.0 if (hand & suit).bit_count() == 1 else 0.0,
            1.0 if wins and no_trick else 0.0,
            1.0 if wins and len(trick) == 3 else 0.0,
            row[4] if not stronger & others else 0.0,
            1.0 if one_void & suit else 0.0,
            1.0 if (stronger & others).bit_count() == 1 else 0.0,
            row[1] if trick and c >> 3 != led else 0.0,
            row[4] if trick and c >> 3 != led else 0.0,
            1.0 if wins and len(trick) == 1 else 0.0,
            row[1] * size,
            1.0 if _next_weaker(c, hand | others) & hand else 0.0,
            row[5] * row[4],
            row[1] if trick and not wins and not partner_wins else 0.0,
            row[1] if trick and partner_wins and len(trick) == 3 else 0.0,
        ]
        rows.append(row)
    return rows


def card_chances(
    state: State,
    voids: list[int],
    cards: list[int],
    weights: tuple[tuple[float, ...], tuple[float, ...]] | None = None,
) -> list[float]:
    """The model's chance of each of ``cards`` (the legal cards of the seat to move), by
    ``weights`` (leads, cards that follow) where given, else the fitted ones."""
    lead, follow = weights or (LEAD_WEIGHTS, FOLLOW_WEIGHTS)
    w = follow if state[3] else lead
    scores = [
        sum(a * b for a, b in zip(row, w, strict=True))
        for row in card_features(state, voids, cards)
    ]
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]
