"""observe(): exactly the protocol's state, the seat's own hand, never another seat's cards."""

from __future__ import annotations

import random

import pytest

from engine.cards import CODES, codes
from engine.observe import observe
from engine.rules import rules_for
from engine.state import new_match
from tests.engine.helpers import deal, run
from tests.engine.test_politaine import HANDS

PROTOCOL_KEYS = {"deal", "dealer", "seat", "score", "hand", "tricks", "trick", "taken", "said"}
# Additions to the protocol's state (allowed: "Fields may be added"), pinned here.
ADDED_KEYS = {"redeals"}
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
