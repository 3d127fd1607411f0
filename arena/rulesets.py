"""Rule sets as the arena stores them: the rating board's key of a rule set (the full ``rules``
object is ``RuleSet.to_dict()``; ``engine.rules_from_dict`` reads it back).

Must not import Django models, services or selectors.
"""

from __future__ import annotations

from typing import Any

from engine import RuleSet


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
