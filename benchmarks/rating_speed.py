"""Rating fit speed: 1,000 versions over 200,000 matches (100,000 duplicate pairs), from the list
of ``Result`` tuples the platform hands over to the ratings and its cluster-robust covariance.

References printed from the same run, so the figure can be read on a noisy machine: the fit of
half the matches, and a plain numpy pass over the data (pair keys sorted and counted once; the
floor of any fit that aggregates pairs). Rounds alternate; figures are medians.

Prints, last, ``fit 1000 versions / 200000 matches: X s (goal < 2 s)``.
Run: ``.venv/bin/python benchmarks/rating_speed.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.rating import fit_ratings
from arena.rating.simulate import duplicate_pairs, random_pairings

VERSIONS = 1000
MATCHES = 200_000


def numpy_pass(results: list) -> None:
    """Arrays from the tuples, then unique pair keys and their counts: a floor, not a fit."""
    a = np.fromiter((r[0] for r in results), np.int64, len(results))
    b = np.fromiter((r[1] for r in results), np.int64, len(results))
    s = np.fromiter((r[2] for r in results), float, len(results))
    key, inverse = np.unique(np.minimum(a, b) * VERSIONS + np.maximum(a, b), return_inverse=True)
    np.bincount(inverse, s, len(key))


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(20240601)
    elo = rng.normal(1500.0, 200.0, VERSIONS)
    a, b = random_pairings(VERSIONS, MATCHES // 2, rng)
    full = duplicate_pairs(elo, a, b, rng)
    half = full[: MATCHES // 2]
    fit = fit_ratings(full)
    err = fit.elo - (elo - elo.mean() + 1500.0)[list(fit.ids)]
    print(
        f"{len(fit.ids)} versions, {len(full)} matches: {fit.iterations} Newton iterations, "
        f"rms error {np.sqrt(np.mean(err**2)):.1f} Elo, median ci95 ±{np.median(fit.ci95):.1f}"
    )
    times: dict[str, list[float]] = {"full": [], "half": [], "numpy": []}
    for _ in range(args.rounds):
        times["numpy"].append(timed(numpy_pass, full))
        times["half"].append(timed(fit_ratings, half))
        times["full"].append(timed(fit_ratings, full))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"reference: numpy pass over {MATCHES} matches: {med['numpy']:.3f} s")
    print(f"reference: fit {VERSIONS} versions / {MATCHES // 2} matches: {med['half']:.3f} s")
    print(f"fit {VERSIONS} versions / {MATCHES} matches: {med['full']:.3f} s (goal < 2 s)")


if __name__ == "__main__":
    main()
