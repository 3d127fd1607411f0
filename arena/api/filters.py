"""Query filters for the list endpoints."""

from __future__ import annotations

import django_filters
from django import forms

from arena.models import Bot, BotVersion, Match, MatchStatus, Tournament, VersionStatus

#: The largest id a row can have (a signed 64-bit primary key).
MAX_ID = 2**63 - 1


class IdFilter(django_filters.NumberFilter):
    """A row id: an integer from 1 to ``MAX_ID``; anything else is a 400 (not a query that
    overflows the database's integer, a 500 on SQLite)."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class MatchFilter(django_filters.FilterSet):
    """``?tournament=ID&version=ID&status=STATUS&kind=KIND``; ``version``: any seat."""

    tournament = IdFilter(field_name="tournament_id")
    version = IdFilter(method="by_version")
    status = django_filters.ChoiceFilter(choices=MatchStatus.choices)

    class Meta:
        model = Match
        fields = ["tournament", "version", "status", "kind"]

    def by_version(self, queryset, name, value):
        return queryset.filter(seats__version_id=value).distinct()


class BotFilter(django_filters.FilterSet):
    """``?owner=USERNAME&retired=true|false``."""

    owner = django_filters.CharFilter(field_name="owner__username")

    class Meta:
        model = Bot
        fields = ["owner", "retired"]


class VersionFilter(django_filters.FilterSet):
    """``?bot=ID&status=STATUS``."""

    status = django_filters.ChoiceFilter(choices=VersionStatus.choices)

    class Meta:
        model = BotVersion
        fields = ["bot", "status"]


class TournamentFilter(django_filters.FilterSet):
    """``?status=running|finished&preset=NAME``."""

    class Meta:
        model = Tournament
        fields = ["status", "preset"]
