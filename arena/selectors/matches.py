"""Reading matches and replays."""

from __future__ import annotations

import functools
import json
import zlib
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Prefetch, QuerySet

from arena.models import Bot, BotVersion, Match, MatchSeat, MatchStatus, Replay
from arena.sqlnames import column, table


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
# the page's time. The times come as text (UTC, microseconds always written). Tables and columns
# are the models' own names (``arena.sqlnames``), filled in once (``_statements``).
_MATCH_ROWS_SQL = """
SELECT {id}, {kind}, {tournament}, {pair}, {swapped}, {seed}, {rules}, {rules_key}, {status},
       {winner}, {score}, {reason}, {failure}, {attempts}, {play_ms},
       to_char({created_at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
       to_char({started_at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
       to_char({finished_at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')
FROM {match} WHERE {id} = ANY(%s) ORDER BY {id}
"""
_SEAT_ROWS_SQL = """
SELECT s.{seat_match}, s.{seat_seat}, s.{seat_version}, v.{version_number}, u.{username},
       b.{bot_name}, b.{bot_owner}, s.{seat_fault_kind}, s.{seat_fault_detail}, s.{seat_log}
FROM {seat} s
JOIN {version} v ON v.{version_pk} = s.{seat_version}
JOIN {bot} b ON b.{bot_pk} = v.{version_bot}
JOIN {user} u ON u.{user_pk} = b.{bot_owner}
WHERE s.{seat_match} IN ({{ids}})
ORDER BY s.{seat_match}, s.{seat_seat}
"""
_REPLAY_SQL = """
SELECT m.{attempts}, m.{finished_at}, m.{status}, r.{replay_data}
FROM {match} m LEFT JOIN {replay} r ON r.{replay_match} = m.{id}
WHERE m.{id} = %s
"""


@functools.cache
def _statements() -> tuple[str, str, str]:
    """The three statements above with the models' table and column names filled in."""
    user = get_user_model()
    names = {
        "match": table(Match), "seat": table(MatchSeat), "version": table(BotVersion),
        "bot": table(Bot), "user": table(user), "replay": table(Replay),
        "user_pk": column(user, "pk"), "username": column(user, user.USERNAME_FIELD),
        "version_pk": column(BotVersion, "pk"), "version_number": column(BotVersion, "number"),
        "version_bot": column(BotVersion, "bot"), "bot_pk": column(Bot, "pk"),
        "bot_name": column(Bot, "name"), "bot_owner": column(Bot, "owner"),
        "replay_match": column(Replay, "match"), "replay_data": column(Replay, "data"),
        "id": column(Match, "pk"), "tournament": column(Match, "tournament"),
    }
    names.update({name: column(Match, name) for name in (
        "kind", "pair", "swapped", "seed", "rules", "rules_key", "status", "winner", "score",
        "reason", "failure", "attempts", "play_ms", "created_at", "started_at", "finished_at")})
    names.update({f"seat_{name}": column(MatchSeat, name) for name in (
        "match", "seat", "version", "fault_kind", "fault_detail", "log")})
    return (_MATCH_ROWS_SQL.format(**names), _SEAT_ROWS_SQL.format(**names),
            _REPLAY_SQL.format(**names))


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
        cursor.execute(_statements()[0], [list(match_ids)])
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
        cursor.execute(_statements()[1].format(ids=", ".join(["%s"] * len(match_ids))),
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


class ReplayRecord(NamedTuple):
    """What the replay endpoint reads of a match in one statement: ``version`` names the version
    of its replay (its attempts and finish time: a match re-queued and played again finishes at
    another time); ``data`` is the replay's stored, compressed form (``replay_decode`` reads it),
    None while the match has none, or once a finished match's replay was deleted
    (``arena.services.retention``)."""

    version: str
    status: str
    data: bytes | None

    @property
    def pruned(self) -> bool:
        """Whether the match finished and its replay was since deleted: every finished match
        has one until then (``match_record_result`` writes both in one transaction)."""
        return self.data is None and self.status == MatchStatus.FINISHED


def match_replay_record(*, match_id: int) -> ReplayRecord | None:
    """The match's ``ReplayRecord``, or None when there is no such match."""
    if not 0 < match_id < 2**63:  # no such id (and none PostgreSQL's bigint can hold)
        return None
    with connection.cursor() as cursor:
        cursor.execute(_statements()[2], [match_id])
        row = cursor.fetchone()
    if row is None:
        return None
    attempts, finished_at, status, data = row
    return ReplayRecord(f"{attempts}:{finished_at}", status, None if data is None else bytes(data))


def replay_decode(data: bytes) -> dict[str, Any]:
    """A stored replay (zlib-compressed JSON) as the dict it was."""
    return json.loads(zlib.decompress(data))
