"""Reading what ratings need and show: rated results as the maths takes them, a version's rating
history, a tournament's own ranking.

Rated matches are finished tournament matches (validation matches are checks, not rated). Each
gives one ``Result``: team 0's version against team 1's, score 1 / ½ / 0 by the winner, and the
cluster of its duplicate pair ``(tournament, pair, lower version id, higher version id)``: the two
matches of one deal with the seats swapped. A pair one of whose matches failed gives no result
(``void_pairs``). Must not import services or tasks.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Q, QuerySet

from arena.kept import kept, kept_key
from arena.models import (
    BotVersion,
    MatchKind,
    MatchSeat,
    MatchStatus,
    Rating,
    Tournament,
)
from arena.rating import Result, tournament_ranking
from arena.selectors.tournaments import (
    RESULTS_CACHE_SECONDS,
    tournament_results_version,
    void_pairs,
)


def rated_results(
    *, rules_key: str | None = None, tournament_id: int | None = None
) -> list[Result]:
    """The rated results of board ``rules_key``, or of one tournament, in match order."""
    scope = Q()
    if rules_key is not None:
        scope &= Q(match__rules_key=rules_key)
    if tournament_id is not None:
        scope &= Q(match__tournament_id=tournament_id)
    void = void_pairs(scope)
    seats = (
        MatchSeat.objects.filter(
            scope, seat__lt=2, match__kind=MatchKind.TOURNAMENT,
            match__status=MatchStatus.FINISHED,
        )
        .order_by("match_id", "seat")
        .values_list("match_id", "seat", "version_id", "match__winner", "match__tournament_id",
                     "match__pair")
    )
    teams: dict[int, list] = defaultdict(lambda: [None, None, None, None, None])
    for match_id, seat, version_id, winner, tournament, pair in seats:
        row = teams[match_id]
        row[seat] = version_id
        row[2], row[3], row[4] = winner, tournament, pair
    results = []
    for a, b, winner, tournament, pair in teams.values():
        if a is None or b is None:
            continue
        cluster = (tournament, pair, min(a, b), max(a, b))
        if cluster in void:
            continue  # its twin failed: half a pair counts one side's luck of the deal
        score = 0.5 if winner is None else 1.0 if winner == 0 else 0.0
        results.append(Result(a, b, score, cluster))
    return results


def version_rating_history(*, version: BotVersion) -> QuerySet[Rating]:
    """The version's rating rows on every board, oldest refit first."""
    return (
        Rating.objects.filter(version=version)
        .select_related("board")
        .order_by("board__key", "generation")
    )


def tournament_ranking_rows(*, tournament: Tournament) -> list[dict[str, Any]]:
    """The tournament's ranking from its own finished matches alone: a Bradley-Terry fit with
    intervals, best first (``rank`` from 1; versions without a finished match are absent). Kept
    per ``tournament_results_version``: the fit runs once per finished match, not per view."""
    rows = kept(
        kept_key("tournament-ranking", tournament_results_version(tournament=tournament)),
        lambda: _ranking_rows(tournament), shared_seconds=RESULTS_CACHE_SECONDS,
        cost=lambda rows: 300 * len(rows),
    )
    return [dict(row) for row in rows]


def _ranking_rows(tournament: Tournament) -> list[dict[str, Any]]:
    rows = tournament_ranking(rated_results(tournament_id=tournament.pk))
    labels = {
        v.pk: v.label
        for v in BotVersion.objects.filter(pk__in=[r.version for r in rows]).select_related(
            "bot__owner"
        )
    }
    return [
        {
            "rank": rank,
            "version": row.version,
            "label": labels[row.version],
            "elo": round(row.elo, 1),
            "ci95": round(row.ci95, 1),
            "matches": row.matches,
            "wins": row.wins,
            "losses": row.losses,
            "draws": row.draws,
            "provisional": row.provisional,
            "los_next": None if row.los_next is None else round(row.los_next, 4),
        }
        for rank, row in enumerate(rows, start=1)
    ]
