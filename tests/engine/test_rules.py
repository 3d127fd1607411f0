"""Rule sets: the presets are docs/rules.md's table; every option settable alone; clear errors."""

from __future__ import annotations

import json

import pytest

from engine.rules import (
    OPTION_BY_NAME,
    OPTION_NAMES,
    OPTIONS,
    PRESETS,
    Politaine,
    RulesError,
    RuleSet,
    parse_option,
    rules_for,
    rules_from_dict,
)

# docs/rules.md, "Presets and options", column by column.
TABLE = {
    "quatre-sept": dict(
        target=31, four_sevens=True, four_eights=False, politaine="first-card", redeal=False,
        signals=False, capot=False, eighteen_four=False, low_lead="off", melds=False,
        claim_out="off", deck="french",
    ),
    "politaine": dict(
        target=33, four_sevens=False, four_eights=True, politaine="first-card", redeal=True,
        signals=True, capot=True, eighteen_four=False, low_lead="off", melds=False,
        claim_out="off", deck="french",
    ),
    "la-poule": dict(
        target=200, four_sevens=True, four_eights=False, politaine="before-play", redeal=False,
        signals=False, capot=False, eighteen_four=False, low_lead="every-trick", melds=False,
        claim_out="off", deck="french",
    ),
    "pollack": dict(
        target=21, four_sevens=False, four_eights=False, politaine="off", redeal=False,
        signals=False, capot=False, eighteen_four=False, low_lead="off", melds=True,
        claim_out="on-lead", deck="german",
    ),
}

# Every value each option takes (docs/rules.md's "values" column), one non-default at least.
VALUES = {
    "target": [1, 21, 41, 1000],
    "four_sevens": [True, False],
    "four_eights": [True, False],
    "politaine": ["first-card", "before-play", "off"],
    "redeal": [True, False],
    "signals": [True, False],
    "capot": [True, False],
    "eighteen_four": [True, False],
    "low_lead": ["every-trick", "first-trick", "off"],
    "melds": [True, False],
    "claim_out": ["on-lead", "any-turn", "off"],
    "deck": ["french", "german"],
}

BAD_VALUES = {
    "target": [0, -5, "31", 31.0, True, None],
    "four_sevens": ["true", 1, None],
    "four_eights": ["yes", 0],
    "politaine": ["first_card", "on", True, None],
    "redeal": ["false", 1],
    "signals": [1],
    "capot": ["on"],
    "eighteen_four": [0],
    "low_lead": ["every_trick", "always", False],
    "melds": ["true"],
    "claim_out": ["on_lead", True],
    "deck": ["italian", "French"],
}


def test_the_four_presets_exist():
    assert set(PRESETS) == set(TABLE)


@pytest.mark.parametrize("preset", sorted(TABLE))
def test_preset_matches_the_table(preset):
    rules = rules_for(preset)
    assert rules.to_dict() == {"preset": preset, **TABLE[preset]}
    assert rules.is_preset
    assert rules.changed_options() == {}


def test_every_option_of_the_table_is_in_the_rules_object():
    for preset in TABLE:
        assert set(rules_for(preset).to_dict()) == {"preset", *VALUES}


@pytest.mark.parametrize("preset", sorted(TABLE))
@pytest.mark.parametrize("option", sorted(VALUES))
def test_each_option_settable_alone(preset, option):
    base = rules_for(preset).to_dict()
    for value in VALUES[option]:
        rules = rules_for(preset, **{option: value})
        expected = {**base, option: value}
        assert rules.to_dict() == expected
        assert rules.preset == preset, "the preset the options started from is kept"
        changed = {option: value} if value != base[option] else {}
        assert rules.changed_options() == changed
        # The same through the protocol object and with_options.
        assert rules_from_dict({"preset": preset, option: value}) == rules
        assert rules_for(preset).with_options(**{option: value}) == rules


