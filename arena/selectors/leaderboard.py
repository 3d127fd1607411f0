"""The leaderboard of one rating board: the rows of its latest refit, best first.

A board is one rule set: ``?preset=quatre-sept`` is the preset as published, and a rule set with
changed options has a board of its own, keyed like ``Match.rules_key``
(``quatre-sept{target=41}``). Must not import services or tasks.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.core.cache import cache

from arena.models import Rating, RatingBoard

#: How long a generation's rows stay cached (they never change; this only bounds memory).
LEADERBOARD_CACHE_SECONDS = 3600


def leaderboard(*, preset: str, board: str | None = None) -> list[dict[str, Any]]:
    """Rows with ``rank``, ``version``, ``bot`` (its label; ``bot_id`` its id), ``owner``,
    ``number``, ``elo``, ``ci95`` (half-width of the 95% interval), ``matches``, ``wins``,
    ``losses``, ``draws``, ``provisional`` and ``los_next`` (likelihood of superiority over the
    next row), from the latest refit of board ``board`` (default: the unmodified
    ``preset``); empty until its first refit."""
    boards = RatingBoard.objects.filter(key=board or preset)
    found = boards.only("pk", "generation", "fitted_at").first()
    if found is None or found.generation == 0:
        return []
    # A generation's rows never change: cached by board and generation (a refit makes a new
    # generation, hence a new key), so a busy leaderboard costs one small query.
    # Kept in this process too (a few boards), so a hit does not unpickle 1,000 rows each time.
    fitted = found.fitted_at.timestamp() if found.fitted_at else 0
    key = f"arena:leaderboard:{found.pk}:{found.generation}:{fitted}"
    rows = _LOCAL.get(key)
    if rows is None:
        try:
            rows = cache.get(key)
        except Exception:  # the cache (Redis) is down: read the rows
            rows = None
        if rows is None:
            rows = _rows(found)
            with contextlib.suppress(Exception):
                cache.set(key, rows, timeout=LEADERBOARD_CACHE_SECONDS)
        if len(_LOCAL) >= 16:
            _LOCAL.clear()
        _LOCAL[key] = rows
    return [dict(row) for row in rows]  # the caller's to change


_LOCAL: dict[str, list[dict[str, Any]]] = {}


def _rows(board: RatingBoard) -> list[dict[str, Any]]:
    ratings = (
        Rating.objects.filter(board=board, generation=board.generation)
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
