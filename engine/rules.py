"""Rule sets: the four presets and every option settable on its own (``docs/rules.md``).

A ``RuleSet`` is a frozen value; code asks ``rules.low_lead``, never which preset it came from.
Each option is described once, in ``OPTIONS`` (type, values or bounds, preset values, one
sentence); ``docs/rules.md`` carries the same table and a test holds the two together. The
options that take one of a few words are ``StrEnum``s: they compare equal to their protocol
strings and serialise as them, and the engine compares them by identity.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any


class RulesError(ValueError):
    """A rule set that cannot be built: unknown preset or option, or a value out of range."""


class Politaine(StrEnum):
    """When the 11-point politaine is announced, if at all."""

    FIRST_CARD = "first-card"
    BEFORE_PLAY = "before-play"
    OFF = "off"


class LowLead(StrEnum):
    """After which tricks worth under a point the winner must lead his lowest rank."""

    EVERY_TRICK = "every-trick"
    FIRST_TRICK = "first-trick"
    OFF = "off"


class ClaimOut(StrEnum):
    """When a player may claim that his team has reached the target."""

    ON_LEAD = "on-lead"
    ANY_TURN = "any-turn"
    OFF = "off"


class Deck(StrEnum):
    """The card faces shown (presentation only)."""

    FRENCH = "french"
    GERMAN = "german"


#: The protocol strings each word-valued option takes, in the order of the enum.
POLITAINE_VALUES = tuple(v.value for v in Politaine)
LOW_LEAD_VALUES = tuple(v.value for v in LowLead)
CLAIM_VALUES = tuple(v.value for v in ClaimOut)
DECK_VALUES = tuple(v.value for v in Deck)


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every option by its protocol name (see ``OPTIONS``), plus the preset it started from.

    Invariant: every option holds a value of its type (word-valued options as their enum, even
    when built from a string) within its bounds.
    """

    preset: str
    target: int
    four_sevens: bool
    four_eights: bool
    politaine: Politaine
    redeal: bool
    signals: bool
    capot: bool
    eighteen_four: bool
    low_lead: LowLead
    melds: bool
    claim_out: ClaimOut
    deck: Deck
    #: Derived, for the engine's hot path: a play is only ever a bare card (no politaine
    #: announcement, signal or claim to offer) ...
    plain_play: bool = field(init=False, repr=False, compare=False)
    #: ... or bare cards plus politaine announcements, and nothing else.
    announce_only: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        bare = not self.signals and self.claim_out is ClaimOut.OFF
        first_card = self.politaine is Politaine.FIRST_CARD
        object.__setattr__(self, "plain_play", bare and not first_card)
        object.__setattr__(self, "announce_only", bare and first_card)

    def to_dict(self) -> dict[str, Any]:
        """The protocol's ``rules`` object: ``preset`` and every option, as JSON values."""
        out: dict[str, Any] = {"preset": self.preset}
        for name in OPTION_NAMES:
            value = getattr(self, name)
            out[name] = value.value if isinstance(value, StrEnum) else value
        return out

    def with_options(self, **options: Any) -> RuleSet:
        """This rule set with some options changed (validated); ``preset`` stays."""
        _check_names(options)
        return replace(self, **options)

    def changed_options(self) -> dict[str, Any]:
        """The options that differ from the preset's own values, as JSON values."""
        ours, base = self.to_dict(), PRESETS[self.preset].to_dict()
        return {name: ours[name] for name in OPTION_NAMES if ours[name] != base[name]}

    @property
    def is_preset(self) -> bool:
        return not self.changed_options()


@dataclass(frozen=True, slots=True)
class Option:
    """One rule option, described once: its type, the values it takes, and what it does.

    ``kind`` is ``int``, ``bool`` or the option's ``StrEnum``; ``minimum`` bounds an int.
    """

    name: str
    kind: type
    meaning: str
    minimum: int | None = None

    @property
    def values(self) -> tuple[Any, ...]:
        """The values a word or boolean option takes; empty for an int."""
        if self.kind is bool:
            return (True, False)
        if issubclass(self.kind, StrEnum):
            return tuple(v.value for v in self.kind)
        return ()

    def describe_values(self) -> str:
        """The values column of docs/rules.md's option table."""
        if self.kind is int:
            return f"integer ≥ {self.minimum}"
        if self.kind is bool:
            return "true/false"
        return ", ".join(f'`"{v}"`' for v in self.values)


