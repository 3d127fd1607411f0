#!/usr/bin/env python3
"""API load: the leaderboard, match list and replay endpoints at a fixed request rate.

Fills a PostgreSQL database of its own (``quatresept_load`` beside ``DATABASE_URL``'s, created if
missing) with 1,000 versions (200 bots of 100 users), 50 round-robins of 2,000 finished matches
(100,000 matches, 400,000 seats, 100,000 replays) and a rating board of three refits over the
1,000 versions, by COPY (about a minute, once; kept for the next runs). Then starts gunicorn
(production settings, DEBUG off, ``--web-workers`` sync workers) on 127.0.0.1, and from a second
process sends ``--rate`` requests per second for ``--duration`` seconds: a third of the requests
read the leaderboard (a random page of 50 of the 1,000 rows), a third a page of the match list
(the first pages, deep pages, one round-robin's), a third one match's replay.

The load generator is ``benchmarks/open_loop.py`` (requests due at fixed times, latency counted
from when each was due, a new connection each), run first at the same rate against ``/health/``
as the reference floor. ``--client locust`` uses locust instead; measured here, locust's own
latency grew with its users: 50 users at 2 requests/s each reported p50 80 ms for ``/health/``,
which answers in 5 ms (curl, and the open-loop generator: p50 6 ms).

Prints, per endpoint and in all: requests, failures, achieved requests per second, p50, p90 and
p99 latency (ms: the time to the whole response); then the CPU used during the load by gunicorn,
PostgreSQL, Redis and the generator, and by other processes on the machine (Linux ``/proc``: a
shared machine's other work shows). Goal: p99 < 100 ms at 100 requests per second on
this 2-core machine. Only 127.0.0.1; bounded in count and time.

    make bench-api                          # 100 rps for 60 s
    .venv/bin/python benchmarks/api_load.py --rate 200 --duration 30
    .venv/bin/python benchmarks/api_load.py --web-workers 2 --threads 4   # gthread workers
    .venv/bin/python benchmarks/api_load.py --client locust --users 50
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent

USERS, BOTS, VERSIONS_PER_BOT = 100, 200, 5  # 1,000 versions
TOURNAMENTS, MATCHES_PER_TOURNAMENT = 50, 2000  # 100,000 matches
GENERATIONS = 3

LOCUSTFILE = '''
import random
import sys

import gevent
from locust import FastHttpUser, constant_throughput, task

sys.path.insert(0, {benchmarks!r})
from open_loop import mix  # noqa: E402 (the same mix as the open-loop generator)

RATE = {rate_per_user}
PICK = mix({facts!r})


class Reader(FastHttpUser):
    wait_time = constant_throughput(RATE)

    def on_start(self):
        # Each user starts at a random point of its interval: locust starts every user at once,
        # and constant_throughput keeps them in step, so the "rate" would be bursts of every
        # user's request together (50 at a time) rather than requests spread over each second.
        gevent.sleep(random.random() / RATE)

    @task
    def read(self):
        name, path = PICK()
        self.client.get(path, name=name)
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=100.0, help="requests per second (total)")
    parser.add_argument("--duration", type=int, default=60, help="seconds of load")
    parser.add_argument("--client", choices=["open-loop", "locust"], default="open-loop",
                        help="load generator: benchmarks/open_loop.py (requests due at fixed "
                        "times, a new connection each) or locust")
    parser.add_argument("--users", type=int, default=50, help="locust users sharing the rate")
    parser.add_argument("--web-workers", type=int, default=2 * (os.cpu_count() or 2))
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per gunicorn worker (more than 1: the gthread worker)")
    parser.add_argument("--repopulate", action="store_true", help="fill the database again")
    parser.add_argument("--populate-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.duration > 600 or args.rate > 2000:
        parser.error("bounded: at most 600 s and 2,000 requests per second")

    env = _env()
    if args.populate_only:
        _populate(repopulate=args.repopulate)
        return 0
    _create_database(env["DATABASE_URL"])
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env=env, check=True)
    started = time.monotonic()
    subprocess.run([sys.executable, __file__, "--populate-only"]
                   + (["--repopulate"] if args.repopulate else []), cwd=ROOT, env=env, check=True)
    print(f"database ready in {time.monotonic() - started:.0f} s", flush=True)
    facts = json.loads((Path(env["ARENA_VAR_DIR"]) / "load-facts.json").read_text())

    port = _free_port()
    web = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi", "-b", f"127.0.0.1:{port}",
         "-w", str(args.web_workers), "--access-logfile", "/dev/null", "--log-level", "warning"]
        + (["-k", "gthread", "--threads", str(args.threads)] if args.threads > 1 else []),
        cwd=ROOT, env=env, start_new_session=True,
    )
    try:
        host = f"http://127.0.0.1:{port}"
        _wait_for(host + "/health/")
        _warm_up(host, facts)
        var = Path(env["ARENA_VAR_DIR"])
        if args.client == "open-loop":
            # The reference: the generator and the web stack alone (/health/, no database
            # work beyond one query), at the same rate, just before the load.
            floor = var / "floor"
            _open_loop(host, args, ["--path", "/health/", "--duration", "15"], floor, env)
            _report(floor.with_name(floor.name + "_stats.csv"), args, what="the floor: /health/")
        prefix = var / ("open-loop" if args.client == "open-loop" else "locust")
        before, clock = _cpu_seconds(web.pid), time.monotonic()
        if args.client == "open-loop":
            _open_loop(host, args, ["--facts", str(var / "load-facts.json")], prefix, env)
        else:
            locustfile = var / "locustfile_api.py"
            locustfile.write_text(LOCUSTFILE.format(
                benchmarks=str(ROOT / "benchmarks"), rate_per_user=args.rate / args.users,
                facts=facts,
            ))
            subprocess.run(
                [str(BIN / "locust"), "-f", str(locustfile), "--headless", "--host", host,
                 "-u", str(args.users), "-r", str(args.users), "-t", f"{args.duration}s",
                 "--csv", str(prefix), "--only-summary", "--loglevel", "WARNING",
                 "--stop-timeout", "5"],
                cwd=ROOT, env={**env, "PYTHONWARNINGS": "ignore"}, check=False,
                timeout=args.duration + 120,
            )
        after, wall = _cpu_seconds(web.pid), time.monotonic() - clock
        _report(prefix.with_name(prefix.name + "_stats.csv"), args, what="the load")
        _report_cpu(before, after, wall)
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(timeout=30)
    return 0


def _open_loop(host: str, args, extra: list[str], prefix: Path, env: dict[str, str]) -> None:
    """``benchmarks/open_loop.py`` as a second process: ``args.rate`` requests/s."""
    command = [sys.executable, str(ROOT / "benchmarks" / "open_loop.py"), "--host", host,
               "--rate", str(args.rate), "--duration", str(args.duration), "--csv", str(prefix)]
    subprocess.run(command + extra, cwd=ROOT, env=env, check=True, timeout=args.duration + 120)


def _report(stats: Path, args, *, what: str) -> None:
    rows = list(csv.DictReader(stats.open()))
    client = (f"{args.users} locust users" if args.client == "locust"
              else "open loop (requests due at fixed times)")
    print(f"\n{what}: {args.rate:g} requests/s offered, {client}, "
          f"gunicorn {args.web_workers} {_workers(args)}, 127.0.0.1")
    print(f"{'endpoint':<14}{'requests':>9}{'failures':>9}{'req/s':>8}{'p50 ms':>8}"
          f"{'p90 ms':>8}{'p99 ms':>8}{'max ms':>8}")
    for row in rows:
        name = row["Name"] if row["Name"] != "Aggregated" else "all"
        print(f"{name:<14}{row['Request Count']:>9}{row['Failure Count']:>9}"
              f"{float(row['Requests/s']):>8.1f}{row['50%']:>8}{row['90%']:>8}{row['99%']:>8}"
              f"{float(row['Max Response Time']):>8.0f}")


def _cpu_seconds(web_group: int) -> dict[str, float]:
    """CPU seconds so far (Linux ``/proc``) of the web server's processes, PostgreSQL's, Redis's,
    and the load generator's (a finished child: ``RUSAGE_CHILDREN``), and of the whole machine
    (busy, and all) including everything else running on it."""
    import resource

    ticks = os.sysconf("SC_CLK_TCK")
    found = {"gunicorn": 0.0, "PostgreSQL": 0.0, "Redis": 0.0}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        seconds = (int(fields[11]) + int(fields[12])) / ticks
        if int(fields[2]) == web_group:  # the process group gunicorn's master leads
            found["gunicorn"] += seconds
        elif name.startswith("postgres"):
            found["PostgreSQL"] += seconds
        elif name.startswith("redis-server"):
            found["Redis"] += seconds
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    found["generator"] = usage.ru_utime + usage.ru_stime
    times = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = times[3] + times[4]
    found["machine busy"], found["machine"] = (sum(times) - idle) / ticks, sum(times) / ticks
    return found


def _report_cpu(before: dict[str, float], after: dict[str, float], wall: float) -> None:
    """CPU during the load, in cores (1.0: one core busy all the time)."""
    used = {name: (after[name] - before[name]) / wall for name in before}
    cores = (after["machine"] - before["machine"]) / wall
    mine = sum(used[name] for name in ("gunicorn", "PostgreSQL", "Redis", "generator"))
    print(f"CPU during the load, in cores of {cores:.0f}: "
          + ", ".join(f"{name} {used[name]:.2f}" for name in ("gunicorn", "PostgreSQL", "Redis",
                                                               "generator"))
          + f"; the machine {used['machine busy']:.2f} busy, of which "
            f"{max(0.0, used['machine busy'] - mine):.2f} other processes")


def _workers(args) -> str:
    if args.threads > 1:
        return f"gthread workers of {args.threads} threads"
    return "sync workers"


# --- the database ---------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    source = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/quatresept"
    if not source.startswith("postgres"):
        sys.exit("needs PostgreSQL: set DATABASE_URL (make bench-api does)")
    parts = urlsplit(source)
    url = urlunsplit(parts._replace(path="/quatresept_load"))
    var = ROOT / "var" / "load"
    var.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "ARENA_HTTPS": "0",
        "ARENA_VAR_DIR": str(var),
        # One client address sends everything here: the per-address API throttle would refuse it.
        "ARENA_API_ANON_RATE": "1000000/minute",
        "ARENA_API_USER_RATE": "1000000/minute",
        "LOG_LEVEL": "WARNING",
    }
    return env


def _create_database(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = 'quatresept_load'")
        if exists.fetchone() is None:
            conn.execute("CREATE DATABASE quatresept_load")


def _populate(*, repopulate: bool) -> None:
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.db import connection, transaction
    from django.utils import timezone

    from arena.models import (
        Bot,
        BotVersion,
        Entry,
        Match,
        PackageBlob,
        Rating,
        RatingBoard,
        Tournament,
        VersionStatus,
    )
    from engine import rules_for

    facts_path = Path(os.environ["ARENA_VAR_DIR"]) / "load-facts.json"
    if not repopulate and facts_path.exists() and Match.objects.count() >= 100_000:
        return
    tables = ["arena_rating", "arena_ratingboard", "arena_replay", "arena_matchseat",
              "arena_match", "arena_entry", "arena_tournament", "arena_botversion", "arena_bot",
              "arena_packageblob", "authtoken_token", "auth_user"]
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
    now = timezone.now()
    replay = _a_replay()
    rules = rules_for("quatre-sept").to_dict()
    with transaction.atomic():
        users = User.objects.bulk_create(
            User(username=f"user{i}", password="!") for i in range(USERS)
        )
        blob = PackageBlob.objects.create(sha256="0" * 64, size=5, data=b"x = 1")
        bots = Bot.objects.bulk_create(
            Bot(owner=users[i % USERS], name=f"bot{i}") for i in range(BOTS)
        )
        versions = BotVersion.objects.bulk_create(
            BotVersion(bot=bot, number=n + 1, blob=blob, filename="bot.py", runtime="python3",
                       status=VersionStatus.READY, validated_at=now)
            for bot in bots for n in range(VERSIONS_PER_BOT)
        )
        tournaments = Tournament.objects.bulk_create(
            Tournament(name=f"cup {t}", created_by=users[t % USERS], preset="quatre-sept",
                       rules=rules, rules_key="quatre-sept", pairs=5, seed=t, status="finished",
                       finished_at=now)
            for t in range(TOURNAMENTS)
        )
        per = len(versions) // TOURNAMENTS  # 20 versions in each
        Entry.objects.bulk_create(
            Entry(tournament=t, version=versions[i * per + k])
            for i, t in enumerate(tournaments) for k in range(per)
        )
    rules_json = json.dumps(rules)
    matches, seats, replays = io.StringIO(), io.StringIO(), io.BytesIO()
    match_id = 0
    seat_id = 0
    stamp = now.isoformat()
    data_hex = "\\\\x" + replay.hex()
    for i, tournament in enumerate(tournaments):
        group = [v.pk for v in versions[i * per:(i + 1) * per]]
        pairings = [(a, b) for x, a in enumerate(group) for b in group[x + 1:]]
        for m in range(MATCHES_PER_TOURNAMENT):
            match_id += 1
            a, b = pairings[(m // 2) % len(pairings)]
            swapped = m % 2 == 1
            first, second = (b, a) if swapped else (a, b)
            winner = (match_id * 7919) % 3
            winner_sql = "\\N" if winner == 2 else str(winner)
            matches.write(
                f"{match_id}\ttournament\t{tournament.pk}\t{m // (2 * len(pairings))}\t"
                f"{'t' if swapped else 'f'}\t{tournament.seed + m}\t{rules_json}\tquatre-sept\t"
                f"finished\t1\t{winner_sql}\t[41, 12]\ttarget\t\t250\t{stamp}\t{stamp}\t{stamp}\n"
            )
            for s in range(4):
                seat_id += 1
                seats.write(f"{seat_id}\t{match_id}\t{s}\t{first if s % 2 == 0 else second}"
                            "\t\t\t\n")
            replays.write(f"{match_id}\t{data_hex}\t{len(replay) * 5}\n".encode())
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(
            "COPY arena_match (id, kind, tournament_id, pair, swapped, seed, rules, rules_key, "
            "status, attempts, winner, score, reason, failure, play_ms, created_at, started_at, "
            "finished_at) FROM STDIN"
        ) as copy:
            copy.write(matches.getvalue())
        with raw.copy("COPY arena_matchseat (id, match_id, seat, version_id, fault_kind, "
                      "fault_detail, log) FROM STDIN") as copy:
            copy.write(seats.getvalue())
        with raw.copy("COPY arena_replay (match_id, data, size) FROM STDIN") as copy:
            copy.write(replays.getvalue())
        for table in ("arena_match", "arena_matchseat"):
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                           f"(SELECT max(id) FROM {table}))")
    with transaction.atomic():
        board = RatingBoard.objects.create(
            key="quatre-sept", preset="quatre-sept", state="idle", state_changed_at=now,
            generation=GENERATIONS, fitted_at=now, matches=match_id,
        )
        for generation in range(1, GENERATIONS + 1):
            order = sorted(versions, key=lambda v: (v.pk * 2654435761 + generation) % 1000)
            Rating.objects.bulk_create(
                Rating(board=board, version=v, generation=generation, fitted_at=now, rank=r,
                       elo=1800 - r * 0.6, ci95=40.0, matches=400, wins=200, losses=190,
                       draws=10, provisional=False, los_next=0.6 if r < len(order) else None)
                for r, v in enumerate(order, start=1)
            )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # as autovacuum would: index-only counts
    facts_path.write_text(json.dumps({
        "first_match": 1, "last_match": match_id, "tournaments": [t.pk for t in tournaments],
    }))


def _a_replay() -> bytes:
    """One real replay (random against greedy), compressed as workers store it."""
    folder = Path(os.environ["ARENA_VAR_DIR"]) / "replay"
    if not folder.exists() or not any(folder.iterdir()):
        subprocess.run(
            [sys.executable, "manage.py", "play", "--rules", "quatre-sept", "--seed", "1",
             "--pairs", "1", "--replay-dir", str(folder), "builtin:random", "builtin:greedy"],
            cwd=ROOT, check=True, capture_output=True,
        )
    raw = json.loads(sorted(folder.iterdir())[0].read_text())
    return zlib.compress(json.dumps(raw, separators=(",", ":")).encode(), 6)


# --- helpers --------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str) -> None:
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"{url} did not answer")


def _warm_up(host: str, facts: dict) -> None:
    import urllib.request

    last, tournament = facts["last_match"], facts["tournaments"][0]
    for path in ("/api/leaderboard/", "/api/matches/", f"/api/matches/{last}/replay/",
                 f"/api/matches/?tournament={tournament}"):
        for _ in range(5):
            with urllib.request.urlopen(host + path, timeout=30) as response:
                response.read()


if __name__ == "__main__":
    sys.exit(main())
