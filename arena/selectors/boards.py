"""Reading rating boards: which boards have a leaderboard, presets first. Must not import services
or tasks."""

from __future__ import annotations

from django.db.models import QuerySet

from arena.models import RatingBoard


def board_list() -> QuerySet[RatingBoard]:
    """Boards refitted at least once, by key."""
    return RatingBoard.objects.filter(generation__gt=0).order_by("key")