#: Every option, in protocol order: the one description the docs, forms and API read.
OPTIONS: tuple[Option, ...] = (
    Option("target", int, "points that end the match", minimum=1),
    Option("four_sevens", bool, "four 7s in one hand win the match at the deal"),
    Option("four_eights", bool, "four 8s in one hand win the match at the deal"),
    Option("politaine", Politaine, "the 11-point bonus, and when it is announced"),
    Option("redeal", bool, "a hand without T, 9 or A may ask for a new deal"),
    Option("signals", bool, "tap and slide signals may go with a card"),
    Option("capot", bool, "a team that takes all 8 tricks of a deal wins the match"),
    Option("eighteen_four", bool, "totals of exactly 18 against exactly 4 win the match"),
    Option(
        "low_lead", LowLead, "after a trick worth under 1 point, its winner leads his lowest rank"
    ),
    Option("melds", bool, "Pollack's melds: threes, fours and pollacks score when declared"),
    Option("claim_out", ClaimOut, "a player may claim that his team has reached the target"),
    Option("deck", Deck, "the card faces shown (presentation only)"),
)
OPTION_BY_NAME = {option.name: option for option in OPTIONS}
OPTION_NAMES = tuple(f.name for f in fields(RuleSet) if f.init and f.name != "preset")
assert tuple(option.name for option in OPTIONS) == OPTION_NAMES, "OPTIONS out of step"


def _validate(rules: RuleSet) -> None:
    for option in OPTIONS:
        value = getattr(rules, option.name)
        kind = option.kind
        if kind is int:
            if not isinstance(value, int) or isinstance(value, bool) or value < option.minimum:
                raise RulesError(
                    f"{option.name} must be an integer of at least {option.minimum}, not {value!r}"
                )
        elif kind is bool:
            if not isinstance(value, bool):
                raise RulesError(f"{option.name} must be true or false, not {value!r}")
        elif not isinstance(value, kind):
            try:
                object.__setattr__(rules, option.name, kind(value))
            except (ValueError, TypeError):
                raise RulesError(
                    f"{option.name} must be one of {', '.join(option.values)}; got {value!r}"
                ) from None
    if rules.preset not in _PRESET_NAMES:
        raise RulesError(f"unknown preset {rules.preset!r}; presets: {', '.join(_PRESET_NAMES)}")


def _check_names(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise RulesError(f"unknown option {unknown[0]!r}; options: {', '.join(OPTION_NAMES)}")


_PRESET_NAMES = ("quatre-sept", "politaine", "la-poule", "pollack")

_MAIN: dict[str, Any] = dict(
    target=31,
    four_sevens=True,
    four_eights=False,
    politaine=Politaine.FIRST_CARD,
    redeal=False,
    signals=False,
    capot=False,
    eighteen_four=False,
    low_lead=LowLead.OFF,
    melds=False,
    claim_out=ClaimOut.OFF,
    deck=Deck.FRENCH,
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
        **{
            **_MAIN,
            "target": 200,
            "politaine": Politaine.BEFORE_PLAY,
            "low_lead": LowLead.EVERY_TRICK,
        },
    ),
    "pollack": RuleSet(
        preset="pollack",
        **{
            **_MAIN,
            "target": 21,
            "four_sevens": False,
            "politaine": Politaine.OFF,
            "melds": True,
            "claim_out": ClaimOut.ON_LEAD,
            "deck": Deck.GERMAN,
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
    kind = OPTION_BY_NAME[name].kind
    if kind is int:
        try:
            return name, int(raw)
        except ValueError:
            raise RulesError(f"{name} must be an integer, not {raw!r}") from None
    if kind is bool:
        lowered = raw.lower()
        if lowered in ("true", "yes", "on", "1"):
            return name, True
        if lowered in ("false", "no", "off", "0"):
            return name, False
        raise RulesError(f"{name} must be true or false, not {raw!r}")
    return name, raw


def options_table() -> str:
    """The markdown table of every option and its value in each preset (docs/rules.md's)."""
    presets = list(PRESETS.values())
    head = "| option | meaning | values | " + " | ".join(f"`{p.preset}`" for p in presets) + " |"
    rule = "|---" * (3 + len(presets)) + "|"
    rows = [head, rule]
    for option in OPTIONS:
        cells = [_cell(getattr(p, option.name)) for p in presets]
        rows.append(
            f"| `{option.name}` | {option.meaning} | {option.describe_values()} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(rows)


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
