"""End to end with real processes: gunicorn, a Celery worker, the sandbox, the database.

Two users upload bots over HTTP, the worker validates them, a round-robin plays to the end, every
stored replay re-checks and agrees with the standings, and a second delivery of a finished match's
task changes nothing.
"""

from __future__ import annotations

import zlib
from collections import defaultdict

import pytest
import requests
from django.contrib.auth.models import User

from arena.models import Match, MatchSeat, Replay, Tournament
from arena.services.queue import RUN_MATCH
from config.celery import app as celery_app
from engine.check import check_replay
from tests.arena.conftest import FIRST_BOT, RANDOM_BOT
from tests.e2e.conftest import Stack, login, upload, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def version_status(stack: Stack, version: int) -> str:
    return requests.get(f"{stack.url}/api/versions/{version}/", timeout=10).json()["status"]


def test_two_users_upload_and_a_round_robin_plays_to_the_end(stack: Stack):
    User.objects.create_user("alice", password="alice-password-1")
    User.objects.create_user("bob", password="bob-password-1")
    alice = login(stack, "alice", "alice-password-1")
    bob = login(stack, "bob", "bob-password-1")
    stack.start_worker()

    mine = upload(stack, alice, "dice", RANDOM_BOT)
    theirs = upload(stack, bob, "first", FIRST_BOT)
    for version in (mine, theirs):
        wait_for(lambda v=version: version_status(stack, v) == "ready", 60, "validation")
    bad = bob.post(f"{stack.url}/api/bots/", data={"name": "x"},
                   files={"file": ("x.exe", b"MZ")}, timeout=10)
    assert bad.status_code == 400 and "unsupported file type" in bad.json()["file"][0]

    bots = requests.get(f"{stack.url}/api/bots/?owner=arena", timeout=10).json()["results"]
    random_version = next(b["latest_version"]["id"] for b in bots if b["builtin"] == "random")
    versions = [mine, theirs, random_version]
    created = alice.post(
        f"{stack.url}/api/tournaments/",
        json={"name": "e2e cup", "rules": {"preset": "quatre-sept"}, "versions": versions,
              "pairs": 2},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    url = f"{stack.url}/api/tournaments/{created.json()['id']}/"
    assert created.json()["total"] == 12

    detail = wait_for(
        lambda: (body := requests.get(url, timeout=10).json())["status"] == "finished" and body,
        180, "the round-robin to finish", every=0.5,
    )
    assert detail["total"] == detail["done"] == 12
    assert detail["progress"]["failed"] == 0

    # Every replay re-checks, and the standings follow from the replays alone.
    labels = {
        v: requests.get(f"{stack.url}/api/versions/{v}/", timeout=10).json() for v in versions
    }
    by_label = {(body["bot_name"], body["number"]): v for v, body in labels.items()}
    points: dict[int, float] = defaultdict(float)
    matches = requests.get(
        f"{stack.url}/api/matches/?tournament={detail['id']}&page_size=100", timeout=10
    ).json()
    assert matches["count"] == 12
    for match in matches["results"]:
        replay = requests.get(f"{stack.url}/api/matches/{match['id']}/replay/", timeout=10).json()
        check_replay(replay)
        teams = {p["team"]: by_label[p["bot"], p["version"]] for p in replay["players"]}
        winner = replay["result"]["winner"]
        for team, version in teams.items():
            points[version] += 0.5 if winner is None else float(winner == team)
    standings = {row["version"]: row for row in detail["standings"]}
    assert {v: standings[v]["points"] for v in versions} == {v: points[v] for v in versions}
    assert all(standings[v]["played"] == 8 for v in versions)

    # A second delivery of a finished match's task writes nothing.
    match = Match.objects.filter(tournament_id=detail["id"]).first()
    before = _snapshot(match.pk)
    result = celery_app.send_task(RUN_MATCH, args=[match.pk], queue=stack.queue)
    wait_for(
        lambda: f"{result.id}] succeeded".encode() in stack.worker_log(), 30,
        "the duplicate task to run",
    )
    assert f"{result.id}] succeeded".encode() + b" in" in stack.worker_log()
    assert _snapshot(match.pk) == before
    assert Tournament.objects.get(pk=detail["id"]).finished_at == before[-1]


@pytest.mark.skipif("not __import__('django.conf').conf.settings.REDIS_URL",
                    reason="needs Redis: the filesystem broker loses a dead worker's task")
def test_a_match_whose_worker_is_killed_is_played_again(stack: Stack):
    from arena.services.bots import builtin_bots_ensure

    User.objects.create_user("alice", password="alice-password-1")
    alice = login(stack, "alice", "alice-password-1")
    stack.start_worker(concurrency=1, ARENA_VISIBILITY_TIMEOUT="6")
    slow = upload(stack, alice, "slow", SLOW_BOT)
    wait_for(lambda: version_status(stack, slow) == "ready", 60, "validation")
    random_version = builtin_bots_ensure()["random"].pk
    created = alice.post(
        f"{stack.url}/api/tournaments/",
        json={"name": "kill", "rules": {"preset": "quatre-sept"}, "pairs": 1,
              "versions": [slow, random_version]},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    tournament = Tournament.objects.get(pk=created.json()["id"])
    first = tournament.matches.order_by("id").first()
    wait_for(lambda: Match.objects.get(pk=first.pk).status == "running", 30, "the match to start")
    stack.kill_worker(stack.workers[0])
    assert Match.objects.get(pk=first.pk).status == "running"
    stack.start_worker(concurrency=1, ARENA_VISIBILITY_TIMEOUT="6")
    wait_for(
        lambda: Tournament.objects.get(pk=tournament.pk).status == "finished", 120,
        "the killed match to be played again", every=0.5,
    )
    first.refresh_from_db()
    assert first.status == "finished" and first.attempts >= 2


#: A legal bot slow enough (20 ms a decision) for a match to be running when its worker dies.
SLOW_BOT = b"""import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "slow"}), flush=True)
    elif m["type"] == "turn":
        time.sleep(0.02)
        print(json.dumps({"id": m["id"], "action": m["legal"][-1]}), flush=True)
"""


def _snapshot(match_id: int) -> tuple:
    match = Match.objects.get(pk=match_id)
    seats = list(MatchSeat.objects.filter(match_id=match_id).values_list(
        "seat", "version_id", "fault_kind", "fault_detail", "log"
    ))
    replay = zlib.decompress(bytes(Replay.objects.get(match_id=match_id).data))
    tournament = Tournament.objects.get(pk=match.tournament_id)
    return (match.status, match.winner, match.score, match.reason, match.attempts,
            match.finished_at, seats, replay, tournament.finished_at)
