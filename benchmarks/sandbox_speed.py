"""Sandbox speed: start-up of a trivial bot bare (trusted) and in bwrap, and the round trip of one
decision to a persistent bot, printed side by side.

    python benchmarks/sandbox_speed.py [--starts 40] [--decisions 3000]

Goals (issue 3): bwrap adds under 10 ms to a start; a decision round trip under 100 µs median.
And a whole quatre-sept match of four Python random bots bare and in bwrap (goal: within 1.5x).
Figures only; nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox import (
    BotSession,
    Clock,
    InstalledBot,
    Runner,
    TrustedProgram,
    TrustedRunner,
    install_package,
    open_session,
)
from sandbox.runners.bwrap import BwrapRunner
from sandbox.runners.runtimes import host_runtime

TRIVIAL_BOT = b"""\
import sys
for line in sys.stdin:
    if '"hello"' in line:
        sys.stdout.write('{"type":"ready","name":"trivial"}\\n')
    elif '"turn"' in line:
        i = line.index('"id":') + 5
        sys.stdout.write('{"id":%s,"action":"a"}\\n' % line[i:line.index(",", i)])
    sys.stdout.flush()
"""
CLOCK = Clock(hello_ms=10_000, move_ms=5_000, bank_ms=10**9)
HELLO = {"type": "hello", "protocol": 1}


def _starters(bot: InstalledBot) -> list[tuple[str, Runner, object]]:
    """(label, runner, program) for the same bot bare and in bwrap, same interpreter and flags."""
    runtime = host_runtime("python3")
    bare = TrustedProgram(runtime.argv(str(bot.folder / bot.package.entry), ()), cwd=bot.folder)
    return [("bare", TrustedRunner(), bare), ("bwrap", BwrapRunner(), bot)]


def bench_start(bot: InstalledBot, n: int) -> dict[str, list[float]]:
    """Seconds from start to the ready reply (spawn, interpreter start-up, hello), then close."""
    times: dict[str, list[float]] = {}
    for label, runner, program in _starters(bot):
        samples = times.setdefault(label, [])
        open_session(runner, program, CLOCK).close()  # warm-up: runtime discovery, page cache
        for _ in range(n):
            start = time.perf_counter()
            session = open_session(runner, program, CLOCK)
            session.hello(HELLO)
            samples.append(time.perf_counter() - start)
            session.close()
    return times


def bench_round_trip(bot: InstalledBot, n: int) -> dict[str, list[float]]:
    """Seconds per decision (write turn to reply parsed) to one persistent bot."""
    times: dict[str, list[float]] = {}
    legal = ["a", "b", "c"]
    for label, runner, program in _starters(bot):
        samples = times.setdefault(label, [])
        session: BotSession
        with open_session(runner, program, CLOCK) as session:
            session.hello(HELLO)
            for i in range(200):  # warm-up
                session.turn({"type": "turn", "id": i, "legal": legal})
            for i in range(200, 200 + n):
                start = time.perf_counter()
                session.turn({"type": "turn", "id": i, "legal": legal})
                samples.append(time.perf_counter() - start)
    return times


def bench_whole_match(root: Path, matches: int) -> dict[str, list[float]]:
    """Whole quatre-sept matches of four copies of the Python starter bot (random over legal),
    started fresh for every match as the platform does, bare vs in bwrap; seconds per match.

    The engine's referee plays them; ``arena.runtime.seats.SessionSeat`` adapts the sessions
    (a benchmark may use every layer, the sandbox package itself may not import ``engine``).
    """
    from arena.runtime.seats import SessionSeat
    from engine import referee_match, rules_for

    source = (Path(__file__).resolve().parents[1] / "examples" / "python" / "bot.py").read_bytes()
    bot = install_package(source, "bot.py", root / "starter")
    rules = rules_for("quatre-sept")
    times: dict[str, list[float]] = {"bare": [], "bwrap": []}
    for seed in range(matches):
        for label, runner, target in _starters(bot):
            start = time.perf_counter()
            seats = [SessionSeat(open_session(runner, target, CLOCK)) for _ in range(4)]
            outcome = referee_match(rules, seats, seed=seed)
            times[label].append(time.perf_counter() - start)
            if outcome.replay["result"]["fault"] is not None:
                raise RuntimeError(f"{label} match {seed} faulted: {outcome.replay['result']}")
    return times


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=40)
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--matches", type=int, default=20)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="qs-bench-"))
    root.chmod(0o711)
    try:
        bot = install_package(TRIVIAL_BOT, "trivial.py", root / "trivial")
        starts = bench_start(bot, args.starts)
        trips = bench_round_trip(bot, args.decisions)
        match = bench_whole_match(root, args.matches)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    bare, boxed = (statistics.median(starts[k]) * 1e3 for k in ("bare", "bwrap"))
    print(f"start-up to ready, median of {args.starts} (python3 trivial bot)")
    print(f"  {'bare':>8}: {bare:7.2f} ms")
    print(f"  {'bwrap':>8}: {boxed:7.2f} ms")
    print(f"  {'added':>8}: {boxed - bare:7.2f} ms   (goal < 10 ms)")
    print(f"decision round trip over {args.decisions} decisions (persistent bot)")
    print(f"  {'':>8}  {'median':>9}  {'p99':>9}")
    for label in ("bare", "bwrap"):
        samples = trips[label]
        print(f"  {label:>8}: {statistics.median(samples) * 1e6:6.1f} µs  "
              f"{_p(samples, 0.99) * 1e6:6.1f} µs   (goal median < 100 µs)")
    bare_match, boxed_match = (statistics.median(match[k]) for k in ("bare", "bwrap"))
    print(f"whole quatre-sept match, four python starter bots, median of {args.matches}")
    print(f"  {'bare':>8}: {bare_match * 1e3:7.1f} ms")
    print(f"  {'bwrap':>8}: {boxed_match * 1e3:7.1f} ms")
    print(f"  {'ratio':>8}: {boxed_match / bare_match:7.2f}x     (goal within 1.5x)")


if __name__ == "__main__":
    main()
