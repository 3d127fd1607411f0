"""Management commands: ``play`` (no database at all), ``seed_demo``, ``requeue_matches``; and the
staff-only re-queue endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from arena.models import Bot, Match, MatchStatus, Schedule, Tournament
from engine.check import check_replay
from engine.rules import PRESETS
from tests.arena.conftest import CRASH_BOT, RANDOM_BOT

ROOT = Path(__file__).resolve().parents[2]


def play(*args: str) -> subprocess.CompletedProcess:
    """Run ``manage.py play`` with a database URL that cannot work: it must not need one."""
    env = {**os.environ, "DATABASE_URL": "postgres://nobody@127.0.0.1:1/nothing"}
    return subprocess.run(
        [sys.executable, "manage.py", "play", *args], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=300,
    )


def test_play_runs_duplicate_pairs_and_writes_replays(tmp_path, settings):
    bot = settings.ARENA_TEST_RUN_DIR / "test-play-bot.py"
    bot.write_bytes(RANDOM_BOT)
    replays = tmp_path / "replays"
    done = play("--rules", "quatre-sept", "--set", "target=21", "--seed", "40", "--pairs", "2",
                "--replay-dir", str(replays), "builtin:greedy", str(bot))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 5
    assert lines[0].startswith("match 1/4 seed 40 A on 0,2")
    assert lines[1].startswith("match 2/4 seed 40 B on 0,2")
    assert lines[2].startswith("match 3/4 seed 41")
    summary = json.loads(lines[-1])
    assert summary["matches"] == 4
    assert sum(summary["wins"].values()) + summary["draws"] == 4
    assert summary["faults"] == {"builtin:greedy": 0, str(bot): 0}
    assert summary["elapsed_s"] > 0
    files = sorted(replays.iterdir())
    assert len(files) == 4
    documents = [json.loads(f.read_text()) for f in files]
    for document in documents:
        assert document["rules"]["target"] == 21
        check_replay(document)
    first, second = documents[0], documents[1]
    assert first["seed"] == second["seed"] == 40
    assert first["deals"][0]["hands"] == second["deals"][0]["hands"]  # same deck, teams swapped
    assert first["players"][0]["bot"] == second["players"][1]["bot"] == "builtin:greedy"


def test_play_counts_faults_per_bot(settings):
    bot = settings.ARENA_TEST_RUN_DIR / "test-play-crash.py"
    bot.write_bytes(CRASH_BOT)
    done = play("--rules", "pollack", str(bot), "builtin:random")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["faults"] == {str(bot): 2, "builtin:random": 0}
    assert summary["wins"] == {str(bot): 0, "builtin:random": 2}
    assert "crash" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "nope", "builtin:random", "builtin:random"], "unknown preset"),
        (["--rules", "quatre-sept", "--set", "colour=red", "builtin:random", "builtin:random"],
         "colour"),
        (["--rules", "quatre-sept", "builtin:nobody", "builtin:random"], "unknown built-in"),
        (["--rules", "quatre-sept", "/no/such/bot.py", "builtin:random"], "neither"),
    ],
)
def test_play_explains_bad_arguments(args, message):
    done = play(*args)
    assert done.returncode != 0
    assert message in done.stderr


@pytest.mark.django_db
def test_seed_demo_is_idempotent(run_tasks):
    out = StringIO()
    with run_tasks():
        call_command(
            "seed_demo", "--builtins", "random,greedy", "--pairs", "1", "--yardstick-pairs", "0",
            stdout=out,
        )
    assert "alice/dice v1: ready" in out.getvalue()
    tournament = Tournament.objects.get(name="Demo round-robin")
    assert tournament.status == "finished"  # eager tasks: played already
    assert tournament.entries.count() == 4
    assert Schedule.objects.filter(enabled=True).count() == 1
    counts = (Bot.objects.count(), Tournament.objects.count(), Match.objects.count())
    call_command("seed_demo", "--yardstick-pairs", "0", stdout=StringIO())
    assert (Bot.objects.count(), Tournament.objects.count(), Match.objects.count()) == counts


@pytest.mark.django_db
def test_seed_demo_queues_the_yardsticks_on_every_preset():
    # Outside run_tasks: the round-robins are queued, not played (expert-4 takes its time).
    call_command("seed_demo", "--builtins", "random", "--pairs", "1", stdout=StringIO())
    for preset in PRESETS:
        tournament = Tournament.objects.get(name=f"Yardsticks {preset}")
        assert tournament.rules["preset"] == preset
        pinned = set(tournament.entries.values_list("version__builtin", flat=True))
        assert pinned == {"greedy", "expert-1", "expert-2", "expert-3", "expert-4"}
        assert tournament.matches.count() == 5 * 4  # 10 pairings, one pair, two matches
    counts = (Tournament.objects.count(), Match.objects.count())
    call_command("seed_demo", stdout=StringIO())
    assert (Tournament.objects.count(), Match.objects.count()) == counts


@pytest.mark.django_db
def test_failed_matches_are_requeued_by_command_and_by_staff(run_tasks, client_for, alice):
    with run_tasks():  # no yardsticks: eager tasks would play expert-4's matches here
        call_command("seed_demo", "--builtins", "random", "--pairs", "1", "--yardstick-pairs", "0",
                     stdout=StringIO())
    matches = list(Match.objects.filter(tournament__name="Demo round-robin")[:2])
    Match.objects.filter(pk__in=[m.pk for m in matches]).update(
        status=MatchStatus.FAILED, failure="stuck"
    )
    out = StringIO()
    with run_tasks():
        call_command("requeue_matches", str(matches[0].pk), stdout=out)
    assert f"[{matches[0].pk}]" in out.getvalue()
    assert Match.objects.get(pk=matches[0].pk).status == MatchStatus.FINISHED
    url = f"/api/matches/{matches[1].pk}/requeue/"
    assert client_for(alice).post(url).status_code == 403
    alice.is_staff = True
    alice.save()
    with run_tasks():
        response = client_for(alice).post(url)
    assert response.status_code == 200, response.content
    assert Match.objects.get(pk=matches[1].pk).status == MatchStatus.FINISHED
    again = client_for(alice).post(url)
    assert again.status_code == 409
    assert again.json()["detail"].endswith("this one is finished")
    # a failed match of a cancelled round-robin: the 409 says why, not "failed ... is failed"
    Match.objects.filter(pk=matches[1].pk).update(status=MatchStatus.FAILED)
    Tournament.objects.filter(pk=matches[1].tournament_id).update(status="cancelled")
    cancelled = client_for(alice).post(url)
    assert cancelled.status_code == 409
    assert "round-robin was cancelled" in cancelled.json()["detail"]
    schema = client_for(alice).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "409" in schema["paths"]["/api/matches/{id}/requeue/"]["post"]["responses"]


@pytest.mark.django_db
def test_lost_queued_tasks_can_be_resent(run_tasks):
    call_command("seed_demo", "--builtins", "random", "--pairs", "1", "--yardstick-pairs", "0",
                 stdout=StringIO())
    # Outside run_tasks: the queued tasks were "lost"; the matches stay queued.
    queued = Match.objects.filter(status=MatchStatus.QUEUED).count()
    assert queued > 0
    out = StringIO()
    with run_tasks():
        call_command("requeue_matches", "--resend-queued", "0", stdout=out)
    assert f"resent {queued} queued" in out.getvalue()
    assert not Match.objects.filter(status=MatchStatus.QUEUED).exists()
    assert Tournament.objects.get(name="Demo round-robin").status == "finished"


def test_play_shows_each_seats_stderr_as_it_plays(settings):
    bot = settings.ARENA_TEST_RUN_DIR / "test-play-chatty-bot.py"
    bot.write_bytes(RANDOM_BOT.replace(
        b'    elif m["type"] == "turn":\n',
        b'    elif m["type"] == "turn":\n'
        b'        print("thinking about turn", m["id"], file=sys.stderr, flush=True)\n'))
    args = ("--rules", "quatre-sept", "--set", "target=5", "builtin:greedy", str(bot))
    shown = play(*args, "--stderr")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stderr.splitlines()
    # The bot sits on seats 1 and 3, then (teams swapped) on 0 and 2; greedy writes nothing.
    assert lines and all(line.split(" thinking about turn ")[0] in ("[seat 0]", "[seat 1]",
                                                                    "[seat 2]", "[seat 3]")
                         for line in lines)
    assert "[seat 1] thinking about turn 2" in lines and "[seat 0] thinking about turn 1" in lines
    assert json.loads(shown.stdout.splitlines()[-1])["matches"] == 2
    quiet = play(*args)
    assert quiet.returncode == 0 and "thinking" not in quiet.stderr
