"""Round-robins through the API: creation, matches played, standings, cross-table, replays."""

from __future__ import annotations

import pytest

from arena.models import BotVersion, Match, MatchSeat, Tournament, VersionStatus
from arena.services.bots import builtin_bots_ensure
from engine.check import check_replay
from tests.arena.conftest import FIRST_BOT, RANDOM_BOT

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions(alice, bob, upload):
    a = upload(alice, "rnd", RANDOM_BOT).json()["latest_version"]["id"]
    b = upload(bob, "first", FIRST_BOT).json()["latest_version"]["id"]
    builtins = builtin_bots_ensure()
    return [a, b, builtins["greedy"].pk]


def create(client, versions, pairs=2, rules=None, run_tasks=None):
    body = {
        "name": "cup", "rules": rules or {"preset": "quatre-sept"}, "versions": versions,
        "pairs": pairs,
    }
    if run_tasks is None:
        return client.post("/api/tournaments/", body, format="json")
    with run_tasks():
        return client.post("/api/tournaments/", body, format="json")


def test_a_round_robin_plays_to_the_end(alice, versions, client_for, run_tasks):
    response = create(client_for(alice), versions, pairs=2, run_tasks=run_tasks)
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "running" and created["total"] == 12
    detail = client_for(None).get(f"/api/tournaments/{created['id']}/").json()
    assert detail["status"] == "finished"
    assert detail["total"] == detail["done"] == 12
    standings = detail["standings"]
    assert {row["version"] for row in standings} == set(versions)
    for row in standings:
        assert row["played"] == 8
        assert row["wins"] + row["losses"] + row["draws"] == row["played"]
        assert row["points"] == row["wins"] + row["draws"] / 2
    assert sum(row["points"] for row in standings) == 12
    assert [row["rank"] for row in standings] == [1, 2, 3]
    points = [row["points"] for row in standings]
    assert points == sorted(points, reverse=True)
    cross = {row["version"]: row for row in detail["crosstable"]}
    order = [row["version"] for row in detail["crosstable"]]
    for a, row in cross.items():
        for b, cell in zip(order, row["results"], strict=True):
            if a == b:
                assert cell is None
                continue
            back = cross[b]["results"][order.index(a)]
            assert cell["played"] == back["played"] == 4
            assert cell["points"] + back["points"] == 4


def test_pairs_are_duplicate_seat_swaps_with_pinned_versions(alice, versions, client_for):
    created = create(client_for(alice), versions[:2], pairs=3).json()
    matches = list(Match.objects.filter(tournament_id=created["id"]).order_by("id"))
    assert len(matches) == 6
    for first, second in zip(matches[::2], matches[1::2], strict=True):
        assert first.seed == second.seed and first.pair == second.pair
        assert (first.swapped, second.swapped) == (False, True)
        one = dict(MatchSeat.objects.filter(match=first).values_list("seat", "version_id"))
        two = dict(MatchSeat.objects.filter(match=second).values_list("seat", "version_id"))
        assert one[0] == one[2] == two[1] == two[3]
        assert one[1] == one[3] == two[0] == two[2]
    assert len({m.seed for m in matches}) == 3
    assert Tournament.objects.get(pk=created["id"]).entries.count() == 2


def test_matches_filter_and_replays_recheck(alice, versions, client_for, run_tasks):
    created = create(client_for(alice), versions, pairs=1, run_tasks=run_tasks).json()
    client = client_for(None)
    listed = client.get(f"/api/matches/?tournament={created['id']}").json()
    assert listed["count"] == 6
    by_version = client.get(f"/api/matches/?tournament={created['id']}&version={versions[0]}")
    assert by_version.json()["count"] == 4
    assert client.get("/api/matches/?status=queued").json()["count"] == 0
    for match in listed["results"]:
        assert match["status"] == "finished" and len(match["seats"]) == 4
        replay = client.get(f"/api/matches/{match['id']}/replay/")
        assert replay.status_code == 200
        document = replay.json()
        assert document["format"] == "quatresept-replay/1"
        assert document["match"] == f"m-{match['id']}"
        assert document["result"]["winner"] == match["winner"]
        check_replay(document)
    labels = [p["bot"] for p in document["players"]]
    assert all("/" in label for label in labels)


