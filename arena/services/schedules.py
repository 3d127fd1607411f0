"""Repeating round-robins: a ``Schedule`` creates a tournament whenever it is due (celery beat
calls ``schedules_run_due`` every minute), over the latest ready version of every active bot."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from arena.errors import ArenaError
from arena.models import BotVersion, Schedule, Tournament, VersionStatus
from arena.rulesets import requested_rules
from arena.services.bots import builtin_bots_ensure
from arena.services.tournaments import MAX_VERSIONS, round_robin_name, tournament_create

log = logging.getLogger(__name__)


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
    """A repeating round-robin (e.g. nightly: ``every_hours=24``). ``ArenaError`` for bad rules
    or a bad name (each run's round-robin is named after it)."""
    name = round_robin_name(name)
    requested_rules(rules)
    if every_hours < 1:
        raise ArenaError("every_hours must be at least 1", field="every_hours")
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
                            name=f"{schedule.name} {now:%Y-%m-%d %H:%M}",
                            rules=schedule.rules,
                            version_ids=[v.pk for v in versions],
                            pairs=schedule.pairs,
                            schedule=schedule,
                        )
                    )
                except ArenaError as error:
                    log.warning("schedule %s could not run: %s", schedule.name, error)
            step = timedelta(hours=schedule.every_hours)
            while schedule.next_run_at <= now:
                schedule.next_run_at += step
            schedule.last_run_at = now
            schedule.save(update_fields=["next_run_at", "last_run_at"])
    return created


def schedule_versions(*, schedule: Schedule) -> list[BotVersion]:
    """The ready versions of active bots this schedule plays: the latest of each bot, or all."""
    ready = BotVersion.objects.filter(status=VersionStatus.READY, bot__retired=False).order_by(
        "bot_id", "-number"
    )
    chosen: list[BotVersion] = []
    seen: set[int] = set()
    for version in ready:
        if schedule.latest_only and version.bot_id in seen:
            continue
        seen.add(version.bot_id)
        chosen.append(version)
    return chosen[: schedule.max_versions]


def _system_user():
    builtin_bots_ensure()
    return get_user_model().objects.get(username=settings.ARENA_SYSTEM_USER)
