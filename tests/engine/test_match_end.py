"""Ending a match: target, ties played on, capot, 18 à 4, the safety limit."""

from __future__ import annotations

import pytest

from engine.rules import rules_for
from tests.engine.helpers import deal, finish_deal, run
from tests.engine.test_play import HANDS_P, play_p  # a deal scored 6 : 5

# Each seat holds one suit: the leader wins all eight tricks (35 thirds, 11 : 0).
SUITS = {
    "C": "TC 9C AC KC QC JC 8C 7C",
    "D": "TD 9D AD KD QD JD 8D 7D",
    "H": "TH 9H AH KH QH JH 8H 7H",
    "S": "TS 9S AS KS QS JS 8S 7S",
}


def capot_hands(leader: int) -> list[str]:
    """The leader holds hearts, the next seats clubs, diamonds, spades."""
    order = ["H", "C", "D", "S"]
    return [SUITS[order[(seat - leader) % 4]] for seat in range(4)]


def test_target_reached_the_higher_total_wins():
    state = play_p(score=(25, 20))
    assert state.is_over
    assert state.result.winner == 0 and state.result.reason == "target"
    assert state.result.score == (31, 25) and state.history[-1].end is None


def test_both_reach_the_target_the_higher_total_wins():
    state = play_p(score=(30, 30))
    assert state.result.winner == 0 and state.result.score == (36, 35)
    state = play_p(score=(25, 27))
    assert state.result.winner == 1 and state.result.score == (31, 32)


def test_below_the_target_play_goes_on():
    state = play_p(score=(24, 20))
    assert not state.is_over and state.score == (30, 25) and state.deal == 2


def test_33_33_plays_another_deal():
    state = play_p(score=(27, 28))
    assert state.history[0].score == (33, 33)
    assert not state.is_over, "equal totals mean another deal is played"
    assert state.deal == 2 and state.score == (33, 33) and state.dealer == 0
    # The next deal decides: whoever is higher after it wins.
    state = finish_deal(state)
    total = state.history[-1].score
    assert total[0] != total[1]
    assert state.is_over and state.result.winner == int(total[1] > total[0])


def test_44_44_after_politaines_plays_another_deal():
    from tests.engine.test_politaine import HANDS, RUN_HEARTS

    rules = rules_for("politaine", redeal=False, capot=False)
    once = finish_deal(run(deal(rules, HANDS), RUN_HEARTS)).history[0]
    gained = once.score  # card points, and 11 for team 1's politaine
    assert once.bonus == (0, 11)
    start = (44 - gained[0], 44 - gained[1])
    state = finish_deal(run(deal(rules, HANDS, score=start), RUN_HEARTS))
    assert state.history[0].score == (44, 44)
    assert not state.is_over and state.deal == 2 and state.score == (44, 44)


def test_ties_below_the_target_also_play_on():
    state = play_p(score=(0, 1))
    assert state.score == (6, 6) and not state.is_over


@pytest.mark.parametrize("leader", [0, 1])
def test_capot_wins_the_match(leader):
    rules = rules_for("quatre-sept", capot=True)
    state = deal(rules, capot_hands(leader), dealer=(leader - 1) % 4)
    state = finish_deal(state)
    assert state.is_over
    assert state.result.winner == leader % 2 and state.result.reason == "capot"
    record = state.history[0]
    assert record.end == "capot"
    assert [t.winner for t in record.tricks] == [leader] * 8
    assert record.thirds[leader % 2] == 35
    assert state.result.score == record.score


def test_capot_in_the_politaine_preset():
    state = finish_deal(deal(rules_for("politaine"), capot_hands(0)))
    assert state.result.reason == "capot" and state.result.winner == 0


def test_capot_off_is_an_ordinary_deal():
    state = finish_deal(deal("quatre-sept", capot_hands(0)))
    assert not state.is_over
    assert state.history[0].score == (11, 0) and state.history[0].end is None


def test_capot_beats_a_higher_total_of_the_other_team():
    rules = rules_for("quatre-sept", capot=True)
    state = finish_deal(deal(rules, capot_hands(0), score=(0, 40)))
    assert state.result.winner == 0 and state.result.reason == "capot"


def test_eighteen_four():
    rules = rules_for("quatre-sept", eighteen_four=True)
    state = finish_deal(deal(rules, capot_hands(0), score=(7, 4)))
    assert state.history[0].score == (18, 4)
    assert state.is_over and state.result.winner == 0 and state.result.reason == "eighteen-four"
    assert state.history[0].end == "eighteen-four"


def test_eighteen_four_for_the_second_team():
    rules = rules_for("quatre-sept", eighteen_four=True)
    state = finish_deal(deal(rules, capot_hands(1), dealer=0, score=(4, 7)))
    assert state.history[0].score == (4, 18)
    assert state.result.winner == 1 and state.result.reason == "eighteen-four"


def test_eighteen_four_needs_exactly_18_against_exactly_4():
    rules = rules_for("quatre-sept", eighteen_four=True)
    state = finish_deal(deal(rules, capot_hands(0), score=(7, 5)))
    assert state.history[0].score == (18, 5) and not state.is_over
    state = finish_deal(deal(rules, capot_hands(0), score=(8, 4)))
    assert state.history[0].score == (19, 4) and not state.is_over


def test_eighteen_four_off_by_default():
    for preset in ("quatre-sept", "politaine"):
        rules = rules_for(preset, redeal=False, capot=False)
        state = finish_deal(deal(rules, capot_hands(0), score=(7, 4)))
        assert state.history[0].score == (18, 4) and not state.is_over


def test_the_safety_limit_higher_total_wins():
    state = play_p(deal=100, score=(5, 5))
    assert state.is_over
    assert state.result.reason == "limit" and state.result.winner == 0
    assert state.result.score == (11, 10)


def test_the_safety_limit_equal_totals_draw():
    state = play_p(deal=100, score=(5, 6))
    assert state.is_over
    assert state.result.reason == "limit" and state.result.winner is None
    assert state.result.score == (11, 11)


def test_the_safety_limit_after_a_tie_at_the_target():
    state = play_p(deal=100, score=(27, 28))
    assert state.result.reason == "limit" and state.result.winner is None


def test_the_target_still_wins_in_the_last_deal():
    state = play_p(deal=100, score=(30, 0))
    assert state.result.reason == "target" and state.result.winner == 0


def test_deal_99_is_not_the_last():
    state = play_p(deal=99, score=(5, 5))
    assert not state.is_over and state.deal == 100


def test_a_higher_target():
    state = play_p(rules_for("quatre-sept", target=41), score=(25, 20))
    assert not state.is_over and state.score == (31, 25)
    assert deal(rules_for("quatre-sept", target=1), HANDS_P).rules.target == 1