def test_options_combine():
    rules = rules_for("quatre-sept", target=41, melds=True, claim_out="any-turn", signals=True)
    assert rules.changed_options() == {
        "target": 41, "melds": True, "claim_out": "any-turn", "signals": True,
    }
    assert rules_from_dict(rules.to_dict()) == rules


def test_rule_sets_are_frozen_values():
    rules = rules_for("pollack")
    with pytest.raises(AttributeError):
        rules.target = 5  # type: ignore[misc]
    assert rules_for("pollack") == rules and hash(rules_for("pollack")) == hash(rules)


def test_unknown_preset_is_a_clear_error():
    with pytest.raises(RulesError, match=r"unknown preset 'belote'.*quatre-sept"):
        rules_for("belote")
    with pytest.raises(RulesError, match="preset"):
        rules_from_dict({"target": 31})
    with pytest.raises(RulesError, match="unknown preset"):
        rules_from_dict({"preset": "nope"})
    with pytest.raises(RulesError):
        rules_from_dict(["quatre-sept"])


def test_unknown_option_is_a_clear_error():
    with pytest.raises(RulesError, match="unknown option 'trumps'"):
        rules_for("quatre-sept", trumps=True)
    with pytest.raises(RulesError, match="unknown option 'trumps'"):
        rules_from_dict({"preset": "quatre-sept", "trumps": True})
    with pytest.raises(RulesError, match="unknown option"):
        rules_for("quatre-sept").with_options(preset="pollack")


@pytest.mark.parametrize("option", sorted(BAD_VALUES))
def test_bad_values_are_clear_errors(option):
    for value in BAD_VALUES[option]:
        with pytest.raises(RulesError, match=option):
            rules_for("quatre-sept", **{option: value})
        with pytest.raises(RulesError, match=option):
            rules_from_dict({"preset": "politaine", option: value})


def test_rules_error_is_a_value_error():
    assert issubclass(RulesError, ValueError)


def test_ruleset_validates_on_construction():
    with pytest.raises(RulesError):
        RuleSet(**{"preset": "quatre-sept", **TABLE["quatre-sept"], "target": 0})
    with pytest.raises(RulesError, match="unknown preset"):
        RuleSet(**{"preset": "custom", **TABLE["quatre-sept"]})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("target=41", ("target", 41)),
        ("four-sevens=false", ("four_sevens", False)),
        ("capot=true", ("capot", True)),
        ("melds=on", ("melds", True)),
        ("low_lead=first-trick", ("low_lead", "first-trick")),
        ("claim-out = any-turn", ("claim_out", "any-turn")),
    ],
)
def test_parse_option(text, expected):
    assert parse_option(text) == expected
    name, value = expected
    rules_for("quatre-sept", **{name: value})


@pytest.mark.parametrize("text", ["target", "target=many", "capot=perhaps", "trumps=true"])
def test_parse_option_errors(text):
    with pytest.raises(RulesError):
        parse_option(text)


@pytest.mark.parametrize("option", ["politaine", "low_lead", "claim_out", "deck"])
def test_word_options_hold_their_enum_and_serialise_as_plain_strings(option):
    kind = OPTION_BY_NAME[option].kind
    for value in VALUES[option]:
        rules = rules_for("quatre-sept", **{option: value})
        held = getattr(rules, option)
        assert type(held) is kind and held is kind(value) and held == value
        assert type(rules.to_dict()[option]) is str
        assert json.loads(json.dumps(rules.to_dict()))[option] == value


def test_one_description_per_option():
    assert [o.name for o in OPTIONS] == list(OPTION_NAMES) == list(VALUES)
    for option in OPTIONS:
        assert option.meaning and option.describe_values()
        if option.kind is not int:
            assert set(option.values) == set(VALUES[option.name]) | (
                {True, False} if option.kind is bool else set()
            )
    assert rules_for("quatre-sept", politaine=Politaine.OFF).politaine is Politaine.OFF
    with pytest.raises(RulesError, match="target must be an integer of at least 1"):
        rules_for("quatre-sept", target=0)
