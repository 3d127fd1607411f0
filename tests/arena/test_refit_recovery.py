"""A lost rating refit is recovered by the next minutely sweep, never doubled (real database).

Where a refit is lost: the worker that committed a board's → queued died before sending its task
(after a result's request, or at the end of a refit that ends in queued again); or the worker
died in the middle of the refit (the board left running or again). The sweep a minute later sends
the task again or queues the board again; a task of a refit that is still live, or of a ticket
already done, does nothing. A worker's death is simulated at the exact point: the commit's
after-commit callbacks (the send) never run; a refit's worker is another database session holding
the board's refit lock, which dies by closing its connection, or a real process refitting, killed
with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from arena.models import Match, MatchKind, RatingBoard, RefitState
from arena.services import ratings as ratings_service
from arena.services.ratings import (
    REFIT_STALE_AFTER,
    RefitBusy,
    ratings_recover_lost,
    ratings_refit,
    ratings_request_refit,
)
from arena.services.refit_lock import REFIT_LOCK_CLASS, refit_lock_held
from tests.e2e.conftest import ROOT, _database_url

pytestmark = pytest.mark.django_db

PRESET = "quatre-sept"
A_MINUTE = timedelta(minutes=1)

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the refit lock is PostgreSQL's"
)


@pytest.fixture
def sent(monkeypatch) -> list[tuple[int, int]]:
    """The (board, ticket) of every refit task sent from now on (not run)."""
    tasks: list[tuple[int, int]] = []
    monkeypatch.setattr(
        "arena.tasks.refit_ratings.apply_async",
        lambda args, kwargs, **options: tasks.append(tuple(args)),
    )
    return tasks


@pytest.fixture
def every(settings) -> int:
    settings.ARENA_REFIT_EVERY = 10
    return 10


def board_in(state: RefitState, *, ticket: int = 7, age: timedelta = timedelta(0)) -> RatingBoard:
    return RatingBoard.objects.create(
        key=PRESET, preset=PRESET, state=state, ticket=ticket,
        state_changed_at=timezone.now() - age,
    )


class Worker:
    """Another database session, as a refit's worker holds one: it takes a board's refit lock
    and dies (its connection closed, as when its process is killed)."""

    def __init__(self) -> None:
        import psycopg

        params = connection.get_connection_params()
        self.conn = psycopg.connect(
            **{k: v for k, v in params.items() if k in ("dbname", "user", "password", "host",
                                                        "port")},
            autocommit=True,
        )

    def lock(self, board_id: int) -> None:
        self.conn.execute("SELECT pg_advisory_lock(%s, %s)", [REFIT_LOCK_CLASS, board_id])

    def die(self) -> None:
        """Close the connection, and return once PostgreSQL has ended its session (which it does
        a moment after the client goes) and released its locks."""
        if self.conn.closed:
            return
        pid = self.conn.info.backend_pid
        self.conn.close()
        for _ in range(200):
            with connection.cursor() as cursor:
                cursor.execute("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = %s)", [pid])
                if not cursor.fetchone()[0]:
                    return
            time.sleep(0.05)
        raise AssertionError(f"the session {pid} still holds locks 10 s after its connection")


@pytest.fixture
def worker() -> Iterator[Worker]:
    alive = Worker()
    try:
        yield alive
    finally:
        alive.die()


def test_a_request_whose_task_was_never_sent_is_sent_again_by_the_next_sweep(
    sent, django_capture_on_commit_callbacks, every
):
    with django_capture_on_commit_callbacks(execute=False):  # killed after commit, before send
        ratings_request_refit(preset=PRESET, rules_key=PRESET)
    board = RatingBoard.objects.get(key=PRESET)
    assert board.state == RefitState.QUEUED and sent == []
    queued_at = board.state_changed_at

    # Never fitted, so due at once: the sweep waits REFIT_GRACE for a task merely late...
    assert ratings_recover_lost(now=queued_at + timedelta(seconds=5)) == []
    # ...and a minute later sends it again, same ticket, once a minute while it stays lost.
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_recover_lost(now=queued_at + A_MINUTE) == [board.pk]
        assert ratings_recover_lost(now=queued_at + A_MINUTE) == []
        assert ratings_recover_lost(now=queued_at + 2 * A_MINUTE) == [board.pk]
    assert sent == [(board.pk, board.ticket)] * 2
    board.refresh_from_db()
    assert board.state == RefitState.QUEUED

    # The task sent again runs the refit; the other copy (and a late original) do nothing.
    assert ratings_refit(board_id=board.pk, ticket=board.ticket)
    assert not ratings_refit(board_id=board.pk, ticket=board.ticket)
    board.refresh_from_db()
    assert board.state == RefitState.IDLE and board.generation == 1


def test_a_refit_ending_queued_again_whose_task_was_never_sent_is_sent_again(
    sent, django_capture_on_commit_callbacks, every
):
    board = board_in(RefitState.QUEUED)
    real_fit = ratings_service.fit_ratings

    def fit_while_a_result_arrives(results):
        ratings_request_refit(preset=PRESET, rules_key=PRESET)  # running → again
        return real_fit(results)

    with (
        mock.patch.object(ratings_service, "fit_ratings", fit_while_a_result_arrives),
        django_capture_on_commit_callbacks(execute=False),  # killed after commit, before send
    ):
        assert ratings_refit(board_id=board.pk, ticket=7)
    board.refresh_from_db()
    assert (board.state, board.ticket, board.generation) == (RefitState.QUEUED, 8, 1)
    assert sent == []

    # Its task was due ARENA_REFIT_EVERY after the fit: not sent again before that and the grace.
    assert ratings_recover_lost(now=board.fitted_at + timedelta(seconds=every)) == []
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_recover_lost(now=board.fitted_at + A_MINUTE) == [board.pk]
    assert sent == [(board.pk, 8)]


def test_a_duplicate_task_does_nothing(sent, django_capture_on_commit_callbacks):
    board = board_in(RefitState.QUEUED)
    assert not ratings_refit(board_id=board.pk, ticket=6)  # an earlier ticket's
    board.refresh_from_db()
    assert board.state == RefitState.QUEUED
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_refit(board_id=board.pk, ticket=7)
        assert not ratings_refit(board_id=board.pk, ticket=7)
    board.refresh_from_db()
    assert (board.state, board.generation) == (RefitState.IDLE, 1) and sent == []


@on_postgresql
@pytest.mark.parametrize("left_in", [RefitState.RUNNING, RefitState.AGAIN])
def test_a_refit_whose_worker_died_is_queued_again_by_the_next_sweep(
    sent, django_capture_on_commit_callbacks, worker, left_in
):
    board = board_in(left_in)
    worker.lock(board.pk)
    assert refit_lock_held(board.pk)

    # Live (its session holds the lock): left alone however long it takes, never doubled.
    assert ratings_recover_lost(now=timezone.now() + REFIT_STALE_AFTER * 4) == []
    assert not ratings_refit(board_id=board.pk, ticket=7, takeover=True)  # a redelivery
    board.refresh_from_db()
    assert (board.state, board.ticket, board.generation) == (left_in, 7, 0)

    worker.die()
    assert not refit_lock_held(board.pk)
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_recover_lost() == [board.pk]
    board.refresh_from_db()
    assert (board.state, board.ticket) == (RefitState.QUEUED, 8)
    assert sent == [(board.pk, 8)]
    assert not ratings_refit(board_id=board.pk, ticket=7)  # the dead refit's task, redelivered
    assert ratings_refit(board_id=board.pk, ticket=8)
    board.refresh_from_db()
    assert (board.state, board.generation) == (RefitState.IDLE, 1)


@on_postgresql
def test_a_running_refit_holds_its_lock_and_is_never_doubled(sent):
    """While a refit fits, its board's lock is held: the sweep leaves it however old it looks,
    and a second delivery of its task (Redis redelivers after the visibility timeout even while
    the first runs) does nothing."""
    board = board_in(RefitState.QUEUED)
    real_fit = ratings_service.fit_ratings
    seen = {}

    def fit_while_redelivered(results):
        seen["held"] = refit_lock_held(board.pk)
        seen["swept"] = ratings_recover_lost(now=timezone.now() + REFIT_STALE_AFTER * 4)
        seen["second"] = ratings_refit(board_id=board.pk, ticket=7, takeover=True)
        return real_fit(results)

    with mock.patch.object(ratings_service, "fit_ratings", fit_while_redelivered):
        assert ratings_refit(board_id=board.pk, ticket=7)
    assert seen == {"held": True, "swept": [], "second": False}
    assert not refit_lock_held(board.pk)  # released with the refit
    board.refresh_from_db()
    assert (board.state, board.ticket, board.generation) == (RefitState.IDLE, 7, 1)
    assert sent == []


@on_postgresql
def test_a_refit_whose_lock_was_cut_writes_nothing(sent):
    """The lock's connection cut during the fit (a database restart, ``pg_terminate_backend``):
    the lock is gone, so another refit may have taken the board; this one writes nothing and
    fails with the database error (its task retries)."""
    board = board_in(RefitState.QUEUED)
    real_fit = ratings_service.fit_ratings

    def fit_while_the_lock_is_cut(results):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_locks WHERE locktype = 'advisory'"
                " AND classid = %s AND objid = %s", [REFIT_LOCK_CLASS, board.pk],
            )
        return real_fit(results)

    with (
        mock.patch.object(ratings_service, "fit_ratings", fit_while_the_lock_is_cut),
        pytest.raises(OperationalError),
    ):
        ratings_refit(board_id=board.pk, ticket=7)
    board.refresh_from_db()
    assert (board.state, board.ticket, board.generation) == (RefitState.RUNNING, 7, 0)
    assert ratings_refit(board_id=board.pk, ticket=7)  # the retry takes it over
    board.refresh_from_db()
    assert (board.state, board.generation) == (RefitState.IDLE, 1) and sent == []


@on_postgresql
def test_the_task_of_a_dead_refit_takes_it_over_and_a_live_one_waits(worker):
    dead = board_in(RefitState.RUNNING)
    # The lock is free: the refit that left it running is gone; its own task (redelivered or
    # sent again) takes it over.
    assert ratings_refit(board_id=dead.pk, ticket=7)
    dead.refresh_from_db()
    assert (dead.state, dead.generation) == (RefitState.IDLE, 1)

    # Queued with this task's ticket while another session holds the lock (a refit finishing):
    # the task is tried again a moment later, not dropped.
    dead.state, dead.ticket = RefitState.QUEUED, 8
    dead.save()
    worker.lock(dead.pk)
    with pytest.raises(RefitBusy):
        ratings_refit(board_id=dead.pk, ticket=8)
    assert not ratings_refit(board_id=dead.pk, ticket=7)  # not its ticket: nothing to retry


def test_a_lost_connection_mid_fit_leaves_the_board_to_the_retry(
    sent, django_capture_on_commit_callbacks
):
    board = board_in(RefitState.QUEUED)
    with (
        mock.patch.object(ratings_service, "fit_ratings", side_effect=OperationalError("gone")),
        pytest.raises(OperationalError),
    ):
        ratings_refit(board_id=board.pk, ticket=7)
    board.refresh_from_db()
    assert board.state == RefitState.RUNNING
    assert ratings_refit(board_id=board.pk, ticket=7, takeover=True)  # the task retried
    board.refresh_from_db()
    assert (board.state, board.generation) == (RefitState.IDLE, 1) and sent == []


@pytest.mark.parametrize("left_in", [RefitState.RUNNING, RefitState.AGAIN])
def test_without_a_refit_lock_a_board_running_too_long_is_presumed_lost(
    sent, django_capture_on_commit_callbacks, monkeypatch, left_in
):
    """SQLite has no refit lock: a running or again board is lost after REFIT_STALE_AFTER."""
    monkeypatch.setattr(ratings_service, "refit_lock_held", lambda board_id: None)
    monkeypatch.setattr(ratings_service, "refit_locking", lambda: False)
    board = board_in(left_in)
    assert ratings_recover_lost(now=timezone.now() + A_MINUTE) == []
    assert not ratings_refit(board_id=board.pk, ticket=7)  # not a redelivery: not taken over
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_recover_lost(now=timezone.now() + REFIT_STALE_AFTER * 2) == [board.pk]
    board.refresh_from_db()
    assert (board.state, board.ticket) == (RefitState.QUEUED, 8) and sent == [(board.pk, 8)]


def test_an_idle_board_is_left_alone(sent, django_capture_on_commit_callbacks):
    board_in(RefitState.IDLE, age=timedelta(days=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert ratings_recover_lost() == []
    assert sent == [] and not Match.objects.filter(kind=MatchKind.TOURNAMENT).exists()


#: A worker process: refits board ``argv[1]`` (ticket ``argv[2]``) with a fit that never ends.
_REFIT_FOREVER = """
import sys, time
from unittest import mock
import django
django.setup()
from arena.services import ratings
def forever(results):
    print("fitting", flush=True)
    time.sleep(3600)
