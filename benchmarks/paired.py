"""The paired difference between two ``bot_strength.py`` runs over the same seeds.

    python benchmarks/paired.py try.log baseline.log

Each log is what ``bot_strength.py`` printed (its ``seed N: score`` lines). Only the seeds both
runs finished count. Prints both score rates over those seeds, the mean per-seed difference of
the first from the second in points with its 95% interval (mean ± 1.96 standard errors), and how
many pairs differ: the finer instrument when two versions of a bot meet the same opponent.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path

_LINE = re.compile(r"^seed (\d+): ([01](?:\.5|\.0)?)\s*$")


def pair_scores(path: Path) -> dict[int, float]:
    """Seed -> the first bot's pair score (0, ½ or 1) as printed by ``bot_strength.py``."""
    return scores_in(path.read_text())


def scores_in(text: str) -> dict[int, float]:
    """Seed -> pair score of each ``seed N: score`` line of ``text``."""
    scores: dict[int, float] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            scores[int(match[1])] = float(match[2])
    return scores


def paired(first: dict[int, float], second: dict[int, float]) -> dict[str, float]:
    """Rates and the paired difference (in points of score rate) over the seeds both hold."""
    seeds = sorted(first.keys() & second.keys())
    if not seeds:
        raise ValueError("the two runs share no seed")
    diffs = [first[s] - second[s] for s in seeds]
    n = len(diffs)
    spread = statistics.stdev(diffs) if n > 1 else 0.0
    return {
        "pairs": n,
        "first": 100 * statistics.fmean(first[s] for s in seeds),
        "second": 100 * statistics.fmean(second[s] for s in seeds),
        "difference": 100 * statistics.fmean(diffs),
        "half_width": 100 * 1.96 * spread / math.sqrt(n),
        "differ": sum(1 for d in diffs if d),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args(argv)
    result = paired(pair_scores(args.first), pair_scores(args.second))
    print(
        f"{result['pairs']} pairs: {result['first']:.1f}% against {result['second']:.1f}%, "
        f"difference {result['difference']:+.1f} ± {result['half_width']:.1f} points "
        f"({result['differ']} pairs differ)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
