"""observe(): exactly the protocol's state, the seat's own hand, never another seat's cards."""

from __future__ import annotations

import random

import pytest

from engine.cards import CODES, codes
from engine.observe import observe
from engine.rules import rules_for
from engine.state import new_match
from tests.engine.helpers import deal, run
from tests.engine.test_low_lead import ANNE
from tests.engine.test_melds import HANDS_M
from tests.engine.test_politaine import HANDS, RUN_HEARTS

PROTOCOL_KEYS = {"deal", "dealer", "seat", "score", "hand", "tricks", "trick", "taken", "said"}
# Additions to the protocol's first state (allowed: "Fields may be added"), pinned here.
ADDED_KEYS = {
    "redeals", "bonus", "melds", "low_lead", "poules", "poule_suits", "claim_count",
}  # fmt: skip
CODE_SET = set(CODES)


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def test_keys_are_the_protocols():
    seen = observe(deal("quatre-sept", HANDS), 2)
    assert set(seen) >= PROTOCOL_KEYS
    assert set(seen) == PROTOCOL_KEYS | ADDED_KEYS


def test_a_state_in_the_middle_of_a_deal():
    state = deal("quatre-sept", HANDS, score=(3, 4), deal=2, dealer=3)
    state = run(state, "KH TH/politaine 7H 7S AH")
    seen = observe(state, 2)
    assert seen["deal"] == 2 and seen["dealer"] == 3 and seen["seat"] == 2
    assert seen["score"] == [3, 4]
    assert seen["hand"] == ["8C", "7C", "KD", "QD", "JD", "8D", "7D"]
    assert seen["tricks"] == [
        {"leader": 0, "cards": ["KH", "TH", "7H", "7S"], "winner": 1, "thirds": 2},
    ]
    assert seen["trick"] == {"leader": 1, "cards": ["AH"]}
    assert seen["taken"] == [0, 2]
    assert [{k: s[k] for k in ("seat", "trick", "say")} for s in seen["said"]] == [
        {"seat": 1, "trick": 1, "say": "politaine"},
    ]
    for s in seen["said"]:
        assert {"seat", "trick", "say"} <= set(s)


def test_before_play_said_has_trick_0():
    rules = rules_for("quatre-sept", politaine="before-play")
    state = run(deal(rules, HANDS), "poules_1 poules_2")
    seen = observe(state, 2)
    assert [(s["seat"], s["trick"], s["say"]) for s in seen["said"]] == [
        (0, 0, "poules 1"), (1, 0, "poules 2"),
    ]
    assert seen["tricks"] == [] and seen["trick"] == {"leader": 0, "cards": []}


def test_observation_is_json_ready():
    import json

    state = run(deal("quatre-sept", HANDS), "KH TH 7H")
    seen = observe(state, 3)
    assert json.loads(json.dumps(seen)) == seen


@pytest.mark.parametrize("preset", ["quatre-sept", "politaine", "la-poule", "pollack"])
def test_never_another_seats_cards(preset):
    rules = rules_for(preset)
    rng = random.Random(preset)
    checked = 0
    for seed in range(25):
        state = new_match(rules, seed)
        while not state.is_over:
            for seat in range(4):
                seen = observe(state, seat)
                assert seen["hand"] == codes(state.hands[seat])
                shown = {s for s in strings_in(seen) if s in CODE_SET}
                for other in range(4):
                    if other != seat:
                        hidden = set(codes(state.hands[other]))
                        assert not shown & hidden, (seed, seat, other, shown & hidden)
                assert seen["score"] == list(state.score)
                assert seen["taken"] == list(state.taken)
                assert seen["deal"] == state.deal and seen["dealer"] == state.dealer
                assert len(seen["tricks"]) == len(state.tricks)
                assert seen["trick"]["cards"] == [CODES[c] for c in state.trick]
                checked += 1
            legal = state.legal()
            state = state.apply(legal[rng.randrange(len(legal))])
    assert checked > 1000


def test_tricks_cards_are_played_by_leader_onwards():
    state = run(deal("quatre-sept", HANDS), "KH TH/politaine 7H 7S   AH 7D 8S QH")
    seen = observe(state, 0)
    second = seen["tricks"][1]
    assert second["leader"] == 1
    assert second["cards"] == ["AH", "7D", "8S", "QH"]  # seats 1, 2, 3, 0
    assert second["winner"] == 1 and second["thirds"] == 4
    assert seen["taken"] == [0, 6]


