"""Low lead (``engine/optional/low_lead.py``, la poule): after a trick worth less than 1 point
its winner leads his lowest rank."""

from __future__ import annotations

import pytest

from engine.cards import mask_from_codes
from engine.optional.low_lead import binds, lowest_rank
from engine.rules import LowLead, rules_for
from tests.engine.helpers import cards_in, deal, finish_deal, run

# The rules' example: Anne (seat 0) holds T, 9 and A of hearts and leads.
ANNE = [
    "TH 9H AH KH QH 7C 7D 7S",
    "JH TC 9C AC KC QC JC 8C",
    "8H TD 9D AD KD QD JD 8D",
    "7H TS 9S AS KS QS JS 8S",
]
POULES = "poules_1 poules_0 poules_0 poules_0"


def test_annes_trick_is_worth_two_thirds_and_she_must_lead_a_seven():
    state = run(deal("la-poule", ANNE), POULES)
    state = run(state, "TH JH 8H 7H")
    assert state.tricks[0].thirds == 2
    assert state.tricks[0].winner == 0 and state.to_move == 0
    assert state.legal_strings() == ["play 7C", "play 7D", "play 7S"]
    for card in ("9H", "AH"):
        with pytest.raises(ValueError):
            state.step(f"play {card}")


def test_annes_poule_is_lost():
    state = run(deal("la-poule", ANNE), POULES + " TH JH 8H 7H")
    record = finish_deal(state).history[0]
    assert record.bonus == (0, 0)


def test_had_anne_led_the_ace_first_she_could_go_on():
    state = run(deal("la-poule", ANNE), POULES + " AH JH 8H 7H")
    assert state.tricks[0].thirds >= 3
    assert {"TH", "9H"} <= cards_in(state.legal_strings())
    # The others throw counters, so every trick is worth a point: the poule is made.
    state = run(state, "TH TC TD TS   9H AC AD AS")
    assert [t.winner for t in state.tricks] == [0, 0, 0]
    assert [t.thirds for t in state.tricks] == [4, 4, 10]
    assert finish_deal(state).history[0].bonus == (11, 0)


def test_the_lowest_rank_held_may_be_a_jack():
    hands = [
        "QH TC 9C AC KC JD JS KS",
        "TH 9H AH KH JH 8H 7C 8C",
        "7H QC JC TD 9D AD KD QD",
        "8D 7D TS 9S AS QS 8S 7S",
    ]
    state = run(deal("la-poule", hands), "poules_0 poules_0 poules_0 poules_0 QH 8H 7H 8D")
    assert state.tricks[0].thirds == 1 and state.to_move == 0
    assert state.legal_strings() == ["play JD", "play JS"]


def test_a_trick_worth_exactly_a_point_does_not_restrict():
    # 7C JC TD TS: 3 thirds, won by seat 1 with JC.
    state = run(deal("la-poule", ANNE), POULES + " 7C JC TD TS")
    assert state.tricks[0].thirds == 3 and state.to_move == 1
    assert cards_in(state.legal_strings()) == {"JH", "TC", "9C", "AC", "KC", "QC", "8C"}
    # One third less (8C for JC): seat 1 must lead his lowest rank, now the jacks.
    state = run(deal("la-poule", ANNE), POULES + " 7C 8C TD TS")
    assert state.tricks[0].thirds == 2 and state.to_move == 1
    assert cards_in(state.legal_strings()) == {"JH", "JC"}


def test_low_lead_off_in_the_main_game():
    state = run(deal("quatre-sept", ANNE), "TH JH 8H 7H")
    assert cards_in(state.legal_strings()) == {"9H", "AH", "KH", "QH", "7C", "7D", "7S"}


def test_low_lead_every_trick_alone_on_quatre_sept():
    rules = rules_for("quatre-sept", low_lead="every-trick")
    state = run(deal(rules, ANNE), "AH JH 8H 7H   TH 8C 8D 8S")
    assert state.tricks[1].thirds == 1
    assert cards_in(state.legal_strings()) == {"7C", "7D", "7S"}


@pytest.mark.parametrize("preset", ["la-poule", "quatre-sept"])
def test_first_trick_variant_applies_after_trick_one(preset):
    rules = rules_for(preset, low_lead="first-trick")
    state = deal(rules, ANNE)
    if preset == "la-poule":
        state = run(state, POULES)
    state = run(state, "TH JH 8H 7H")
    assert cards_in(state.legal_strings()) == {"7C", "7D", "7S"}


@pytest.mark.parametrize("preset", ["la-poule", "quatre-sept"])
def test_first_trick_variant_only_after_trick_one(preset):
    rules = rules_for(preset, low_lead="first-trick")
    state = deal(rules, ANNE)
    if preset == "la-poule":
        state = run(state, POULES)
    # Trick 1 worth a point or more; trick 2 worth 1 third: no restriction after it.
    state = run(state, "AH JH 8H 7H   TH 8C 8D 8S")
    assert state.tricks[1].thirds == 1 and state.to_move == 0
    assert cards_in(state.legal_strings()) == {"9H", "KH", "QH", "7C", "7D", "7S"}
    # Whereas every-trick restricts it.
    every = deal(rules_for(preset, low_lead="every-trick"), ANNE)
    if preset == "la-poule":
        every = run(every, POULES)
    every = run(every, "AH JH 8H 7H   TH 8C 8D 8S")
    assert cards_in(every.legal_strings()) == {"7C", "7D", "7S"}


def test_the_follower_is_not_restricted():
    # Only the lead is: after Anne's low trick, the others follow suit as usual.
    state = run(deal("la-poule", ANNE), POULES + " TH JH 8H 7H 7C")
    assert cards_in(state.legal_strings()) == {"TC", "9C", "AC", "KC", "QC", "JC", "8C"}


def test_low_lead_overrides_a_first_card_politaine():
    rules = rules_for("quatre-sept", low_lead="every-trick")
    state = run(deal(rules, ANNE), "TH/politaine JH 8H 7H")
    assert cards_in(state.legal_strings()) == {"7C", "7D", "7S"}
    assert finish_deal(state).history[0].bonus == (0, 0)


@pytest.mark.parametrize(
    "rule, thirds, finished, expected",
    [
        (LowLead.EVERY_TRICK, 2, 5, True),
        (LowLead.EVERY_TRICK, 3, 5, False),
        (LowLead.FIRST_TRICK, 2, 1, True),
        (LowLead.FIRST_TRICK, 2, 2, False),
        (LowLead.OFF, 0, 1, False),
    ],
)
def test_binds(rule, thirds, finished, expected):
    assert binds(rule, thirds, finished) is expected


def test_lowest_rank_is_every_card_of_that_rank():
    hand = mask_from_codes(["TH", "JH", "JS", "8C"])
    assert lowest_rank(hand) == mask_from_codes(["8C"])
    assert lowest_rank(hand & ~mask_from_codes(["8C"])) == mask_from_codes(["JH", "JS"])
    assert lowest_rank(0) == 0
