"""Reading the ladders: who takes part, what is in flight, recent pairings and faults (for the
scheduler), and what the leaderboard and bot pages show (placement progress, recent ladder
matches, a benched version's reason). Must not import services or tasks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Max, Q

from arena.models import (
    Bot,
    BotVersion,
    Ladder,
    LadderBench,
    LadderPairing,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingBoard,
    VersionStatus,
)
from arena.rating.board import PROVISIONAL_MATCHES

#: Recent pairings the variety floor and the owners' fair share look at.
HISTORY_PAIRINGS = 200
#: A version's latest ladder matches the fault guard looks at.
FAULT_WINDOW = 10


@dataclass(frozen=True)
class LadderEntrant:
    """A version on a ladder: the latest ready version of an active bot, not benched; ``ready_at``
    when it became ready (its upload time where that is unknown); ``builtin`` for a built-in."""

    version_id: int
    bot_id: int
    owner_id: int
    ready_at: datetime | None = None
    builtin: bool = False


def ladder_entrants(*, ladder: Ladder) -> list[LadderEntrant]:
    """The latest ready version of every bot that is not retired, less the benched ones, by
    version id."""
    latest = (
        BotVersion.objects.filter(status=VersionStatus.READY, bot__retired=False)
        .values("bot_id")
        .annotate(number=Max("number"))
    )
    wanted = Q()
    for row in latest:
        wanted |= Q(bot_id=row["bot_id"], number=row["number"])
    if not latest:
        return []
    benched = LadderBench.objects.filter(ladder=ladder).values_list("version_id", flat=True)
    rows = (
        BotVersion.objects.filter(wanted)
        .exclude(pk__in=benched)
        .values_list("pk", "bot_id", "bot__owner_id", "validated_at", "created_at", "builtin")
        .order_by("pk")
    )
    return [
        LadderEntrant(pk, bot, owner, validated or created, bool(builtin))
        for pk, bot, owner, validated, created, builtin in rows
    ]


def ladder_open_pairings(*, ladder: Ladder) -> list[LadderPairing]:
    """Pairings with a match still queued or running."""
    open_pairs = Match.objects.filter(
        tournament_id=ladder.tournament_id, status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING]
    ).values_list("pair", flat=True)
    return list(LadderPairing.objects.filter(ladder=ladder, pair__in=open_pairs))


def ladder_recent_pairings(*, ladder: Ladder, limit: int = HISTORY_PAIRINGS) -> list[LadderPairing]:
    """The latest ``limit`` pairings, newest first."""
    return list(LadderPairing.objects.filter(ladder=ladder).order_by("-pair")[:limit])


def ladder_last_paired(*, ladder: Ladder, version_ids: list[int]) -> dict[int, datetime]:
    """When each version's latest pairing was created (absent: never paired)."""
    found: dict[int, datetime] = {}
    for column in ("version_a", "version_b"):
        rows = (
            LadderPairing.objects.filter(ladder=ladder, **{f"{column}__in": version_ids})
            .values(column)
            .annotate(last=Max("created_at"))
        )
        for row in rows:
            version, last = row[column], row["last"]
            if version not in found or found[version] < last:
                found[version] = last
    return found


def ladder_queued_matches() -> int:
    """Matches queued on the platform now, of every kind (round-robins, validations, ladders)."""
    return Match.objects.filter(status=MatchStatus.QUEUED).count()


def ladder_matches_since(*, ladder: Ladder, since: datetime) -> int:
    """The ladder's matches created at ``since`` or later."""
    return Match.objects.filter(tournament_id=ladder.tournament_id, created_at__gte=since).count()


def ladder_fault_record(
    *, ladder: Ladder, version_ids: list[int], window: int = FAULT_WINDOW
) -> dict[int, tuple[int, int, str]]:
    """Per version, over its latest ``window`` finished ladder matches: (matches, matches it
    faulted in, the latest fault's kind and detail)."""
    out: dict[int, tuple[int, int, str]] = {}
    for version_id in version_ids:
        seats = list(
            MatchSeat.objects.filter(
                version_id=version_id, match__tournament_id=ladder.tournament_id,
                match__status=MatchStatus.FINISHED,
            )
            .order_by("-match_id")
            .values_list("match_id", "fault_kind", "fault_detail")[: 2 * window]
        )
        matches: dict[int, str] = {}
        for match_id, kind, detail in seats:
            if match_id not in matches:
                if len(matches) >= window:
                    break
                matches[match_id] = ""
            if kind and not matches[match_id]:
                matches[match_id] = f"{kind}: {detail}"
        faults = [f for f in matches.values() if f]
        out[version_id] = (len(matches), len(faults), faults[0] if faults else "")
    return out


def ladder_for_board(*, rules_key: str) -> Ladder | None:
    return Ladder.objects.filter(rules_key=rules_key).first()


