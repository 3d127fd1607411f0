"""Repeating round-robins: a ``Schedule`` creates a tournament whenever it is due (celery beat
calls ``schedules_run_due`` every minute), over the latest ready version of every active bot."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from arena.errors import ArenaError, checked_integer
from arena.models import BotVersion, Schedule, Tournament, VersionStatus
from arena.rulesets import requested_rules
from arena.services.bots import builtin_bots_ensure
from arena.services.tournaments import (
    MAX_MATCHES,
    MAX_PAIRS,
    MAX_VERSIONS,
    round_robin_name,
    tournament_create,
)

log = logging.getLogger(__name__)

#: The longest schedule name: each run's round-robin is named after it with " YYYY-MM-DD HH:MM"
#: (17 characters) added, and a round-robin's name has at most 120.
MAX_NAME = 120 - 17


def schedule_check(
    *, name: str, rules: dict, pairs: int, every_hours: int, max_versions: int
) -> str:
    """The schedule's name, stripped, if every run could create its round-robin with these
    settings; ``ArenaError`` naming the field otherwise. (A run that cannot is only logged, so a
    schedule that passed a weaker check used to move on every time and never play.)"""
    name = round_robin_name(name)
    if len(name) > MAX_NAME:
        raise ArenaError(
            f"a schedule's name has at most {MAX_NAME} characters (each run adds its date)",
            field="name",
        )
    requested_rules(rules)
    checked_integer(pairs, field="pairs", low=1, high=MAX_PAIRS)
    checked_integer(every_hours, field="every_hours", low=1)
    checked_integer(max_versions, field="max_versions", low=2)
    return name


def schedule_create(
    *,
    name: str,
    rules: dict,
    pairs: int = 2,
    every_hours: int = 24,
    latest_only: bool = True,
    max_versions: int = MAX_VERSIONS,
    first_run_at: datetime | None = None,
) -> Schedule:
    """A repeating round-robin (e.g. nightly: ``every_hours=24``). ``ArenaError`` for any
    setting a run could not play with (``schedule_check``)."""
    name = schedule_check(
        name=name, rules=rules, pairs=pairs, every_hours=every_hours, max_versions=max_versions
    )
    return Schedule.objects.create(
        name=name, rules=rules, pairs=pairs, every_hours=every_hours, latest_only=latest_only,
        max_versions=min(max_versions, MAX_VERSIONS), next_run_at=first_run_at or timezone.now(),
    )


def schedules_run_due(*, now: datetime | None = None) -> list[Tournament]:
    """Run every enabled schedule whose time has come (each at most once per call, even after a
    long pause) and move it to its next time. A schedule with fewer than two ready versions only
    moves on. Safe to call from several beats at once (rows locked, locked ones skipped)."""
    now = now or timezone.now()
    created = []
    with transaction.atomic():
        due = Schedule.objects.select_for_update(skip_locked=True).filter(
            enabled=True, next_run_at__lte=now
        )
        for schedule in due:
            versions = schedule_versions(schedule=schedule)
            if len(versions) >= 2:
                try:
                    created.append(
                        tournament_create(
                            created_by=_system_user(),
                            name=f"{schedule.name[:MAX_NAME]} {now:%Y-%m-%d %H:%M}",
                            rules=schedule.rules,
                            version_ids=[v.pk for v in versions],
                            pairs=schedule.pairs,
                            schedule=schedule,
                        )
                    )
                except ArenaError as error:
                    log.warning("schedule %s could not run: %s", schedule.name, error)
            step = timedelta(hours=max(schedule.every_hours, 1))  # 0 would never move on
            while schedule.next_run_at <= now:
                schedule.next_run_at += step
            schedule.last_run_at = now
            schedule.save(update_fields=["next_run_at", "last_run_at"])
    return created


def schedule_versions(*, schedule: Schedule) -> list[BotVersion]:
    """The ready versions of active bots this schedule plays: the latest of each bot, or all;
    where there are more than it may take (``max_versions``, and as many as keep the run within
    ``MAX_MATCHES``), the most recently uploaded of them, so that a new bot is never left out for
    good by older ones."""
    ready = BotVersion.objects.filter(status=VersionStatus.READY, bot__retired=False).order_by(
        "-created_at", "-pk"
    )
    chosen: list[BotVersion] = []
    seen: set[int] = set()
    for version in ready:
        if schedule.latest_only and version.bot_id in seen:
            continue
        seen.add(version.bot_id)
        chosen.append(version)
    room = max(schedule.max_versions, 2)
    while room > 2 and room * (room - 1) * max(schedule.pairs, 1) > MAX_MATCHES:
        room -= 1
    return sorted(chosen[:room], key=lambda v: (v.bot_id, -v.number))


def _system_user():
    builtin_bots_ensure()
    return get_user_model().objects.get(username=settings.ARENA_SYSTEM_USER)
