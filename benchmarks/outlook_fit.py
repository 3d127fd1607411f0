"""The match outlook learned from the expert's own games, beside the model it replaces.

    nice -n 19 python benchmarks/outlook_fit.py --seeds 200001-203178,210001-213127 --procs 2

Plays self-play matches of ``--bot`` (four seats, ``pollack`` by default) and reads, from each
replay, every deal start: the totals of the team that leads the deal and of the other, and
which team won the match. Prints:

- the first deals' outcomes by who leads them: the leading team's card points (k = 0..11) and
  each team's meld points, as ``outlook.py``'s ``LEARNED_*`` constants take them;
- the race to the target fitted on the odd seeds' deal starts: ``RACE_LEAD`` and
  ``RACE_MARGIN`` by a grid of log loss;
- the log loss of the match's outcome from the deal starts of the even seeds (held out), nats a
  deal start, for the model table the expert uses by default (the reference), the learned
  outcomes with the higher total winning a race, with the fitted race, and with the race as
  ``outlook.py`` sets it.

A proxy for the outlook's worth in play: duplicate pairs decide (``bot_strength.py``).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot_strength import bot_class, parse_bot

import engine.bots.expert.outlook as outlook
from engine.bots import BotSeat
from engine.referee import Player, referee_match
from engine.rules import ClaimOut, rules_for

#: The grid the race is fitted on.
LEADS = (0.0, 0.4, 0.8, 1.2, 1.6)
MARGINS = (0.2, 0.4, 0.8, 1.6, 4.0)
#: (seed, [(leading total, other total, leading team's deal-1 card points or None, its melds,
#: the other's melds, leader won the match: 1, 0 or None for a draw)])
Match = tuple[int, list[tuple[int, int, int | None, int | None, int | None, float | None]]]


def play(job: tuple[str, str, int]) -> Match:
    """One self-play match, read into its deal starts."""
    rules_name, bot, seed = job
    name, options = parse_bot(bot)
    cls = bot_class(name)
    seats = [BotSeat(cls(**options)) for _ in range(4)]
    who = [Player(bot)] * 4
    outcome = referee_match(
        rules_for(rules_name), seats, seed=seed, match_id=f"s{seed}", players=who
    )
    replay = outcome.replay
    winner = replay["result"]["winner"]
    starts = []
    before = [0, 0]
    for deal in replay["deals"]:
        lead = (deal["dealer"] + 1) % 2
        won = None if winner is None else float(winner == lead)
        first = deal["number"] == 1
        starts.append((
            before[lead], before[1 - lead],
            deal["points"][lead] if first and deal["end"] is None else None,
            deal["melds"][lead] if first else None,
            deal["melds"][1 - lead] if first else None,
            won,
        ))  # fmt: skip
        before = deal["score"]
    return seed, starts


def seed_ranges(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def log_loss(table: np.ndarray, starts: dict[tuple[int, int], list[float]]) -> float:
    total = count = 0.0
    for (a, b), outcomes in starts.items():
        p = min(max(float(table[a, b]), 1e-4), 1 - 1e-4)
        wins = sum(outcomes)
        total -= wins * math.log(p) + (len(outcomes) - wins) * math.log(1 - p)
        count += len(outcomes)
    return total / count


def lead_table(target: int, lead: float, margin: float) -> np.ndarray:
    """The learned table for the deal's leader with the race set to ``lead``, ``margin``."""
    outlook.RACE_LEAD, outlook.RACE_MARGIN = lead, margin
    outlook._lead_tables.cache_clear()
    return outlook._lead_tables(target, False, True)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="pollack")
    # expert-2 as it was when outlook.py's constants were fitted (5 deals in pollack since).
    parser.add_argument("--bot", default="expert-2:worlds=6")
    parser.add_argument("--seeds", default="200001-202000")
    parser.add_argument("--procs", type=int, default=2)
    args = parser.parse_args(argv)
    rules = rules_for(args.rules)
    if not rules.melds or rules.claim_out is ClaimOut.OFF:
        raise SystemExit("the learned outlook is for a rule set with melds and claims (pollack)")
    jobs = [(args.rules, args.bot, seed) for seed in seed_ranges(args.seeds)]
    with multiprocessing.Pool(args.procs) as pool:
        matches = pool.map(play, jobs, chunksize=8)
    points, melds_lead, melds_other = Counter(), Counter(), Counter()
    halves: list[dict[tuple[int, int], list[float]]] = [defaultdict(list), defaultdict(list)]
    target = rules.target
    for seed, starts in matches:
        _, _, k, m_lead, m_other, _ = starts[0]
        if k is not None:
            points[k] += 1
        melds_lead[m_lead] += 1
        melds_other[m_other] += 1
        for a, b, *_, won in starts:
            if won is not None and a < target and b < target:
                halves[seed % 2][(a, b)].append(won)
    n, first = sum(melds_lead.values()), sum(points.values())
    print(f"{args.rules}, {args.bot} self-play: {len(matches)} matches")
    print("first deals, the leading team's card points k = 0..11:",
          tuple(round(points[k] / first, 4) for k in range(12)))  # fmt: skip
    for team, melds in (("leading team", melds_lead), ("other team", melds_other)):
        print(f"their melds, {team}:", {m: round(c / n, 4) for m, c in sorted(melds.items())})
    fit, held = halves[1], halves[0]
    shipped = (outlook.RACE_LEAD, outlook.RACE_MARGIN)
    grid = [(lead, margin) for lead in LEADS for margin in MARGINS]
    lead, margin = min(grid, key=lambda g: log_loss(lead_table(target, *g), fit))
    model = outlook._table(target, False, True)
    learned_order = lead_table(target, 0.0, 30.0)  # the higher total wins a race
    learned = lead_table(target, lead, margin)
    held_n = sum(len(v) for v in held.values())
    print(f"race fitted on the odd seeds: RACE_LEAD {lead}, RACE_MARGIN {margin}")
    print(f"log loss of the match's outcome, even seeds ({held_n} deal starts), nats:")
    print(f"  model table (reference)            {log_loss(model, held):.5f}")
    print(f"  learned outcomes, higher total     {log_loss(learned_order, held):.5f}")
    print(f"  learned outcomes, race by the lead {log_loss(learned, held):.5f}")
    as_shipped = log_loss(lead_table(target, *shipped), held)
    print(f"  the same, race as in outlook.py {shipped}: {as_shipped:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
