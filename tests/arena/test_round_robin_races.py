"""A round-robin's status against a re-queue of one of its matches, on two connections at once
(PostgreSQL: SQLite runs one writer at a time, so it cannot interleave them).

The re-queue holds the round-robin's lock (``tournament_lock``) from its first statement to its
commit; a cancel or a finish check started meanwhile waits for it and then sees the queued
match. Before the lock, a cancel landed between the re-queue's check and its commit (the
cancelled round-robin then played and counted the match), and a finish check marked a
round-robin finished with a match still queued.
"""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection

from arena.models import Match, MatchStatus, Tournament, TournamentStatus
from arena.services import matches as matches_service
from arena.services import tournaments as tournaments_service
from arena.services.bots import builtin_bots_ensure

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="two writers at once need PostgreSQL"
    ),
]


@pytest.fixture
def round_robin(monkeypatch):
    """A two-match round-robin (no task sent) whose first match failed; the organiser."""
    monkeypatch.setattr(tournaments_service, "queue_matches", lambda match_ids: None)
    monkeypatch.setattr(matches_service, "queue_matches", lambda match_ids: None)
    versions = builtin_bots_ensure()
    user = User.objects.create_user("organiser", password="x")
    tournament = tournaments_service.tournament_create(
        created_by=user, name="cup", rules={"preset": "quatre-sept"},
        version_ids=[versions["random"].pk, versions["greedy"].pk], pairs=1,
    )
    first, second = Match.objects.filter(tournament=tournament).order_by("pk")
    Match.objects.filter(pk=first.pk).update(status=MatchStatus.FAILED, failure="void")
    return tournament, user, first, second


def start_alongside(monkeypatch, work):
    """Run ``work`` on its own connection while the re-queue's transaction is open (just after
    its ``tournament_reopen``, its last step before the commit); the threads, for the caller
    to join after the commit."""
    real_reopen = matches_service.tournament_reopen
    threads: list[threading.Thread] = []

    def reopen_with_work_alongside(*, tournament_id):
        reopened = real_reopen(tournament_id=tournament_id)

        def run():
            try:
                work()
            finally:
                connection.close()

        thread = threading.Thread(target=run)
        thread.start()
        thread.join(1.0)  # the other connection reaches the lock (or, before it, got through)
        threads.append(thread)
        return reopened

    monkeypatch.setattr(matches_service, "tournament_reopen", reopen_with_work_alongside)
    return threads


def test_a_cancel_during_a_requeue_fails_the_requeued_match(monkeypatch, round_robin):
    tournament, user, first, _ = round_robin
    threads = start_alongside(
        monkeypatch, lambda: tournaments_service.tournament_cancel(tournament=tournament, by=user)
    )
    assert matches_service.match_requeue(match_id=first.pk)
    threads[0].join(10)
    assert not threads[0].is_alive()
    tournament.refresh_from_db()
    first.refresh_from_db()
    assert tournament.status == TournamentStatus.CANCELLED
    assert first.status == MatchStatus.FAILED, "a cancelled round-robin would play it"
    assert "cancelled by organiser" in first.failure


def test_a_finish_check_during_a_requeue_leaves_the_round_robin_running(
    monkeypatch, round_robin
):
    tournament, _, first, second = round_robin
    Match.objects.filter(pk=second.pk).update(status=MatchStatus.FINISHED, winner=0)
    threads = start_alongside(
        monkeypatch,
        lambda: tournaments_service.tournament_finish_if_done(tournament_id=tournament.pk),
    )
    assert matches_service.match_requeue(match_id=first.pk)
    threads[0].join(10)
    assert not threads[0].is_alive()
    assert Tournament.objects.get(pk=tournament.pk).status == TournamentStatus.RUNNING
    assert Match.objects.get(pk=first.pk).status == MatchStatus.QUEUED
