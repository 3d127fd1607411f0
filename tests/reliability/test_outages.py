"""Redis killed and restarted, and PostgreSQL connections cut, during round-robins: each completes,
nothing is lost (every match finished once, none failed, the board refitted over all of them), the
API keeps answering without a 500, and no secret reaches a log.

Slow (a minute or two each): ``make test-reliability``.
"""

from __future__ import annotations

import time

import pytest
import requests
from django.contrib.auth.models import User
from django.db import connection

from arena.models import Match, MatchStatus, RatingBoard, RefitState, Replay, Tournament
from arena.selectors.tournaments import tournament_standings
from arena.services.bots import builtin_bots_ensure
from tests.e2e.conftest import Stack, login, wait_for
from tests.reliability.conftest import (
    SEEDED_BOT,
    RedisServer,
    needs_services,
    start_stack,
    upload_ready,
)

pytestmark = [pytest.mark.reliability, pytest.mark.django_db(transaction=True)]

PAIRS = 8  # 3 versions: 3 pairings x 2 seat swaps x 8 pairs = 48 matches
VISIBILITY = "10"


def test_redis_killed_and_restarted_three_times_during_a_round_robin(
    transactional_db, tmp_path, redis_server: RedisServer, settings
):
    needs_services()
    secret = "django-secret-" + "k" * 40
    stack = start_stack(tmp_path, redis_url=redis_server.url, ARENA_VISIBILITY_TIMEOUT=VISIBILITY,
                        DJANGO_SECRET_KEY=secret)
    try:
        tournament = _round_robin(stack)
        total = tournament.matches.count()
        for outage in range(3):
            _wait_done_at_least(tournament, (outage + 1) * total // 5)
            redis_server.kill()
            # While Redis is down the API still reads (the database is the record).
            body = requests.get(f"{stack.url}/api/tournaments/{tournament.pk}/", timeout=30)
            assert body.status_code == 200
            time.sleep(3)
            redis_server.start()
        _assert_complete(tournament, total)
        logs = b"".join(p.read_bytes() for p in tmp_path.glob("*.log"))
        assert b"Connection to broker lost" in logs or b"Cannot connect to" in logs
        assert redis_server.password.encode() not in logs
        assert secret.encode() not in logs
    finally:
        stack.stop()


def test_database_connections_cut_during_a_round_robin(transactional_db, tmp_path, settings):
    needs_services()
    stack = start_stack(tmp_path, redis_url=settings.REDIS_URL, ARENA_VISIBILITY_TIMEOUT=VISIBILITY)
    try:
        tournament = _round_robin(stack)
        total = tournament.matches.count()
        url = f"{stack.url}/api/tournaments/{tournament.pk}/"
        cuts = 0
        while Tournament.objects.get(pk=tournament.pk).status != "finished" and cuts < 12:
            time.sleep(1.5)
            cuts += _cut_every_other_connection()
            # The web's connections were cut too: the next requests reconnect, no 500.
            for _ in range(3):
                assert requests.get(url, timeout=30).status_code == 200
        assert cuts >= 12, "the round-robin finished before the connections were cut 12 times"
        _assert_complete(tournament, total)
    finally:
        stack.stop()


def _cut_every_other_connection() -> int:
    """pg_terminate_backend on every other connection to the test database (the workers', the
    web's); 1 if any was cut."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return int(cursor.fetchone()[0] > 0)


def _round_robin(stack: Stack) -> Tournament:
    """Alice's uploaded bot and two built-ins in a round-robin created over HTTP, a worker
    playing it."""
    User.objects.create_user("alice", password="alice-password-1")
    alice = login(stack, "alice", "alice-password-1")
    builtins = builtin_bots_ensure()
    stack.start_worker(concurrency=2, ARENA_VISIBILITY_TIMEOUT=VISIBILITY)
    versions = [
        upload_ready(stack, alice, "seeded", SEEDED_BOT),
        builtins["random"].pk,
        builtins["greedy"].pk,
    ]
    created = alice.post(
        f"{stack.url}/api/tournaments/",
        json={"name": "outage", "rules": {"preset": "quatre-sept"}, "versions": versions,
              "pairs": PAIRS},
        timeout=60,
    )
    assert created.status_code == 201, created.text
    return Tournament.objects.get(pk=created.json()["id"])


def _wait_done_at_least(tournament: Tournament, done: int) -> None:
    wait_for(
        lambda: tournament.matches.filter(status=MatchStatus.FINISHED).count() >= done, 300,
        f"{done} matches to finish", every=0.2,
    )


def _assert_complete(tournament: Tournament, total: int) -> None:
    """Finished, every match once and none failed; the board refitted over all of them."""
    wait_for(
        lambda: Tournament.objects.get(pk=tournament.pk).status == "finished", 600,
        "the round-robin to finish", every=0.5,
    )
    statuses = list(Match.objects.filter(tournament=tournament).values_list("status", flat=True))
    assert statuses == [MatchStatus.FINISHED] * total
    assert Replay.objects.filter(match__tournament=tournament).count() == total
    standings = tournament_standings(tournament=tournament)
    assert all(row["played"] == 2 * 2 * PAIRS for row in standings)
    wait_for(
        lambda: RatingBoard.objects.filter(
            key=tournament.rules_key, state=RefitState.IDLE, matches=total
        ).exists(),
        120, "the board's refit over every match", every=0.5,
    )
