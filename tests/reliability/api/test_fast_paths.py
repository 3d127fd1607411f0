"""The speed-ups of the read endpoints change no answer: the match rows built from plain SQL rows
(``match_dicts``) equal the ORM's models as DRF's fields write them, the leaderboard's cache
follows each refit, pages read by ids first equal plain slices, counts are cached only when
large, cached replays and leaderboard pages are the bytes DRF renders and follow a replayed match
and a new generation, and the throttle counts."""

from __future__ import annotations

import json
import uuid
import zlib
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db.models import F
from django.utils import timezone
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIRequestFactory

from arena.api import pagination
from arena.api.cached import forget_local
from arena.api.serializers import MatchSerializer, SeatSerializer, match_dicts
from arena.api.throttles import window_hit
from arena.models import Match, Replay
from arena.selectors.leaderboard import leaderboard
from arena.selectors.matches import match_list, match_replay
from arena.services.bots import builtin_bots_ensure
from arena.services.matches import match_requeue
from arena.services.tournaments import tournament_create
from tests.conftest import clear_cache

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


def _from_models(match: Match, viewer: User) -> dict:
    """A match as DRF's own fields write its model instance's values (the reference)."""
    when = serializers.DateTimeField()
    return {
        "id": match.pk, "kind": match.kind, "tournament": match.tournament_id,
        "pair": match.pair, "swapped": match.swapped, "seed": match.seed, "rules": match.rules,
        "rules_key": match.rules_key, "status": match.status, "winner": match.winner,
        "score": match.score, "reason": match.reason, "failure": match.failure,
        "attempts": match.attempts, "play_ms": match.play_ms,
        "created_at": when.to_representation(match.created_at),
        "started_at": match.started_at and when.to_representation(match.started_at),
        "finished_at": match.finished_at and when.to_representation(match.finished_at),
        "seats": [
            {"seat": s.seat, "team": s.seat % 2, "version": s.version_id,
             "bot": s.version.bot.label, "number": s.version.number, "fault_kind": s.fault_kind,
             "fault_detail": s.fault_detail,
             "log": s.log if s.version.bot.owner_id == viewer.pk else None}
            for s in match.seats.all()
        ],
        "replay": f"http://testserver/api/matches/{match.pk}/replay/"
        if match.status == "finished" else None,
    }


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris"])
def test_match_rows_equal_the_models_as_drf_writes_them(finished, alice, settings, zone):
    settings.TIME_ZONE = zone
    request = APIRequestFactory().get("/api/matches/")
    request.user = alice
    matches = list(match_list().filter(tournament=finished).order_by("pk"))
    built = match_dicts(match_ids=[m.pk for m in matches], request=request)
    assert built == [_from_models(match, alice) for match in matches]
    assert [list(row) for row in built] == [list(MatchSerializer().fields)] * len(matches)
    assert [list(seat) for row in built for seat in row["seats"]] == [
        list(SeatSerializer().fields)] * 4 * len(matches)


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


# --- cached bodies, the match list's written-out statements, the throttle counter ---------------


@pytest.fixture
def no_local_bodies():
    forget_local()
    yield
    forget_local()


def _replay_url(match: Match) -> str:
    return f"/api/matches/{match.pk}/replay/"


def test_a_cached_replay_is_the_bytes_drf_renders(finished, client_for, no_local_bodies):
    match = Match.objects.filter(tournament=finished, status="finished").first()
    expected = JSONRenderer().render(match_replay(match=match), "application/json")
    first = client_for(None).get(_replay_url(match))
    assert first.status_code == 200 and first["Content-Type"] == "application/json"
    assert first.content == expected
    with mock.patch("arena.api.views.replay_decode", side_effect=AssertionError("built again")):
        again = client_for(None).get(_replay_url(match))  # from this process's bodies
    assert again.content == expected and again["ETag"] == first["ETag"]
    unchanged = client_for(None).get(_replay_url(match), HTTP_IF_NONE_MATCH=first["ETag"])
    assert unchanged.status_code == 304 and unchanged.content == b""
    indented = client_for(None).get(_replay_url(match), HTTP_ACCEPT="application/json; indent=2")
    assert indented.json() == json.loads(expected) and indented.content != expected
    assert "ETag" not in indented


