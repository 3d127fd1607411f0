"""A match's transitions: queued → running (→ running again after a lost worker) → finished |
failed, and failed → queued. Each is a write conditional on the row's status (an UPDATE ... WHERE
status, or a locked read) and returns early when the transition is already done, so a task
delivered twice writes once. This module is the one owner of each: where a worker's two per-match
writes (start, record) take one statement on PostgreSQL, that statement is here beside the ORM
path, written from the models' table and column names (``arena.sqlnames``), with the same
conditions and effects; both paths are tested against the same expectations. The follow-up of a
finished tournament match calls the tournament's and the ratings' own services. Must not import
the API or ``arena.tasks``."""

from __future__ import annotations

import functools
import json
import logging
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from arena.models import (
    Bot,
    BotVersion,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    Replay,
    Tournament,
    TournamentStatus,
)
from arena.runtime.play import PlayedMatch
from arena.services.failing import tournament_matches_failed
from arena.services.queue import matches_waiting_in_broker, queue_matches
from arena.services.ratings import ratings_request_refit
from arena.services.tournaments import (
    match_tournament_lock,
    tournament_finish_if_done,
    tournament_reopen,
)
from arena.services.versions import (
    version_validation_begin,
    version_validation_end,
    version_validation_reset,
)
from arena.sqlnames import (
    column,
    fields,
    loaded,
    one_statement,
    run_statement,
    selected,
    table,
)

log = logging.getLogger(__name__)

#: stderr kept per seat of a match without a fault there; a faulted seat keeps the whole tail.
QUIET_LOG_BYTES = 4096


@dataclass(frozen=True)
class StartedMatch:
    """A match a worker has just started, with its four seats in order (versions, bots, owners
    loaded)."""

    match: Match
    seats: list[MatchSeat]


def match_start(*, match_id: int) -> StartedMatch | None:
    """queued | running → running, counting the attempt; the match and its seats (versions, bots
    and owners loaded), or None if it is finished or failed (nothing to play). Running again is
    allowed: its worker was lost and the broker redelivered.

    On PostgreSQL one statement (the UPDATE and the seats' SELECT joined, ``_start_statement``);
    elsewhere one conditional UPDATE (atomic on its own: concurrent starts serialize on the row)
    and one SELECT."""
    if one_statement():
        started = _start_in_one_statement(match_id)
        if started is None:
            return None
        match, seats = started
    else:
        updated = Match.objects.filter(
            pk=match_id, status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING]
        ).update(
            status=MatchStatus.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now()
        )
        if not updated:
            return None
        seats = list(
            MatchSeat.objects.filter(match_id=match_id)
            .select_related("match", "version__bot__owner")
            .order_by("seat")
        )
        match = seats[0].match
    if match.kind == MatchKind.VALIDATION:
        version_validation_begin(version=seats[0].version)
    return StartedMatch(match=match, seats=seats)


#: What the one-statement start loads of each row; the rest is deferred (read on access). Seat
#: logs, validation logs and fault details are long and not needed to play; of the owner, the name.
_START_LEAVES_OUT = {
    MatchSeat: ("log", "fault_detail"),
    BotVersion: ("validation_log", "fault_detail"),
}


