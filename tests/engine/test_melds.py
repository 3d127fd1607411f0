"""Pollack's melds (``engine/optional/melds.py``): timing, holding, four instead of three, one card
in two melds."""

from __future__ import annotations

import pytest

from engine.actions import meld_name
from engine.optional.melds import available_melds
from engine.rules import rules_for
from tests.engine.helpers import deal, finish_deal, hands_from, run

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


def test_available_melds_names_the_missing_suit_and_prefers_four():
    assert [meld_name(m) for m in available_melds(hands_from(HANDS_M)[0], 0)] == [
        "pollack H", "three T S",
    ]
    assert [meld_name(m) for m in available_melds(hands_from(HANDS_4)[0], 0)] == [
        "pollack H", "four A",
    ]


def test_a_rank_once_melded_offers_no_other_meld_of_it():
    hand = hands_from(HANDS_4)[0]
    four_a = next(m for m in available_melds(hand, 0) if meld_name(m) == "four A")
    assert [meld_name(m) for m in available_melds(hand, 1 << four_a)] == ["pollack H"]
