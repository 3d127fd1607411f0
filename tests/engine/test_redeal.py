"""The redeal (``engine/optional/redeal.py``): who is asked, in which order, and what follows."""

from __future__ import annotations

import pytest

from engine.cards import RANK_8, RANK_MASKS
from engine.deck import seeded_hands
from engine.optional.redeal import MAX_REDEALS, first_asker, next_asker
from engine.rules import rules_for
from tests.engine.helpers import deal, hands_from

NO_HIGH_1_AND_3 = [
    "TC 9C AC TD 9D AD 8D 7D",
    "KC QC JC 8C 7C KD QD JD",  # no T, 9 or A
    "TH 9H AH TS 9S AS 8S 7S",
    "KH QH JH 8H 7H KS QS JS",  # no T, 9 or A
]


@pytest.mark.parametrize("dealer, order", [(3, [1, 3]), (0, [1, 3]), (2, [3, 1]), (1, [3, 1])])
def test_eligible_players_are_asked_in_play_order_from_the_leader(dealer, order):
    state = deal("politaine", NO_HIGH_1_AND_3, dealer=dealer)
    asked = []
    while state.decision == "redeal":
        assert state.legal_strings() == ["redeal", "keep"]
        asked.append(state.to_move)
        state = state.step("keep")
    assert asked == order
    assert state.decision == "play" and state.to_move == (dealer + 1) % 4
    assert state.redeals == ()


def test_nobody_is_asked_without_the_option():
    state = deal("quatre-sept", NO_HIGH_1_AND_3)
    assert state.decision == "play"
    with pytest.raises(ValueError):
        state.step("redeal")


def test_a_hand_with_a_high_card_is_not_asked():
    hands = [
        "TC 9C AC TD 9D AD 8D 7D",
        "KC QC JC 8C 7C KD QD TH",  # a T: not eligible
        "JD 9H AH TS 9S AS 8S 7S",
        "KH QH JH 8H 7H KS QS JS",
    ]
    state = deal("politaine", hands)
    assert state.decision == "redeal" and state.to_move == 3


def test_a_redeal_deals_again_keeping_the_deal_number_and_dealer():
    state = deal("politaine", NO_HIGH_1_AND_3, seed=5, deal=3, dealer=2, score=(4, 7))
    assert state.to_move == 3
    after = state.step("redeal")
    assert after.deal == 3 and after.dealer == 2 and after.score == (4, 7)
    assert after.redeal == 1
    assert after.hands == seeded_hands(5, 3, 1, 2)
    assert after.dealt == after.hands
    assert after.redeals == ((3, hands_from(NO_HIGH_1_AND_3)),)


def _seed_with_four_eights_on_redeal() -> int:
    eights = RANK_MASKS[RANK_8]
    for seed in range(20000):
        hands = seeded_hands(seed, 1, 1, 3)
        if any(h & eights == eights for h in hands):
            return seed
    raise AssertionError("no seed found")


def test_instant_wins_are_checked_again_after_a_redeal():
    seed = _seed_with_four_eights_on_redeal()
    hands = seeded_hands(seed, 1, 1, 3)
    holder = next(s for s in range(4) if hands[s] & RANK_MASKS[RANK_8] == RANK_MASKS[RANK_8])
    state = deal("politaine", NO_HIGH_1_AND_3, seed=seed)
    after = state.step("redeal")
    assert after.is_over
    assert after.result.reason == "four-eights" and after.result.winner == holder % 2
    record = after.history[0]
    assert record.end == "four-eights"
    assert record.redeals == ((1, hands_from(NO_HIGH_1_AND_3)),)
    assert record.hands == hands


def test_next_asker_goes_round_from_the_leader():
    hands = hands_from(NO_HIGH_1_AND_3)
    assert first_asker(hands, 0, 0) == 1
    assert next_asker(hands, 0, 1) == 3
    assert next_asker(hands, 0, 3) is None
    assert first_asker(hands, 2, 0) == 3


def test_nobody_is_asked_after_the_cap_so_every_match_is_finite():
    hands = hands_from(NO_HIGH_1_AND_3)
    assert first_asker(hands, 0, MAX_REDEALS - 1) == 1
    assert first_asker(hands, 0, MAX_REDEALS) is None
    state = deal(rules_for("politaine"), NO_HIGH_1_AND_3, redeal=MAX_REDEALS)
    assert state.decision == "play"