def test_rule_options_make_their_own_board(alice, versions, client_for):
    created = create(
        client_for(alice), versions[:2], pairs=1, rules={"preset": "quatre-sept", "target": 41}
    ).json()
    assert created["rules"]["target"] == 41
    assert created["rules_key"] == "quatre-sept{target=41}"


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"rules": {"preset": "nope"}}, "rules", "unknown preset"),
        ({"rules": {"preset": "quatre-sept", "colour": 1}}, "rules", "colour"),
        ({"pairs": 0}, "pairs", ""),
        ({"versions": [999999, 999998]}, "versions", "no such versions"),
        ({"versions": list(range(1, 66))}, "versions", "64"),  # refused before any lookup
        ({"name": ""}, "name", ""),
        ({"name": "cup\u202e"}, "name", "control or formatting"),  # reverses the match pages
        ({"name": "cup\x00"}, "name", ""),
        # a target past the platform's bound: matches to the safety limit, a key past its column
        ({"rules": {"preset": "quatre-sept", "target": 1001}}, "rules", "at most 1000"),
        ({"rules": {"preset": "quatre-sept", "target": 10**240}}, "rules", "at most 1000"),
    ],
)
def test_bad_round_robins_are_400_and_store_nothing(
    alice, versions, client_for, change, field, message
):
    body = {"name": "cup", "rules": {"preset": "quatre-sept"}, "versions": versions, "pairs": 1}
    body.update(change)
    before = (Tournament.objects.count(), Match.objects.count())
    response = client_for(alice).post("/api/tournaments/", body, format="json")
    assert response.status_code == 400
    assert message in response.json()[field][0]
    assert (Tournament.objects.count(), Match.objects.count()) == before


def test_only_ready_versions_play(alice, upload, versions, client_for):
    from tests.arena.conftest import CRASH_BOT

    failed = upload(alice, "crashy", CRASH_BOT).json()["latest_version"]["id"]
    assert BotVersion.objects.get(pk=failed).status == VersionStatus.FAILED
    response = create(client_for(alice), [versions[0], failed])
    assert response.status_code == 400
    assert "not ready" in response.json()["versions"][0]


def test_anonymous_cannot_schedule(versions, client_for):
    assert create(client_for(None), versions).status_code == 401


def test_leaderboard_lists_versions_with_their_matches(alice, versions, client_for, run_tasks):
    create(client_for(alice), versions, pairs=1, run_tasks=run_tasks)
    rows = client_for(None).get("/api/leaderboard/?preset=quatre-sept").json()["results"]
    played = {row["version"]: row for row in rows}
    for version in versions:
        assert played[version]["matches"] == 4
        assert played[version]["elo"] is not None  # rated: see tests/arena/test_ratings.py
    assert {"version", "bot", "elo", "ci95", "matches"} <= set(rows[0])


def test_schema_and_docs(client_for):
    client = client_for(None)
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in ("/api/token/", "/api/bots/", "/api/bots/{id}/versions/", "/api/versions/{id}/",
                 "/api/tournaments/", "/api/tournaments/{id}/", "/api/matches/",
                 "/api/matches/{id}/replay/", "/api/leaderboard/"):
        assert path in paths, path
    assert client.get("/api/docs/").status_code == 200


def test_the_tally_and_ranking_are_worked_out_once_per_finished_match(
    alice, versions, client_for, run_tasks, monkeypatch
):
    """A ladder's round-robin grows without end and its page polls every few seconds: what is
    made of its finished matches is kept until another finishes."""
    from arena.selectors import ratings, tournaments

    created = create(client_for(alice), versions, pairs=1, run_tasks=run_tasks).json()
    tournament = Tournament.objects.get(pk=created["id"])
    calls = {"tally": 0, "ranking": 0}
    real_count, real_ranking = tournaments._count, ratings._ranking_rows

    def counted(name, real):
        def wrapper(*args):
            calls[name] += 1
            return real(*args)
        return wrapper

    monkeypatch.setattr(tournaments, "_count", counted("tally", real_count))
    monkeypatch.setattr(ratings, "_ranking_rows", counted("ranking", real_ranking))
    first = client_for(None).get(f"/tournaments/{tournament.pk}/")
    again = client_for(None).get(f"/tournaments/{tournament.pk}/")
    assert first.status_code == again.status_code == 200
    assert calls == {"tally": 1, "ranking": 1}
    finished = Match.objects.filter(tournament=tournament, status="finished")
    last = finished.order_by("-id").first()
    Match.objects.filter(pk=last.pk).update(status="failed")  # one result fewer: a new version
    client_for(None).get(f"/tournaments/{tournament.pk}/")
    assert calls == {"tally": 2, "ranking": 2}
