"""Query filters for the list endpoints."""

from __future__ import annotations

import django_filters

from arena.models import Bot, BotVersion, Match, MatchStatus, Tournament, VersionStatus


class MatchFilter(django_filters.FilterSet):
    """``?tournament=ID&version=ID&status=STATUS&kind=KIND``; ``version``: any seat."""

    tournament = django_filters.NumberFilter(field_name="tournament_id")
    version = django_filters.NumberFilter(method="by_version")
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
