"""Poules announced before play (``engine/optional/poules.py``) and the runs they pay for."""

from __future__ import annotations

import pytest

from engine.optional.poules import complete_suits, covered_suits
from engine.rules import rules_for
from tests.engine.helpers import cards_in, deal, finish_deal, hands_from, run
from tests.engine.test_politaine import HANDS, RUN_DIAMONDS, RUN_HEARTS


def before_play(**options):
    return rules_for("quatre-sept", politaine="before-play", **options)


def test_poules_are_asked_of_everyone_in_play_order_from_the_leader():
    state = deal(before_play(), HANDS, dealer=0)  # seat 1 leads
    order = []
    for _ in range(4):
        assert state.decision == "poules"
        order.append(state.to_move)
        legal = state.legal_strings()
        complete = {0: 1, 1: 2, 2: 0, 3: 1}[state.to_move]  # complete T-9-A suits held
        assert legal == [f"poules {n}" for n in range(complete + 1)]
        state = state.step(legal[0])
    assert order == [1, 2, 3, 0]
    assert state.decision == "play" and state.to_move == 1
    assert [(s.seat, s.trick, s.say) for s in state.said] == [
        (1, 0, "poules 0"), (2, 0, "poules 0"), (3, 0, "poules 0"), (0, 0, "poules 0"),
    ]


def test_before_play_offers_no_announcement_with_a_card():
    state = run(deal(before_play(), HANDS), "poules_0 poules_2 poules_0 poules_0 KH")
    assert cards_in(state.legal_strings()) == {"TH", "9H", "AH", "JH", "8H"}
    assert all("politaine" not in a for a in state.legal_strings())


@pytest.mark.parametrize("announced, bonus", [(0, 0), (1, 11), (2, 22)])
def test_before_play_runs_count_up_to_the_number_announced(announced, bonus):
    plain = (RUN_HEARTS + " " + RUN_DIAMONDS).replace("/politaine", "")
    state = deal(before_play(), HANDS)
    state = run(state, f"poules_0 poules_{announced} poules_0 poules_0 {plain}")
    assert finish_deal(state).history[0].bonus == (0, bonus)


def test_before_play_a_run_broken_in_between_does_not_count():
    state = deal(before_play(), HANDS)
    state = run(
        state,
        "poules_0 poules_2 poules_0 poules_0 "
        "KH TH 7H 7S   TD 7D 8S JC   AH 7C JS QH   9H 8C QS TC",
    )
    assert finish_deal(state).history[0].bonus == (0, 0)




def test_complete_suits_counts_whole_t_9_a_suits_only():
    hands = hands_from(HANDS)
    assert [complete_suits(h) for h in hands] == [1, 2, 0, 1]
    assert [covered_suits(h) for h in hands] == [(0,), (1, 2), (), (3,)]


def test_a_poule_announcement_above_the_suits_held_is_refused():
    state = deal(before_play(), HANDS)
    with pytest.raises(ValueError):
        state.step("poules 2")  # seat 0 holds one complete suit
