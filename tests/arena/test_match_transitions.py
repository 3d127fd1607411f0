"""A worker's per-match transitions (``arena.services.matches``): the start and the record in one
statement each on PostgreSQL do what the ORM path does (SQLite, validation matches), with the same
rows, conditions and follow-up; the statements are written from the models' names and load what
they did not select as deferred fields, never as defaults; and a tournament match costs three
statements in the usual case."""

from __future__ import annotations

import re
import zlib
from datetime import timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from arena.models import Match, MatchStatus, RatingBoard, RefitState, Replay, TournamentStatus
from arena.runtime.play import PlayedMatch
from arena.services import matches
from arena.services.matches import match_record_result, match_start
from arena.services.play import match_play
from arena.services.tournaments import tournament_create
from engine import MatchOutcome
from tests.arena.conftest import FIRST_BOT

pytestmark = pytest.mark.django_db

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the one-statement path is PostgreSQL's"
)


@pytest.fixture(params=["one statement", "orm"])
def path(request, monkeypatch) -> str:
    """Each test runs through the one-statement path (PostgreSQL) and through the ORM path."""
    if request.param == "one statement" and connection.vendor != "postgresql":
        pytest.skip("the one-statement path is PostgreSQL's")
    if request.param == "orm":
        monkeypatch.setattr(matches, "one_statement", lambda: False)
    return request.param


@pytest.fixture
def tournament(alice, bob, upload):
    a = upload(alice, "first", FIRST_BOT).json()["latest_version"]["id"]
    b = upload(bob, "first", FIRST_BOT).json()["latest_version"]["id"]
    # Not run: the tests drive the steps by hand.
    return tournament_create(
        created_by=alice, name="t", rules={"preset": "quatre-sept"}, version_ids=[a, b], pairs=2
    )


def played(fault_seat: int | None = None) -> PlayedMatch:
    """A made-up result: seat ``fault_seat`` faulted (with a long log), seat 1 left a log."""
    result = {"winner": 1, "score": [3, 7], "reason": "target"}
    if fault_seat is not None:
        result = {**result, "reason": "fault",
                  "fault": {"seat": fault_seat, "kind": "illegal", "detail": "play XX"}}
    replay = {"format": 1, "result": result, "decisions": list(range(200))}
    outcome = MatchOutcome(state=None, replay=replay)
    tails = {0: "", 1: "thinking\n", 2: "x" * 10_000 if fault_seat == 2 else "", 3: ""}
    return PlayedMatch(outcome=outcome, tails=tails, play_ms=123)


def rows(match: Match) -> tuple:
    match.refresh_from_db()
    replay = Replay.objects.filter(match=match).first()
    return (
        match.status, match.winner, match.score, match.reason, match.failure, match.play_ms,
        match.attempts, match.started_at is not None, match.finished_at is not None,
        None if replay is None else (zlib.decompress(bytes(replay.data)), replay.size),
        list(match.seats.order_by("seat").values_list("seat", "fault_kind", "fault_detail", "log")),
    )


def test_start_loads_the_match_and_its_seats(tournament, path):
    match = tournament.matches.order_by("pk").first()
    started = match_start(match_id=match.pk)
    assert started is not None
    assert (started.match.pk, started.match.kind, started.match.seed, started.match.rules,
            started.match.rules_key, started.match.tournament_id) == (
        match.pk, match.kind, match.seed, match.rules, match.rules_key, match.tournament_id)
    stored = list(match.seats.order_by("seat").select_related("version__bot__owner"))
    assert [(s.seat, s.version.pk, s.version.label, s.version.blob_id, s.version.filename,
             s.version.builtin, s.version.bot.owner.username) for s in started.seats] == [
        (s.seat, s.version.pk, s.version.label, s.version.blob_id, s.version.filename,
         s.version.builtin, s.version.bot.owner.username) for s in stored]
    match.refresh_from_db()
    assert (match.status, match.attempts) == (MatchStatus.RUNNING, 1)
    assert match_start(match_id=match.pk).match.pk == match.pk  # running again: redelivered
    match.refresh_from_db()
    assert match.attempts == 2


def test_start_refuses_a_finished_or_failed_match(tournament, path):
    done, failed = tournament.matches.order_by("pk")[:2]
    Match.objects.filter(pk=done.pk).update(status=MatchStatus.FINISHED)
    Match.objects.filter(pk=failed.pk).update(status=MatchStatus.FAILED)
    assert match_start(match_id=done.pk) is None
    assert match_start(match_id=failed.pk) is None
    assert match_start(match_id=10**9) is None
    assert Match.objects.get(pk=done.pk).attempts == 0


