"""Engine speed against OpenSpiel's Hearts (C++ behind pybind), both driven from Python.

Each round plays random deals to their end through the public API of both engines, choosing
uniformly among the legal actions with the same kind of RNG; OpenSpiel's deals include applying
its chance outcomes (the deal), ours include dealing from the seeded deck. Ours are played as
whole matches (a match is a run of deals; a Hearts game in OpenSpiel is one deal). Rounds alternate
between the two so that noise on a shared machine hits both alike; the figures are medians.

Prints, last, ``engine X decisions/s, openspiel hearts Y decisions/s, ratio R``.
Run: ``.venv/bin/python benchmarks/engine_speed.py [--rounds N] [--deals N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import new_match, rules_for


def engine_round(deals: int, preset: str, seed: int) -> float:
    """Decisions per second over at least ``deals`` random deals, played as whole matches."""
    rules = rules_for(preset)
    rng = random.Random(seed)
    choice = rng.choice
    decisions = played = 0
    match_seed = seed
    started = time.perf_counter()
    while played < deals:
        state = new_match(rules, match_seed)
        while state.to_move >= 0:
            state = state.apply(choice(state.legal()))
            decisions += 1
        played += len(state.history)
        match_seed += 1
    return decisions / (time.perf_counter() - started)


def openspiel_round(deals: int, seed: int) -> float:
    """Decisions per second over ``deals`` random Hearts deals (player decisions only)."""
    import pyspiel

    game = pyspiel.load_game("hearts")
    rng = random.Random(seed)
    choice = rng.choice
    decisions = 0
    started = time.perf_counter()
    for _ in range(deals):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(choice(outcomes)[0])
            else:
                state.apply_action(choice(state.legal_actions()))
                decisions += 1
    return decisions / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--deals", type=int, default=3000)
    parser.add_argument("--preset", default="quatre-sept")
    args = parser.parse_args()
    ours, theirs = [], []
    for r in range(args.rounds):
        ours.append(engine_round(args.deals, args.preset, seed=r * args.deals))
        theirs.append(openspiel_round(args.deals // 2, seed=r))
        print(f"round {r + 1}: engine {ours[-1]:,.0f}/s, openspiel hearts {theirs[-1]:,.0f}/s")
    for preset in ("politaine", "la-poule", "pollack"):
        print(f"{preset}: {engine_round(args.deals // 3, preset, seed=1):,.0f} decisions/s")
    x, y = statistics.median(ours), statistics.median(theirs)
    print(f"engine {x:,.0f} decisions/s, openspiel hearts {y:,.0f} decisions/s, ratio {x / y:.2f}")


if __name__ == "__main__":
    main()
