"""Property tests over many seeded random matches, per preset and per option.

Every replay is re-checked against docs/rules.md by ``reference.check_rules`` (written from the
rules, not from the engine): cards conserved, follow suit, 35 thirds and 11 card points a deal,
scores, bonuses, melds, low lead, results. The referee enforces legal play (a random seat never
faults), and a share of the replays are re-checked by ``check_replay``. The bigger sweep is marked
slow.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.bots import BotSeat, make_bot
from engine.cards import FULL_DECK
from engine.check import check_replay
from engine.referee import referee_match
from engine.rules import rules_for
from engine.state import new_match
from tests.engine.reference import check_rules

PRESETS = ["quatre-sept", "politaine", "la-poule", "pollack"]
# Each option changed alone from a preset where it is not the default.
OPTION_VARIANTS = [
    ("quatre-sept", {"four_sevens": False}),
    ("quatre-sept", {"four_eights": True}),
    ("quatre-sept", {"politaine": "before-play"}),
    ("quatre-sept", {"politaine": "off"}),
    ("quatre-sept", {"redeal": True}),
    ("quatre-sept", {"signals": True}),
    ("quatre-sept", {"capot": True}),
    ("quatre-sept", {"eighteen_four": True}),
    ("quatre-sept", {"low_lead": "every-trick"}),
    ("quatre-sept", {"low_lead": "first-trick"}),
    ("quatre-sept", {"melds": True}),
    ("quatre-sept", {"claim_out": "on-lead"}),
    ("quatre-sept", {"claim_out": "any-turn"}),
    ("quatre-sept", {"target": 5}),
    ("la-poule", {"low_lead": "first-trick"}),
    ("la-poule", {"target": 41}),
    ("pollack", {"claim_out": "any-turn"}),
    ("pollack", {"claim_out": "off"}),
    ("pollack", {"politaine": "first-card"}),
    ("politaine", {"redeal": False}),
    ("politaine", {"capot": False, "eighteen_four": True}),
]
FAST = {"quatre-sept": 1000, "politaine": 800, "la-poule": 120, "pollack": 1500}


def random_seats():
    return [BotSeat(make_bot("random")) for _ in range(4)]


def check_matches(rules, seeds, recheck_every=10):
    reasons = set()
    for seed in seeds:
        outcome = referee_match(rules, random_seats(), seed=seed, match_id=f"p{seed}")
        replay = outcome.replay
        assert replay["result"]["fault"] is None, "a random seat only ever plays legal actions"
        assert not outcome.logs
        check_rules(replay)
        if seed % recheck_every == 0:
            check_replay(replay)
        reasons.add(replay["result"]["reason"])
    return reasons


@pytest.mark.parametrize("preset", PRESETS)
def test_random_matches_per_preset(preset):
    reasons = check_matches(rules_for(preset), range(FAST[preset]), recheck_every=25)
    assert "forfeit" not in reasons


@pytest.mark.parametrize(
    "preset, options", OPTION_VARIANTS, ids=[f"{p}-{o}" for p, o in OPTION_VARIANTS]
)
def test_random_matches_per_option(preset, options):
    rules = rules_for(preset, **options)
    n = 60 if preset == "la-poule" else 150
    check_matches(rules, range(1000, 1000 + n), recheck_every=15)


@st.composite
def rule_sets(draw):
    preset = draw(st.sampled_from(PRESETS))
    options = {
        "target": draw(st.integers(1, 60)),
        "four_sevens": draw(st.booleans()),
        "four_eights": draw(st.booleans()),
        "politaine": draw(st.sampled_from(["first-card", "before-play", "off"])),
        "redeal": draw(st.booleans()),
        "signals": draw(st.booleans()),
        "capot": draw(st.booleans()),
        "eighteen_four": draw(st.booleans()),
        "low_lead": draw(st.sampled_from(["every-trick", "first-trick", "off"])),
        "melds": draw(st.booleans()),
        "claim_out": draw(st.sampled_from(["on-lead", "any-turn", "off"])),
        "deck": draw(st.sampled_from(["french", "german"])),
    }
    return rules_for(preset, **options)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(), seed=st.integers(0, 2**63 - 1))
def test_any_rule_set_any_seed(rules, seed):
    outcome = referee_match(rules, random_seats(), seed=seed, match_id="h")
    assert outcome.replay["result"]["fault"] is None
    check_rules(outcome.replay)
    check_replay(outcome.replay)


@settings(max_examples=300, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 2**32), moves=st.randoms(use_true_random=False))
def test_state_invariants_at_every_step(rules, seed, moves):
    state = new_match(rules, seed)
    while not state.is_over:
        hands = state.hands
        played = sum(len(t.cards) for t in state.tricks) + len(state.trick)
        assert sum(bin(h).count("1") for h in hands) == 32 - played
        union = hands[0] | hands[1] | hands[2] | hands[3]
        for t in state.tricks:
            for c in t.cards:
                union |= 1 << c
        for c in state.trick:
            union |= 1 << c
        assert union == FULL_DECK, "every card is in a hand or on the table, once"
        assert sum(state.taken) == sum(t.thirds for t in state.tricks)
        legal = state.legal()
        assert legal, "a running match always offers an action"
        assert len(set(legal)) == len(legal)
        assert len(state.legal_strings()) == len(set(state.legal_strings()))
        state = state.apply(moves.choice(legal))
    assert state.to_move == -1 and state.legal() == ()
    assert state.result is not None


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_many_random_matches_per_preset(preset):
    n = 600 if preset == "la-poule" else 5000
    check_matches(rules_for(preset), range(10_000, 10_000 + n), recheck_every=5)


@pytest.mark.slow
@pytest.mark.parametrize(
    "preset, options", OPTION_VARIANTS, ids=[f"{p}-{o}" for p, o in OPTION_VARIANTS]
)
def test_many_random_matches_per_option(preset, options):
    n = 300 if preset == "la-poule" else 2000
    check_matches(rules_for(preset, **options), range(20_000, 20_000 + n), recheck_every=5)


def test_direct_random_play_reaches_every_end():
    """Across presets and options, random play ends matches in every way docs/rules.md names."""
    rng = random.Random(0)
    reasons = set()
    variants = [
        rules_for("politaine", eighteen_four=True),
        rules_for("quatre-sept", four_eights=True),
        rules_for("pollack"),
        rules_for("quatre-sept", target=31),
    ]
    for rules in variants:
        for seed in range(400):
            state = new_match(rules, seed)
            while not state.is_over:
                legal = state.legal()
                state = state.apply(legal[rng.randrange(len(legal))])
            reasons.add(state.result.reason)
    assert {"target", "four-sevens", "four-eights", "capot", "claim"} <= reasons