@functools.cache
def _start_statement() -> tuple[str, dict[type, list]]:
    """The start as one statement (``WITH started AS (UPDATE ... RETURNING *) SELECT ... JOIN``):
    one row per seat, in seat order, each with the match's, the seat's, its version's, bot's and
    owner's columns; none if the match was not queued or running. Also the fields each model's
    columns hold, in order."""
    user = get_user_model()
    chosen = {
        Match: fields(Match),
        MatchSeat: fields(MatchSeat, leave_out=_START_LEAVES_OUT[MatchSeat]),
        BotVersion: fields(BotVersion, leave_out=_START_LEAVES_OUT[BotVersion]),
        Bot: fields(Bot),
        user: [user._meta.pk, user._meta.get_field(user.USERNAME_FIELD)],
    }
    status, pk = column(Match, "status"), column(Match, "pk")
    attempts = column(Match, "attempts")
    sql = f"""
WITH started AS (
    UPDATE {table(Match)} SET {status} = %(running)s, {attempts} = {attempts} + 1,
        {column(Match, "started_at")} = %(now)s
    WHERE {pk} = %(id)s AND {status} IN (%(queued)s, %(running)s)
    RETURNING *)
SELECT {", ".join(selected(alias, chosen[model]) for alias, model in
                  (("m", Match), ("s", MatchSeat), ("v", BotVersion), ("b", Bot), ("u", user)))}
FROM started m
JOIN {table(MatchSeat)} s ON s.{column(MatchSeat, "match")} = m.{pk}
JOIN {table(BotVersion)} v ON v.{column(BotVersion, "pk")} = s.{column(MatchSeat, "version")}
JOIN {table(Bot)} b ON b.{column(Bot, "pk")} = v.{column(BotVersion, "bot")}
JOIN {table(user)} u ON u.{column(user, "pk")} = b.{column(Bot, "owner")}
ORDER BY s.{column(MatchSeat, "seat")}
"""
    return sql, chosen


def _start_in_one_statement(match_id: int) -> tuple[Match, list[MatchSeat]] | None:
    sql, chosen = _start_statement()
    rows = run_statement(sql, {
        "id": match_id, "now": timezone.now(),
        "queued": MatchStatus.QUEUED, "running": MatchStatus.RUNNING,
    })
    if not rows:
        return None
    match_width = len(chosen[Match])
    match = loaded(Match, chosen[Match], rows[0][:match_width])  # the same match on every row
    per_seat = list(chosen.items())[1:]  # each row's order after the match: seat ... owner
    seats = []
    for row in rows:
        loaded_row = {}
        at = match_width
        for model, model_fields in per_seat:
            loaded_row[model] = loaded(model, model_fields, row[at:at + len(model_fields)])
            at += len(model_fields)
        bot = loaded_row[Bot]
        bot.owner = loaded_row[get_user_model()]
        version = loaded_row[BotVersion]
        version.bot = bot
        seat = loaded_row[MatchSeat]
        seat.match, seat.version = match, version
        seats.append(seat)
    return match, seats


def match_record_result(*, match: Match, played: PlayedMatch) -> bool:
    """running → finished: atomically the result, each seat's fault and log and the compressed
    replay, and the validated version's verdict; after commit, the tournament's progress and
    rating work (``_follow_up``). False (and nothing written) unless the match is running.

    ``match`` is the row ``match_start`` returned (its kind, tournament and rules never change).
    A tournament match on PostgreSQL takes one statement (``_record_statement``)."""
    outcome = played.outcome
    result = outcome.result
    fault = result.get("fault")
    raw = json.dumps(outcome.replay, separators=(",", ":")).encode()
    data = zlib.compress(raw, 6)
    seat_logs = {}
    for number, tail in played.tails.items():
        faulted = bool(fault) and fault["seat"] == number
        if faulted or tail:  # most seats have neither: no write
            seat_logs[number] = (
                fault["kind"] if faulted else "",
                fault["detail"] if faulted else "",
                tail if faulted else tail[-QUIET_LOG_BYTES:],
            )
    finish = {
        "status": MatchStatus.FINISHED, "winner": result["winner"], "score": result["score"],
        "reason": result["reason"], "failure": "", "play_ms": played.play_ms,
        "finished_at": timezone.now(),
    }
    if match.kind == MatchKind.TOURNAMENT and one_statement():
        recorded, others_queued = _record_in_one_statement(
            match, finish, data, len(raw), seat_logs
        )
        if recorded:
            _follow_up_on_commit(match, finish_check=not others_queued)
        return recorded
    with transaction.atomic():
        finished = Match.objects.filter(pk=match.pk, status=MatchStatus.RUNNING).update(**finish)
        if not finished:  # finished or failed already: a second delivery writes nothing
            return False
        for number, (kind, detail, log_tail) in seat_logs.items():
            MatchSeat.objects.filter(match_id=match.pk, seat=number).update(
                fault_kind=kind, fault_detail=detail, log=log_tail
            )
        # Only a finished match has a replay, and this one was running: no replay row yet.
        Replay.objects.create(match_id=match.pk, data=data, size=len(raw))
        if match.kind == MatchKind.VALIDATION:
            _end_validation(match, result, outcome.replay["moves_ms"], played.tails)
        else:
            _follow_up_on_commit(match)
    return True


