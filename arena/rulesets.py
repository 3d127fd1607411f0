"""Rule sets as the arena stores them: the rating board's key of a rule set (the full ``rules``
object is ``RuleSet.to_dict()``; ``engine.rules_from_dict`` reads it back).

Must not import Django models, services or selectors.
"""

from __future__ import annotations

from typing import Any

from arena.errors import ArenaError
from engine import RulesError, RuleSet, rules_from_dict

#: The highest ``target`` the platform plays (the rules allow any: `la-poule`'s is 200). A larger
#: one only makes every match run to the safety limit of deals, costing workers some twenty
#: times a usual match's time, and writes a board key past its column.
MAX_TARGET = 1000


def platform_rules(rules: dict) -> RuleSet:
    """``rules_from_dict`` with the platform's own bound on the target; ``RulesError`` for
    either."""
    ruleset = rules_from_dict(rules)
    if ruleset.target > MAX_TARGET:
        raise RulesError(f"target must be at most {MAX_TARGET} here, not {ruleset.target}")
    return ruleset


def requested_rules(rules: dict) -> RuleSet:
    """``platform_rules`` for a person's request: rules it refuses are an ``ArenaError`` on the
    field ``rules`` (a 400 that says why), not a ``RulesError``."""
    try:
        return platform_rules(rules)
    except RulesError as error:
        raise ArenaError(str(error), field="rules") from None


def rules_key(rules: RuleSet) -> str:
    """``"quatre-sept"`` for a preset as published, ``"quatre-sept{target=41}"`` with changes
    (options sorted by name): one rating board per distinct rule set."""
    changed = rules.changed_options()
    if not changed:
        return rules.preset
    options = ",".join(f"{name}={_show(value)}" for name, value in sorted(changed.items()))
    return f"{rules.preset}{{{options}}}"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
