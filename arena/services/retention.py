"""Retention: how long the platform keeps the bulky parts of a finished match.

A match's result (its row, score, seats and faults) is kept for ever: standings and ratings are
computed from it. Its replay and its seats' stderr tails are the bulk (kilobytes to tens of
kilobytes a match), and are deleted once the match finished more than ``replay_days`` /
``log_days`` ago (0: kept for ever).

Invariant: only matches that finished or failed before the cutoff lose anything; a queued or
running match (a re-queued one included: its ``finished_at`` is cleared) is never touched. Rows
are deleted in batches, each its own short transaction, so a first run over years of data holds
no long lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Sum
from django.db.models.functions import Length
from django.utils import timezone

from arena.models import MatchSeat, MatchStatus, Replay

#: Rows a batch deletes or clears in one transaction.
BATCH = 500

_DONE = (MatchStatus.FINISHED, MatchStatus.FAILED)


@dataclass(frozen=True)
class Pruned:
    """What a run removed (or, in a dry run, would remove): counts, the replays' stored bytes
    and the stderr tails' characters (text: as many bytes but for non-ASCII output)."""

    replays: int = 0
    replay_bytes: int = 0
    logs: int = 0
    log_chars: int = 0


def _cutoff(days: int, now: datetime) -> datetime | None:
    """The finish time before which a match loses what is kept ``days`` days; None: for ever."""
    return now - timedelta(days=days) if days > 0 else None


def _old_replays(cutoff: datetime):
    return Replay.objects.filter(match__status__in=_DONE, match__finished_at__lt=cutoff)


def _old_logs(cutoff: datetime):
    return MatchSeat.objects.filter(
        match__status__in=_DONE, match__finished_at__lt=cutoff
    ).exclude(log="")


def _stored_size(rows, field: str) -> int:
    """The sum of ``field``'s lengths: bytes of binary, characters of text."""
    return rows.aggregate(n=Sum(Length(field)))["n"] or 0


def _in_batches(rows, act) -> None:
    """Apply ``act`` to the primary keys of ``rows``, ``BATCH`` at a time in key order, each
    batch in its own transaction; each batch starts past the last one's keys, so a run reads each
    row once however many it has already done. ``act`` must apply the same filter again."""
    last = 0
    while True:
        ids = list(rows.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:BATCH])
        if not ids:
            return
        with transaction.atomic():
            act(ids)
        last = ids[-1]


def retention_prune(
    *, replay_days: int, log_days: int, now: datetime | None = None, dry_run: bool = False
) -> Pruned:
    """Delete the replays of matches finished over ``replay_days`` days ago and clear the stderr
    tails of matches finished over ``log_days`` days ago (0: keep them for ever); with
    ``dry_run``, only count what would go."""
    now = now or timezone.now()
    replays = logs = None
    counted = {}
    replay_cutoff, log_cutoff = _cutoff(replay_days, now), _cutoff(log_days, now)
    if replay_cutoff is not None:
        replays = _old_replays(replay_cutoff)
        counted.update(replays=replays.count(), replay_bytes=_stored_size(replays, "data"))
    if log_cutoff is not None:
        logs = _old_logs(log_cutoff)
        counted.update(logs=logs.count(), log_chars=_stored_size(logs, "log"))
    if not dry_run:
        if replays is not None:
            _in_batches(replays, lambda ids: replays.filter(pk__in=ids).delete())
        if logs is not None:
            _in_batches(logs, lambda ids: logs.filter(pk__in=ids).update(log=""))
    return Pruned(**counted)