#: What recording a seat writes (``MatchSeat`` fields), in ``seat_logs``' order.
_SEAT_WRITES = ("fault_kind", "fault_detail", "log")


@functools.cache
def _record_statement(finish_fields: tuple[str, ...], seats: tuple[int, ...]) -> str:
    """The record as one statement: the match's UPDATE (only if running), the replay's INSERT and
    one UPDATE per seat in ``seats``, each part running only if the match's UPDATE did (data-
    modifying CTEs joined on its ``RETURNING``); it returns the number of replays inserted (1 or
    0) and whether another match of the round-robin is still queued. Parameters: ``%(id)s``,
    ``%(running)s``, ``%(queued)s``, ``%(tournament)s``, one per field of ``finish_fields``,
    ``%(data)s``, ``%(size)s`` and, per seat ``n``, ``%(<field>_<n>)s`` for each of
    ``_SEAT_WRITES``."""
    pk = column(Match, "pk")
    sets = ", ".join(f"{column(Match, name)} = %({name})s" for name in finish_fields)
    seat_table, seat_match = table(MatchSeat), column(MatchSeat, "match")
    seat_parts = "".join(f""",
seat_{n} AS (
    UPDATE {seat_table}
    SET {", ".join(f"{column(MatchSeat, name)} = %({name}_{n})s" for name in _SEAT_WRITES)}
    FROM finished WHERE {seat_table}.{seat_match} = finished.{pk}
        AND {seat_table}.{column(MatchSeat, "seat")} = {int(n)}
    RETURNING 1)""" for n in seats)
    replay_match = column(Replay, "match")
    return f"""
WITH finished AS (
    UPDATE {table(Match)} SET {sets}
    WHERE {pk} = %(id)s AND {column(Match, "status")} = %(running)s
    RETURNING {pk}),
replay AS (
    INSERT INTO {table(Replay)} ({replay_match}, {column(Replay, "data")}, {column(Replay, "size")})
    SELECT {pk}, %(data)s, %(size)s FROM finished
    RETURNING {replay_match}){seat_parts}
SELECT (SELECT count(*) FROM replay), EXISTS (
    SELECT 1 FROM {table(Match)} WHERE {column(Match, "tournament")} = %(tournament)s
        AND {column(Match, "status")} = %(queued)s AND {pk} <> %(id)s)
"""


def _record_in_one_statement(
    match: Match, finish: dict, data: bytes, size: int,
    seat_logs: dict[int, tuple[str, str, str]],
) -> tuple[bool, bool]:
    """``match_record_result``'s writes in one statement: (recorded, another match of the
    round-robin still queued). Not recorded, and nothing written, unless the match was running.
    Values go through their fields' own preparation (JSON, bytes)."""
    params = {
        name: Match._meta.get_field(name).get_db_prep_save(value, connection)
        for name, value in finish.items()
    }
    params.update({"id": match.pk, "running": MatchStatus.RUNNING, "size": size,
                   "queued": MatchStatus.QUEUED, "tournament": match.tournament_id,
                   "data": Replay._meta.get_field("data").get_db_prep_save(data, connection)})
    for n, values in seat_logs.items():
        params.update({f"{name}_{n}": value for name, value in zip(_SEAT_WRITES, values,
                                                                    strict=True)})
    sql = _record_statement(tuple(finish), tuple(sorted(seat_logs)))
    ((recorded, others_queued),) = run_statement(sql, params)
    return bool(recorded), others_queued


def match_after_record(*, match_id: int) -> None:
    """The after-commit work of a finished tournament match, again: the tournament's finish check
    and the rating refit request (both idempotent). For a second delivery of a recorded match,
    whose first worker may have died between the commit and this work."""
    match = (
        Match.objects.filter(pk=match_id, kind=MatchKind.TOURNAMENT, status=MatchStatus.FINISHED)
        .only("tournament_id", "rules", "rules_key")
        .first()
    )
    if match is not None:
        _follow_up(match)


