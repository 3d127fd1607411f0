#!/usr/bin/env python3
"""The ladder on real workers: minutes from a new version's upload to a placed rating, and the
share of worker time the ladder took while a user round-robin also ran.

A database of its own (PostgreSQL ``quatresept_ladder_bench`` when ``DATABASE_URL`` points at
PostgreSQL), Redis when ``REDIS_URL`` is set, one real ``celery -A config worker`` (bots sandboxed
in bubblewrap). Ten uploaded bots of different strength (bot k plays the first legal action with
probability k/9, else a random one) join the built-ins on the quatre-sept ladder; this script
ticks the ladder every ``--tick`` seconds (what celery beat does in production). Once every
version has its 30 placement matches (or ``--warmup`` minutes passed), a new version is uploaded
and, at the same moment, a user round-robin of five versions (3 duplicate pairs: 60 matches) is
created. Reported: minutes from the upload to the new version's first non-provisional rating;
worker time (match run times, clipped to the window) of ladder, round-robin and validation
matches while the round-robin ran and from the upload to the placement; the round-robin's wall
time against its own worker time over the worker's concurrency (its wall time had it run alone).

Run: ``env $(python3 .ci/services.py) nice -n 5 .venv/bin/python benchmarks/ladder_live.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BOT = """import json, random, sys
SKILL = {skill}
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({{"type": "ready", "name": "mix"}}), flush=True)
    elif m["type"] == "turn":
        legal = m["legal"]
        action = legal[0] if random.random() < SKILL else random.choice(legal)
        print(json.dumps({{"id": m["id"], "action": action}}), flush=True)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--tick", type=float, default=2.0)
    parser.add_argument("--warmup", type=float, default=6.0, help="minutes at most")
    parser.add_argument("--limit", type=float, default=10.0, help="minutes at most to place")
    args = parser.parse_args()
    env = _bench_env()
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model
    from django.db.models import Q
    from django.utils import timezone

    from arena.models import Match, MatchStatus, Rating, RatingBoard, Tournament
    from arena.services.bots import bot_create, bot_version_create, builtin_bots_ensure
    from arena.services.ladder import ladder_create, ladders_tick
    from arena.services.play import match_play
    from arena.services.tournaments import tournament_create

    builtins = builtin_bots_ensure()
    users = [get_user_model().objects.get_or_create(username=f"owner{k}")[0] for k in range(5)]
    bots = []
    for k in range(args.bots):
        source = BOT.format(skill=round(k / max(1, args.bots - 1), 3)).encode()
        bot = bot_create(owner=users[k % 5], name=f"mix{k}", filename="mix.py", data=source)
        version = bot.versions.get()
        match_play(match_id=version.validation_match_id)
        version.refresh_from_db()
        assert version.status == "ready", version.fault_detail
        bots.append(bot)
    Match.objects.filter(kind="validation").delete()
    ladder = ladder_create(rules={"preset": "quatre-sept"})

    logs = ROOT / "var" / "bench-logs"
    logs.mkdir(parents=True, exist_ok=True)
    celery = str(Path(sys.executable).with_name("celery"))
    log = open(logs / "ladder-worker.log", "wb")  # noqa: SIM115 (lives as long as the worker)
    worker = subprocess.Popen(
        [celery, "-A", "config", "worker", "--loglevel=INFO", "-n", "ladder@%h",
         f"--concurrency={args.concurrency}", "--without-gossip", "--without-mingle",
         "--without-heartbeat"],
        cwd=ROOT, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )

    def board_rows():
        board = RatingBoard.objects.filter(key="quatre-sept").first()
        if board is None or board.generation == 0:
            return {}
        return {r.version_id: r for r in Rating.objects.filter(board=board,
                                                               generation=board.generation)}

    def wait(until, minutes: float, label: str) -> float:
        start = time.monotonic()
        reported = start
        while time.monotonic() - start < minutes * 60:
            ladders_tick()
            if until():
                return time.monotonic() - start
            if worker.poll() is not None:
                raise SystemExit("the worker died: see var/bench-logs/ladder-worker.log")
            if time.monotonic() - reported > 20:
                done = Match.objects.filter(status=MatchStatus.FINISHED).count()
                print(f"  {label}: {time.monotonic() - start:.0f} s, {done} matches finished",
                      file=sys.stderr, flush=True)
                reported = time.monotonic()
            time.sleep(args.tick)
        return float("nan")

    try:
        time.sleep(3)
        entrants = [b.versions.get().pk for b in bots] + [v.pk for v in builtins.values()]
        # Warm: every version has its placement matches (a version that lost every one stays
        # provisional: the ladder's runaway guard stops pulling matches towards it).
        warm = wait(lambda: (rows := board_rows()) and all(
            v in rows and rows[v].matches >= 30 for v in entrants), args.warmup, "warm-up")
        provisional_after_warmup = sum(1 for r in board_rows().values() if r.provisional)
        # The upload and a user round-robin at the same moment.
        stronger = BOT.format(skill=1.0).encode() + b"# v2\n"
        upload_clock = timezone.now()
        new = bot_version_create(bot=bots[0], filename="mix.py", data=stronger)
        rr = tournament_create(
            created_by=users[1], name="user round-robin", rules={"preset": "quatre-sept"},
            version_ids=[bots[k].versions.get(number=1).pk for k in (1, 3, 5, 7, 9)], pairs=3,
        )

        def placed() -> bool:
            row = board_rows().get(new.pk)
            return row is not None and not row.provisional

        to_place = wait(placed, args.limit, "placing")
        wait(lambda: Tournament.objects.get(pk=rr.pk).status == "finished", 5, "round-robin")
        placed_clock = timezone.now()
        rr_matches = Match.objects.filter(tournament_id=rr.pk, status=MatchStatus.FINISHED)
        rr_start = min(m.started_at for m in rr_matches)
        rr_end = max(m.finished_at for m in rr_matches)

        def busy(query, start, end) -> float:
            """Worker seconds of the matches of ``query`` inside [start, end]."""
            total = 0.0
            for m in Match.objects.filter(query, started_at__lt=end, finished_at__gt=start):
                total += (min(m.finished_at, end) - max(m.started_at, start)).total_seconds()
            return total

        kinds = {
            "ladder": Q(tournament_id=ladder.tournament_id),
            "round_robin": Q(tournament_id=rr.pk),
            "validation": Q(kind="validation"),
        }
        during = {k: busy(q, rr_start, rr_end) for k, q in kinds.items()}
        placing = {k: busy(q, upload_clock, placed_clock) for k, q in kinds.items()}
        rr_alone = during["round_robin"] / args.concurrency
        row = board_rows().get(new.pk)
        result = {
            "versions_on_ladder": len(entrants) + 1,
            "warmup_s": round(warm, 1),
            "provisional_after_warmup": provisional_after_warmup,
            "upload_to_placed_min": round(to_place / 60, 2),
            "new_version_rated_matches": row.matches if row else 0,
            "new_version_elo": round(row.elo) if row else None,
            "round_robin_matches": rr.matches.count(),
            "round_robin_wall_s": round((rr_end - rr_start).total_seconds(), 1),
            "round_robin_wall_if_alone_s": round(rr_alone, 1),
            "worker_s_during_round_robin": {k: round(v, 1) for k, v in during.items()},
            "ladder_share_during_round_robin": round(
                during["ladder"] / max(1e-9, sum(during.values())), 3),
            "worker_s_upload_to_placed": {k: round(v, 1) for k, v in placing.items()},
            "ladder_share_upload_to_placed": round(
                placing["ladder"] / max(1e-9, sum(placing.values())), 3),
            "ladder_matches_total": Match.objects.filter(
                tournament_id=ladder.tournament_id).count(),
        }
        print(json.dumps(result))
    finally:
        from arena.services.ladder import ladder_configure

        ladder_configure(ladder=ladder, paused=True)
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
    return 0


def _bench_env() -> dict[str, str]:
    """A database of the benchmark's own, a queue of its own."""
    env = {"ARENA_QUEUE": f"ladder-bench-{uuid.uuid4().hex[:8]}", "CELERY_EAGER": "0",
           "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_DEBUG": "0",
           "ARENA_REFIT_EVERY": "5", "ARENA_LADDER_DEPTH": "4",
           "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or uuid.uuid4().hex}
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise SystemExit("DATABASE_URL must point at PostgreSQL: env $(python3 .ci/services.py)")
    import psycopg

    parts = urlsplit(url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS quatresept_ladder_bench WITH (FORCE)")
        conn.execute("CREATE DATABASE quatresept_ladder_bench")
    env["DATABASE_URL"] = urlunsplit(parts._replace(path="/quatresept_ladder_bench"))
    if os.environ.get("REDIS_URL"):
        env["REDIS_URL"] = os.environ["REDIS_URL"]
    return env


if __name__ == "__main__":
    sys.exit(main())
