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


def match_replay(*, match: Match) -> dict[str, Any] | None:
    """The match's replay (format 1) as a dict, or None while it has none."""
    data = Replay.objects.filter(match=match).values_list("data", flat=True).first()
    if data is None:
        return None
    return json.loads(zlib.decompress(bytes(data)))