def _follow_up_on_commit(match: Match, *, finish_check: bool = True) -> None:
    """``_follow_up`` once the current transaction commits (now, outside one): of two last
    matches finishing together, the later check sees both done, and a refit that reads the board
    after the request sees this result."""
    transaction.on_commit(lambda: _follow_up(match, finish_check=finish_check))


def _follow_up(match: Match, *, finish_check: bool = True) -> None:
    """A finished tournament match's progress and rating work, through their own services: the
    tournament's finish check and the board's refit request, both idempotent.

    ``finish_check=False`` when the record saw another match of the round-robin still queued:
    this match is not the last, and that one's own follow-up (or its failure's, or the minutely
    sweep's) makes the check, after it has started, played and committed, so after this result
    committed. It saves a round trip on every match but the last few."""
    ratings_request_refit(preset=match.rules["preset"], rules_key=match.rules_key)
    if finish_check:  # second: if this worker dies in between, the sweep's check requests again
        tournament_finish_if_done(tournament_id=match.tournament_id)


def match_fail(*, match_id: int, reason: str) -> bool:
    """queued | running → failed with ``reason`` (the platform could not play it); a validation
    match fails its version. False if the match was already finished or failed."""
    with transaction.atomic():
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None or match.status not in (MatchStatus.QUEUED, MatchStatus.RUNNING):
            return False
        match.status = MatchStatus.FAILED
        match.failure = reason[:4000]
        match.finished_at = timezone.now()
        match.save(update_fields=["status", "failure", "finished_at"])
        if match.kind == MatchKind.VALIDATION:
            version_validation_end(
                version=_validated_seat(match).version,
                fault_detail=f"the validation match could not be played: {reason}",
            )
        else:
            tournament_id = match.tournament_id
            transaction.on_commit(lambda: tournament_finish_if_done(tournament_id=tournament_id))
            tournament_matches_failed(preset=match.rules["preset"], rules_key=match.rules_key)
    log.warning("match %s failed: %s", match_id, reason)
    return True


def match_requeue(*, match_id: int) -> bool:
    """failed → queued, and its task sent after commit; the tournament runs again and a validated
    version goes back to pending. False if the match had not failed, or its round-robin was
    cancelled."""
    with transaction.atomic():
        # the round-robin first (``tournament_lock``): a cancel or a finish check waits for this
        match_tournament_lock(match_id=match_id)
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None or match.status != MatchStatus.FAILED:
            return False
        if match.tournament_id is not None and Tournament.objects.filter(
            pk=match.tournament_id, status=TournamentStatus.CANCELLED
        ).exists():
            return False  # its round-robin was cancelled
        match.status = MatchStatus.QUEUED
        match.failure = ""
        match.attempts = 0  # a fresh set of attempts (``match_platform_failure``)
        match.queued_at = timezone.now()
        match.started_at = match.finished_at = None
        match.save(update_fields=[
            "status", "failure", "attempts", "queued_at", "started_at", "finished_at"])
        Replay.objects.filter(match=match).delete()  # only a finished match has a replay
        if match.kind == MatchKind.VALIDATION:
            version_validation_reset(version=_validated_seat(match).version)
        else:
            tournament_reopen(tournament_id=match.tournament_id)
        queue_matches(match_ids=[match.pk])
    return True


def matches_sweep_stuck(*, now: datetime | None = None) -> list[int]:
    """Fail every match running for longer than ``ARENA_STUCK_AFTER`` seconds, with the reason,
    and finish tournaments left with no open match, requesting their board's refit; returns the
    failed ids. They can be re-queued (``match_requeue``)."""
    now = now or timezone.now()
    limit = settings.ARENA_STUCK_AFTER
    cutoff = now - timedelta(seconds=limit)
    stuck = Match.objects.filter(status=MatchStatus.RUNNING, started_at__lt=cutoff)
    failed = []
    for match in stuck.only("pk", "started_at"):
        reason = (
            f"stuck: running since {match.started_at:%Y-%m-%d %H:%M:%S} UTC, more than {limit} s "
            "(its worker was probably lost); re-queue it to play it again"
        )
        if match_fail(match_id=match.pk, reason=reason):
            failed.append(match.pk)
    for tournament_id, preset, key in Tournament.objects.filter(
        status=TournamentStatus.RUNNING
    ).values_list("pk", "preset", "rules_key"):
        # A worker died between its last match's commit and the follow-up: the finish check and
        # the refit request (which the follow-up makes first) are both lost.
        if tournament_finish_if_done(tournament_id=tournament_id):
            ratings_request_refit(preset=preset, rules_key=key)
    return failed


