"""Instant wins at the deal (``engine/optional/instant.py``): four 7s, four 8s."""

from __future__ import annotations

from engine.optional.instant import instant_win
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


def test_instant_win_reads_the_hands_alone():
    hands = hands_from(FOUR_SEVENS_AND_EIGHTS)
    assert instant_win(rules_for("quatre-sept"), hands) == (1, "four-sevens")
    assert instant_win(rules_for("politaine"), hands) == (0, "four-eights")
    assert instant_win(rules_for("pollack"), hands) is None
