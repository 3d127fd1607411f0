"""Match transitions on a worker: delivered twice writes once, the stuck sweep, re-queueing,
repeating schedules, and the guard that keeps uploads out of the trusted runner."""

from __future__ import annotations

import json
import zlib
from datetime import timedelta
from unittest import mock

import pytest
from django.db import transaction
from django.utils import timezone

from arena.models import (
    Bot,
    BotVersion,
    Match,
    MatchStatus,
    RatingBoard,
    RefitState,
    Replay,
    Schedule,
    Tournament,
    VersionStatus,
)
from arena.services.bots import builtin_bots_ensure
from arena.services.matches import match_requeue, matches_sweep_stuck
from arena.services.play import match_play, version_spec
from arena.services.queue import RUN_MATCH
from arena.services.schedules import schedule_create, schedules_run_due
from arena.services.tournaments import tournament_create
from tests.arena.conftest import FIRST_BOT, RANDOM_BOT

pytestmark = pytest.mark.django_db


@pytest.fixture
def tournament(alice, bob, upload):
    a = upload(alice, "rnd", RANDOM_BOT).json()["latest_version"]["id"]
    b = upload(bob, "first", FIRST_BOT).json()["latest_version"]["id"]
    # Not run: the tests below drive the tasks' service by hand.
    return tournament_create(
        created_by=alice, name="t", rules={"preset": "quatre-sept"}, version_ids=[a, b], pairs=1
    )


def snapshot(match: Match) -> tuple:
    match.refresh_from_db()
    replay = Replay.objects.get(match=match)
    seats = list(match.seats.values_list("seat", "fault_kind", "log"))
    return (match.status, match.winner, match.score, match.finished_at, match.attempts,
            bytes(replay.data), seats)


def test_a_second_delivery_of_a_finished_match_changes_nothing(tournament):
    match = tournament.matches.first()
    assert match_play(match_id=match.pk) is True
    before = snapshot(match)
    assert before[0] == MatchStatus.FINISHED
    assert match_play(match_id=match.pk) is False
    assert snapshot(match) == before


def test_the_last_match_finishes_the_tournament(tournament, run_tasks):
    matches = list(tournament.matches.all())
    for match in matches:
        tournament.refresh_from_db()
        assert tournament.status == "running"
        with run_tasks():  # the check runs once the match's transaction has committed
            match_play(match_id=match.pk)
    tournament.refresh_from_db()
    assert tournament.status == "finished" and tournament.finished_at is not None


@pytest.mark.parametrize("name", [RUN_MATCH, "arena.tasks.play_match"])
def test_a_match_task_sent_by_name_plays_the_match(tournament, run_tasks, name):
    """Services send the match task by its registered name (eager here: it runs in-process); the
    name of earlier releases, ``arena.tasks.play_match``, still plays a match queued before an
    upgrade."""
    from celery import current_app

    match = tournament.matches.first()
    with run_tasks():
        transaction.on_commit(
            lambda: current_app.signature(name, args=(match.pk,)).apply_async()
        )
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.attempts == 1


def test_a_redelivered_running_match_is_played_again(tournament):
    match = tournament.matches.first()
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.RUNNING, attempts=1)
    assert match_play(match_id=match.pk) is True
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.attempts == 2


def test_a_match_that_keeps_losing_its_worker_is_void_not_played_for_ever(tournament, settings):
    """Each redelivery after a lost worker starts the match again; past the platform's attempts
    and two more, the start makes it void (no result, its round-robin goes on) instead."""
    from arena.services.platform_failures import LOST_WORKER_STARTS

    settings.ARENA_MATCH_ATTEMPTS = 3
    match, other = tournament.matches.all()
    starts = settings.ARENA_MATCH_ATTEMPTS + LOST_WORKER_STARTS
    Match.objects.filter(pk=other.pk).update(status=MatchStatus.RUNNING, attempts=starts - 1)
    assert match_play(match_id=other.pk) is True  # the last start allowed plays
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.RUNNING, attempts=starts)
    with mock.patch("arena.services.play.play_seats") as played:
        assert match_play(match_id=match.pk) is False
    assert not played.called
    match.refresh_from_db()
    assert match.status == MatchStatus.FAILED and match.winner is None
    assert match.failure.startswith(f"void: started {starts + 1} times")
    assert match_requeue(match_id=match.pk) is True
    match.refresh_from_db()
    assert (match.status, match.attempts) == (MatchStatus.QUEUED, 0)  # staff: a fresh start
    assert match_play(match_id=match.pk) is True


