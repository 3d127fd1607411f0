"""Rule sets: the four presets of RULES.md and every option settable on its own.

A ``RuleSet`` is a frozen value; code asks ``rules.low_lead``, never which preset it came from.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any


class RulesError(ValueError):
    """A rule set that cannot be built: unknown preset or option, or a value out of range."""


POLITAINE_VALUES = ("first-card", "before-play", "off")
LOW_LEAD_VALUES = ("every-trick", "first-trick", "off")
CLAIM_VALUES = ("on-lead", "any-turn", "off")
DECK_VALUES = ("french", "german")


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every option of RULES.md by its protocol name, plus the preset it started from."""

    preset: str
    target: int
    four_sevens: bool
    four_eights: bool
    politaine: str
    redeal: bool
    signals: bool
    capot: bool
    eighteen_four: bool
    low_lead: str
    melds: bool
    claim_out: str
    deck: str
    #: Derived, for the engine's hot path: a play is only ever a bare card (no politaine
    #: announcement, signal or claim to offer) ...
    plain_play: bool = field(init=False, repr=False, compare=False)
    #: ... or bare cards plus politaine announcements, and nothing else.
    announce_only: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        bare = not self.signals and self.claim_out == "off"
        object.__setattr__(self, "plain_play", bare and self.politaine != "first-card")
        object.__setattr__(self, "announce_only", bare and self.politaine == "first-card")

    def to_dict(self) -> dict[str, Any]:
        """The protocol's ``rules`` object: ``preset`` and every option."""
        return {"preset": self.preset, **{name: getattr(self, name) for name in OPTION_NAMES}}

    def with_options(self, **options: Any) -> RuleSet:
        """This rule set with some options changed (validated); ``preset`` stays."""
        _check_names(options)
        return replace(self, **options)

    def changed_options(self) -> dict[str, Any]:
        """The options that differ from the preset's own values."""
        base = PRESETS[self.preset]
        return {
            name: getattr(self, name)
            for name in OPTION_NAMES
            if getattr(self, name) != getattr(base, name)
        }

    @property
    def is_preset(self) -> bool:
        return not self.changed_options()


OPTION_NAMES = tuple(f.name for f in fields(RuleSet) if f.init and f.name != "preset")

_CHOICES = {
    "politaine": POLITAINE_VALUES,
    "low_lead": LOW_LEAD_VALUES,
    "claim_out": CLAIM_VALUES,
    "deck": DECK_VALUES,
}
_BOOLEANS = ("four_sevens", "four_eights", "redeal", "signals", "capot", "eighteen_four", "melds")


def _validate(rules: RuleSet) -> None:
    if not isinstance(rules.target, int) or isinstance(rules.target, bool) or rules.target < 1:
        raise RulesError(f"target must be an integer of at least 1, not {rules.target!r}")
    for name in _BOOLEANS:
        value = getattr(rules, name)
        if not isinstance(value, bool):
            raise RulesError(f"{name} must be true or false, not {value!r}")
    for name, allowed in _CHOICES.items():
        value = getattr(rules, name)
        if value not in allowed:
            raise RulesError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    if rules.preset not in _PRESET_NAMES:
        raise RulesError(f"unknown preset {rules.preset!r}; presets: {', '.join(_PRESET_NAMES)}")


def _check_names(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise RulesError(f"unknown option {unknown[0]!r}; options: {', '.join(OPTION_NAMES)}")


_PRESET_NAMES = ("quatre-sept", "politaine", "la-poule", "pollack")

_MAIN = dict(
    target=31,
    four_sevens=True,
    four_eights=False,
    politaine="first-card",
    redeal=False,
    signals=False,
    capot=False,
    eighteen_four=False,
    low_lead="off",
    melds=False,
    claim_out="off",
    deck="french",
)

PRESETS: dict[str, RuleSet] = {
    "quatre-sept": RuleSet(preset="quatre-sept", **_MAIN),
    "politaine": RuleSet(
        preset="politaine",
        **{
            **_MAIN,
            "target": 33,
            "four_sevens": False,
            "four_eights": True,
            "redeal": True,
            "signals": True,
            "capot": True,
        },
    ),
    "la-poule": RuleSet(
        preset="la-poule",
        **{**_MAIN, "target": 200, "politaine": "before-play", "low_lead": "every-trick"},
    ),
    "pollack": RuleSet(
        preset="pollack",
        **{
            **_MAIN,
            "target": 21,
            "four_sevens": False,
            "politaine": "off",
            "melds": True,
            "claim_out": "on-lead",
            "deck": "german",
        },
    ),
}


def rules_for(preset: str, **options: Any) -> RuleSet:
    """A preset with options changed, e.g. ``rules_for("quatre-sept", target=41)``."""
    try:
        base = PRESETS[preset]
    except KeyError:
        raise RulesError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}") from None
    return base.with_options(**options) if options else base


def rules_from_dict(data: Any) -> RuleSet:
    """The rule set of a protocol ``rules`` object: ``preset`` plus any options to override."""
    if not isinstance(data, dict):
        raise RulesError("rules must be an object with a 'preset' and options")
    options = dict(data)
    preset = options.pop("preset", None)
    if not isinstance(preset, str):
        raise RulesError(f"rules need a 'preset', one of {', '.join(PRESETS)}")
    return rules_for(preset, **options)


def parse_option(text: str) -> tuple[str, Any]:
    """``"target=41"`` -> ``("target", 41)``; values typed by the option (for command lines)."""
    name, sep, raw = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep:
        raise RulesError(f"expected OPTION=VALUE, got {text!r}")
    _check_names({name: None})
    raw = raw.strip()
    if name == "target":
        try:
            return name, int(raw)
        except ValueError:
            raise RulesError(f"target must be an integer, not {raw!r}") from None
    if name in _BOOLEANS:
        lowered = raw.lower()
        if lowered in ("true", "yes", "on", "1"):
            return name, True
        if lowered in ("false", "no", "off", "0"):
            return name, False
        raise RulesError(f"{name} must be true or false, not {raw!r}")
    return name, raw