@pytest.mark.parametrize("fault_seat", [None, 2])
def test_both_paths_record_the_same_rows(tournament, monkeypatch, fault_seat):
    if connection.vendor != "postgresql":
        pytest.skip("the one-statement path is PostgreSQL's")
    first, second = tournament.matches.order_by("pk")[:2]
    result = played(fault_seat)
    started = match_start(match_id=first.pk)
    assert match_record_result(match=started.match, played=result) is True
    monkeypatch.setattr(matches, "one_statement", lambda: False)
    started = match_start(match_id=second.pk)
    assert match_record_result(match=started.match, played=result) is True
    through_statements, through_orm = rows(first), rows(second)
    assert through_statements == through_orm
    status, winner, score, reason, *_, replay, seats = through_statements
    assert (status, winner, score) == (MatchStatus.FINISHED, 1, [3, 7])
    assert reason == ("target" if fault_seat is None else "fault")
    assert replay[1] == len(replay[0])
    logs = {seat: (kind, log) for seat, kind, _, log in seats}
    assert logs[1] == ("", "thinking\n")
    if fault_seat is None:
        assert logs[2] == ("", "")
    else:
        assert logs[2] == ("illegal", "x" * 10_000)  # a faulted seat keeps its whole tail


def test_a_second_record_writes_nothing(tournament, path):
    match = tournament.matches.order_by("pk").first()
    started = match_start(match_id=match.pk)
    assert match_record_result(match=started.match, played=played()) is True
    before = rows(match)
    assert match_record_result(match=started.match, played=played(fault_seat=2)) is False
    assert rows(match) == before


def test_a_match_that_is_not_running_is_not_recorded(tournament, path):
    match = tournament.matches.order_by("pk").first()
    started = match_start(match_id=match.pk)
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.FAILED, failure="cancelled")
    assert match_record_result(match=started.match, played=played()) is False
    assert not Replay.objects.filter(match=match).exists()
    assert Match.objects.get(pk=match.pk).status == MatchStatus.FAILED


def test_the_last_result_finishes_the_tournament(tournament, path, run_tasks):
    matches = list(tournament.matches.order_by("pk"))
    for n, match in enumerate(matches, start=1):
        with run_tasks():
            started = match_start(match_id=match.pk)
            match_record_result(match=started.match, played=played())
        tournament.refresh_from_db()
        expected = TournamentStatus.FINISHED if n == len(matches) else TournamentStatus.RUNNING
        assert tournament.status == expected


def test_the_last_two_results_together_finish_the_tournament(tournament, path, run_tasks):
    """The last two matches started before either is recorded: neither sees another one queued,
    both make the finish check, and the later one finishes the round-robin."""
    *first, one, two = list(tournament.matches.order_by("pk"))
    for match in first:
        with run_tasks():
            match_record_result(match=match_start(match_id=match.pk).match, played=played())
    started = [match_start(match_id=one.pk), match_start(match_id=two.pk)]
    with run_tasks():
        match_record_result(match=started[0].match, played=played())
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.RUNNING
    with run_tasks():
        match_record_result(match=started[1].match, played=played())
    tournament.refresh_from_db()
    assert tournament.status == TournamentStatus.FINISHED


def board(state: RefitState, age: timedelta = timedelta(0)) -> RatingBoard:
    board, _ = RatingBoard.objects.update_or_create(
        key="quatre-sept",
        defaults={"preset": "quatre-sept", "state": state,
                  "state_changed_at": timezone.now() - age},
    )
    return board


def refits_sent_to(monkeypatch) -> list[int]:
    """The board ids of the refit tasks sent from now on (not run)."""
    sent: list[int] = []
    monkeypatch.setattr(
        "arena.tasks.refit_ratings.apply_async",
        lambda args, kwargs, **options: sent.append(args[0]),
    )
    return sent


def record_one(tournament) -> None:
    match = tournament.matches.filter(status=MatchStatus.QUEUED).order_by("pk").first()
    started = match_start(match_id=match.pk)
    assert match_record_result(match=started.match, played=played()) is True


@pytest.mark.parametrize(("state", "age", "after", "refits_sent"), [
    (RefitState.RUNNING, timedelta(0), RefitState.AGAIN, 0),
    (RefitState.QUEUED, timedelta(0), RefitState.QUEUED, 0),
    (RefitState.AGAIN, timedelta(0), RefitState.AGAIN, 0),
    (RefitState.IDLE, timedelta(0), RefitState.QUEUED, 1),
    # Lost long ago: left to the sweep (tests/arena/test_refit_recovery.py), not the request.
    (RefitState.QUEUED, timedelta(hours=1), RefitState.QUEUED, 0),
    (RefitState.RUNNING, timedelta(hours=1), RefitState.AGAIN, 0),
])
def test_a_result_requests_a_refit(
    tournament, path, run_tasks, monkeypatch, state, age, after, refits_sent
):
    sent = refits_sent_to(monkeypatch)
    before = board(state, age)
    with run_tasks():
        record_one(tournament)
    now = RatingBoard.objects.get(pk=before.pk)
    assert (now.state, len(sent)) == (after, refits_sent)
    if after == state and not refits_sent:  # untouched: its age still tells a lost refit
        assert now.state_changed_at == before.state_changed_at


