"""Serializers that describe, for the schema, JSON the engine writes: a rule set, a score, replay
format 1. Responses are built elsewhere (the engine's dicts, stored as they are); these classes
only give a generated client its types, and must follow ``engine.rules`` and ``engine.replay``.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from arena.rulesets import MAX_TARGET
from engine.rules import CLAIM_VALUES, DECK_VALUES, LOW_LEAD_VALUES, POLITAINE_VALUES, PRESETS

#: The presets by name, in the engine's order (an enum in the schema: ``PresetEnum``).
PRESET_CHOICES = tuple(PRESETS)


class RulesOptions(serializers.Serializer):
    """Every option of a rule set by its protocol name (docs/rules.md)."""

    target = serializers.IntegerField(min_value=1, help_text="points that win the match")
    four_sevens = serializers.BooleanField()
    four_eights = serializers.BooleanField()
    politaine = serializers.ChoiceField(choices=POLITAINE_VALUES)
    redeal = serializers.BooleanField()
    signals = serializers.BooleanField()
    capot = serializers.BooleanField()
    eighteen_four = serializers.BooleanField()
    low_lead = serializers.ChoiceField(choices=LOW_LEAD_VALUES)
    melds = serializers.BooleanField()
    claim_out = serializers.ChoiceField(choices=CLAIM_VALUES)
    deck = serializers.ChoiceField(choices=DECK_VALUES)


class Rules(RulesOptions):
    """A full rule set as stored and sent to bots: the preset it started from and every option."""

    preset = serializers.ChoiceField(choices=PRESET_CHOICES)


class RulesInput(serializers.Serializer):
    """A preset and the options to change (any option left out keeps the preset's value)."""

    preset = serializers.ChoiceField(choices=PRESET_CHOICES)
    target = serializers.IntegerField(min_value=1, max_value=MAX_TARGET, required=False)
    four_sevens = serializers.BooleanField(required=False)
    four_eights = serializers.BooleanField(required=False)
    politaine = serializers.ChoiceField(choices=POLITAINE_VALUES, required=False)
    redeal = serializers.BooleanField(required=False)
    signals = serializers.BooleanField(required=False)
    capot = serializers.BooleanField(required=False)
    eighteen_four = serializers.BooleanField(required=False)
    low_lead = serializers.ChoiceField(choices=LOW_LEAD_VALUES, required=False)
    melds = serializers.BooleanField(required=False)
    claim_out = serializers.ChoiceField(choices=CLAIM_VALUES, required=False)
    deck = serializers.ChoiceField(choices=DECK_VALUES, required=False)


@extend_schema_field(RulesInput)
class RulesInputField(serializers.DictField):
    """The ``rules`` of a new round-robin: a JSON object checked by the engine
    (``rules_from_dict``: its messages name the bad option), typed in the schema."""


@extend_schema_field(Rules)
class RulesField(serializers.JSONField):
    """A stored rule set (``Rules`` in the schema)."""


#: Two integers: team 0 (seats 0 and 2), team 1 (seats 1 and 3).
TEAM_PAIR = serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2)


@extend_schema_field(serializers.ListField(
    child=serializers.IntegerField(), min_length=2, max_length=2, allow_null=True,
    help_text="match points of team 0 and team 1; null until the match has finished",
))
class ScoreField(serializers.JSONField):
    """A match's final score (null until it has one)."""


# --- replay format 1 ------------------------------------------------------------------------------

_CARDS = serializers.ListField(child=serializers.CharField(), help_text="card codes, e.g. 7H")
_HANDS = serializers.ListField(child=_CARDS, min_length=4, max_length=4, help_text="by seat")


class ReplayPlayer(serializers.Serializer):
    seat = serializers.IntegerField()
    team = serializers.IntegerField()
    bot = serializers.CharField()
    version = serializers.IntegerField(allow_null=True)


class ReplayRedeal(serializers.Serializer):
    by = serializers.IntegerField()
    hands = _HANDS


class ReplaySaid(serializers.Serializer):
    seat = serializers.IntegerField()
    trick = serializers.IntegerField()
    say = serializers.CharField()
    card = serializers.CharField(required=False)


class ReplayTrick(serializers.Serializer):
    leader = serializers.IntegerField()
    cards = _CARDS
    winner = serializers.IntegerField()
    thirds = serializers.IntegerField()


class ReplayOpenTrick(serializers.Serializer):
    leader = serializers.IntegerField()
    cards = _CARDS


class ReplayDeal(serializers.Serializer):
    number = serializers.IntegerField()
    dealer = serializers.IntegerField()
    redeals = ReplayRedeal(many=True)
    hands = _HANDS
    said = ReplaySaid(many=True)
    tricks = ReplayTrick(many=True)
    thirds = TEAM_PAIR
    points = TEAM_PAIR
    bonus = TEAM_PAIR
    melds = TEAM_PAIR
    score = TEAM_PAIR
    end = serializers.CharField(allow_null=True)
    trick = ReplayOpenTrick(required=False, help_text="a trick cut short (forfeit, claim)")


class ReplayFault(serializers.Serializer):
    seat = serializers.IntegerField()
    kind = serializers.CharField()
    detail = serializers.CharField()


class ReplayResult(serializers.Serializer):
    score = TEAM_PAIR
    winner = serializers.IntegerField(allow_null=True, help_text="a team; null for a draw")
    reason = serializers.CharField()
    fault = ReplayFault(allow_null=True)


class ReplayClock(serializers.Serializer):
    hello_ms = serializers.IntegerField()
    move_ms = serializers.IntegerField()
    bank_ms = serializers.IntegerField()
    fixed_turns = serializers.BooleanField(
        help_text="every decision was released move_ms after it was asked"
    )


class Replay(serializers.Serializer):
    """Replay format 1 (``quatresept-replay/1``; docs/protocol.md)."""

    format = serializers.CharField()
    match = serializers.CharField()
    seed = serializers.IntegerField()
    rules = Rules()
    players = ReplayPlayer(many=True)
    deals = ReplayDeal(many=True)
    result = ReplayResult()
    moves_ms = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="each seat's thinking time per move, in ms",
    )
    clock = ReplayClock(
        required=False, help_text="the clock announced in hello (absent from older replays)"
    )