#: A match queued this long while the broker's matches queue is empty has lost its task.
ORPHANED_AFTER = timedelta(minutes=2)


def matches_resend_orphans(*, now: datetime | None = None) -> list[int]:
    """Send again the task of every match queued for ``ORPHANED_AFTER`` or longer while no match
    task waits in the broker: its task was lost (not published during a long Redis outage, or
    held by a worker that died on the filesystem broker). A match with a task is in the queue or
    running, so a resent task can only be a second delivery, which writes nothing. Returns the
    ids resent; none while the broker cannot tell."""
    if matches_waiting_in_broker() != 0:
        return []
    ids = matches_resend_queued(queued_before=(now or timezone.now()) - ORPHANED_AFTER)
    if ids:
        log.warning("resent the lost tasks of %d queued match(es): %s", len(ids), ids[:20])
    return ids


def matches_resend_queued(
    *, queued_before: datetime, tournament_id: int | None = None
) -> list[int]:
    """Send again the task of every match (of ``tournament_id``) whose task was last sent (or
    was due) at ``queued_before`` or earlier, and note the time sent; a task delivered twice
    writes once. Returns the ids, in order."""
    queued = Match.objects.filter(status=MatchStatus.QUEUED, queued_at__lte=queued_before)
    if tournament_id is not None:
        queued = queued.filter(tournament_id=tournament_id)
    ids = list(queued.order_by("pk").values_list("pk", flat=True))
    if ids:
        with transaction.atomic():
            Match.objects.filter(pk__in=ids, status=MatchStatus.QUEUED).update(
                queued_at=timezone.now())
            queue_matches(match_ids=ids)
    return ids


def _validated_seat(match: Match) -> MatchSeat:
    """Seat 0 of a validation match holds the version under validation."""
    return match.seats.select_related("version").get(seat=0)


#: The seats of a validation match that hold the version under validation.
VALIDATED_SEATS = (0, 2)


def _end_validation(
    match: Match, result: dict, moves_ms: list[list[int]], tails: dict[int, str]
) -> None:
    """The version's verdict from its validation match. Ready only with no fault and at least one
    decision on each of its seats (a decision comes after its ``ready`` reply to ``hello``): a
    match that ended before the version decided (an instant win at the deal) validates nothing."""
    version = _validated_seat(match).version
    fault = result.get("fault")
    undecided = [seat for seat in VALIDATED_SEATS if not moves_ms[seat]]
    if fault is None and not undecided:
        version_validation_end(version=version, log=tails.get(0, "")[-QUIET_LOG_BYTES:])
    elif fault is None:
        seats = ("seats " if len(undecided) > 1 else "seat ") + " and ".join(map(str, undecided))
        version_validation_end(
            version=version, fault_kind="",
            fault_detail=f"the validation match ended ({result['reason']}) before {seats} made "
            "a decision, so nothing was validated; "
            "this is the platform's fault: upload the version again or ask the operator",
            log=tails.get(0, "")[-QUIET_LOG_BYTES:],
        )
    elif fault["seat"] in VALIDATED_SEATS:
        version_validation_end(
            version=version, fault_kind=fault["kind"],
            fault_detail=f"seat {fault['seat']}: {fault['detail']}",
            log=tails.get(fault["seat"], ""),
        )
    else:
        version_validation_end(
            version=version, fault_kind="",
            fault_detail=f"the built-in opponent failed ({fault['kind']}: {fault['detail']}); "
            "this is the platform's fault: upload the version again or ask the operator",
        )