def test_the_sweep_fails_stuck_matches_and_they_can_be_requeued(tournament, run_tasks, settings):
    stuck, fresh = list(tournament.matches.all())
    long_ago = timezone.now() - timedelta(seconds=settings.ARENA_STUCK_AFTER + 5)
    Match.objects.filter(pk=stuck.pk).update(status=MatchStatus.RUNNING, started_at=long_ago)
    Match.objects.filter(pk=fresh.pk).update(status=MatchStatus.RUNNING, started_at=timezone.now())
    with run_tasks():
        assert matches_sweep_stuck() == [stuck.pk]
    stuck.refresh_from_db()
    assert stuck.status == MatchStatus.FAILED
    assert "stuck" in stuck.failure and "re-queue" in stuck.failure
    assert matches_sweep_stuck() == []  # a second sweep changes nothing
    with run_tasks():
        match_play(match_id=fresh.pk)  # a running match (its worker lost) plays again
    tournament.refresh_from_db()
    assert tournament.status == "finished"  # every match is done, one of them failed
    with run_tasks():
        assert match_requeue(match_id=stuck.pk) is True
    stuck.refresh_from_db()
    tournament.refresh_from_db()
    assert stuck.status == MatchStatus.FINISHED and stuck.failure == ""
    assert tournament.status == "finished"
    assert match_requeue(match_id=stuck.pk) is False  # only failed matches are re-queued


def test_a_match_the_platform_cannot_play_fails_with_a_reason(tournament, settings):
    settings.ARENA_MATCH_ATTEMPTS = 1  # no second attempt (test_platform_failures.py has those)
    match = tournament.matches.first()
    seat = match.seats.get(seat=0)
    BotVersion.objects.filter(pk=seat.version_id).update(filename="bot.exe")  # unrunnable
    assert match_play(match_id=match.pk) is False
    match.refresh_from_db()
    assert match.status == MatchStatus.FAILED
    assert "could not play" in match.failure and "unsupported file type" in match.failure


def test_replays_are_stored_compressed(tournament):
    match = tournament.matches.first()
    match_play(match_id=match.pk)
    replay = Replay.objects.get(match=match)
    assert replay.size > len(replay.data)
    assert zlib.decompress(bytes(replay.data)).startswith(b'{"format":"quatresept-replay/1"')


def test_a_schedule_repeats_over_the_latest_ready_versions(alice, upload, run_tasks):
    upload(alice, "rnd", RANDOM_BOT)
    bot = Bot.objects.get(name="rnd")
    with run_tasks():
        from arena.services.bots import bot_version_create

        bot_version_create(bot=bot, filename="bot.py", data=FIRST_BOT)
    assert list(bot.versions.values_list("status", flat=True)) == ["ready", "ready"]
    now = timezone.now()
    schedule = schedule_create(
        name="nightly", rules={"preset": "quatre-sept"}, pairs=1, every_hours=24, first_run_at=now
    )
    created = schedules_run_due(now=now)
    assert len(created) == 1
    tournament = created[0]
    pinned = set(tournament.entries.values_list("version_id", flat=True))
    builtins = {v.pk for v in builtin_bots_ensure().values()}
    assert pinned == builtins | {bot.versions.get(number=2).pk}
    schedule.refresh_from_db()
    assert schedule.next_run_at == now + timedelta(hours=24)
    assert schedules_run_due(now=now + timedelta(hours=1)) == []  # not due again yet
    assert Tournament.objects.filter(schedule=schedule).count() == 1
    Schedule.objects.filter(pk=schedule.pk).update(enabled=False)
    assert schedules_run_due(now=now + timedelta(days=3)) == []


def test_a_version_that_claims_to_be_builtin_never_runs_trusted(alice, upload):
    upload(alice, "rnd", RANDOM_BOT)
    version = BotVersion.objects.get(bot__name="rnd")
    # Even a row forged past the database constraint (no blob, a built-in name) is refused,
    # because its bot is not the system's.
    version.builtin, version.blob_id = "random", None
    with pytest.raises(PermissionError):
        version_spec(version=version)
    assert BotVersion.objects.get(pk=version.pk).status == VersionStatus.READY


def test_the_database_refuses_a_version_with_both_blob_and_builtin(alice, upload):
    from django.db import IntegrityError, transaction

    upload(alice, "rnd", RANDOM_BOT)
    version = BotVersion.objects.get(bot__name="rnd")
    with pytest.raises(IntegrityError), transaction.atomic():
        BotVersion.objects.filter(pk=version.pk).update(builtin="random")


def test_the_sweep_finishes_a_tournament_whose_last_check_was_lost(
    tournament, monkeypatch, run_tasks
):
    """The last match's worker died between its commit and its follow-up: the sweep finishes the
    round-robin and requests the refit that would have rated that match."""
    sent = []
    monkeypatch.setattr("arena.tasks.refit_ratings.apply_async",
                        lambda args, kwargs, **options: sent.append(args[0]))
    for match in tournament.matches.all():
        match_play(match_id=match.pk)  # outside run_tasks: the after-commit checks never run
    tournament.refresh_from_db()
    assert tournament.status == "running"
    assert not RatingBoard.objects.filter(key=tournament.rules_key).exists()
    with run_tasks():
        assert matches_sweep_stuck() == []
    tournament.refresh_from_db()
    assert tournament.status == "finished"
    board = RatingBoard.objects.get(key=tournament.rules_key)
    assert board.state == RefitState.QUEUED and sent == [board.pk]


