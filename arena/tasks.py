"""Celery tasks: thin. Each takes an id (or nothing), calls one service, returns.

Match tasks are acks-late and rejected back to the queue when their worker is lost (settings), so
a match whose worker died is played again; the services make a second delivery write nothing.
Services send tasks by name (``arena.services.queue``) and never import this module.
"""

from __future__ import annotations

from dataclasses import asdict

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from arena.services.matches import matches_resend_orphans, matches_sweep_stuck
from arena.services.play import match_play
from arena.services.queue import REFIT_RATINGS, RUN_MATCH
from arena.services.ratings import RefitBusy, ratings_recover_lost, ratings_refit
from arena.services.retention import retention_prune
from arena.services.schedules import schedules_run_due

#: A lost database connection (PostgreSQL restarted, the connection cut) is retried with backoff
#: (1, 2, 4 ... 60 s, about 20 minutes in all); the next run reconnects (``config.celery``).
DATABASE_GONE = (OperationalError, InterfaceError)
RETRY = {
    "autoretry_for": DATABASE_GONE, "retry_backoff": 1, "retry_backoff_max": 60,
    "retry_jitter": False, "max_retries": 25,
}


@shared_task(name=RUN_MATCH, **RETRY)
def run_match(match_id: int) -> bool:
    """Play and record match ``match_id`` (``match_play``); a no-op if it is already finished or
    failed."""
    return match_play(match_id=match_id)


@shared_task(name="arena.tasks.play_match", **RETRY)
def play_match_task_of_earlier_releases(match_id: int) -> bool:
    """The name ``run_match`` had before: match tasks queued by an earlier release are still run
    after an upgrade. Nothing sends it any more."""
    return match_play(match_id=match_id)


@shared_task(name="arena.tasks.sweep_stuck_matches")
def sweep_stuck_matches() -> list[int]:
    """Fail matches stuck past the deadline, resend the lost tasks of queued matches and recover
    the lost refits of rating boards (periodic, from celery beat); returns the failed ids."""
    failed = matches_sweep_stuck()
    matches_resend_orphans()
    ratings_recover_lost()
    return failed


@shared_task(name="arena.tasks.run_due_schedules")
def run_due_schedules() -> list[int]:
    """Start the repeating round-robins that are due (periodic, from celery beat)."""
    return [t.pk for t in schedules_run_due()]


@shared_task(name=REFIT_RATINGS, bind=True, **RETRY)
def refit_ratings(self, board_id: int, ticket: int | None = None) -> bool:
    """Refit rating board ``board_id`` if it is queued with ``ticket`` (debounced:
    ``ratings_request_refit``; None: a task of an earlier release); a redelivered or retried task
    takes over the refit its first run left running. Tried again a second later while another
    session holds the board's refit lock for a moment."""
    again = bool(self.request.retries or (self.request.delivery_info or {}).get("redelivered"))
    try:
        return ratings_refit(board_id=board_id, ticket=ticket, takeover=again)
    except RefitBusy as busy:
        raise self.retry(countdown=1, exc=busy) from busy


@shared_task(name="arena.tasks.ladder_tick")
def ladder_tick() -> dict[int, int]:
    """Top the matches queue up with each ladder's most informative pairings (periodic, from
    celery beat every ``ARENA_LADDER_TICK`` seconds); pairings created per ladder."""
    from arena.services.ladder import ladders_tick

    return ladders_tick()


@shared_task(name="arena.tasks.prune_old_data", **RETRY)
def prune_old_data() -> dict[str, int]:
    """Delete the replays and stderr tails past their retention (``ARENA_KEEP_REPLAYS_DAYS``,
    ``ARENA_KEEP_LOGS_DAYS``; periodic, from celery beat); returns what went."""
    pruned = retention_prune(
        replay_days=settings.ARENA_KEEP_REPLAYS_DAYS, log_days=settings.ARENA_KEEP_LOGS_DAYS
    )
    return asdict(pruned)
