"""How often an expert decision reaches its time cap: a try beside a reference, same seeds.

    nice -n 19 python benchmarks/expert_cap.py --rules quatre-sept --pairs 3 \\
        "expert:exact=16" expert [--opponent expert-v1]

Each bot plays ``--pairs`` duplicate pairs against ``--opponent`` (seeds ``--seed`` on). For
every decision the expert searched (more than one candidate) it records the decision's CPU time
(``time.thread_time``, what the cap counts) and prints, per bot: the searched decisions, the
median, 90th and 99th percentile and the largest CPU time, and how many decisions reached the
cap (within 2 ms of the expert's ``move_ms``, 150 ms by default): there the
search stopped short of its budget of deals, and its play depends on the CPU.
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


class TimedExpert(ExpertBot):
    """An expert whose searched decisions add their CPU time to ``times``."""

    def __init__(self, times: list[float], **options: Any) -> None:
        super().__init__(**options)
        self.times = times

    def act(self, message: dict[str, Any]) -> str:
        self.last_worlds = 0
        started = time.thread_time()
        try:
            return super().act(message)
        finally:
            if self.last_worlds:  # set only where the search ran
                self.times.append(time.thread_time() - started)


def measure(rules_name: str, text: str, opponent: str, seed: int, pairs: int) -> list[float]:
    name, options = parse_bot(text)
    if name != "expert":
        raise SystemExit(f"{text!r}: only expert's options are measured here")
    other_name, other_options = parse_bot(opponent)
    times: list[float] = []
    for _ in duplicate_pairs(
        rules_for(rules_name),
        lambda: BotSeat(TimedExpert(times, **options)),
        lambda: BotSeat(bot_class(other_name)(**other_options)),
        seed=seed,
        pairs=pairs,
        players=(Player(text), Player(opponent)),
    ):
        pass
    return times


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
    parser.add_argument("bots", nargs="+", help="expert[:options], the first the try")
    args = parser.parse_args(argv)
    for text in args.bots:
        times = measure(args.rules, text, args.opponent, args.seed, args.pairs)
        print(summary(text, times, float(parse_bot(text)[1].get("move_ms", DEFAULT_MS))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