@pytest.mark.parametrize(("waiting", "age_minutes", "resent"), [
    (0, 5, True),     # nothing in the broker, queued for 5 minutes: the tasks were lost
    (3, 5, False),    # tasks wait in the broker: theirs may be among them
    (None, 5, False),  # the broker cannot tell
    (0, 1, False),    # queued a minute ago: its task may be on its way
])
def test_the_sweep_resends_the_lost_tasks_of_queued_matches(
    tournament, run_tasks, waiting, age_minutes, resent
):
    from arena.services.matches import matches_resend_orphans

    ids = sorted(tournament.matches.values_list("pk", flat=True))
    tournament.matches.update(queued_at=timezone.now() - timedelta(minutes=age_minutes))
    with (
        mock.patch("arena.services.matches.matches_waiting_in_broker", return_value=waiting),
        mock.patch("arena.tasks.run_match.apply_async") as delay,
        run_tasks(),
    ):
        assert matches_resend_orphans() == (ids if resent else [])
    assert sorted(call.args[0][0] for call in delay.call_args_list) == (ids if resent else [])
    if resent:  # stamped as sent now: the next minute's sweep does not send them again
        with mock.patch("arena.services.matches.matches_waiting_in_broker", return_value=0):
            assert matches_resend_orphans() == []


def test_a_match_waiting_for_its_platform_retry_is_not_taken_for_lost(tournament, settings):
    """A platform failure queues the match again with its task held by a worker until the retry
    is due (invisible in the broker's count): the lost-task sweep must not send a second task,
    which would play the match twice at once. Once the retry is long overdue, it does."""
    from arena.services.matches import matches_resend_orphans
    from arena.services.platform_failures import match_platform_failure

    settings.ARENA_PLATFORM_RETRY_DELAY = 600
    match = tournament.matches.first()
    long_ago = timezone.now() - timedelta(hours=1)
    Match.objects.filter(pk=match.pk).update(
        status=MatchStatus.RUNNING, attempts=1, created_at=long_ago, queued_at=long_ago)
    with mock.patch("arena.services.platform_failures.send_after_commit") as sent:
        assert match_platform_failure(match_id=match.pk, error=RuntimeError("no engine")) is True
    assert sent.call_args.kwargs["countdown"] == 600
    with mock.patch("arena.services.matches.matches_waiting_in_broker", return_value=0):
        assert match.pk not in matches_resend_orphans(now=timezone.now() + timedelta(minutes=3))
        later = timezone.now() + timedelta(seconds=600) + timedelta(minutes=3)
        assert match.pk in matches_resend_orphans(now=later)


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")  # meant: published
def test_the_broker_counts_the_match_tasks_waiting(settings):
    from arena.services.queue import matches_waiting_in_broker
    from config.celery import app

    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    with app.connection_for_write() as connection:
        connection.default_channel.queue_declare(queue=queue)
        connection.default_channel.queue_purge(queue)
        assert matches_waiting_in_broker() == 0
        app.send_task(RUN_MATCH, (10**9,), queue=queue)
        app.send_task(RUN_MATCH, (10**9 + 1,), queue=queue)
        assert matches_waiting_in_broker() == 2
        connection.default_channel.queue_purge(queue)
    assert matches_waiting_in_broker() == 0


def stored_replay(match: Match) -> dict:
    return json.loads(zlib.decompress(bytes(Replay.objects.get(match=match).data)))


def test_rated_matches_play_fixed_time_turns_where_the_operator_asks(alice, bob, upload, settings):
    settings.ARENA_FIXED_TURNS = True
    a = upload(alice, "rnd", RANDOM_BOT).json()["latest_version"]["id"]
    b = upload(bob, "first", FIRST_BOT).json()["latest_version"]["id"]
    settings.ARENA_MOVE_MS = 40
    tournament = tournament_create(
        created_by=alice, name="t", rules={"preset": "pollack"}, version_ids=[a, b], pairs=1
    )
    match = tournament.matches.first()
    assert match_play(match_id=match.pk) is True
    match.refresh_from_db()
    replay = stored_replay(match)
    assert replay["clock"] == {
        "hello_ms": 10_000, "move_ms": 40, "bank_ms": 60_000, "fixed_turns": True
    }
    decisions = sum(len(times) for times in replay["moves_ms"])
    assert match.play_ms >= decisions * 40, "every decision was held to the move clock"
    validation = BotVersion.objects.get(pk=a).validation_match
    assert stored_replay(validation)["clock"]["fixed_turns"] is False, "validation rates no one"
