#!/usr/bin/env python3
"""An open-loop load generator: requests start at fixed times whatever the answers do.

``benchmarks/api_load.py`` runs it as a second process. Requests are due every 1/rate seconds, in
the load test's mix (a third leaderboard pages, a third match-list pages, a third replays, as in
its locustfile), each on a new connection from a pool of threads; a request's latency counts from
the moment it was due, so a late start (the generator or the server falling behind) counts
against the server, never hides (no coordinated omission). ``--path`` instead sends one path
only: against ``/health/`` it measures the floor the generator and the web stack add.

Writes locust's CSV layout (``<prefix>_stats.csv``: Name, Request Count, Failure Count,
Requests/s, 50%, 90%, 99%, Max Response Time) so one report reads both.
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import random
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", required=True)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--facts", type=Path, help="the load database's facts (match ids, ...)")
    parser.add_argument("--path", help="send only this path (named 'floor')")
    parser.add_argument("--csv", type=Path, required=True, help="prefix of the stats file")
    parser.add_argument("--threads", type=int, default=64)
    args = parser.parse_args()
    target = urlsplit(args.host)
    facts = json.loads(args.facts.read_text()) if args.facts else {}
    pick = (lambda: ("floor", args.path)) if args.path else mix(facts)

    times: dict[str, list[float]] = defaultdict(list)
    failures: dict[str, int] = defaultdict(int)
    lock = threading.Lock()

    def one(name: str, path: str, due: float) -> None:
        ok = False
        try:
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            connection.close()
            ok = response.status == 200
        except OSError:
            pass
        elapsed = (time.perf_counter() - due) * 1000
        with lock:
            times[name].append(elapsed)
            if not ok:
                failures[name] += 1

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.threads) as pool:
        n = 0
        while (due := started + n / args.rate) < started + args.duration:
            wait = due - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            name, path = pick()
            pool.submit(one, name, path, due)
            n += 1
    wall = time.perf_counter() - started
    _write(args.csv.with_name(args.csv.name + "_stats.csv"), times, failures, wall)
    return 0


def mix(facts: dict):
    """The load test's mix: a picker of (endpoint name, path), a third each; the match-list
    third is 40% first pages, 20% deep pages, 40% one round-robin's pages. Locust's file in
    ``api_load.py`` uses it too."""
    first, last = facts["first_match"], facts["last_match"]
    tournaments = facts["tournaments"]

    def pick() -> tuple[str, str]:
        kind = random.randrange(3)
        if kind == 0:
            return "leaderboard", f"/api/leaderboard/?page={random.randint(1, 20)}"
        if kind == 1:
            which = random.random()
            if which < 0.4:
                path = f"/api/matches/?page={random.randint(1, 5)}"
            elif which < 0.6:
                path = f"/api/matches/?page={random.randint(1, 2000)}"
            else:
                path = (f"/api/matches/?tournament={random.choice(tournaments)}"
                        f"&page={random.randint(1, 40)}")
            return "match list", path
        return "replay", f"/api/matches/{random.randint(first, last)}/replay/"

    return pick


def _write(stats: Path, times: dict[str, list[float]], failures: dict[str, int],
           wall: float) -> None:
    everything = [t for name in times for t in times[name]]
    rows = [(name, times[name]) for name in sorted(times)] + [("Aggregated", everything)]
    with stats.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["Name", "Request Count", "Failure Count", "Requests/s", "50%", "90%",
                         "99%", "Max Response Time"])
        for name, values in rows:
            values = sorted(values)
            failed = sum(failures.values()) if name == "Aggregated" else failures[name]
            writer.writerow([
                name, len(values), failed, round(len(values) / wall, 2),
                _quantile(values, 0.50), _quantile(values, 0.90), _quantile(values, 0.99),
                round(values[-1]) if values else 0,
            ])


def _quantile(values: list[float], q: float) -> int:
    if not values:
        return 0
    return round(values[min(len(values) - 1, int(q * len(values)))])


if __name__ == "__main__":
    raise SystemExit(main())