def ladder_board_summary(*, rules_key: str, recent: int = 12) -> dict[str, Any] | None:
    """What the leaderboard shows of the board's ladder: its state, the versions being placed
    (rated matches of ``PROVISIONAL_MATCHES``, pairs in flight) and its latest matches."""
    ladder = ladder_for_board(rules_key=rules_key)
    if ladder is None:
        return None
    entrants = ladder_entrants(ladder=ladder)
    ids = [e.version_id for e in entrants]
    rated = _latest_ratings(rules_key=rules_key, version_ids=ids)
    in_flight: dict[int, int] = {}
    for p in ladder_open_pairings(ladder=ladder):
        for v in (p.version_a_id, p.version_b_id):
            in_flight[v] = in_flight.get(v, 0) + 1
    versions = {v.pk: v for v in BotVersion.objects.filter(pk__in=ids).select_related("bot__owner")}
    placing = []
    for version_id in ids:
        row = rated.get(version_id)
        if row is None or row.provisional:
            placing.append({
                "version": versions[version_id], "matches": row.matches if row else 0,
                "needed": PROVISIONAL_MATCHES, "in_flight": in_flight.get(version_id, 0),
                "percent": min(100, round(100 * (row.matches if row else 0) / PROVISIONAL_MATCHES)),
            })
    matches = list(
        Match.objects.filter(tournament_id=ladder.tournament_id)
        .order_by("-id")
        .prefetch_related("seats__version__bot__owner")[:recent]
    )
    benched = list(
        LadderBench.objects.filter(ladder=ladder).select_related("version__bot__owner")
        .order_by("-id")[:10]
    )
    return {
        "ladder": ladder, "entrants": len(ids), "placing": placing, "matches": matches,
        "form": ladder_recent_form(ladder=ladder, version_ids=ids),
        "needed": PROVISIONAL_MATCHES,
        "benched": benched, "placed": {v for v, r in rated.items() if not r.provisional},
    }


def ladder_recent_form(
    *, ladder: Ladder, version_ids: list[int], per_version: int = 6
) -> dict[int, list[dict[str, Any]]]:
    """Each version's latest finished ladder matches, newest first: ``match`` (id) and
    ``outcome`` (``won``, ``lost``, ``draw``), at most ``per_version`` each."""
    wanted = set(version_ids)
    rows = (
        MatchSeat.objects.filter(
            match__tournament_id=ladder.tournament_id, match__status=MatchStatus.FINISHED,
            seat__lt=2, version_id__in=version_ids,
        )
        .order_by("-match_id")
        .values_list("match_id", "seat", "version_id", "match__winner")[
            : 4 * per_version * max(1, len(wanted))
        ]
    )
    form: dict[int, list[dict[str, Any]]] = {v: [] for v in wanted}
    for match_id, seat, version_id, winner in rows:
        mine = form[version_id]
        if len(mine) >= per_version:
            continue
        outcome = "draw" if winner is None else "won" if winner == seat else "lost"
        mine.append({"match": match_id, "outcome": outcome})
    return form


def version_ladder_status(*, bot: Bot) -> list[dict[str, Any]]:
    """For the bot's latest ready version, per ladder: ``placed`` (with its rating), ``placing``
    (rated matches so far of ``PROVISIONAL_MATCHES``, pairs in flight), ``benched`` (with the
    reason), ``paused`` ladders say so, or ``waiting`` (not yet paired)."""
    version = (
        BotVersion.objects.filter(bot=bot, status=VersionStatus.READY).order_by("-number").first()
    )
    if version is None or bot.retired:
        return []
    out = []
    for ladder in Ladder.objects.all():
        bench = LadderBench.objects.filter(ladder=ladder, version=version).first()
        rating = _latest_ratings(rules_key=ladder.rules_key, version_ids=[version.pk]).get(
            version.pk
        )
        open_pairs = sum(
            1 for p in ladder_open_pairings(ladder=ladder)
            if version.pk in (p.version_a_id, p.version_b_id)
        )
        matches = rating.matches if rating else 0
        if bench is not None:
            state = "benched"
        elif rating is not None and not rating.provisional:
            state = "placed"
        elif matches or open_pairs:
            state = "placing"
        else:
            state = "waiting"
        out.append({
            "ladder": ladder, "version": version, "state": state,
            "reason": bench.reason if bench else "", "rating": rating, "matches": matches,
            "needed": PROVISIONAL_MATCHES, "in_flight": open_pairs,
            "percent": min(100, round(100 * matches / PROVISIONAL_MATCHES)),
        })
    return out


def ladder_list() -> list[dict[str, Any]]:
    """Every ladder with its counts: pairings, matches in the last hour, queued matches."""
    ladders = Ladder.objects.annotate(pairings_count=Count("pairings")).order_by("id")
    return [{"ladder": ladder, "pairings": ladder.pairings_count} for ladder in ladders]


def _latest_ratings(*, rules_key: str, version_ids: list[int]) -> dict[int, Rating]:
    board = RatingBoard.objects.filter(key=rules_key).values_list("pk", "generation").first()
    if board is None or not version_ids:
        return {}
    return {
        r.version_id: r
        for r in Rating.objects.filter(
            board_id=board[0], generation=board[1], version_id__in=version_ids
        )
    }
