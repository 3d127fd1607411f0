"""A match the platform cannot play is played again a bounded number of times, then void (failed,
no winner, no rating, shown to staff); and no bot can reach that path: whatever a bot does is a
fault inside a finished match that its own team loses."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from arena.models import BotVersion, Match, MatchStatus, VersionStatus
from arena.services import platform_failures
from arena.services import play as play_service
from arena.services.tournaments import tournament_create
from tests.arena.conftest import FIRST_BOT, uploaded
from tests.sandbox.test_hostile_replies import HOSTILE, HOSTILE_BOT

pytestmark = pytest.mark.django_db


def _ready(user: User, name: str, source: bytes) -> int:
    """Upload ``source`` and mark its version ready without its validation match (a hostile bot
    may behave in validation and misbehave later: the test skips the pretence)."""
    client = APIClient()
    client.force_authenticate(user)
    response = client.post("/api/bots/", {"name": name, "file": uploaded(source)})
    version_id = response.json()["latest_version"]["id"]
    BotVersion.objects.filter(pk=version_id).update(status=VersionStatus.READY)
    return version_id


def test_a_platform_failure_is_retried_then_void_for_everyone(
    alice, bob, upload, run_tasks, settings
):
    settings.ARENA_MATCH_ATTEMPTS = 3
    a = _ready(alice, "first-a", FIRST_BOT)
    b = _ready(bob, "first-b", FIRST_BOT)
    BotVersion.objects.filter(pk=a).update(filename="bot.exe")  # the worker cannot unpack it
    with mock.patch.object(
        platform_failures, "match_fail", wraps=platform_failures.match_fail
    ) as void, run_tasks():
        tournament = tournament_create(
            created_by=alice, name="t", rules={"preset": "pollack"}, version_ids=[a, b], pairs=1
        )
    matches = list(Match.objects.filter(tournament=tournament))
    assert len(matches) == 2 and void.call_count == 2
    for match in matches:
        assert match.status == MatchStatus.FAILED and match.winner is None
        assert match.attempts == 3
        assert match.failure.startswith("void: the platform could not play it in 3 attempt(s)")
        assert "counts for nobody" in match.failure and "unsupported file type" in match.failure
    tournament.refresh_from_db()
    assert tournament.status == "finished"
    standings = Client().get(f"/api/tournaments/{tournament.pk}/").json()
    assert standings["progress"]["failed"] == 2
    page = Client().get(f"/matches/{matches[0].pk}/").content.decode()
    assert "void: the platform could not play it" in page


def test_a_single_platform_failure_plays_the_match_again(alice, bob, upload, run_tasks, settings):
    a = _ready(alice, "first-a", FIRST_BOT)
    b = _ready(bob, "first-b", FIRST_BOT)
    real = play_service.play_seats
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OSError("the worker ran out of file descriptors")
        return real(*args, **kwargs)

    with mock.patch.object(play_service, "play_seats", side_effect=flaky), run_tasks():
        tournament = tournament_create(
            created_by=alice, name="t", rules={"preset": "pollack"}, version_ids=[a, b], pairs=1
        )
    statuses = sorted(Match.objects.filter(tournament=tournament).values_list("status", "attempts"))
    assert statuses == [("finished", 1), ("finished", 2)]


HOSTILE_BOTS = {
    **{f"reply-{name}": HOSTILE_BOT.format(line=HOSTILE[name]).encode()
       for name in ("recursion", "deep-object", "huge-int", "invalid-utf8", "nan", "huge-float",
                    "lone-surrogate", "float-id")},
    "no-hello": b"import time\ntime.sleep(60)\n",
    "exit-at-once": b"raise SystemExit(0)\n",
    "close-stdout": b"import os\nos.close(1)\nimport time\ntime.sleep(60)\n",
    "unsolicited": b'import sys\nsys.stdout.write("{}\\n" * 5)\nsys.stdout.flush()\n'
                   b"import time\ntime.sleep(60)\n",
    "long-line": b'import sys, time\nsys.stdout.write("[" * 200000)\nsys.stdout.flush()\n'
                 b"time.sleep(60)\n",
    "binary-garbage": b"import os, sys\nsys.stdout.buffer.write(os.urandom(4096) + b'\\n')\n"
                      b"sys.stdout.flush()\nimport time\ntime.sleep(60)\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_BOTS))
def test_no_hostile_bot_reaches_the_platform_failure_path(
    name: str, alice: User, bob: User, upload, run_tasks, settings
):
    settings.ARENA_MATCH_ATTEMPTS = 1
    hostile = _ready(alice, "hostile", HOSTILE_BOTS[name])
    honest = _ready(bob, "first", FIRST_BOT)
    with mock.patch("arena.services.play.match_platform_failure") as reached, run_tasks():
        tournament = tournament_create(
            created_by=alice, name="t", rules={"preset": "pollack"},
            version_ids=[hostile, honest], pairs=1,
        )
    assert not reached.called, reached.call_args
    for match in Match.objects.filter(tournament=tournament).prefetch_related("seats"):
        assert match.status == MatchStatus.FINISHED, match.failure
        faulted = [s for s in match.seats.all() if s.fault_kind]
        assert len(faulted) == 1 and faulted[0].version_id == hostile
        assert faulted[0].fault_kind in ("protocol", "illegal", "crash", "timeout")
        assert match.winner == faulted[0].seat % 2 ^ 1  # the other team wins


def test_a_runtime_missing_on_the_worker_is_the_platforms_failure_not_the_bots(
    alice, bob, run_tasks, settings
):
    """A worker host without the interpreter a bot's accepted runtime needs: the match is played
    again later (the platform's failure), and no seat is charged with a fault."""
    from sandbox.runners.runtimes import RuntimeNotFound

    a = _ready(alice, "first-a", FIRST_BOT)
    b = _ready(bob, "first-b", FIRST_BOT)
    missing = RuntimeNotFound("runtime 'python3' is not installed here (looked at [])")
    with mock.patch("arena.runtime.specs.open_session", side_effect=missing), \
            mock.patch.object(platform_failures, "send_after_commit") as again, run_tasks():
        tournament = tournament_create(
            created_by=alice, name="t", rules={"preset": "pollack"}, version_ids=[a, b], pairs=1
        )
    assert again.call_count == 2
    for match in Match.objects.filter(tournament=tournament):
        assert match.status == MatchStatus.QUEUED and match.winner is None
        assert "RuntimeNotFound" in match.failure and "played again" in match.failure
        assert not match.seats.exclude(fault_kind="").exists()


def test_a_time_limit_landing_while_the_result_is_saved_plays_the_match_again(
    alice, bob, run_tasks
):
    """The task's soft time limit may land while the result is being saved: the match goes back
    to the queue (the platform's failure), not left running with its task acknowledged until the
    stuck-match sweep voids it."""
    from celery.exceptions import SoftTimeLimitExceeded

    a = _ready(alice, "first-a", FIRST_BOT)
    b = _ready(bob, "first-b", FIRST_BOT)
    with mock.patch.object(play_service, "match_record_result",
                           side_effect=SoftTimeLimitExceeded("soft time limit")), \
            mock.patch.object(platform_failures, "send_after_commit") as again, run_tasks():
        tournament = tournament_create(
            created_by=alice, name="t", rules={"preset": "pollack"}, version_ids=[a, b], pairs=1
        )
    assert again.call_count == 2
    for match in Match.objects.filter(tournament=tournament):
        assert match.status == MatchStatus.QUEUED and "SoftTimeLimitExceeded" in match.failure
