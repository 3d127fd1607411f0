#!/usr/bin/env python3
"""What a match stores: its replay's size as the platform keeps it, per preset, for sizing a disk.

    python benchmarks/storage_size.py [--matches 40] [--bots greedy,random] [--seed 1]

Plays ``--matches`` matches per preset in-process (the bots named, alternating seats) and stores
each replay exactly as ``arena.services.matches`` does (compact JSON, zlib level 6), then prints,
per preset, the median and 95th percentile of the stored bytes beside the uncompressed JSON: the
reference in the same run. A match's other rows (its match row, four seats, a rating result) are
a few hundred bytes; a faulting seat's stderr tail is at most 64 KiB, kept for its owner.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.bots import BotSeat, make_bot
from engine.referee import Player, referee_match
from engine.rules import PRESETS, rules_for


def stored(replay: dict) -> tuple[int, int]:
    """The replay's bytes as JSON and as the platform stores them."""
    raw = json.dumps(replay, separators=(",", ":")).encode()
    return len(raw), len(zlib.compress(raw, 6))


def percentile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--bots", default="greedy,random")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    names = args.bots.split(",")
    print(f"{'preset':<12} {'deals':>6} {'json median':>12} {'stored median':>14} "
          f"{'stored p95':>11} {'ratio':>6}")
    for preset in sorted(PRESETS):
        rules = rules_for(preset)
        raw, kept, deals = [], [], []
        for i in range(args.matches):
            seats = [BotSeat(make_bot(names[(s + i) % len(names)])) for s in range(4)]
            players = [Player(names[(s + i) % len(names)]) for s in range(4)]
            outcome = referee_match(rules, seats, seed=args.seed + i, players=players)
            size, packed = stored(outcome.replay)
            raw.append(size)
            kept.append(packed)
            deals.append(len(outcome.replay["deals"]))
        print(f"{preset:<12} {statistics.median(deals):>6.0f} {statistics.median(raw):>12,.0f} "
              f"{statistics.median(kept):>14,.0f} {percentile(kept, 0.95):>11,} "
              f"{statistics.median(raw) / statistics.median(kept):>6.1f}")


if __name__ == "__main__":
    main()
