"""Reading bots and versions."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from arena.models import Bot, BotVersion


def bot_list() -> QuerySet[Bot]:
    """Every bot with its owner and versions (oldest first) prefetched."""
    return Bot.objects.select_related("owner").prefetch_related(
        Prefetch("versions", queryset=BotVersion.objects.order_by("number"))
    )


def version_list() -> QuerySet[BotVersion]:
    """Every version with its bot and owner."""
    return BotVersion.objects.select_related("bot__owner")


def bot_latest_version(*, bot: Bot) -> BotVersion | None:
    """The highest-numbered version (from the prefetch when there is one)."""
    versions = list(bot.versions.all())
    return max(versions, key=lambda v: v.number) if versions else None
