"""Whether today's expert plays every match exactly as another revision's does.

    nice -n 19 python benchmarks/expert_replay.py --before main --worlds 16 --seeds 20

For every preset and seed 1..``--seeds``, one match of the expert (seats 0 and 2) against
``tracker``, under a clock that never binds (so both replay exactly), is played by today's
expert and by the expert of ``--before`` (``benchmarks/revision_bots.py``); the two replays'
deals (every card, flag and saying) must be equal. Prints one line per preset (matches, equal,
decisions of the expert seats) and exits non-zero on any difference.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from revision_bots import expert_at

from engine.bots import BotSeat, make_bot
from engine.bots.expert import ExpertBot
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for

PRESETS = ("quatre-sept", "politaine", "la-poule", "pollack")
SLOW = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)


def play(cls: type, preset: str, seed: int, options: dict) -> tuple[list, int]:
    """The replay's deals of one match, and how many turns the expert seats took."""
    bots = [cls(**options) if s % 2 == 0 else make_bot("tracker") for s in range(4)]
    rules = rules_for(preset)
    outcome = referee_match(
        rules, [BotSeat(b) for b in bots], seed=seed, match_id=f"replay{seed}", clock=SLOW
    )
    turns = sum(len(t["cards"]) for d in outcome.replay["deals"] for t in d["tricks"]) // 2
    return outcome.replay["deals"], turns


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main")
    parser.add_argument("--worlds", type=int, default=16)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--presets", default=",".join(PRESETS))
    args = parser.parse_args(argv)
    old = expert_at(args.before)
    options = {"worlds": args.worlds, "move_ms": 100_000}
    different = 0
    for preset in args.presets.split(","):
        started = time.perf_counter()
        equal = cards = 0
        for seed in range(1, args.seeds + 1):
            today, turns = play(ExpertBot, preset, seed, options)
            before, _ = play(old, preset, seed, options)
            equal += today == before
            cards += turns
            if today != before:
                print(f"DIFFERENT: {preset} seed {seed}")
        different += args.seeds - equal
        print(
            f"{preset}: {equal}/{args.seeds} matches equal, ~{cards} expert cards,"
            f" {args.worlds} deals, {time.perf_counter() - started:.0f} s",
            flush=True,
        )
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
