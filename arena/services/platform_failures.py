"""A match the platform could not play (its own failure, never a bot's): played again a bounded
number of times, then void.

Invariant: a bot's misbehaviour is a fault inside a finished match (``SeatFault``: its team
loses); only what no bot controls reaches here (a worker short of CPU at a timeout, a package the
cache cannot unpack, a sandbox that cannot start). A void match is ``failed`` with a ``failure``
that says so: it has no winner, and ratings and standings skip it for all four seats alike. Staff
see it in the admin (status filter), on the match's page and in its round-robin's progress, and
can re-queue it.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from arena.models import Match, MatchStatus, TournamentStatus
from arena.services.matches import match_fail
from arena.services.queue import RUN_MATCH, send_after_commit
from arena.services.tournaments import match_tournament_lock

log = logging.getLogger(__name__)


def match_platform_failure(*, match_id: int, error: BaseException) -> bool:
    """running → queued again (its task sent after ``ARENA_PLATFORM_RETRY_DELAY`` seconds) while
    the match has been started fewer than ``ARENA_MATCH_ATTEMPTS`` times; otherwise running →
    failed, void (at once if its round-robin was cancelled meanwhile). True if it was queued
    again; False if it is void (or not running)."""
    cause = f"{type(error).__name__}: {error}"[:2000]
    limit = settings.ARENA_MATCH_ATTEMPTS
    delay = settings.ARENA_PLATFORM_RETRY_DELAY
    with transaction.atomic():
        match_tournament_lock(match_id=match_id)  # a cancel in flight lands first
        again = Match.objects.filter(
            pk=match_id, status=MatchStatus.RUNNING, attempts__lt=limit
        ).exclude(tournament__status=TournamentStatus.CANCELLED).update(
            status=MatchStatus.QUEUED, started_at=None,
            # its task is held by a worker until then: not lost (``matches_resend_orphans``)
            queued_at=timezone.now() + timedelta(seconds=delay),
            failure=f"attempt failed at {timezone.now():%Y-%m-%d %H:%M:%S} UTC, played again: "
            f"{cause}",
        )
        if again:
            send_after_commit(RUN_MATCH, match_id, countdown=delay)
    if again:
        log.warning("match %s: the platform failed (%s); it is played again", match_id, cause)
        return True
    attempts = Match.objects.filter(pk=match_id).values_list("attempts", flat=True).first()
    match_fail(
        match_id=match_id,
        reason=f"void: the platform could not play it in {attempts} attempt(s); it counts for "
        f"nobody (no result, no rating). Last error: {cause}",
    )
    return False


#: Starts beyond ``ARENA_MATCH_ATTEMPTS`` a match may take after its worker was lost (the broker
#: redelivers the task of a worker that died): then it is void, not played again forever.
LOST_WORKER_STARTS = 2


def match_started_too_often(*, match: Match) -> bool:
    """Void ``match`` (just started: ``attempts`` counts this start) if it has been started more
    than ``ARENA_MATCH_ATTEMPTS + LOST_WORKER_STARTS`` times: each start beyond the platform's
    retries means a worker was lost playing it (killed for memory, its host gone), and a match
    that keeps losing its worker must not hold a worker, or its round-robin, for ever. True if
    it is now void."""
    if match.attempts <= settings.ARENA_MATCH_ATTEMPTS + LOST_WORKER_STARTS:
        return False
    return match_fail(
        match_id=match.pk,
        reason=f"void: started {match.attempts} times, its worker lost while playing it; it "
        "counts for nobody (no result, no rating). Re-queue it once the workers are sound.",
    )
