"""The speed-ups of the read endpoints change no answer: the hand-built match and seat rows equal
DRF's field-by-field ones, the leaderboard's cache follows each refit, pages read by ids first
equal plain slices, and counts are cached only when large."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth.models import User
from rest_framework import serializers
from rest_framework.test import APIRequestFactory

from arena.api import pagination
from arena.api.serializers import MatchSerializer, SeatSerializer
from arena.models import Match
from arena.selectors.leaderboard import leaderboard
from arena.selectors.matches import match_list, match_list_compact
from arena.services.bots import builtin_bots_ensure
from arena.services.tournaments import tournament_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished(alice, run_tasks):
    builtins = builtin_bots_ensure()
    with run_tasks():
        tournament = tournament_create(
            created_by=alice, name="cup", rules={"preset": "quatre-sept"}, pairs=2,
            version_ids=[builtins["random"].pk, builtins["greedy"].pk],
        )
    return tournament


def _generic(serializer: serializers.ModelSerializer, instance) -> dict:
    return serializers.ModelSerializer.to_representation(serializer, instance)


def test_hand_built_rows_equal_drf_rows(finished, alice):
    request = APIRequestFactory().get("/api/matches/")
    request.user = alice
    for queryset in (match_list(), match_list_compact()):
        for match in queryset.filter(tournament=finished):
            fast = MatchSerializer(match, context={"request": request}).data
            slow = MatchSerializer(context={"request": request})
            expected = _generic(slow, match)
            expected["seats"] = [
                _generic(SeatSerializer(context={"request": request}), seat)
                for seat in match.seats.all()
            ]
            assert dict(fast) == {k: expected[k] for k in fast}
            assert list(fast) == list(expected)


def test_the_leaderboard_cache_follows_refits(finished, alice, run_tasks):
    first = leaderboard(preset="quatre-sept")
    assert first and first == leaderboard(preset="quatre-sept")
    builtins = builtin_bots_ensure()
    with run_tasks():
        tournament_create(
            created_by=alice, name="again", rules={"preset": "quatre-sept"}, pairs=2,
            version_ids=[builtins["random"].pk, builtins["greedy"].pk],
        )
    second = leaderboard(preset="quatre-sept")
    assert sum(r["matches"] for r in second) == 2 * sum(r["matches"] for r in first)


def test_deep_pages_by_ids_equal_plain_slices(finished, alice, client_for):
    with mock.patch.object(pagination, "DEFERRED_FROM", 0):
        deferred = [client_for(None).get(f"/api/matches/?page_size=1&page={n}").json()
                    for n in (1, 2, 3, 4)]
    plain = [client_for(None).get(f"/api/matches/?page_size=1&page={n}").json()
             for n in (1, 2, 3, 4)]
    assert deferred == plain
    assert [m["id"] for page in plain for m in page["results"]] == sorted(
        Match.objects.values_list("pk", flat=True))[:4]


def test_counts_are_cached_only_when_large(finished, client_for):
    total = Match.objects.count()
    assert client_for(None).get("/api/matches/").json()["count"] == total
    Match.objects.filter(tournament=finished).first().delete()
    assert client_for(None).get("/api/matches/").json()["count"] == total - 1  # not cached
    with mock.patch.object(pagination, "COUNT_CACHE_FROM", 1):
        assert client_for(None).get("/api/matches/").json()["count"] == total - 1
        Match.objects.filter(tournament=finished).first().delete()
        assert client_for(None).get("/api/matches/").json()["count"] == total - 1  # cached
    assert User.objects.exists()


def test_list_rows_equal_detail_rows(finished, alice, client_for):
    """The list's seats (plain rows) equal the detail's (prefetched seats), logs included for
    the owner only."""
    system = User.objects.get(username="arena")
    for who in (None, alice, system):
        client = client_for(who)
        page = client.get(f"/api/matches/?tournament={finished.pk}").json()["results"]
        assert len(page) == 4
        for row in page:
            assert row == client.get(f"/api/matches/{row['id']}/").json()
        logs = {seat["log"] is None for row in page for seat in row["seats"]}
        assert logs == ({False} if who is system else {True})
