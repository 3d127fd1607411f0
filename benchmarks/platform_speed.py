#!/usr/bin/env python3
"""Platform speed: a round-robin on real Celery workers, end to end.

Plays a round-robin of the built-in bots (``--builtins``, all by default) plus ``--uploads``
uploaded random bots (sandboxed in bwrap), ``--pairs`` duplicate pairs per pairing (10 by
default), on ``--workers`` real ``celery -A config worker`` processes of ``--concurrency`` each,
against a fresh database of its own (PostgreSQL ``quatresept_bench_<run>`` when ``DATABASE_URL``
points at PostgreSQL, dropped at the end, else ``var/bench-<run>.sqlite3``; ``<run>`` is random,
so runs beside each other on one server do not meet) and Redis when ``REDIS_URL`` is set (else the
filesystem broker).

With ``--reference bare`` (the default when there are uploads) the same round-robin is played
twice, alternately ``--rounds`` times each: once with the uploaded bots confined (bwrap) and once
with the identical bots run bare (``benchmarks/bare_worker.py``: the same interpreter, flags and
environment, no sandbox), and the ratio of the two throughputs is printed (goal >= 0.8).

Prints matches per minute (and per hour), and the platform's own overhead per match: a match
task's whole run time as the worker logs it, minus the referee's play (starting the four seats and
playing the match, ``Match.play_ms``), as a share of the task's run time; plus the share of the
workers' capacity (wall time x processes) the referee's play used, which also counts queue waits.

    make bench-platform            # the built-ins, 10 duplicate pairs per pairing
    .venv/bin/python benchmarks/platform_speed.py --builtins random --uploads 3   # random bots
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RANDOM_BOT = b"""import json, random, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "rnd"}), flush=True)
    elif m["type"] == "turn":
        print(json.dumps({"id": m["id"], "action": random.choice(m["legal"])}), flush=True)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--builtins", default="all",
                        help="comma-separated built-in bots to include, or 'all' (default)")
    parser.add_argument("--uploads", type=int, default=0,
                        help="uploaded random bots (sandboxed in bwrap) to add")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--preset", default="quatre-sept")
    parser.add_argument("--reference", choices=("bare", "none"), default="bare",
                        help="also play the round-robin with the uploads run bare (default)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="round-robins per mode, alternating; the median is printed")
    args = parser.parse_args()
    # Stopped with SIGTERM (``kill``, ``timeout``), end as with Ctrl-C: the ``finally`` clauses
    # stop the workers and drop the benchmark's database.
    signal.signal(signal.SIGTERM, _interrupted)

    env = _bench_env()
    os.environ.update(env)
    try:
        return _run(args, env)
    finally:
        _drop_database(env["DATABASE_URL"])


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _run(args: argparse.Namespace, env: dict[str, str]) -> int:
    """Set up, play the round-robin on real workers, print the figures."""
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model

    from arena.models import Match
    from arena.services.bots import bot_create, builtin_bots_ensure
    from arena.services.play import match_play

    builtins = builtin_bots_ensure()
    chosen = sorted(builtins) if args.builtins == "all" else args.builtins.split(",")
    versions = [builtins[name].pk for name in chosen]
    user, _ = get_user_model().objects.get_or_create(username="bench")
    for i in range(args.uploads):
        bot = bot_create(owner=user, name=f"random{i}", filename="random.py", data=RANDOM_BOT)
        version = bot.versions.get()
        match_play(match_id=version.validation_match_id)  # validate now, in this process
        version.refresh_from_db()
        assert version.status == "ready", (version.fault_kind, version.fault_detail)
        versions.append(version.pk)
    Match.objects.filter(kind="validation").delete()  # their queued tasks become no-ops

    modes = ["sandboxed"] + (["bare"] if args.reference == "bare" and args.uploads else [])
    runs: dict[str, list[dict]] = {mode: [] for mode in modes}
    for round_ in range(args.rounds):
        for mode in modes if round_ % 2 == 0 else modes[::-1]:
            result = _round_robin(args, env, user, versions, chosen, mode)
            runs[mode].append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
    summary = {mode: _median_run(results) for mode, results in runs.items()}
    if "bare" in summary:
        summary["throughput_ratio_sandboxed_to_bare"] = round(
            summary["sandboxed"]["matches_per_hour"] / summary["bare"]["matches_per_hour"], 3)
    print(json.dumps(summary))
    return 0


def _median_run(results: list[dict]) -> dict:
    """The run of median throughput, with every run's throughput beside it."""
    ordered = sorted(results, key=lambda r: r["matches_per_hour"])
    median = dict(ordered[len(ordered) // 2])
    median["runs_matches_per_hour"] = [r["matches_per_hour"] for r in results]
    return median


def _round_robin(args, env, user, versions, chosen, mode: str) -> dict:
    """Play the round-robin once on fresh workers; ``mode`` "bare" runs uploads unconfined."""
    from django.db.models import Sum

    from arena.models import MatchStatus, RatingBoard, Tournament
    from arena.services.tournaments import tournament_create

    workers = []
    logs = ROOT / "var" / "bench-logs"
    logs.mkdir(parents=True, exist_ok=True)
    celery = str(Path(sys.executable).with_name("celery"))
    command = ([sys.executable, str(ROOT / "benchmarks" / "bare_worker.py")] if mode == "bare"
               else [celery])
    for n in range(args.workers):
        log = open(logs / f"worker-{n}.log", "wb")  # noqa: SIM115 (lives as long as the worker)
        workers.append(subprocess.Popen(
            [*command, "-A", "config", "worker", "--loglevel=INFO", "-n", f"bench{n}@%h",
             f"--concurrency={args.concurrency}", "--without-gossip", "--without-mingle",
             "--without-heartbeat"],
            cwd=ROOT, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        ))
    try:
        time.sleep(3)  # let the workers connect before the clock starts
        started = time.perf_counter()
        tournament = tournament_create(
            created_by=user, name=f"bench-{mode}", rules={"preset": args.preset},
            version_ids=versions, pairs=args.pairs, seed=1,
        )
        total = tournament.matches.count()
        status = Tournament.objects.filter(pk=tournament.pk).values_list("status", flat=True)
        reported = time.perf_counter()
        while status.get() != "finished":  # one light query per 50 ms: the wall time is precise
            if time.perf_counter() - reported > 5:
                done = tournament.matches.filter(
                    status__in=[MatchStatus.FINISHED, MatchStatus.FAILED]
                ).count()
                print(f"  {mode}: {done}/{total} matches done", file=sys.stderr, flush=True)
                reported = time.perf_counter()
            if any(w.poll() is not None for w in workers):
                raise SystemExit("a worker died: see var/bench-logs/")
            time.sleep(0.05)
        wall = time.perf_counter() - started
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)

    failed = tournament.matches.exclude(status=MatchStatus.FINISHED).count()
    play_ms = list(tournament.matches.values_list("play_ms", flat=True))
    play_total = tournament.matches.aggregate(s=Sum("play_ms"))["s"] or 0
    # Each task's whole run time, as the worker logs it ("... succeeded in 0.281s: True").
    task_ms = [
        float(seconds) * 1000
        for n in range(args.workers)
        for seconds in re.findall(
            rb"arena\.tasks\.(?:run|play)_match\[[^\]]+\] succeeded in ([0-9.]+)s: True",
            (logs / f"worker-{n}.log").read_bytes(),
        )
    ]
    overhead_total = sum(task_ms) - play_total
    overhead = statistics.median(task_ms) - statistics.median(play_ms)
    capacity_ms = wall * 1000 * args.workers * args.concurrency
    return {
        "mode": mode,
        "matches": total,
        "failed": failed,
        "builtins": chosen,
        "uploads": args.uploads,
        "pairs": args.pairs,
        "workers": args.workers,
        "concurrency": args.concurrency,
        "database": env["DATABASE_URL"].split(":", 1)[0],
        "broker": "redis" if env.get("REDIS_URL") else "filesystem",
        "wall_s": round(wall, 2),
        "matches_per_minute": round(total / wall * 60, 1),
        "matches_per_hour": round(total / wall * 3600),
        "tasks_timed": len(task_ms),
        "play_ms_median": statistics.median(play_ms),
        "task_ms_median": round(statistics.median(task_ms), 1),
        "overhead_ms_per_match": round(overhead_total / len(task_ms), 1),
        "overhead_ms_median_difference": round(overhead, 1),
        "overhead_share_of_task": round(overhead_total / sum(task_ms), 4),
        "referee_share_of_worker_capacity": round(play_total / capacity_ms, 4),
        # Refits of the board while the round-robin ran (at most one per ARENA_REFIT_EVERY s).
        "rating_refits": RatingBoard.objects.get(key=tournament.rules_key).generation,
    }


def _bench_env() -> dict[str, str]:
    """A database of the benchmark's own and a queue of its own."""
    run = uuid.uuid4().hex[:8]
    env = {"ARENA_QUEUE": f"bench-{run}", "CELERY_EAGER": "0",
           "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_DEBUG": "0",
           "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or uuid.uuid4().hex}
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(url)
        _create_postgres_db(urlunsplit(parts._replace(path="/postgres")), f"quatresept_bench_{run}")
        env["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/quatresept_bench_{run}"))
    else:
        (ROOT / "var").mkdir(exist_ok=True)
        env["DATABASE_URL"] = f"sqlite:///{ROOT / 'var' / f'bench-{run}.sqlite3'}"
    if os.environ.get("REDIS_URL"):
        env["REDIS_URL"] = os.environ["REDIS_URL"]
    return env


def _create_postgres_db(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")


def _drop_database(url: str) -> None:
    """The run's database goes when it ends."""
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).unlink(missing_ok=True)
        return
    import psycopg
    from django.db import connections

    with contextlib.suppress(Exception):  # never set up
        connections.close_all()
    parts = urlsplit(url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {parts.path.lstrip('/')} WITH (FORCE)")


if __name__ == "__main__":
    sys.exit(main())