def test_a_replayed_match_serves_its_new_replay(finished, client_for, no_local_bodies):
    """A re-queued match loses its replay (404), and played again it is served its new one: the
    cached body is named by the match's attempts and finish time."""
    match = Match.objects.filter(tournament=finished, status="finished").first()
    before = client_for(None).get(_replay_url(match))
    assert before.status_code == 200
    Match.objects.filter(pk=match.pk).update(status="failed", failure="lost worker")
    assert match_requeue(match_id=match.pk)  # deletes the replay; its task is not run here
    gone = client_for(None).get(_replay_url(match))
    assert gone.status_code == 404 and gone.json() == {"detail": "this match has no replay (yet)"}
    replay = {**json.loads(before.content), "again": True}
    raw = json.dumps(replay).encode()
    Match.objects.filter(pk=match.pk).update(
        status="finished", attempts=F("attempts") + 1, finished_at=timezone.now()
    )
    Replay.objects.create(match_id=match.pk, data=zlib.compress(raw), size=len(raw))
    after = client_for(None).get(_replay_url(match))
    assert after.status_code == 200 and after.json() == replay
    assert after["ETag"] != before["ETag"]


def test_replay_of_no_such_match(finished, client_for):
    for path in ("/api/matches/99999999999999999999/replay/", "/api/matches/0/replay/",
                 f"/api/matches/{Match.objects.order_by('pk').last().pk + 1000}/replay/"):
        response = client_for(None).get(path)
        assert response.status_code == 404, path
        assert response.json() == {"detail": "No Match matches the given query."}


def test_leaderboard_pages_follow_each_generation(finished, alice, run_tasks, client_for,
                                                  no_local_bodies):
    url = "/api/leaderboard/?page_size=1"
    first = client_for(None).get(url)
    assert first.status_code == 200 and first.json()["count"] == 2
    assert first.json()["next"] == "http://testserver/api/leaderboard/?page=2&page_size=1"
    with mock.patch("arena.api.views.leaderboard", side_effect=AssertionError("built again")):
        assert client_for(None).get(url).content == first.content
    forget_local()  # a process of its own: from the shared cache
    with mock.patch("arena.api.views.leaderboard", side_effect=AssertionError("built again")):
        assert client_for(None).get(url).content == first.content
    clear_cache()  # built afresh: the same bytes
    assert client_for(None).get(url).content == first.content
    assert client_for(None).get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    builtins = builtin_bots_ensure()
    with run_tasks():  # a refit: a new generation
        tournament_create(
            created_by=alice, name="again", rules={"preset": "quatre-sept"}, pairs=2,
            version_ids=[builtins["random"].pk, builtins["greedy"].pk],
        )
    second = client_for(None).get(url)
    assert second["ETag"] != first["ETag"]
    assert second.json()["results"][0]["matches"] == 2 * first.json()["results"][0]["matches"]
    assert client_for(None).get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200
    rows = leaderboard(preset="quatre-sept")
    assert [r["version"] for r in second.json()["results"]] == [rows[0]["version"]]


def test_list_times_equal_detail_times(finished, client_for, settings):
    """The list writes times from text (PostgreSQL) as DRF writes the detail's datetimes: whole
    seconds, and another current time zone."""
    match = Match.objects.filter(tournament=finished).first()
    Match.objects.filter(pk=match.pk).update(
        created_at=match.created_at.replace(microsecond=0), started_at=None
    )
    for zone in ("UTC", "Europe/Paris"):
        settings.TIME_ZONE = zone
        page = client_for(None).get(f"/api/matches/?tournament={finished.pk}").json()["results"]
        for row in page:
            assert row == client_for(None).get(f"/api/matches/{row['id']}/").json(), zone
        row = next(r for r in page if r["id"] == match.pk)
        assert row["started_at"] is None
        assert row["created_at"].endswith("Z" if zone == "UTC" else ":00")
        assert "." not in row["created_at"]


def test_the_throttle_counts_in_one_window():
    key = f"throttle-test-{uuid.uuid4().hex}"
    counts = [window_hit(key, 60) for _ in range(3)]
    assert [count for count, _ in counts] == [1, 2, 3]
    assert all(0 < left <= 60 for _, left in counts)
    assert window_hit(f"{key}-other", 60)[0] == 1
