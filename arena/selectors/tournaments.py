"""Reading round-robins: progress, standings and the cross-table, from finished matches.

Points: a win is 1, a draw ½, a loss 0, per match (a match is won by a team: the two seats of one
version). Faults count the matches a version lost by its own fault. Failed matches (the platform
could not play them) count as done but give no points.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Count, QuerySet

from arena.kept import kept, kept_key
from arena.models import Entry, MatchSeat, MatchStatus, Tournament

#: How long a tally or ranking stays in the shared cache (its key changes with every finished
#: match, so this only bounds the cache's memory).
RESULTS_CACHE_SECONDS = 600


def tournament_list() -> QuerySet[Tournament]:
    return Tournament.objects.select_related("created_by")


def tournament_progress(*, tournament: Tournament) -> dict[str, int]:
    """``total`` matches, ``done`` (finished or failed) and the count per status."""
    counts = dict(
        tournament.matches.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    by_status = {status: counts.get(status, 0) for status in MatchStatus.values}
    return {
        "total": sum(by_status.values()),
        "done": by_status[MatchStatus.FINISHED] + by_status[MatchStatus.FAILED],
        **by_status,
    }


def tournament_standings(*, tournament: Tournament) -> list[dict[str, Any]]:
    """One row per pinned version, best first (points, then wins, then fewer faults)."""
    rows, _ = _tally(tournament)
    return rows


def tournament_crosstable(*, tournament: Tournament) -> list[dict[str, Any]]:
    """Rows in standings order: for each opponent, the row version's points against it and the
    matches played (``None`` against itself)."""
    rows, pairs = _tally(tournament)
    order = [row["version"] for row in rows]
    unplayed = {"points": 0.0, "played": 0}
    return [
        {
            "version": a,
            "label": row["label"],
            "results": [
                None if a == b else {
                    "version": b,
                    "points": pairs.get((a, b), unplayed)["points"],
                    "played": pairs.get((a, b), unplayed)["played"],
                }
                for b in order
            ],
        }
        for a, row in zip(order, rows, strict=True)
    ]


def tournament_results_version(*, tournament: Tournament) -> str:
    """What identifies the round-robin's results: its id, creation time and seed (a row's
    identity even where ids are reused) and how many of its matches have finished (a finished
    match never changes). Whatever is made of its finished matches
    alone can be kept under it: a ladder's round-robin, polled by its page every few seconds,
    grows without end."""
    finished = tournament.matches.filter(status=MatchStatus.FINISHED).count()
    return f"{tournament.pk}:{tournament.created_at.timestamp()}:{tournament.seed}:{finished}"


def _tally(tournament: Tournament) -> tuple[list[dict[str, Any]], dict]:
    """The standings rows and the pair totals, kept per ``tournament_results_version``."""
    rows, pairs = kept(
        kept_key("tournament-tally", tournament_results_version(tournament=tournament)),
        lambda: _count(tournament), shared_seconds=RESULTS_CACHE_SECONDS,
        cost=lambda value: 400 * (len(value[0]) + len(value[1])),
    )
    return [dict(row) for row in rows], pairs  # the rows are the caller's to change


def _count(tournament: Tournament) -> tuple[list[dict[str, Any]], dict]:
    entries = Entry.objects.filter(tournament=tournament).select_related("version__bot__owner")
    rows = {
        e.version_id: {
            "version": e.version_id,
            "bot": e.version.bot_id,
            "label": e.version.label,
            "played": 0, "points": 0.0, "wins": 0, "losses": 0, "draws": 0, "faults": 0,
        }
        for e in entries
    }
    pairs: dict[tuple[int, int], dict[str, float]] = defaultdict(
        lambda: {"points": 0.0, "played": 0}
    )
    seats = MatchSeat.objects.filter(
        match__tournament=tournament, match__status=MatchStatus.FINISHED
    ).values_list("match_id", "seat", "version_id", "fault_kind", "match__winner")
    by_match: dict[int, dict[int, tuple[int, str, int | None]]] = defaultdict(dict)
    for match_id, seat, version_id, fault_kind, winner in seats:
        by_match[match_id][seat] = (version_id, fault_kind, winner)
    for seat_rows in by_match.values():
        winner = seat_rows[0][2]
        teams = {team: seat_rows[team][0] for team in (0, 1)}
        for team, version in teams.items():
            row = rows[version]
            row["played"] += 1
            points = 0.5 if winner is None else float(winner == team)
            row["points"] += points
            key = "draws" if winner is None else "wins" if winner == team else "losses"
            row[key] += 1
            pair = pairs[version, teams[1 - team]]
            pair["points"] += points
            pair["played"] += 1
        for version, fault_kind, _ in seat_rows.values():
            if fault_kind:
                rows[version]["faults"] += 1
    ordered = sorted(
        rows.values(), key=lambda r: (-r["points"], -r["wins"], r["faults"], r["label"])
    )
    for rank, row in enumerate(ordered, start=1):
        row["rank"] = rank
    return ordered, dict(pairs)  # a plain dict: kept in the shared cache
