"""The leaderboard of one rating board: the rows of its latest refit, best first.

A board is one rule set: ``?preset=quatre-sept`` is the preset as published, and a rule set with
changed options has a board of its own, keyed like ``Match.rules_key``
(``quatre-sept{target=41}``). Must not import services or tasks.
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from arena.kept import kept, kept_key
from arena.models import Rating

#: How long a generation's rows stay cached (they never change; this only bounds memory).
LEADERBOARD_CACHE_SECONDS = 3600


def leaderboard(*, preset: str, board: str | None = None) -> list[dict[str, Any]]:
    """Rows with ``rank``, ``version``, ``bot`` (its label; ``bot_id`` its id), ``owner``,
    ``number``, ``elo``, ``ci95`` (half-width of the 95% interval), ``matches``, ``wins``,
    ``losses``, ``draws``, ``provisional`` and ``los_next`` (likelihood of superiority over the
    next row), from the latest refit of board ``board`` (default: the unmodified
    ``preset``); empty until its first refit."""
    found = _board(preset=preset, board=board)
    if found is None:
        return []
    # A generation's rows never change: kept by board and generation (a refit makes a new
    # generation, hence a new key), so a busy leaderboard costs one small query.
    rows = kept(
        kept_key("leaderboard-rows", _version(found)),
        lambda: _rows(board_id=found[0], generation=found[1]),
        shared_seconds=LEADERBOARD_CACHE_SECONDS, cost=lambda rows: 300 * len(rows),
    )
    return [dict(row) for row in rows]  # the caller's to change


def leaderboard_version(*, preset: str, board: str | None = None) -> str | None:
    """What identifies the rows ``leaderboard`` gives for these arguments, as a string (the
    board, its generation and refit time: a refit changes it), or None while there are none. For
    caching what is made of the rows."""
    found = _board(preset=preset, board=board)
    return None if found is None else _version(found)


def _board(*, preset: str, board: str | None) -> tuple[int, int, Any] | None:
    """The board's id, generation and refit time, if it has been fitted (one written-out
    statement: it runs for every leaderboard request, and the ORM's building of it was most of a
    cached page's time)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, generation, fitted_at FROM arena_ratingboard WHERE key = %s",
            [board or preset],
        )
        found = cursor.fetchone()
    return None if found is None or found[1] == 0 else found


def _version(board: tuple[int, int, Any]) -> str:
    return ":".join(str(value).replace(" ", "T") for value in board)


def _rows(*, board_id: int, generation: int) -> list[dict[str, Any]]:
    ratings = (
        Rating.objects.filter(board_id=board_id, generation=generation)
        .order_by("rank")
        .values_list(
            "rank", "version_id", "version__bot__owner__username", "version__bot__name",
            "version__bot_id", "version__number", "elo", "ci95", "matches", "wins", "losses",
            "draws", "provisional", "los_next", "fitted_at",
        )
    )
    return [
        {
            "rank": rank,
            "version": version,
            "bot": f"{owner}/{name}",
            "bot_id": bot_id,
            "owner": owner,
            "number": number,
            "elo": round(elo, 1),
            "ci95": round(ci95, 1),
            "matches": matches,
            "wins": wins,
            "losses": losses,
            "draws": draws,
            "provisional": provisional,
            "los_next": None if los_next is None else round(los_next, 4),
            "fitted_at": fitted_at,
        }
        for (rank, version, owner, name, bot_id, number, elo, ci95, matches, wins, losses, draws,
             provisional, los_next, fitted_at) in ratings
    ]
