"""Claiming out (``engine/optional/claim.py``): when a claim is offered and what it counts."""

from __future__ import annotations

import pytest

from engine.optional.claim import offered
from engine.rules import ClaimOut
from tests.engine.helpers import cards_in, deal, finish_deal, run
from tests.engine.test_melds import HANDS_M, pollack

TO_SEAT_1_LEAD = "meld_pollack_H meld_three_T_S KH 8C 7H 7D   QC AC KC 8D   meld_three_9_H"


def test_claim_offered_on_lead_only():
    state = run(deal(pollack(), HANDS_M), "done")
    assert "claim" in state.legal_strings()
    state = run(state, "KH")
    assert "claim" not in state.legal_strings()
    with pytest.raises(ValueError):
        state.step("claim")


def test_a_right_claim_wins():
    # Team 1: 17 before the deal + floor(5/3) + 3 for the three 9s = 21, the target.
    state = run(deal(pollack(), HANDS_M, score=(0, 17)), TO_SEAT_1_LEAD)
    assert state.to_move == 1 and "claim" in state.legal_strings()
    state = state.step("claim")
    assert state.is_over
    assert state.result.winner == 1 and state.result.reason == "claim"
    record = state.history[0]
    assert record.end == "claim"
    assert [(s.seat, s.say) for s in record.said][-1] == (1, "claim")
    assert state.result.score[1] == 21


def test_a_wrong_claim_loses():
    state = run(deal(pollack(), HANDS_M, score=(0, 16)), TO_SEAT_1_LEAD)
    state = state.step("claim")
    assert state.result.winner == 0 and state.result.reason == "claim"
    assert state.result.score[1] == 20


def test_the_other_teams_points_play_no_part():
    state = run(deal(pollack(), HANDS_M, score=(30, 17)), TO_SEAT_1_LEAD)
    state = state.step("claim")
    assert state.result.winner == 1


def test_a_claim_at_the_first_lead_counts_melds():
    state = run(deal(pollack(), HANDS_M, score=(15, 0)), "meld_pollack_H meld_three_T_S")
    state = state.step("claim")
    assert state.result.winner == 0 and state.result.score[0] == 21


def test_the_last_trick_point_counts_only_once_played():
    # Team 0 leads the last trick with 20 points, 18 thirds: the 3 of the last trick not yet in.
    hands = [
        "TH 9H AH KH QH JH 8H 7H",
        "TC 9C AC KC QC JC 8C 7C",
        "TD 9D AD KD QD JD 8D 7D",
        "TS 9S AS KS QS JS 8S 7S",
    ]
    rules = pollack(melds=False)
    state = deal(rules, hands, score=(14, 0))
    for card in ["TH", "9H", "AH", "KH", "QH", "JH", "8H"]:
        state = run(state, card)
        for _ in range(3):
            state = state.step(next(a for a in state.legal_strings() if a != "claim"))
    assert len(state.tricks) == 7 and state.to_move == 0
    taken = state.taken[0]
    assert taken < 35
    state = state.step("claim")
    assert state.result.score[0] == 14 + taken // 3
    assert state.result.winner == (0 if 14 + taken // 3 >= 21 else 1)


def test_claim_any_turn():
    state = run(deal(pollack(claim_out="any-turn"), HANDS_M), "done KH")
    assert state.to_move == 1 and "claim" in state.legal_strings()
    state = state.step("claim")
    assert state.is_over and state.result.reason == "claim" and state.result.winner == 0
    assert state.history[0].said[-1].seat == 1


def test_claim_off_offers_no_claim():
    state = run(deal(pollack(claim_out="off"), HANDS_M), "done")
    assert "claim" not in state.legal_strings()
    assert cards_in(state.legal_strings()) == set(HANDS_M[0].split())


def test_without_a_claim_the_deal_is_played_out_and_scored():
    rules = pollack()
    state = run(deal(rules, HANDS_M, score=(18, 18)), "done")
    state = finish_deal(state, choose=lambda s: next(a for a in s.legal_strings() if a != "claim"))
    record = state.history[0]
    assert len(record.tricks) == 8 and record.end is None
    total = record.score
    if max(total) >= 21 and total[0] != total[1]:
        assert state.result.reason == "target"
        assert state.result.winner == int(total[1] > total[0])
    else:
        assert not state.is_over


@pytest.mark.parametrize(
    "rule, mid_trick, expected",
    [
        (ClaimOut.ON_LEAD, False, True),
        (ClaimOut.ON_LEAD, True, False),
        (ClaimOut.ANY_TURN, True, True),
        (ClaimOut.OFF, False, False),
    ],
)
def test_offered(rule, mid_trick, expected):
    assert offered(rule, mid_trick) is expected