with mock.patch.object(ratings, "fit_ratings", forever):
    ratings.ratings_refit(board_id=int(sys.argv[1]), ticket=int(sys.argv[2]))
"""


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_worker_process_killed_mid_refit_is_recovered_by_the_next_sweep(sent):
    """A real worker process SIGKILLed in the middle of a refit: PostgreSQL frees its lock with
    its connection, and the next sweep queues the board again at once (not 15 minutes later)."""
    board = board_in(RefitState.QUEUED)
    env = {**os.environ, "DATABASE_URL": _database_url(),
           "DJANGO_SETTINGS_MODULE": "config.settings"}
    child = subprocess.Popen(
        [sys.executable, "-c", _REFIT_FOREVER, str(board.pk), "7"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        assert child.stdout.readline() == b"fitting\n"  # running, its lock held
        board.refresh_from_db()
        assert board.state == RefitState.RUNNING and refit_lock_held(board.pk)
        assert ratings_recover_lost(now=timezone.now() + REFIT_STALE_AFTER * 4) == []
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    for _ in range(200):  # the server ends the session a moment after the process is gone
        if not refit_lock_held(board.pk):
            break
        time.sleep(0.05)
    assert ratings_recover_lost() == [board.pk]
    board.refresh_from_db()
    assert (board.state, board.ticket) == (RefitState.QUEUED, 8) and sent == [(board.pk, 8)]
