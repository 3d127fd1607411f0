"""The leaderboard of one rating board: the rows of its latest refit, best first.

A board is one rule set: ``?preset=quatre-sept`` is the preset as published, and a rule set with
changed options has a board of its own, keyed like ``Match.rules_key``
(``quatre-sept{target=41}``). Must not import services or tasks.
"""

from __future__ import annotations

from typing import Any

from arena.models import Rating, RatingBoard


def leaderboard(*, preset: str, board: str | None = None) -> list[dict[str, Any]]:
    """Rows with ``rank``, ``version``, ``bot`` (its label; ``bot_id`` its id), ``owner``,
    ``number``, ``elo``, ``ci95`` (half-width of the 95% interval), ``matches``, ``wins``,
    ``losses``, ``draws``, ``provisional`` and ``los_next`` (likelihood of superiority over the
    next row), from the latest refit of board ``board`` (default: the unmodified
    ``preset``); empty until its first refit."""
    found = RatingBoard.objects.filter(key=board or preset).first()
    if found is None or found.generation == 0:
        return []
    ratings = (
        Rating.objects.filter(board=found, generation=found.generation)
        .select_related("version__bot__owner")
        .order_by("rank")
    )
    return [
        {
            "rank": r.rank,
            "version": r.version_id,
            "bot": r.version.bot.label,
            "bot_id": r.version.bot_id,
            "owner": r.version.bot.owner.username,
            "number": r.version.number,
            "elo": round(r.elo, 1),
            "ci95": round(r.ci95, 1),
            "matches": r.matches,
            "wins": r.wins,
            "losses": r.losses,
            "draws": r.draws,
            "provisional": r.provisional,
            "los_next": None if r.los_next is None else round(r.los_next, 4),
            "fitted_at": r.fitted_at,
        }
        for r in ratings
    ]
