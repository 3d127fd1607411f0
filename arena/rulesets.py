"""Rule sets as the arena stores them: the full ``rules`` object and the rating board's key.

Must not import Django models, services or selectors.
"""

from __future__ import annotations

from typing import Any

from engine import RuleSet, rules_from_dict


def rules_key(rules: RuleSet) -> str:
    """``"quatre-sept"`` for a preset as published, ``"quatre-sept{target=41}"`` with changes
    (options sorted by name): one rating board per distinct rule set."""
    changed = rules.changed_options()
    if not changed:
        return rules.preset
    options = ",".join(f"{name}={_show(value)}" for name, value in sorted(changed.items()))
    return f"{rules.preset}{{{options}}}"


def parse_rules(data: Any) -> RuleSet:
    """The rule set of ``{"preset": ..., option: value, ...}``; ``RulesError`` if invalid."""
    return rules_from_dict(data)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
