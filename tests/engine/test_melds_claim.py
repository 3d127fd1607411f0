"""Pollack: melds (timing, holding, four instead of three, one card in two melds) and claims."""

from __future__ import annotations

import pytest

from engine.rules import rules_for
from tests.engine.helpers import cards_in, deal, finish_deal, run

# Seat 0 leads holding a pollack of hearts and three Ts (TS missing); seat 1 holds three 9s and
# three As (9H and AH missing).
HANDS_M = [
    "TH 9H AH KH TC TD QC JC",
    "9C 9D 9S AC AD AS 8C 7C",
    "QH JH 8H 7H KC KD QD JD",
    "TS KS QS JS 8S 7S 8D 7D",
]
# Seat 0 holds four As and the pollack of hearts (AH in both).
HANDS_4 = [
    "AC AD AH AS 9H TH KH 7C",
    "TC 9C KC QC JC 8C TD 9D",
    "KD QD JD 8D 7D QH JH 8H",
    "7H TS 9S KS QS JS 8S 7S",
]


def pollack(**options):
    return rules_for("pollack", **options)


def test_the_first_leader_melds_before_his_first_card():
    state = deal(pollack(), HANDS_M)
    assert state.decision == "meld" and state.to_move == 0
    assert set(state.legal_strings()) == {"meld pollack H", "meld three T S", "done"}


def test_a_card_in_two_melds():
    state = run(deal(pollack(), HANDS_M), "meld_pollack_H")
    assert state.decision == "meld", "asked again after each meld"
    assert state.legal_strings() == ["meld three T S", "done"]
    state = run(state, "meld_three_T_S")
    assert state.decision == "play" and state.melds == (6, 0)
    assert [(s.seat, s.trick, s.say) for s in state.said] == [
        (0, 1, "meld pollack H"), (0, 1, "meld three T S"),
    ]


def test_done_ends_melding_for_this_turn():
    state = run(deal(pollack(), HANDS_M), "meld_pollack_H done")
    assert state.decision == "play" and state.to_move == 0
    assert state.melds == (3, 0)
    with pytest.raises(ValueError):
        state.step("meld three T S")


def test_four_of_a_kind_instead_of_three():
    state = deal(pollack(), HANDS_4)
    legal = set(state.legal_strings())
    assert legal == {"meld four A", "meld pollack H", "done"}
    assert not any(a.startswith("meld three A") for a in legal)
    state = run(state, "meld_four_A meld_pollack_H")
    assert state.melds == (7, 0) and state.decision == "play"


def test_a_meld_is_refused_before_the_side_has_won_a_trick():
    state = run(deal(pollack(), HANDS_M), "done KH")
    assert state.to_move == 1 and state.decision == "play"
    assert not any(a.startswith("meld") for a in state.legal_strings())
    with pytest.raises(ValueError):
        state.step("meld three 9 H")


def test_melding_after_the_side_has_won_a_trick_with_the_cards_still_held():
    # Trick 1 to seat 0 (KH); trick 2: seat 0 leads QC, seat 1 wins with AC.
    state = run(deal(pollack(), HANDS_M), "done KH 8C 7H 7D")
    assert state.to_move == 0 and state.decision == "meld", "team 0 won, melds still open"
    state = run(state, "done QC AC KC 8D")
    assert state.tricks[-1].winner == 1 and state.to_move == 1
    assert state.decision == "meld"
    # AC is gone: no three As any more; the three 9s remain.
    assert state.legal_strings() == ["meld three 9 H", "done"]
    state = run(state, "meld_three_9_H")
    assert state.melds == (0, 3) and state.decision == "play"


def test_each_meld_counts_once_per_deal():
    state = run(deal(pollack(), HANDS_M), "meld_pollack_H done KH 8C 7H 7D")
    # Seat 0 still holds TH 9H AH but the pollack was scored: only the three Ts remain.
    assert state.to_move == 0 and state.legal_strings() == ["meld three T S", "done"]
    state = run(state, "meld_three_T_S")
    assert state.decision == "play"
    state = run(state, "QC AC KC 8D")  # seat 1 leads next
    state = run(state, "done 9C QH")
    assert state.to_move == 3 and state.decision == "play", "seat 3 has nothing to meld"


def test_melds_are_added_whole_to_the_score():
    state = run(deal(pollack(claim_out="off"), HANDS_M), "meld_pollack_H meld_three_T_S")
    record = finish_deal(state, choose=lambda s: s.legal_strings()[-1]).history[0]
    assert record.melds[0] == 6
    assert record.score[0] == record.points[0] + 6
    assert record.score[1] == record.points[1] + record.melds[1]


def test_melds_off_offers_no_meld():
    state = deal(rules_for("quatre-sept"), HANDS_M)
    assert state.decision == "play"
    assert not any(a.startswith("meld") for a in state.legal_strings())


def test_melds_alone_on_quatre_sept():
    state = deal(rules_for("quatre-sept", melds=True), HANDS_M)
    assert state.decision == "meld"
    assert "claim" not in state.legal_strings()


# -- claims --------------------------------------------------------------------------------------

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
