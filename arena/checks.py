"""System checks of the arena's settings (``manage.py check``; ``--deploy`` adds the deploy ones).

Invariant: each names the setting to change. Must stay cheap: no database, no broker.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register


@register(Tags.compatibility)
def clock_settings(app_configs: Any = None, **kwargs: Any) -> list:
    """A move clock the sandbox can enforce, and a broker that does not hand a match that is
    still playing to a second worker."""
    problems: list = []
    if settings.ARENA_MOVE_MS < 1:
        problems.append(
            Error(
                f"ARENA_MOVE_MS is {settings.ARENA_MOVE_MS}: the move clock must be at least 1 ms.",
                id="arena.E001",
            )
        )
    visibility = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}).get("visibility_timeout")
    if (
        settings.ARENA_FIXED_TURNS
        and visibility is not None
        and (visibility <= settings.ARENA_MATCH_TIME_LIMIT)
    ):
        problems.append(
            Warning(
                f"ARENA_VISIBILITY_TIMEOUT ({visibility} s) is not above ARENA_MATCH_TIME_LIMIT "
                f"({settings.ARENA_MATCH_TIME_LIMIT} s) while ARENA_FIXED_TURNS makes every "
                "decision take the move clock: a long match would be handed to a second worker.",
                hint="Raise ARENA_VISIBILITY_TIMEOUT above the match time limit.",
                id="arena.W002",
            )
        )
    return problems


@register(Tags.security, deploy=True)
def fixed_turns(app_configs: Any = None, **kwargs: Any) -> list:
    """Published ratings want fixed-time turns: otherwise partners can signal through think time."""
    if settings.ARENA_FIXED_TURNS:
        return []
    return [
        Warning(
            "ARENA_FIXED_TURNS is off: the two seats of a team (copies of one upload) can tell "
            "each other their hands through how long they think.",
            hint="Set ARENA_FIXED_TURNS=1 with a shorter ARENA_MOVE_MS (e.g. 200) for ratings "
            "you publish (docs/security.md, 'Fixed-time turns').",
            id="arena.W001",
        )
    ]
