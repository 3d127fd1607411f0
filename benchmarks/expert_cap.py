"""How often an expert decision reaches its time cap: a try beside a reference, same seeds.

    nice -n 19 python benchmarks/expert_cap.py --rules quatre-sept --pairs 3 \\
        "expert:exact=16" expert [--opponent expert-v1]

Each bot plays ``--pairs`` duplicate pairs against ``--opponent`` (seeds ``--seed`` on). For
every decision the expert searched (more than one candidate) it records the decision's CPU time
(``time.thread_time``, what the cap counts) and prints, per bot: the searched decisions, the
median, 90th and 99th percentile and the largest CPU time, and how many decisions reached the
cap (within 2 ms of the expert's ``move_ms``, 150 ms by default): there the
search stopped short of its budget of deals, and its play depends on the CPU. With
``--opponent-times`` it prints the same for the opponent, where it is a search bot that reports
its deals as the expert does (``expert-v1``): where the opponent's cap binds, a measurement
against it depends on the host and its load, not only on the seeds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot_strength import bot_class, parse_bot

from engine.bots import BotSeat
from engine.bots.expert import DEFAULT_MS, ExpertBot
from engine.duel import duplicate_pairs
from engine.referee import Player
from engine.rules import rules_for


class TimedSearch:
    """A search bot (one that sets ``last_worlds`` where it searched) whose searched decisions
    add their CPU time to ``times``; every other message goes to the bot unchanged."""

    def __init__(self, bot: Any, times: list[float]) -> None:
        self.bot = bot
        self.times = times

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bot, name)

    def act(self, message: dict[str, Any]) -> str:
        self.bot.last_worlds = 0
        started = time.thread_time()
        try:
            return self.bot.act(message)
        finally:
            if self.bot.last_worlds:  # set only where the search ran
                self.times.append(time.thread_time() - started)


def measure(
    rules_name: str, text: str, opponent: str, seed: int, pairs: int
) -> tuple[list[float], list[float]]:
    """CPU times of the searched decisions of the expert ``text`` and of ``opponent``."""
    name, options = parse_bot(text)
    if name != "expert":
        raise SystemExit(f"{text!r}: only expert's options are measured here")
    other_name, other_options = parse_bot(opponent)
    times: list[float] = []
    other_times: list[float] = []
    for _ in duplicate_pairs(
        rules_for(rules_name),
        lambda: BotSeat(TimedSearch(ExpertBot(**options), times)),
        lambda: BotSeat(TimedSearch(bot_class(other_name)(**other_options), other_times)),
        seed=seed,
        pairs=pairs,
        players=(Player(text), Player(opponent)),
    ):
        pass
    return times, other_times


def summary(text: str, times: list[float], cap_ms: float) -> str:
    ms = sorted(1000 * t for t in times)
    if not ms:
        return f"{text}: no searched decision"

    def pick(q: float) -> float:
        return ms[min(len(ms) - 1, int(q * len(ms)))]

    capped = sum(1 for m in ms if m >= cap_ms - 2)
    return (
        f"{text}: {len(ms)} searched decisions, CPU ms median {statistics.median(ms):.1f}, "
        f"p90 {pick(0.9):.1f}, p99 {pick(0.99):.1f}, max {ms[-1]:.1f}; at the cap {capped} "
        f"({100 * capped / len(ms):.1f}%)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="quatre-sept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--opponent", default="expert-v1")
    parser.add_argument("--opponent-times", action="store_true", help="time the opponent too")
    parser.add_argument("bots", nargs="+", help="expert[:options], the first the try")
    args = parser.parse_args(argv)
    for text in args.bots:
        times, other = measure(args.rules, text, args.opponent, args.seed, args.pairs)
        print(summary(text, times, float(parse_bot(text)[1].get("move_ms", DEFAULT_MS))))
        if args.opponent_times:
            cap = float(parse_bot(args.opponent)[1].get("move_ms", DEFAULT_MS))
            print(summary(f"  {args.opponent} (against it)", other, cap))
    return 0


if __name__ == "__main__":
    sys.exit(main())
