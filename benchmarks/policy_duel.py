"""The card model's likeliest card against the shrewd rollout policy, with no search.

    python benchmarks/policy_duel.py --rules pollack --pairs 4000 --seed 1000
    python benchmarks/policy_duel.py --rules pollack --pairs 4000 --temperature 0.5

Duplicate pairs of seeded matches played on the engine directly: one team plays every card by
``model.card_chances`` (its likeliest card, or with ``--temperature T`` a card drawn with chance
proportional to the model's chance to the power 1/T), the other by ``policy.play_action``
(shrewd, with the public voids); both meld, claim and announce as the policy does. Prints the
model team's score rate over the pairs (draws ½) with its 95% interval: how good a player the
model of the expert's play is on its own (``docs/expert-log.md``, round 26).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.actions import PLAY_LIMIT
from engine.bots.expert import model
from engine.bots.expert.policy import play_action, policy_action, with_flags
from engine.bots.expert.search import _with_void
from engine.rules import RuleSet, rules_for
from engine.state import OVER, PLAY_PHASE, State, new_match


def model_action(
    state: State, voids: list[int], rng: random.Random, temperature: float, rules: RuleSet
) -> int:
    """The policy's action with its card replaced by the model's where there is a choice; a
    card of the model's own goes with a politaine announcement where the policy's would."""
    action = play_action(state, voids, True)
    if action >= PLAY_LIMIT:  # the claim
        return action
    cards = model.legal_cards(state)
    if len(cards) < 2:
        return action
    chances = model.card_chances(state, voids, cards, model.weights_for(rules.melds))
    if temperature <= 0:
        card = cards[chances.index(max(chances))]
    else:
        card = rng.choices(cards, [p ** (1 / temperature) for p in chances])[0]
    if card == action & 31:
        return action
    return with_flags(state, card, tuple(state.legal()))


def play(rules: RuleSet, seed: int, model_team: int, temperature: float) -> float:
    """One match: the model team's score (1, ½ or 0)."""
    rng = random.Random(seed)
    state = new_match(rules, seed)
    deal, voids = -1, [0, 0, 0, 0]
    while state[0] != OVER:
        if state[4].deal != deal:
            deal, voids = state[4].deal, [0, 0, 0, 0]
        seat = state[1]
        if state[0] != PLAY_PHASE:
            action = policy_action(state, voids, True)
        elif seat & 1 == model_team:
            action = model_action(state, voids, rng, temperature, rules)
        else:
            action = play_action(state, voids, True)
        voids = _with_void(voids, state, action)
        state = state.apply(action)
    winner = state[4].result.winner
    return 0.5 if winner is None else 1.0 if winner == model_team else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="pollack")
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=0.0, help="0: the likeliest card")
    args = parser.parse_args(argv)
    rules = rules_for(args.rules)
    scores = [
        (play(rules, seed, 0, args.temperature) + play(rules, seed, 1, args.temperature)) / 2
        for seed in range(args.seed, args.seed + args.pairs)
    ]
    n = len(scores)
    half_width = 1.96 * statistics.stdev(scores) / math.sqrt(n) if n > 1 else 0.0
    print(
        f"{args.rules}: the card model (temperature {args.temperature}) against the shrewd "
        f"policy: {100 * statistics.fmean(scores):.1f}% ± {100 * half_width:.1f} over {n} pairs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
