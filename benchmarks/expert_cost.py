"""What one expert decision costs, today's tree against another revision, on the same positions.

    nice -n 19 python benchmarks/expert_cost.py --before main --worlds 64 --positions 30
    nice -n 19 python benchmarks/expert_cost.py --before python --worlds 64 --positions 30

Positions are real: every ``play`` decision with a choice that the expert on seat 0 met in
matches against ``tracker`` (one match per seed, the expert at 8 deals), ``--positions`` of them
per preset, spread over the matches. Each position is then decided by each expert afresh
(``hello`` with a clock that never binds, the RNG seeded from the position's number), the two
taking turns first from one position to the next so that load hits both alike; each bot decides each
position ``--repeat`` times and its fastest time counts (what the decision costs, less the
machine's noise). Every decision
must come out the same (the action and the number of deals searched): the script stops on the
first difference, so a run that finishes also shows that play is unchanged on those positions.
``--before python`` compares today's search in C with today's search in Python (``native=0``).
``--worlds-before`` gives the other expert another budget (then the decisions may differ): what
budget of today's costs what the other's did.

Prints per preset and overall: median and mean ms per decision of each, the median of the
per-position ratios (today / before) and the ratio of the means. ``--profile`` instead runs
today's expert under cProfile on the same positions and prints the heaviest functions.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import functools
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from revision_bots import expert_at

from engine.bots import BotSeat, make_bot
from engine.bots.expert import ExpertBot
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for

PRESETS = ("quatre-sept", "politaine", "la-poule", "pollack")
SLOW = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)


class Recorder:
    """An expert that keeps a copy of every ``play`` decision with a choice it is asked."""

    def __init__(self, bot: ExpertBot, into: list) -> None:
        self.bot, self.into, self.name, self.hello_message = bot, into, bot.name, None

    def hello(self, message: dict[str, Any]) -> None:
        self.hello_message = copy.deepcopy(message)
        self.bot.hello(message)

    def act(self, message: dict[str, Any]) -> str:
        if message["decision"] == "play" and len(message["legal"]) > 1:
            self.into.append((self.hello_message, copy.deepcopy(message)))
        return self.bot.act(message)

    def notify(self, message: dict[str, Any]) -> None:
        self.bot.notify(message)


def positions(preset: str, count: int, seeds: int = 3) -> list[tuple[dict, dict]]:
    """``count`` decisions of seat 0, evenly spread over matches on seeds 1..``seeds``."""
    rules = rules_for(preset)
    if rules.target > 100:
        rules = rules.with_options(target=60)
    found: list[tuple[dict, dict]] = []
    for seed in range(1, seeds + 1):
        seats = [
            BotSeat(Recorder(ExpertBot(worlds=8, move_ms=10_000), found)),
            BotSeat(make_bot("tracker")),
            BotSeat(ExpertBot(worlds=8, move_ms=10_000)),
            BotSeat(make_bot("tracker")),
        ]
        referee_match(rules, seats, seed=seed, match_id=f"cost{seed}", clock=SLOW)
    step = max(1, len(found) // count)
    return found[::step][:count]


def decide(
    cls: type, worlds: int, hello: dict, message: dict, number: int, exact: int | None = None
) -> tuple[str, int, float]:
    """One decision from scratch: (action, deals searched, seconds)."""
    bot = cls(worlds=worlds, move_ms=100_000, **({"exact": exact} if exact else {}))
    bot.hello(copy.deepcopy(hello))
    bot.rng.seed(f"position {number}")
    message = copy.deepcopy(message)
    started = time.perf_counter()
    action = bot.act(message)
    return action, bot.last_worlds, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="git revision to compare with")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument(
        "--worlds-before", type=int, default=None, help="the other's deals (default: --worlds)"
    )
    parser.add_argument("--exact", type=int, default=None, help="today's solver size")
    parser.add_argument("--exact-before", type=int, default=None, help="the other's")
    parser.add_argument("--positions", type=int, default=30, help="per preset")
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--repeat", type=int, default=3, help="decisions per position and bot")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    presets = args.presets.split(",")
    found = {p: positions(p, args.positions) for p in presets}
    if args.profile:
        profiler = cProfile.Profile()
        started = time.perf_counter()
        profiler.enable()
        for p in presets:
            for i, (hello, message) in enumerate(found[p]):
                decide(ExpertBot, args.worlds, hello, message, i)
        profiler.disable()
        print(f"{sum(map(len, found.values()))} decisions, {time.perf_counter() - started:.1f} s")
        stats = pstats.Stats(profiler).strip_dirs()
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(30)
        return 0
    old = (
        functools.partial(ExpertBot, native=False)
        if args.before == "python"
        else expert_at(args.before)
    )
    before_worlds = args.worlds_before or args.worlds
    bots = {"today": ExpertBot, "before": old}
    for cls in bots.values():  # warm up: the outlook tables, imports
        for p in presets:
            decide(cls, 1, *found[p][0], 0)
    times: dict[str, dict[str, list[float]]] = {p: {"today": [], "before": []} for p in presets}
    for p in presets:
        for i, (hello, message) in enumerate(found[p]):
            order = ("today", "before") if i % 2 == 0 else ("before", "today")
            results = {}
            best = {name: float("inf") for name in order}
            for _ in range(args.repeat):
                for name in order:
                    worlds = before_worlds if name == "before" else args.worlds
                    exact = args.exact_before if name == "before" else args.exact
                    action, used, seconds = decide(bots[name], worlds, hello, message, i, exact)
                    results[name] = (action, used)
                    best[name] = min(best[name], seconds)
            for name in order:
                times[p][name].append(best[name])
            same = before_worlds == args.worlds and args.exact == args.exact_before
            if same and results["today"] != results["before"]:
                print(f"DIFFERENT {p} position {i}: {results}")
                return 1
    print(
        f"{args.worlds} deals (solver {args.exact or 'default'}) against {before_worlds}"
        f" (solver {args.exact_before or 'default'}), positions per preset {args.positions},"
        f" vs {args.before}"
    )

    def line(label: str, today: list[float], before: list[float]) -> None:
        ratios = [a / b for a, b in zip(today, before, strict=True)]
        print(
            f"{label:12} n={len(today):4}  ms today median {1000 * statistics.median(today):7.1f}"
            f" mean {1000 * statistics.fmean(today):7.1f} | before median"
            f" {1000 * statistics.median(before):7.1f} mean {1000 * statistics.fmean(before):7.1f}"
            f" | ratio median {statistics.median(ratios):.3f}"
            f" of means {statistics.fmean(today) / statistics.fmean(before):.3f}"
        )

    for p in presets:
        line(p, times[p]["today"], times[p]["before"])
    line("all", [t for p in presets for t in times[p]["today"]],
         [t for p in presets for t in times[p]["before"]])  # fmt: skip
    if before_worlds == args.worlds and args.exact == args.exact_before:
        print("every decision the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())
