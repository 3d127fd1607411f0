"""The per-match steps of a worker on PostgreSQL, one statement (one round trip) each.

A worker starts, records and follows up every match; through the ORM these took about ten round
trips, and under load each round trip waits for the database to be scheduled on a busy CPU. Here
each step is one statement whose data-modifying parts (``WITH ... UPDATE ... RETURNING``) make it
atomic on its own, with the same conditions and effects as the ORM steps in ``matches``, which
remain the path on SQLite (in-process: no round trips to save) and for validation matches.

Invariants, as in ``matches``: a match starts only from queued or running, is recorded only while
running (a second delivery writes nothing), and its replay exists exactly when it is finished.
Must not import the API or tasks.
"""

from __future__ import annotations

import json
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import connection

from arena.models import (
    Bot,
    BotVersion,
    Match,
    MatchSeat,
    MatchStatus,
    RefitState,
    TournamentStatus,
)

_USERS = get_user_model()._meta.db_table

_START = f"""
WITH started AS (
    UPDATE arena_match SET status = %(running)s, attempts = attempts + 1, started_at = %(now)s
    WHERE id = %(id)s AND status IN (%(queued)s, %(running)s)
    RETURNING id, kind, tournament_id, pair, swapped, seed, rules::text, rules_key, attempts)
SELECT m.id, m.kind, m.tournament_id, m.pair, m.swapped, m.seed, m.rules, m.rules_key,
       m.attempts, s.id, s.seat, v.id, v.number, v.builtin, v.blob_id, v.filename, v.runtime,
       b.id, b.name, b.builtin, u.id, u.username
FROM started m
JOIN arena_matchseat s ON s.match_id = m.id
JOIN arena_botversion v ON v.id = s.version_id
JOIN arena_bot b ON b.id = v.bot_id
JOIN {_USERS} u ON u.id = b.owner_id
ORDER BY s.seat
"""

_RECORD = """
WITH finished AS (
    UPDATE arena_match SET status = %(finished)s, winner = %(winner)s, score = %(score)s::jsonb,
        reason = %(reason)s, failure = '', play_ms = %(play_ms)s, finished_at = %(now)s
    WHERE id = %(id)s AND status = %(running)s
    RETURNING id),
replay AS (
    INSERT INTO arena_replay (match_id, data, size)
    SELECT id, %(data)s, %(size)s FROM finished
    RETURNING match_id){seats}
SELECT count(*) FROM replay
"""

_SEAT = """,
seat_{n} AS (
    UPDATE arena_matchseat SET fault_kind = %(kind_{n})s, fault_detail = %(detail_{n})s,
        log = %(log_{n})s
    FROM finished WHERE arena_matchseat.match_id = finished.id AND arena_matchseat.seat = {n}
    RETURNING 1)"""

_FOLLOW_UP = """
WITH finished AS (
    UPDATE arena_tournament SET status = %(t_finished)s, finished_at = %(now)s
    WHERE id = %(tournament)s AND status = %(t_running)s AND NOT EXISTS (
        SELECT 1 FROM arena_match
        WHERE tournament_id = %(tournament)s AND status IN (%(queued)s, %(running)s))
    RETURNING id),
again AS (
    UPDATE arena_ratingboard SET state = %(again)s, state_changed_at = %(now)s
    WHERE key = %(key)s AND state = %(refit_running)s AND state_changed_at >= %(fresh)s
    RETURNING id)
SELECT (SELECT count(*) FROM finished), (SELECT count(*) FROM again), EXISTS (
    SELECT 1 FROM arena_ratingboard
    WHERE key = %(key)s AND state IN (%(refit_queued)s, %(again)s)
        AND state_changed_at >= %(fresh)s)
"""


def available() -> bool:
    """True where these statements run: the default database is PostgreSQL."""
    return connection.vendor == "postgresql"


def start(*, match_id: int, now: datetime) -> tuple[Match, list[MatchSeat]] | None:
    """queued | running → running, counting the attempt: the match and its four seats (versions,
    bots and owners loaded, read-only), or None if it is finished or failed."""
    with connection.cursor() as cursor:
        cursor.execute(_START, {
            "id": match_id, "now": now,
            "queued": MatchStatus.QUEUED, "running": MatchStatus.RUNNING,
        })
        rows = cursor.fetchall()
    if not rows:
        return None
    (pk, kind, tournament_id, pair, swapped, seed, rules, rules_key, attempts) = rows[0][:9]
    match = Match(
        id=pk, kind=kind, tournament_id=tournament_id, pair=pair, swapped=swapped, seed=seed,
        rules=json.loads(rules), rules_key=rules_key, status=MatchStatus.RUNNING,
        attempts=attempts, started_at=now,
    )
    seats = []
    for row in rows:
        (seat_id, seat, version_id, number, builtin, blob_id, filename, runtime,
         bot_id, bot_name, bot_builtin, owner_id, username) = row[9:]
        owner = get_user_model()(id=owner_id, username=username)
        bot = Bot(id=bot_id, name=bot_name, builtin=bot_builtin, owner=owner)
        version = BotVersion(
            id=version_id, bot=bot, number=number, builtin=builtin, blob_id=blob_id,
            filename=filename, runtime=runtime,
        )
        seats.append(MatchSeat(id=seat_id, match=match, seat=seat, version=version))
    return match, seats


def record(
    *, match_id: int, now: datetime, result: dict, play_ms: int, replay: bytes, size: int,
    seat_logs: dict[int, tuple[str, str, str]],
) -> bool:
    """running → finished with ``result`` (winner, score, reason), the compressed ``replay`` and,
    for each seat in ``seat_logs``, its (fault kind, fault detail, log). False, and nothing
    written, unless the match was running."""
    params = {
        "id": match_id, "now": now, "winner": result["winner"],
        "score": json.dumps(result["score"]), "reason": result["reason"], "play_ms": play_ms,
        "data": replay, "size": size,
        "finished": MatchStatus.FINISHED, "running": MatchStatus.RUNNING,
    }
    for n, (kind, detail, log) in seat_logs.items():
        params.update({f"kind_{n}": kind, f"detail_{n}": detail, f"log_{n}": log})
    seats = "".join(_SEAT.format(n=int(n)) for n in sorted(seat_logs))
    with connection.cursor() as cursor:
        cursor.execute(_RECORD.format(seats=seats), params)
        (recorded,) = cursor.fetchone()
    return bool(recorded)


def follow_up(
    *, tournament_id: int, rules_key: str, now: datetime, fresh_since: datetime
) -> tuple[bool, bool]:
    """After a tournament match's result has committed: the tournament's finish check (running →
    finished once no match is queued or running) and the usual cases of a rating refit request (a
    fresh running refit → again; a fresh queued or again one needs nothing). Returns (tournament
    finished now, refit request handled); when not handled, the caller makes the full request."""
    with connection.cursor() as cursor:
        cursor.execute(_FOLLOW_UP, {
            "tournament": tournament_id, "key": rules_key, "now": now, "fresh": fresh_since,
            "t_finished": TournamentStatus.FINISHED, "t_running": TournamentStatus.RUNNING,
            "queued": MatchStatus.QUEUED, "running": MatchStatus.RUNNING,
            "refit_running": RefitState.RUNNING, "refit_queued": RefitState.QUEUED,
            "again": RefitState.AGAIN,
        })
        finished, again, pending = cursor.fetchone()
    return bool(finished), bool(again or pending)
