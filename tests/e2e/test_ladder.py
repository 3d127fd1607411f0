"""The ladder end to end on real processes: a worker with its embedded beat ticks the ladder and
plays its matches; the worker (and so the beat) is SIGKILLed in the middle of ladder matches and
started again; the ladder goes on, and every pairing ends with exactly its two matches played
once: none lost, none doubled.
"""

from __future__ import annotations

import subprocess

import pytest
from django.db.models import Count

from arena.models import (
    Ladder,
    LadderPairing,
    Match,
    MatchStatus,
    Rating,
    RatingBoard,
    Replay,
)
from arena.services.bots import bot_retire, builtin_bots_ensure
from arena.services.ladder import ladder_configure, ladder_create
from tests.e2e.conftest import BIN, ROOT, Stack, wait_for
from tests.reliability.conftest import needs_services

pytestmark = pytest.mark.django_db(transaction=True)

VISIBILITY = "8"  # s: a killed worker's matches come back after this (a match lasts ~1 s)


def start_worker_with_beat(stack: Stack, number: int) -> subprocess.Popen:
    """A worker with an embedded beat (its own schedule file) ticking the ladder every second."""
    log = open(stack.logs / f"ladder-worker-{number}.log", "wb")  # noqa: SIM115
    worker = subprocess.Popen(
        [str(BIN / "celery"), "-A", "config", "worker", "-B", "-s",
         str(stack.logs / f"celerybeat-schedule-{number}"), "--loglevel=INFO", "--concurrency=2",
         "-n", f"{stack.queue}-ladder-{number}@%h", "--without-gossip", "--without-mingle",
         "--without-heartbeat"],
        cwd=ROOT, env={**stack.env, "ARENA_LADDER_TICK": "1", "ARENA_LADDER_DEPTH": "4",
                       "ARENA_VISIBILITY_TIMEOUT": VISIBILITY, "ARENA_REFIT_EVERY": "2"},
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    stack.workers.append(worker)
    wait_for(lambda: b"ready." in (stack.logs / f"ladder-worker-{number}.log").read_bytes(),
             60, "the worker to start")
    return worker


def test_the_ladder_survives_a_worker_and_beat_kill(stack: Stack):
    needs_services()
    for name, version in builtin_bots_ensure().items():
        if name in ("expert", "expert-3", "expert-4"):  # tens of seconds a match on a slow host
            bot_retire(bot=version.bot)  # (this test is about the kill): four entrants stay
    ladder = ladder_create(rules={"preset": "quatre-sept"})
    ladder_matches = Match.objects.filter(tournament_id=ladder.tournament_id)
    worker = start_worker_with_beat(stack, 0)
    wait_for(lambda: ladder_matches.filter(status=MatchStatus.FINISHED).count() >= 6, 120,
             "the ladder's first matches")
    wait_for(lambda: ladder_matches.filter(status=MatchStatus.RUNNING).exists(), 60,
             "a ladder match running", every=0.05)
    stack.kill_worker(worker)
    killed_at = LadderPairing.objects.count()
    start_worker_with_beat(stack, 1)
    wait_for(lambda: LadderPairing.objects.count() >= killed_at + 6, 180,
             "the ladder to go on after the kill")
    ladder_configure(ladder=Ladder.objects.get(pk=ladder.pk), paused=True)
    open_matches = ladder_matches.filter(status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING])
    wait_for(lambda: not open_matches.exists(), 180, "the ladder's matches to drain")

    pairs = list(LadderPairing.objects.filter(ladder=ladder).values_list("pair", flat=True))
    assert sorted(pairs) == list(range(len(pairs)))  # keyed, contiguous: none doubled
    per_pair = dict(
        ladder_matches.values("pair").annotate(n=Count("id")).values_list("pair", "n")
    )
    assert set(per_pair) == set(pairs) and set(per_pair.values()) == {2}
    assert not ladder_matches.filter(status=MatchStatus.FAILED).exists()  # none lost
    finished = ladder_matches.filter(status=MatchStatus.FINISHED)
    assert Replay.objects.filter(match__in=finished).count() == finished.count()
    redelivered = ladder_matches.filter(attempts__gt=1)
    assert redelivered.exists()  # the kill hit a match, which was played again
    board = RatingBoard.objects.get(key="quatre-sept")
    wait_for(lambda: Rating.objects.filter(board=board).exists(), 60, "a refit")
