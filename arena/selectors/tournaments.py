"""Reading round-robins: progress, standings and the cross-table, from finished matches.

Points: a win is 1, a draw ½, a loss 0, per match (a match is won by a team: the two seats of one
version). Faults count the matches a version lost by its own fault. Failed matches (the platform
could not play them) count as done but give no points, and take their duplicate twin with them:
a pair is two matches of one deal with the seats swapped, and one of them alone would count the
deal's luck for one side (``void_pairs``); a fault in such a twin still counts among the faults.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum

from arena.kept import kept, kept_key
from arena.models import Entry, MatchKind, MatchSeat, MatchStatus, Tournament

#: A duplicate pair: (round-robin, pair number, lower version id, higher version id).
PairKey = tuple[int, int, int, int]

#: How long a tally or ranking stays in the shared cache (its key changes with every finished
#: match, so this only bounds the cache's memory).
RESULTS_CACHE_SECONDS = 600


def void_pairs(where: Q) -> set[PairKey]:
    """The duplicate pairs, among the tournament matches ``where`` selects (on ``MatchSeat``), one
    of whose matches failed (void, cancelled, dropped from a ladder): the other match of such a
    pair counts for nobody either, in standings and ratings alike."""
    seats = MatchSeat.objects.filter(
        where, seat__lt=2, match__kind=MatchKind.TOURNAMENT, match__status=MatchStatus.FAILED
    ).values_list("match_id", "version_id", "match__tournament_id", "match__pair")
    teams: dict[int, list[int]] = defaultdict(list)
    places: dict[int, tuple[int, int]] = {}
    for match_id, version_id, tournament_id, pair in seats:
        teams[match_id].append(version_id)
        places[match_id] = (tournament_id, pair)
    return {
        (*places[m], min(versions), max(versions))
        for m, versions in teams.items() if len(versions) == 2
    }


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
    match never changes) and which have failed (a failed match voids its twin: ``void_pairs``).
    Whatever is made of its finished and failed matches alone can be kept under it: a ladder's
    round-robin, polled by its page every few seconds, grows without end."""
    counts = tournament.matches.aggregate(
        finished=Count("id", filter=Q(status=MatchStatus.FINISHED)),
        failed=Count("id", filter=Q(status=MatchStatus.FAILED)),
        failed_ids=Sum("id", filter=Q(status=MatchStatus.FAILED)),
    )
    return (
        f"{tournament.pk}:{tournament.created_at.timestamp()}:{tournament.seed}:"
        f"{counts['finished']}:{counts['failed']}:{counts['failed_ids'] or 0}"
    )


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
    ).values_list("match_id", "seat", "version_id", "fault_kind", "match__winner", "match__pair")
    by_match: dict[int, dict[int, tuple[int, str, int | None, int]]] = defaultdict(dict)
    for match_id, seat, version_id, fault_kind, winner, pair in seats:
        by_match[match_id][seat] = (version_id, fault_kind, winner, pair)
    void = void_pairs(Q(match__tournament=tournament))
    for seat_rows in by_match.values():
        winner, pair = seat_rows[0][2], seat_rows[0][3]
        teams = {team: seat_rows[team][0] for team in (0, 1)}
        for version, fault_kind, _, _ in seat_rows.values():
            if fault_kind:  # a fault is shown whether or not its pair counts
                rows[version]["faults"] += 1
        if (tournament.pk, pair, min(teams.values()), max(teams.values())) in void:
            continue
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
    ordered = sorted(
        rows.values(), key=lambda r: (-r["points"], -r["wins"], r["faults"], r["label"])
    )
    for rank, row in enumerate(ordered, start=1):
        row["rank"] = rank
    return ordered, dict(pairs)  # a plain dict: kept in the shared cache
