"""Reading matches and replays."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import Prefetch, QuerySet

from arena.models import Match, MatchSeat, Replay


def match_list() -> QuerySet[Match]:
    """Every match with its seats, their versions, bots and owners prefetched."""
    seats = MatchSeat.objects.select_related("version__bot__owner").order_by("seat")
    return Match.objects.prefetch_related(Prefetch("seats", queryset=seats))


#: The columns of a row of the match list (``match_rows``), in the API's order.
MATCH_ROW_FIELDS = (
    "id", "kind", "tournament_id", "pair", "swapped", "seed", "rules", "rules_key", "status",
    "winner", "score", "reason", "failure", "attempts", "play_ms", "created_at", "started_at",
    "finished_at",
)

# A page of the match list as written-out SQL on PostgreSQL: the ORM's building of these
# statements, its loading of 150 times a page through Python and its model machinery were most of
# the page's time. The times come as text (UTC, microseconds always written).
_MATCH_ROWS_SQL = """
SELECT id, kind, tournament_id, pair, swapped, seed, rules, rules_key, status, winner, score,
       reason, failure, attempts, play_ms,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
       to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
       to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')
FROM arena_match WHERE id = ANY(%s) ORDER BY id
"""
_SEAT_ROWS_SQL = """
SELECT s.match_id, s.seat, s.version_id, v.number, u.username, b.name, b.owner_id, s.fault_kind,
       s.fault_detail, s.log
FROM arena_matchseat s
JOIN arena_botversion v ON v.id = s.version_id
JOIN arena_bot b ON b.id = v.bot_id
JOIN auth_user u ON u.id = b.owner_id
WHERE s.match_id IN ({ids})
ORDER BY s.match_id, s.seat
"""


def match_rows(*, match_ids: list[int]) -> list[tuple]:
    """The matches with these ids, in id order, as tuples of ``MATCH_ROW_FIELDS``, the times as
    ISO 8601 text in UTC as ``datetime.isoformat`` writes it (``2025-05-01T12:00:00.250000+00:00``)
    or None. For a page of the match list: one statement, no model instances."""
    if not match_ids:
        return []
    if connection.vendor != "postgresql":
        rows = Match.objects.filter(pk__in=match_ids).order_by("pk").values_list(*MATCH_ROW_FIELDS)
        return [(*row[:15], *(_iso(value) for value in row[15:])) for row in rows]
    with connection.cursor() as cursor:
        cursor.execute(_MATCH_ROWS_SQL, [list(match_ids)])
        rows = cursor.fetchall()
    return [
        (*row[:6], _json(row[6]), *row[7:10], _json(row[10]), *row[11:15],
         *(_utc_text(value) for value in row[15:]))
        for row in rows
    ]


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


def _utc_text(value: str | None) -> str | None:
    """``to_char``'s UTC time as ``datetime.isoformat`` writes it (no fraction when zero)."""
    if value is None:
        return None
    return (value[:-7] if value.endswith(".000000") else value) + "+00:00"


def _json(value):
    """A JSON column as the ORM's ``JSONField`` reads it (PostgreSQL gives raw cursors text)."""
    return json.loads(value) if isinstance(value, str) else value


def match_seat_rows(*, match_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The seats of these matches as plain rows by match id, in seat order: ``seat``,
    ``version``, ``number``, ``bot`` (its label), ``owner_id``, ``fault_kind``, ``fault_detail``,
    ``log``. For a page of the match list: one statement and no model instances (building 800 of
    them, seats with their versions, bots and owners, was most of a page's time)."""
    found: dict[int, list[dict[str, Any]]] = {match_id: [] for match_id in match_ids}
    if not match_ids:
        return found
    with connection.cursor() as cursor:
        cursor.execute(_SEAT_ROWS_SQL.format(ids=", ".join(["%s"] * len(match_ids))),
                       list(match_ids))
        rows = cursor.fetchall()
    for (match_id, seat, version, number, owner, name, owner_id, fault_kind, fault_detail,
         log) in rows:
        found[match_id].append({
            "seat": seat, "version": version, "number": number, "bot": f"{owner}/{name}",
            "owner_id": owner_id, "fault_kind": fault_kind, "fault_detail": fault_detail,
            "log": log,
        })
    return found


def match_replay(*, match: Match) -> dict[str, Any] | None:
    """The match's replay (format 1) as a dict, or None while it has none."""
    data = Replay.objects.filter(match=match).values_list("data", flat=True).first()
    return None if data is None else replay_decode(bytes(data))


_REPLAY_SQL = """
SELECT m.attempts, m.finished_at, r.data
FROM arena_match m LEFT JOIN arena_replay r ON r.match_id = m.id
WHERE m.id = %s
"""


def match_replay_record(*, match_id: int) -> tuple[str, bytes | None] | None:
    """For the replay endpoint, in one statement: None when there is no such match; else what
    names the version of its replay (its attempts and finish time: a match re-queued and played
    again finishes at another time) and the replay's stored, compressed data (None while it has
    none; ``replay_decode`` reads it)."""
    if not 0 < match_id < 2**63:  # no such id (and none PostgreSQL's bigint can hold)
        return None
    with connection.cursor() as cursor:
        cursor.execute(_REPLAY_SQL, [match_id])
        row = cursor.fetchone()
    if row is None:
        return None
    attempts, finished_at, data = row
    return f"{attempts}:{finished_at}", None if data is None else bytes(data)


def replay_decode(data: bytes) -> dict[str, Any]:
    """A stored replay (zlib-compressed JSON) as the dict it was."""
    return json.loads(zlib.decompress(data))
