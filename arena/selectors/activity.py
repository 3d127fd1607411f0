"""Reading what a bot has done: its recent matches, the faults of its seats, and the versions a
round-robin may pin. Querysets come back prefetched for pages. Must not import services or tasks.
"""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from arena.models import (
    Bot,
    BotVersion,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    Tournament,
    VersionStatus,
)
from arena.selectors.matches import match_list


def bot_recent_matches(*, bot: Bot, limit: int = 20) -> list[Match]:
    """The bot's latest matches (any version, validation included), newest first, seats
    prefetched."""
    ids = (
        MatchSeat.objects.filter(version__bot=bot)
        .order_by("-match_id")
        .values_list("match_id", flat=True)
        .distinct()[:limit]
    )
    return list(match_list().select_related("tournament").filter(pk__in=list(ids)).order_by("-id"))


def bot_faults(*, bot: Bot, limit: int = 20) -> QuerySet[MatchSeat]:
    """Seats of the bot whose fault ended a match, newest first, with the stderr tail (``log``)."""
    return (
        MatchSeat.objects.filter(version__bot=bot)
        .exclude(fault_kind="")
        .select_related("match", "version")
        .order_by("-match_id")[:limit]
    )


def versions_ready_to_play() -> QuerySet[BotVersion]:
    """Ready versions of active bots, bot by bot, newest version first."""
    return (
        BotVersion.objects.filter(status=VersionStatus.READY, bot__retired=False)
        .select_related("bot__owner")
        .order_by("bot__owner__username", "bot__name", "-number")
    )


def bot_rating_history(*, bot: Bot) -> QuerySet[Rating]:
    """Every rating row of the bot's versions, by board then refit (one query)."""
    return (
        Rating.objects.filter(version__bot=bot)
        .select_related("board", "version")
        .order_by("board__key", "generation", "version__number")
    )


def tournaments_with_progress() -> QuerySet[Tournament]:
    """Round-robins, newest first, annotated with ``total`` and ``done`` (finished or failed)
    match counts."""
    done = Q(matches__status__in=[MatchStatus.FINISHED, MatchStatus.FAILED])
    return (
        Tournament.objects.select_related("created_by")
        .annotate(total=Count("matches"), done=Count("matches", filter=done))
        .order_by("-id")
    )
