"""Where not seeing the partner's hand costs the expert, decision by decision.

    nice -n 19 python benchmarks/expert_regret.py --rules quatre-sept --matches 10 --worlds 528
    nice -n 19 python benchmarks/expert_regret.py --rules pollack --matches 12 --worlds 256

Seat 0 of seeded matches (the expert and its partner at 64 deals against two ``expert-v1``)
records every card decision with a choice. Each position is then decided afresh three ways,
with the same deals budget and RNG: by the honest expert, by the expert told its partner's hand
(``expert_ceiling.py``'s ``oracle-partner``), and by the expert told only which suits' masters
its partner holds (the strongest card of each suit still out, where we do not hold it: the four
bits an honest signal convention could carry). A decision's **regret** is how much worse, in
match win chance as the partner oracle's own search values its candidates, the other's choice
is than the oracle's; it is 0 where they agree. Regret read off one search's values carries its
sampling noise (a choice within the noise counts as a small regret), so compare sums, not single
positions.

Prints, per position in the trick (0 leads) and per cards in hand, the positions, how often the
honest choice differs from the partner oracle's, and the summed regret of the honest choice and
of the masters-only choice. Measuring device only: the oracles read the deal from the match seed.
"""

from __future__ import annotations

import argparse
import collections
import copy
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from expert_ceiling import MastersOracleExpert, PartnerOracleExpert
from expert_cost import Recorder

import engine.bots.expert as expert_module
from engine.actions import parse_action
from engine.bots import BotSeat, make_bot
from engine.bots.expert import ExpertBot
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for

SLOW = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)


_means: dict[int, float] = {}
_pimc = expert_module.pimc


def _spy(*args, **kwargs):
    """``pimc`` keeping the candidates' values of the last decision."""
    found = _pimc(*args, **kwargs)
    _means.clear()
    _means.update(found[1])
    return found


expert_module.pimc = _spy


def decide(cls: type, hello: dict, message: dict, number: int, worlds: int, exact: int):
    """(action, candidate values) of one decision from scratch."""
    bot = cls(worlds=worlds, exact=exact, move_ms=100_000)
    bot.hello(copy.deepcopy(hello))
    bot.rng.seed(f"position {number}")
    _means.clear()
    return bot.act(copy.deepcopy(message)), dict(_means)


def regret(choice: str, best: str, values: dict[int, float]) -> float:
    """How much worse ``choice`` is than ``best`` by ``values`` (an equivalent card's value
    stands for a card the search pruned)."""
    if choice == best:
        return 0.0
    mine, top = parse_action(choice), parse_action(best)
    if mine not in values:
        same = [a for a in values if (a & 31) >> 3 == (mine & 31) >> 3]
        if not same:
            return 0.0
        mine = min(same, key=lambda a: abs((a & 31) - (mine & 31)))
    return values.get(top, 0.0) - values[mine]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="quatre-sept")
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=528)
    args = parser.parse_args(argv)
    rules = rules_for(args.rules)
    exact = 4 if rules.melds else 16
    rows: dict[Any, list[float]] = collections.defaultdict(lambda: [0, 0, 0.0, 0.0])
    for seed in range(args.seed, args.seed + args.matches):
        found: list = []

        def expert() -> ExpertBot:
            return ExpertBot(worlds=64, exact=exact, move_ms=10_000)

        seats = [
            BotSeat(Recorder(expert(), found)),
            BotSeat(make_bot("expert-v1")),
            BotSeat(expert()),
            BotSeat(make_bot("expert-v1")),
        ]
        referee_match(rules, seats, seed=seed, match_id=f"s{seed}-ab", clock=SLOW)
        for number, (hello, message) in enumerate(found):
            honest, _ = decide(ExpertBot, hello, message, number, args.worlds, exact)
            best, values = decide(PartnerOracleExpert, hello, message, number, args.worlds, exact)
            masters, _ = decide(MastersOracleExpert, hello, message, number, args.worlds, exact)
            place = len(message["state"]["trick"]["cards"])
            size = len(message["state"]["hand"])
            for key in ((place, size), (place,), ()):
                row = rows[key]
                row[0] += 1
                row[1] += honest != best
                row[2] += regret(honest, best, values)
                row[3] += regret(masters, best, values)
        print(f"seed {seed}: {len(found)} positions", flush=True)
    print("place in trick, cards in hand | positions | honest differs | regret honest | masters")
    for key in sorted(rows, key=lambda k: (len(k), k)):
        n, differ, honest_regret, masters_regret = rows[key]
        label = "all" if not key else ", ".join(map(str, key))
        print(
            f"{label:>6} | {n:4d} | {differ:4d} ({differ / n:4.0%}) | {honest_regret:6.3f}"
            f" | {masters_regret:6.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