# -- fields a bot would otherwise rebuild from said and tricks (issue: fields added, none changed)


def seen_by_all(state, key):
    """The field as each seat sees it; the public ones must agree."""
    return [observe(state, seat)[key] for seat in range(4)]


def test_bonus_shows_a_politaine_once_its_run_is_complete():
    state = deal("quatre-sept", HANDS)
    assert seen_by_all(state, "bonus") == [[0, 0]] * 4
    tokens = RUN_HEARTS.split()
    state = run(state, " ".join(tokens[:8]))  # two of the three tricks
    assert seen_by_all(state, "bonus") == [[0, 0]] * 4
    state = run(state, " ".join(tokens[8:]))
    assert seen_by_all(state, "bonus") == [[0, 11]] * 4
    zero, one = (t // 3 for t in state.taken)
    assert seen_by_all(state, "claim_count") == [zero, one, zero, one], "a claim counts no bonus"


def test_melds_and_the_claim_count_follow_the_melds_said():
    state = deal("pollack", HANDS_M, score=(5, 2))
    assert seen_by_all(state, "melds") == [[0, 0]] * 4
    state = run(state, "meld_pollack_H meld_three_T_S")
    assert seen_by_all(state, "melds") == [[6, 0]] * 4
    # A claim counts the total before the deal, thirds taken // 3 and the melds: team's own.
    assert seen_by_all(state, "claim_count") == [11, 2, 11, 2]
    state = run(state, "KH 8C 7H 7D")  # seat 0 takes KH's trick: 1 third
    assert seen_by_all(state, "claim_count") == [11, 2, 11, 2]
    state = run(state, "QC AC KC 8D")  # seat 1 takes 5 thirds: one point
    assert seen_by_all(state, "taken") == [[1, 5]] * 4
    assert seen_by_all(state, "claim_count") == [11, 3, 11, 3]


def test_low_lead_says_when_the_lead_is_bound():
    state = run(deal("la-poule", ANNE), "poules_1 poules_0 poules_0 poules_0")
    assert seen_by_all(state, "low_lead") == [False] * 4
    state = run(state, "TH JH 8H 7H")  # worth 2 thirds: Anne must lead a 7
    assert seen_by_all(state, "low_lead") == [True] * 4
    assert state.legal_strings() == ["play 7C", "play 7D", "play 7S"]
    state = run(state, "7C")
    assert seen_by_all(state, "low_lead") == [True] * 4, "the trick's lead was bound"
    rules = rules_for("quatre-sept")
    state = run(deal(rules, ANNE), "TH JH 8H 7H")
    assert seen_by_all(state, "low_lead") == [False] * 4, "the rule off never binds"


def test_poules_left_and_the_seats_own_poule_suits():
    rules = rules_for("quatre-sept", politaine="before-play")
    state = deal(rules, HANDS)
    # HANDS: seat 0 holds T-9-A of clubs, seat 1 of hearts and diamonds, seat 3 of spades.
    assert seen_by_all(state, "poule_suits") == [["C"], ["D", "H"], [], ["S"]]
    state = run(state, "poules_0 poules_2 poules_0 poules_1")
    assert seen_by_all(state, "poules") == [[0, 2, 0, 1]] * 4
    state = run(state, RUN_HEARTS.replace("/politaine", ""))
    assert seen_by_all(state, "bonus") == [[0, 11]] * 4
    assert seen_by_all(state, "poules") == [[0, 1, 0, 1]] * 4
    assert seen_by_all(state, "poule_suits") == [["C"], ["D", "H"], [], ["S"]], "as dealt"
    assert seen_by_all(deal("quatre-sept", HANDS), "poule_suits") == [[]] * 4


def test_a_run_under_way_is_not_shown():
    """In before-play a run starts on a trick won with T, 9 or A only if its player holds the
    rest of the suit: showing it would show hidden cards."""
    rules = rules_for("quatre-sept", politaine="before-play")
    state = run(deal(rules, HANDS), "poules_0 poules_2 poules_0 poules_0 KH TH 7H 7S")
    assert state.run is not None
    assert not any("run" in key for key in observe(state, 0))
