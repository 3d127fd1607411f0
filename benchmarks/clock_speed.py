"""Fair clocks' cost: the decision round trip to a persistent bot in bwrap with the fair clock
(``sandbox.clocks``) and with a plain wall clock (its meter never reads /proc), alternated in
blocks in the same run; and what metering one slow decision costs (the tree scan and the
threads' schedstat, at the start and at each check), and what reading the three other seats' CPU
costs (``sandbox.starvation``: their cgroups, once when metering begins and once at the backstop).

    python benchmarks/clock_speed.py [--decisions 3000] [--slow 200]

Goal: a quick decision costs the same with the fair clock (median within a few µs: it reads
the seat's cumulative CPU once, from a descriptor kept open, and nothing from /proc). Figures
only; nothing here asserts on timing.
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

from benchmarks.sandbox_speed import CLOCK, HELLO, TRIVIAL_BOT
from sandbox import install_package, open_session
from sandbox.clocks import DecisionMeter
from sandbox.runners.bwrap import BwrapRunner
from sandbox.starvation import MatchSeats


class WallMeter(DecisionMeter):
    """The reference: a meter that never starts metering (charged time = wall time) and reads
    no CPU count at the request or at the reply."""

    def begin_metering(self) -> bool:
        return False

    def _cheap_cpu(self) -> tuple[float, float]:
        return 0.0, 0.0


def bench_round_trips(root: Path, decisions: int, blocks: int = 10) -> dict[str, list[float]]:
    bot = install_package(TRIVIAL_BOT, "trivial.py", root / "trivial")
    runner = BwrapRunner()
    legal = ["a", "b", "c"]
    times: dict[str, list[float]] = {"fair": [], "wall": []}
    with open_session(runner, bot, CLOCK) as session:
        session.hello(HELLO)
        fair = session._meter
        wall = WallMeter(fair.root, fair.uid)
        turn_id = 0
        for _ in range(200):  # warm-up
            turn_id += 1
            session.turn({"type": "turn", "id": turn_id, "legal": legal})
        for block in range(blocks):
            for label, meter in (("fair", fair), ("wall", wall))[:: 1 if block % 2 else -1]:
                session._meter = meter
                for _ in range(decisions // blocks):
                    turn_id += 1
                    start = time.perf_counter()
                    session.turn({"type": "turn", "id": turn_id, "legal": legal})
                    times[label].append(time.perf_counter() - start)
    return times


def bench_metering(root: Path, n: int) -> dict[str, list[float]]:
    """Seconds to start metering a bwrap seat and to compute its charged time once; to read the
    other three seats' CPU (the baseline) and to look for a seat to blame."""
    bot = install_package(TRIVIAL_BOT, "trivial.py", root / "meter")
    times: dict[str, list[float]] = {"begin": [], "check": [], "seats": [], "blame": []}
    runner = BwrapRunner()
    sessions = [open_session(runner, bot, CLOCK) for _ in range(4)]
    try:
        table = MatchSeats()
        for seat, session in enumerate(sessions):
            session.hello(HELLO)
            table.join(seat, session)
        meter = sessions[0]._meter  # its tree found during hello, as in a match
        for _ in range(n):
            meter.start()
            start = time.perf_counter()
            meter.begin_metering()
            middle = time.perf_counter()
            meter.charged()
            end = time.perf_counter()
            table.begin(0)
            seats = time.perf_counter()
            table.blame(0, 0.0)
            blame = time.perf_counter()
            times["begin"].append(middle - start)
            times["check"].append(end - middle)
            times["seats"].append(seats - end)
            times["blame"].append(blame - seats)
    finally:
        for session in sessions:
            session.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--slow", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="qs-bench-clock-"))
    root.chmod(0o711)
    try:
        trips = bench_round_trips(root, args.decisions)
        metering = bench_metering(root, args.slow)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    fair, wall = (statistics.median(trips[k]) * 1e6 for k in ("fair", "wall"))
    print(f"decision round trip in bwrap, median of {args.decisions} each (alternated blocks)")
    print(f"  {'wall':>6}: {wall:7.1f} µs   (reference: the wall clock)")
    print(f"  {'fair':>6}: {fair:7.1f} µs   ratio {fair / wall:.3f}")
    begin, check = (statistics.median(metering[k]) * 1e6 for k in ("begin", "check"))
    print(f"metering a slow decision (> 20 ms) of a bwrap seat, median of {args.slow}")
    print(f"  {'begin':>6}: {begin:7.1f} µs   (schedstat of the tree's threads, host state)")
    print(f"  {'check':>6}: {check:7.1f} µs   (schedstat of the tree's threads, at each deadline)")
    seats, blame = (statistics.median(metering[k]) * 1e6 for k in ("seats", "blame"))
    print(f"  {'seats':>6}: {seats:7.1f} µs   (the 3 other seats' CPU, when metering begins)")
    print(f"  {'blame':>6}: {blame:7.1f} µs   (the same again, at the backstop only)")


if __name__ == "__main__":
    main()
