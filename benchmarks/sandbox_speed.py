"""Sandbox speed: start-up of a trivial bot bare (trusted) and in bwrap, and the round trip of one
decision to a persistent bot, printed side by side.

    python benchmarks/sandbox_speed.py [--starts 40] [--decisions 3000] [--matches 10]
                                       [--confinement both|full|light]

Goals: bwrap adds under 10 ms to a start; a decision round trip under 100 µs median; a whole
quatre-sept match of four Python random bots in bwrap within 1.5x of bare processes.
``--confinement both`` (the default) runs, in the same run, bwrap with the syscall filter and the
seat cgroups on ("bwrap") and with both off ("bwrap-light"), beside bare processes.
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


#: The bwrap variants: full confinement (syscall filter and seat cgroups on) and light (both off).
VARIANTS = {"bwrap": {}, "bwrap-light": {"seccomp": False, "cgroups": False}}


def _starters(bot: InstalledBot) -> list[tuple[str, Runner, object]]:
    """(label, runner, program) for the same bot bare and in each bwrap variant chosen, same
    interpreter and flags."""
    runtime = host_runtime("python3")
    bare = TrustedProgram(runtime.argv(str(bot.folder / bot.package.entry), ()), cwd=bot.folder)
    return [("bare", TrustedRunner(), bare)] + [
        (label, BwrapRunner(**VARIANTS[label]), bot) for label in LABELS[1:]
    ]


LABELS = ["bare", "bwrap", "bwrap-light"]


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
    from engine import play_match, rules_for

    source = (Path(__file__).resolve().parents[1] / "examples" / "python" / "bot.py").read_bytes()
    bot = install_package(source, "bot.py", root / "starter")
    rules = rules_for("quatre-sept")
    times: dict[str, list[float]] = {label: [] for label in LABELS}
    for seed in range(matches):
        for label, runner, target in _starters(bot):
            start = time.perf_counter()
            seats = [SessionSeat(open_session(runner, target, CLOCK)) for _ in range(4)]
            outcome = play_match(rules, seats, seed=seed)
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
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--confinement", choices=("both", "full", "light"), default="both",
                        help="which bwrap variants to run beside bare processes")
    args = parser.parse_args()
    chosen = {"both": ["bwrap", "bwrap-light"], "full": ["bwrap"], "light": ["bwrap-light"]}
    LABELS[1:] = chosen[args.confinement]
    full = BwrapRunner()
    print(f"confinement of 'bwrap': {full.confinement}")
    root = Path(tempfile.mkdtemp(prefix="qs-bench-"))
    root.chmod(0o711)
    try:
        bot = install_package(TRIVIAL_BOT, "trivial.py", root / "trivial")
        starts = bench_start(bot, args.starts)
        trips = bench_round_trip(bot, args.decisions)
        match = bench_whole_match(root, args.matches)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    bare = statistics.median(starts["bare"]) * 1e3
    print(f"start-up to ready, median of {args.starts} (python3 trivial bot)")
    print(f"  {'bare':>11}: {bare:7.2f} ms")
    for label in LABELS[1:]:
        boxed = statistics.median(starts[label]) * 1e3
        print(f"  {label:>11}: {boxed:7.2f} ms   added {boxed - bare:6.2f} ms (goal < 10 ms)")
    print(f"decision round trip over {args.decisions} decisions (persistent bot)")
    print(f"  {'':>11}  {'median':>9}  {'p99':>9}")
    for label in LABELS:
        samples = trips[label]
        print(f"  {label:>11}: {statistics.median(samples) * 1e6:6.1f} µs  "
              f"{_p(samples, 0.99) * 1e6:6.1f} µs   (goal median < 100 µs)")
    bare_match = statistics.median(match["bare"])
    print(f"whole quatre-sept match, four python starter bots, median of {args.matches}")
    print(f"  {'bare':>11}: {bare_match * 1e3:7.1f} ms")
    for label in LABELS[1:]:
        boxed_match = statistics.median(match[label])
        print(f"  {label:>11}: {boxed_match * 1e3:7.1f} ms   ratio "
              f"{boxed_match / bare_match:5.2f}x (goal within 1.5x)")


if __name__ == "__main__":
    main()
