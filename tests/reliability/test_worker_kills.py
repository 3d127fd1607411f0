"""A worker SIGKILLed in the middle of matches, 20 times during a round-robin (Redis broker,
PostgreSQL): every match ends recorded exactly once, none lost, none doubled, and the ratings equal
those of an undisturbed run of the same round-robin (same seed, same match ids: the bots are
deterministic, seeded by match id and seat).

Slow (a few minutes): ``make test-reliability``.
"""

from __future__ import annotations

import random
import time
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from arena.models import Match, MatchStatus, Rating, RatingBoard, RefitState, Replay, Tournament
from arena.selectors.ratings import tournament_ranking_rows
from arena.selectors.tournaments import tournament_standings
from arena.services.bots import builtin_bots_ensure
from arena.services.queue import RUN_MATCH
from arena.services.tournaments import tournament_create
from config.celery import app as celery_app
from tests.e2e.conftest import Stack, login, wait_for
from tests.reliability.conftest import (
    LEANING_BOT,
    SEEDED_BOT,
    needs_services,
    start_stack,
    upload_ready,
)

pytestmark = [pytest.mark.reliability, pytest.mark.django_db(transaction=True)]

KILLS = 20
PAIRS = 8  # 4 versions: 6 pairings x 2 seat swaps x 8 pairs = 96 matches
SEED = 4242
VISIBILITY = "8"  # s: a killed worker's matches come back after this (a match lasts ~1 s)


def test_a_round_robin_survives_20_worker_kills(transactional_db, tmp_path, settings):
    needs_services()
    # No ladder (beat's ticks would add matches of their own were there one).
    stack = start_stack(tmp_path, redis_url=settings.REDIS_URL, ARENA_VISIBILITY_TIMEOUT=VISIBILITY,
                        ARENA_LADDER="0")
    try:
        _run(stack)
    finally:
        stack.stop()


def _run(stack: Stack) -> None:
    User.objects.create_user("alice", password="alice-password-1")
    alice = login(stack, "alice", "alice-password-1")
    builtins = builtin_bots_ensure()
    # Beat as in production: its minutely sweep recovers a refit whose worker was killed between
    # the commit and the send.
    stack.start_beat()
    stack.start_worker(concurrency=2, ARENA_VISIBILITY_TIMEOUT=VISIBILITY)
    versions = [
        upload_ready(stack, alice, "seeded", SEEDED_BOT),
        upload_ready(stack, alice, "leaning", LEANING_BOT),
        builtins["random"].pk,
        builtins["greedy"].pk,
    ]

    # The undisturbed run.
    first = _schedule(stack, versions)
    total = first.matches.count()
    assert total == 6 * 2 * PAIRS
    _wait_finished(first, total)
    undisturbed = _results(first)
    ranking = tournament_ranking_rows(tournament=first)
    board = _board_ratings(first.rules_key)
    assert set(board) == set(versions)
    stack.kill_worker(stack.workers[-1])

    # The same round-robin again, same seed and the same match ids (so the bots play the same),
    # with the worker killed in the middle of matches.
    first_id = min(undisturbed)
    first.delete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT setval(pg_get_serial_sequence('arena_match', 'id'), %s, false)",
                       [first_id])
    second = _schedule(stack, versions)
    assert set(_ids(second)) == set(undisturbed)

    kills = 0
    cycles = 0
    while kills < KILLS:
        cycles += 1
        assert cycles <= 3 * KILLS, f"only {kills} kills hit a running match in {cycles} tries"
        assert second.matches.exclude(status=MatchStatus.FINISHED).exists(), (
            f"the round-robin finished after only {kills} kills: make it longer"
        )
        since = timezone.now()
        worker = stack.start_worker(concurrency=2, ARENA_VISIBILITY_TIMEOUT=VISIBILITY)
        started = wait_for(
            lambda s=since: _running(second, since=s),
            60, "this worker to start a match", every=0.05,
        )
        time.sleep(random.uniform(0.0, 0.6))  # somewhere in the match (about a second)
        stack.kill_worker(worker)
        if second.matches.filter(pk__in=started, status=MatchStatus.RUNNING).exists():
            kills += 1  # killed while playing it

    stack.start_worker(concurrency=2, ARENA_VISIBILITY_TIMEOUT=VISIBILITY)
    _wait_finished(second, total)

    # Every match recorded exactly once, with the undisturbed result.
    assert _results(second) == undisturbed
    matches = second.matches.all()
    assert all(m.status == MatchStatus.FINISHED and not m.failure for m in matches)
    assert Replay.objects.filter(match__tournament=second).count() == total
    assert sum(m.attempts for m in matches) >= total + KILLS  # the killed ones were played again
    standings = tournament_standings(tournament=second)
    assert all(row["played"] == 3 * 2 * PAIRS for row in standings)
    # The same ratings: the tournament's own ranking and the board (refitted after the last one).
    assert tournament_ranking_rows(tournament=second) == ranking
    assert _board_ratings(second.rules_key) == board


def _schedule(stack: Stack, versions: list[int]) -> Tournament:
    """The round-robin, its tasks sent to this stack's queue."""
    user = User.objects.get(username="alice")
    with mock.patch("arena.services.tournaments.queue_matches") as queue:
        tournament = tournament_create(
            created_by=user, name="kills", rules={"preset": "quatre-sept"},
            version_ids=versions, pairs=PAIRS, seed=SEED,
        )
    for match_id in queue.call_args.kwargs["match_ids"]:
        celery_app.send_task(RUN_MATCH, args=[match_id], queue=stack.queue)
    return tournament


def _running(tournament: Tournament, since) -> list[int]:
    """Matches of ``tournament`` running and started since ``since``."""
    running = tournament.matches.filter(status=MatchStatus.RUNNING, started_at__gte=since)
    return list(running.values_list("pk", flat=True))


def _ids(tournament: Tournament) -> list[int]:
    return list(tournament.matches.values_list("pk", flat=True))


def _results(tournament: Tournament) -> dict[int, tuple]:
    return {
        m.pk: (m.pair, m.swapped, m.winner, m.score, m.reason)
        for m in tournament.matches.all()
    }


def _wait_finished(tournament: Tournament, total: int) -> None:
    wait_for(
        lambda: Tournament.objects.get(pk=tournament.pk).status == "finished", 600,
        "the round-robin to finish", every=0.5,
    )
    done = Match.objects.filter(tournament=tournament, status=MatchStatus.FINISHED).count()
    assert done == total
    # The board's last refit has seen every match of it.
    wait_for(
        lambda: RatingBoard.objects.filter(
            key=tournament.rules_key, state=RefitState.IDLE, matches=total
        ).exists(),
        120, "the board's last refit", every=0.5,
    )


def _board_ratings(key: str) -> dict[int, tuple]:
    board = RatingBoard.objects.get(key=key)
    rows = Rating.objects.filter(board=board, generation=board.generation)
    return {
        r.version_id: (r.rank, round(r.elo, 6), round(r.ci95, 6), r.matches, r.wins, r.losses,
                       r.draws)
        for r in rows
    }
