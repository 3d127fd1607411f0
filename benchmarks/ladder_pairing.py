"""Ladder pairing, simulated: information-driven pairing (``arena.rating.pairing``) against uniform
random pairing, on the same boards of versions with known true ratings.

Each run: ``--versions`` versions (true Elo drawn from N(1500, ``--spread``)), owners assigned in
turn to ``--owners`` owners, all new. Each step plays ``--batch`` duplicate pairs (the ladder's
queue depth), chosen by the method, with ``arena.rating.simulate.duplicate_pairs`` (deal luck,
draws), then refits the board (the platform's fit: cluster-robust intervals). A run stops when
every version's 95% interval is within ±``--target`` Elo, or at ``--budget`` matches.

Prints per seed and method: matches to the target, the rank correlation (Spearman) with the
truth at fixed budgets, the intervals' coverage of the truth at the stop; then the medians and the
ratio information / random. Draws the curves (median over seeds of the widest interval and of the
rank correlation against matches played) into ``docs/ladder-simulation.png`` (matplotlib).

Run: ``nice -n 5 .venv/bin/python benchmarks/ladder_pairing.py [--seeds 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.rating import fit_ratings  # noqa: E402
from arena.rating.board import PROVISIONAL_MATCHES  # noqa: E402
from arena.rating.pairing import (  # noqa: E402
    Entrant,
    History,
    belief_from_fit,
    choose_pairings,
)
from arena.rating.simulate import duplicate_pairs, random_pairings  # noqa: E402


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    rx = np.argsort(np.argsort(x))
    ry = np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def run(method: str, seed: int, args: argparse.Namespace) -> dict:
    """One run; returns the curve [(matches, widest ci95, spearman)], the matches to the target
    (None if not reached) and the coverage at the stop."""
    rng = np.random.default_rng(seed)
    n = args.versions
    truth = rng.normal(1500.0, args.spread, n)
    truth += 1500.0 - truth.mean()
    owners = [k % args.owners for k in range(n)]
    play_rng = np.random.default_rng(seed * 7919 + (1 if method == "information" else 2))
    results: list = []
    fit = None
    curve = []
    history = History()
    recent: list[tuple[int, int]] = []
    reached = None
    coverage = None
    cluster = 0
    while len(results) < args.budget:
        if method == "random":
            a, b = random_pairings(n, args.batch, play_rng)
        else:
            belief = belief_from_fit(fit, list(range(n)))
            entrants = []
            for k in range(n):
                if fit is not None and k in fit.ids:
                    x = fit.index(k)
                    prov = bool(fit.games[x] < PROVISIONAL_MATCHES)
                    runaway = bool(fit.perfect[x])
                else:
                    prov, runaway = True, False
                entrants.append(Entrant(k, owners[k], provisional=prov, runaway=runaway))
            chosen = choose_pairings(belief, entrants, args.batch, history=history)
            a = np.array([p.a for p in chosen])
            b = np.array([p.b for p in chosen])
            for p in chosen:
                recent.append((p.a, p.b))
            # Recent window: the last 4 batches per version (a few meetings' memory).
            recent = recent[-4 * n:]
            history = History()
            for x, y in recent:
                history.add(x, y, owners[x], owners[y])
        new = duplicate_pairs(truth, a, b, play_rng)
        results += [r._replace(cluster=cluster + r.cluster) for r in new]
        cluster += len(a)
        fit = fit_ratings(results)
        ci = fit.ci95
        widest = float(ci.max()) if len(fit.ids) == n else float("inf")
        est = np.array([fit.elo[fit.index(k)] if k in fit.ids else 1500.0 for k in range(n)])
        curve.append((len(results), widest, spearman(est, truth)))
        if reached is None and widest <= args.target:
            reached = len(results)
            inside = np.abs(fit.elo - truth[list(fit.ids)]) <= ci
            coverage = float(inside.mean())
            if not args.full:
                break
    return {"curve": curve, "reached": reached, "coverage": coverage}


def at(curve: list, matches: int) -> float:
    """The rank correlation once ``matches`` were played (the first point at or past it)."""
    for played, _, rho in curve:
        if played >= matches:
            return rho
    return curve[-1][2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", type=int, default=50)
    parser.add_argument("--owners", type=int, default=10)
    parser.add_argument("--spread", type=float, default=200.0, help="SD of true Elo")
    parser.add_argument("--batch", type=int, default=8, help="duplicate pairs per step")
    parser.add_argument("--target", type=float, default=50.0)
    parser.add_argument("--budget", type=int, default=40_000, help="matches at most")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--full", action="store_true", help="play the whole budget")
    parser.add_argument("--plot", default=str(ROOT / "docs" / "ladder-simulation.png"))
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"information": [], "random": []}
    print(f"{args.versions} versions, true Elo SD {args.spread:.0f}, {args.owners} owners, "
          f"{args.batch} duplicate pairs per step, target: every 95% interval within "
          f"±{args.target:.0f}")
    print(f"{'seed':>4} {'method':>12} {'matches':>8} {'coverage':>9} "
          f"{'rho@1000':>9} {'rho@3000':>9}")
    for seed in range(args.seeds):
        for method in runs:
            out = run(method, seed, args)
            runs[method].append(out)
            cov = "-" if out["coverage"] is None else f"{out['coverage']:.0%}"
            print(f"{seed:>4} {method:>12} {out['reached'] or '>budget':>8} {cov:>9} "
                  f"{at(out['curve'], 1000):9.3f} {at(out['curve'], 3000):9.3f}", flush=True)
    med = {}
    for method, outs in runs.items():
        reached = [o["reached"] or args.budget for o in outs]
        covs = [o["coverage"] for o in outs if o["coverage"] is not None]
        med[method] = statistics.median(reached)
        print(f"{method:>12}: median matches to ±{args.target:.0f}: {med[method]:.0f}; "
              f"coverage median {statistics.median(covs) if covs else float('nan'):.1%} "
              f"(min {min(covs) if covs else float('nan'):.1%}, "
              f"pooled {np.mean(covs) if covs else float('nan'):.1%}); rank correlation "
              f"median at 1000 matches {statistics.median(at(o['curve'], 1000) for o in outs):.3f},"
              f" at 3000 {statistics.median(at(o['curve'], 3000) for o in outs):.3f}")
    saving = 1 - med["information"] / med["random"]
    print(f"information / random: {med['information'] / med['random']:.2f} "
          f"({saving:.0%} fewer matches; goal >= 30%)")
    if args.plot:
        _plot(runs, args)
    return 0


def _plot(runs: dict[str, list[dict]], args: argparse.Namespace) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing: no plot")
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for method, colour in (("information", "tab:blue"), ("random", "tab:orange")):
        for k, out in enumerate(runs[method]):
            xs = [c[0] for c in out["curve"]]
            left.plot(xs, [min(c[1], 400) for c in out["curve"]], color=colour, alpha=0.6,
                      label=method if k == 0 else None)
            right.plot(xs, [c[2] for c in out["curve"]], color=colour, alpha=0.6,
                       label=method if k == 0 else None)
    left.axhline(args.target, color="grey", linestyle="--", linewidth=1)
    left.set_xlabel("matches played")
    left.set_ylabel("widest 95% interval (± Elo)")
    left.set_ylim(0, 400)
    left.legend()
    right.set_xlabel("matches played")
    right.set_ylabel("rank correlation with the truth")
    right.set_xlim(0, 8000)
    right.set_ylim(0.8, 1.0)
    right.legend()
    fig.suptitle(f"{args.versions} versions, true Elo SD {args.spread:.0f}: "
                 "information-driven vs random pairing (one line per seed)")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=90)
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    sys.exit(main())
