"""Before play: instant wins (four 7s, four 8s) and the redeal."""

from __future__ import annotations

import pytest

from engine.cards import RANK_8, RANK_MASKS
from engine.deck import seeded_hands
from engine.rules import rules_for
from tests.engine.helpers import deal, hands_from

FOUR_SEVENS_AND_EIGHTS = [
    "TC 9C AC KC TD 9D AD KD",
    "7C 7D 7H 7S QC JC QD JD",  # four 7s, team 1
    "8C 8D 8H 8S TH 9H AH KH",  # four 8s, team 0
    "QH JH TS 9S AS KS QS JS",
]


def test_four_sevens_beat_four_eights_in_another_hand():
    state = deal(rules_for("quatre-sept", four_eights=True), FOUR_SEVENS_AND_EIGHTS)
    assert state.is_over and state.to_move == -1 and state.legal() == ()
    assert state.result.winner == 1 and state.result.reason == "four-sevens"
    assert state.result.score == (0, 0) and state.result.fault is None
    record = state.history[0]
    assert record.end == "four-sevens" and record.tricks == ()


def test_four_sevens_win_whoever_leads():
    for dealer in range(4):
        state = deal("quatre-sept", FOUR_SEVENS_AND_EIGHTS, dealer=dealer)
        assert state.result.winner == 1 and state.result.reason == "four-sevens"


def test_four_eights_alone_win_in_the_politaine_preset():
    state = deal("politaine", FOUR_SEVENS_AND_EIGHTS)  # four_sevens is off there
    assert state.is_over
    assert state.result.winner == 0 and state.result.reason == "four-eights"
    assert state.history[0].end == "four-eights"


def test_four_eights_off_in_the_main_game():
    state = deal("quatre-sept", FOUR_SEVENS_AND_EIGHTS, dealer=3)
    assert state.is_over and state.result.reason == "four-sevens"
    state = deal(rules_for("quatre-sept", four_sevens=False), FOUR_SEVENS_AND_EIGHTS)
    assert not state.is_over and state.decision == "play"


def test_four_sevens_off_in_pollack():
    state = deal(rules_for("pollack", melds=False), FOUR_SEVENS_AND_EIGHTS)
    assert not state.is_over


def test_an_instant_win_keeps_the_totals_so_far():
    state = deal("quatre-sept", FOUR_SEVENS_AND_EIGHTS, score=(25, 30), deal=4, dealer=2)
    assert state.result.score == (25, 30) and state.result.winner == 1
    assert state.history[-1].number == 4


# -- redeal ----------------------------------------------------------------------------------------

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