def test_a_board_that_does_not_exist_yet_is_created_and_queued(tournament, path, run_tasks,
                                                               monkeypatch):
    sent = refits_sent_to(monkeypatch)
    with run_tasks():
        record_one(tournament)
    board = RatingBoard.objects.get(key="quatre-sept")
    assert board.state == RefitState.QUEUED and sent == [board.pk]


@on_postgresql
def test_a_tournament_match_takes_three_statements(tournament, run_tasks):
    """Start and record one statement each; after commit, through its own service, the refit
    request (one read when the board's refit is already queued), the usual case during a
    round-robin: the tournament's finish check is left to the last matches (the record saw
    another one still queued)."""
    board(RefitState.QUEUED)
    match = tournament.matches.order_by("pk").first()
    with CaptureQueriesContext(connection) as queries, run_tasks():
        assert match_play(match_id=match.pk) is True
    statements = [q["sql"] for q in queries.captured_queries
                  if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]
    assert len(statements) == 3, statements


@on_postgresql
def test_the_per_match_statements_are_prepared_once_per_connection(tournament, run_tasks):
    """The start, the record and the refit request are server-side prepared statements: after
    two matches on one connection, each is prepared once and used by both (the start by the
    uploads' validation matches too)."""
    board(RefitState.QUEUED)
    first, second = tournament.matches.order_by("pk")[:2]
    with run_tasks():
        assert match_play(match_id=first.pk) and match_play(match_id=second.pk)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        rows = [(" ".join(text.split()[:2]), uses) for text, uses in cursor]
    prepared = dict(rows)
    assert len(rows) == len(prepared) == 3, rows  # one per statement, not one per match
    assert prepared["WITH finished"] == prepared["WITH again"] == 2, prepared
    assert prepared["WITH started"] >= 2, prepared


@on_postgresql
def test_a_lost_connection_in_a_prepared_statement_is_djangos_error(tournament):
    """A connection cut under a per-match statement raises Django's database error, which the
    match task retries (``arena.tasks``), never the driver's (which would fail the match)."""
    from django.db import InterfaceError, OperationalError

    from arena.sqlnames import run_statement

    run_statement("SELECT 1", {})
    pid = connection.connection.info.backend_pid
    import psycopg

    with psycopg.connect(_admin_url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises((OperationalError, InterfaceError)):
        run_statement("SELECT 1", {})
    connection.close()


def _admin_url() -> str:
    settings = connection.settings_dict
    return (f"postgresql://{settings['USER'] or 'postgres'}@{settings['HOST'] or '127.0.0.1'}:"
            f"{settings['PORT'] or 5432}/{settings['NAME']}")


def test_start_defers_what_it_did_not_select(tournament, path):
    """The started match's seats read a column the start did not load from the row (deferred,
    one query), never as the field's default."""
    match = tournament.matches.order_by("pk").first()
    seat = match.seats.get(seat=0)
    type(seat.version).objects.filter(pk=seat.version_id).update(validation_log="stored log")
    type(seat).objects.filter(pk=seat.pk).update(log="an earlier attempt's log")
    started = match_start(match_id=match.pk)
    first = started.seats[0]
    assert first.version.validation_log == "stored log"
    assert first.log == "an earlier attempt's log"
    assert started.match.created_at == match.created_at  # every column of the match is loaded
    assert started.seats[0].version.bot.owner.username == "alice"


SQL_WORDS = re.compile(r"\b(FROM|JOIN|UPDATE|INTO)\s+\"?(\w+)", re.IGNORECASE)


def test_no_hand_written_sql_names_a_table_literally():
    """Every table name in the code comes from ``Model._meta.db_table`` (``arena.sqlnames``):
    no source file outside the migrations spells one."""
    tables = {model._meta.db_table for model in apps.get_models()}
    assert {"arena_match", get_user_model()._meta.db_table} <= tables
    root = Path(__file__).resolve().parents[2]
    spelled = []
    for path in [*root.glob("arena/**/*.py"), *root.glob("config/**/*.py")]:
        if "migrations" in path.parts:
            continue
        text = path.read_text()
        spelled += [(path.name, name) for _, name in SQL_WORDS.findall(text) if name in tables]
        spelled += [(path.name, name) for name in tables if f"{name} " in text]
    assert spelled == []
