"""The leaderboard of one rule preset. Until ratings exist (issue 5 replaces this module's body),
it lists the ready versions with the tournament matches they played on that preset, ``elo`` null.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from arena.models import BotVersion, MatchKind, MatchStatus, VersionStatus


def leaderboard(*, preset: str) -> list[dict[str, Any]]:
    """Rows with ``version``, ``bot``, ``owner``, ``elo`` (null until rated) and ``matches``
    (finished tournament matches played on the unmodified preset ``preset``)."""
    played = Q(
        seats__seat__lt=2,
        seats__match__kind=MatchKind.TOURNAMENT,
        seats__match__status=MatchStatus.FINISHED,
        seats__match__rules_key=preset,
    )
    versions = (
        BotVersion.objects.filter(status=VersionStatus.READY)
        .select_related("bot__owner")
        .annotate(matches=Count("seats", filter=played))
        .order_by("-matches", "id")
    )
    return [
        {
            "version": v.pk,
            "bot": v.bot.label,
            "owner": v.bot.owner.username,
            "number": v.number,
            "elo": None,
            "matches": v.matches,
        }
        for v in versions
    ]
