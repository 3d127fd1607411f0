"""Instructions per engine decision under callgrind: this checkout against a reference engine.

Noise-free beside ``engine_speed.py``'s wall-clock medians: each side plays the same seeded random
matches of a preset under ``valgrind --tool=callgrind`` (PYTHONHASHSEED=0), once with N matches
and once with none; the difference over the decisions played is the engine's cost per decision.
The reference is any other tree holding ``engine/``, e.g. main's:
``mkdir /tmp/ref && git archive main engine | tar -x -C /tmp/ref``.

Run: ``.venv/bin/python benchmarks/engine_instructions.py --reference /tmp/ref``
(``--preset quatre-sept``, ``--matches 100`` by default).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORK = """
import random, sys
sys.path.insert(0, sys.argv[1])
from engine import new_match, rules_for
rules, rng, decisions = rules_for(sys.argv[2]), random.Random(1), 0
for seed in range(int(sys.argv[3])):
    state = new_match(rules, seed)
    while state.to_move >= 0:
        state = state.apply(rng.choice(state.legal()))
        decisions += 1
print(decisions)
"""


def instructions(tree: Path, preset: str, matches: int) -> tuple[int, int]:
    """(instructions, decisions) of ``matches`` random matches with the engine in ``tree``."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp, "work.py")
        script.write_text(WORK)
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
             sys.executable, str(script), str(tree), preset, str(matches)],
            capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )  # fmt: skip
    collected = int(re.search(r"Collected : (\d+)", done.stderr).group(1))
    return collected, int(done.stdout.strip())


def per_decision(tree: Path, preset: str, matches: int) -> tuple[float, int]:
    base, _ = instructions(tree, preset, 0)
    full, decisions = instructions(tree, preset, matches)
    return (full - base) / decisions, decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--preset", default="quatre-sept")
    parser.add_argument("--matches", type=int, default=100)
    args = parser.parse_args()
    ref, decisions = per_decision(args.reference, args.preset, args.matches)
    ours, _ = per_decision(ROOT, args.preset, args.matches)
    print(
        f"{args.preset}, {decisions} decisions: reference {ref:,.0f} instructions/decision, "
        f"this checkout {ours:,.0f}, ratio {ours / ref:.3f}"
    )


if __name__ == "__main__":
    main()
