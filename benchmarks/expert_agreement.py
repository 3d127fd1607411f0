"""How often the rollout policy plays the card the expert's search chooses, per policy variant.

    nice -n 19 python benchmarks/expert_agreement.py --rules quatre-sept --matches 10
    nice -n 19 python benchmarks/expert_agreement.py --rules pollack --patience 0,8,7,6,5

Two experts at their default budget (seats 0 and 2) play seeded matches against two
``expert-v1``. At every card decision they search, the shrewd policy's card in the decision's
first sampled deal (the card the search's prior favours) is computed for each ``--patience``
value (0: the shipped policy) and compared with the card the search chose. The rollouts model
every seat's later play with this policy, so where it rarely plays what the search would, the
rollouts model the players badly there. Prints the agreement per place in the trick (0 leads),
and for leads per cards in hand. A proxy only: a policy closer to the search is not by that
alone a better rollout policy; duplicate pairs decide.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine.bots.expert as expert_module
from engine.bots import BotSeat, make_bot
from engine.bots.expert import ExpertBot
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for

SLOW = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)


class Watched(ExpertBot):
    """The expert, noting for each searched decision the policy's cards and the search's."""

    variants: tuple[int, ...] = (0,)
    #: (policy's card per variant, search's card, place in the trick, cards in hand)
    seen: list[tuple[dict[int, int], int, int, int]] = []

    def act(self, message: dict[str, Any]) -> str:
        self._policy: dict[int, int] | None = None
        self._chosen: int | None = None
        _current[:] = [self]
        action = super().act(message)
        if self._policy is not None and self._chosen is not None:
            state = message["state"]
            place, size = len(state["trick"]["cards"]), len(state["hand"])
            self.seen.append((self._policy, self._chosen, place, size))
        return action


_policy_action = expert_module.policy_action
_pimc = expert_module.pimc
_current: list[Watched] = []


def _watch_policy(state, voids=None, shrewd=False, patience=0):
    bot = _current[0]
    bot._policy = {k: _policy_action(state, voids, shrewd, k) & 31 for k in Watched.variants}
    return _policy_action(state, voids, shrewd, patience)


def _watch_search(*args, **kwargs):
    found = _pimc(*args, **kwargs)
    _current[0]._chosen = found[0] & 31
    return found


expert_module.policy_action = _watch_policy
expert_module.pimc = _watch_search


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="quatre-sept")
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--seed", type=int, default=201)
    parser.add_argument("--patience", default="0,8,7,6", help="policy variants to compare")
    args = parser.parse_args(argv)
    Watched.variants = tuple(int(v) for v in args.patience.split(","))
    rules = rules_for(args.rules)
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for seed in range(args.seed, args.seed + args.matches):
        Watched.seen = []
        seats = [
            BotSeat(Watched()),
            BotSeat(make_bot("expert-v1")),
            BotSeat(Watched()),
            BotSeat(make_bot("expert-v1")),
        ]
        referee_match(rules, seats, seed=seed, match_id=f"s{seed}-ab", clock=SLOW)
        for policy, chosen, place, size in Watched.seen:
            keys = [f"place {place}"] + ([f"lead, {size} cards"] if place == 0 else [])
            for key in keys:
                counts[key]["n"] += 1
                for k in Watched.variants:
                    counts[key][k] += policy[k] == chosen
        print(f"seed {seed}: {len(Watched.seen)} decisions", flush=True)
    print("where | decisions | agreement per patience " + " ".join(map(str, Watched.variants)))
    for key in sorted(counts):
        row = counts[key]
        shares = " ".join(f"{row[k] / row['n']:.2f}" for k in Watched.variants)
        print(f"{key:>15} | {row['n']:4d} | {shares}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
