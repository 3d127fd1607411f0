"""Reading matches and replays."""

from __future__ import annotations

import json
import zlib
from typing import Any

from django.db.models import Prefetch, QuerySet

from arena.models import Match, MatchSeat, Replay


def match_list() -> QuerySet[Match]:
    """Every match with its seats, their versions, bots and owners prefetched."""
    seats = MatchSeat.objects.select_related("version__bot__owner").order_by("seat")
    return Match.objects.prefetch_related(Prefetch("seats", queryset=seats))


#: What the API's match rows show of a seat (``SeatSerializer``): loading whole versions (their
#: validation logs) and users (password hashes, dates) for 200 seats a page was half its time.
SEAT_FIELDS = (
    "id", "match_id", "seat", "version_id", "fault_kind", "fault_detail", "log",
    "version__id", "version__number", "version__bot__id", "version__bot__name",
    "version__bot__owner_id", "version__bot__owner__id", "version__bot__owner__username",
)


def match_list_compact() -> QuerySet[Match]:
    """``match_list`` with only the seat, version, bot and owner fields the API shows loaded."""
    seats = (
        MatchSeat.objects.select_related("version__bot__owner").only(*SEAT_FIELDS).order_by("seat")
    )
    return Match.objects.prefetch_related(Prefetch("seats", queryset=seats))


def match_seat_rows(*, match_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The seats of these matches as plain rows by match id, in seat order: ``seat``,
    ``version``, ``number``, ``bot`` (its label), ``owner_id``, ``fault_kind``, ``fault_detail``,
    ``log``. For a page of the match list: one query and no model instances (building 800 of
    them, seats with their versions, bots and owners, was most of a page's time)."""
    rows = (
        MatchSeat.objects.filter(match_id__in=match_ids)
        .order_by("match_id", "seat")
        .values_list("match_id", "seat", "version_id", "version__number",
                     "version__bot__owner__username", "version__bot__name",
                     "version__bot__owner_id", "fault_kind", "fault_detail", "log")
    )
    found: dict[int, list[dict[str, Any]]] = {match_id: [] for match_id in match_ids}
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
    if data is None:
        return None
    return json.loads(zlib.decompress(bytes(data)))
