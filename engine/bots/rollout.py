"""``rollout``: pure Monte Carlo rollouts over sampled deals (a panel opponent).

For each decision it draws ``worlds`` deals uniformly among those consistent with the hard facts
(hand sizes, voids, announcements: the frozen ``expert-v1`` view and the shared sampler), tries
every legal card in each, finishes the deal with *uniformly random* legal play for all four
seats, and plays the card with the best mean point margin of the deal (its team's points minus
the other's; a deal that ends the match counts ±100). No heuristics, no soft evidence, no match
valuation: the classic flat Monte Carlo baseline. Fixed choices: meld everything, announce every
poule, demand every redeal, claim when the count reaches the target.

Budget: ``worlds`` (24) deals a decision, capped at 150 ms; the RNG is seeded from match id and
seat, so while the cap does not bind a match replays exactly.
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from engine.actions import CLAIM, action_to_str, parse_action
from engine.rules import rules_from_dict
from engine.state import State

from .expert.sampler import Sampler
from .expert_v1.view import read_view
from .expert_v1.world import ReplayError, Worlds

WORLDS = 24
MOVE_MS = 150.0


class RolloutBot:
    name = "rollout"

    def __init__(self, worlds: int = WORLDS, move_ms: float = MOVE_MS) -> None:
        self.worlds = worlds
        self.move_s = move_ms / 1000
        self.rng = random.Random(0)
        self.seat = 0
        self.rules = None

    def hello(self, message: dict[str, Any]) -> None:
        self.seat = message["seat"]
        self.rules = rules_from_dict(message["rules"])
        self.rng.seed(f"rollout:{message.get('match')}:{self.seat}")

    def notify(self, message: dict[str, Any]) -> None:
        pass

    def act(self, message: dict[str, Any]) -> str:
        legal: list[str] = message["legal"]
        try:
            return self._decide(message, legal)
        except Exception as error:  # never fault
            print(f"rollout: {type(error).__name__}: {error}", file=sys.stderr)
            return legal[0]

    def _decide(self, message: dict[str, Any], legal: list[str]) -> str:
        decision = message["decision"]
        if len(legal) == 1 or decision != "play":
            if decision == "redeal":
                return "redeal" if "redeal" in legal else legal[0]
            return legal[-1] if decision == "poules" else legal[0]
        started = time.thread_time()  # CPU time, as the referee charges
        rules = self.rules
        assert rules is not None
        view = read_view(message["state"], rules.low_lead)
        sampler = Sampler(view, rules, self.rng)
        worlds = Worlds(rules, view, decision)
        first = _build(worlds, sampler)
        codes = [parse_action(a) for a in legal]
        if CLAIM in codes:
            table = first.table
            team = self.seat & 1
            count = table.score[team] + table.taken[team] // 3 + table.melds[team]
            if count >= rules.target:
                return "claim"
            # short of the target: a claim would lose, so the cards are searched as anywhere
            # else (this used to play the action listed before the claim, without a rollout)
        # One candidate per card: with a politaine announcement where legal, never a signal.
        candidates: dict[int, int] = {}
        for code in codes:
            card = code & 31
            plain = code < 256 and not code & (64 | 128)
            if plain and (card not in candidates or code & 32):
                candidates[card] = code
        if len(candidates) == 1:
            return action_to_str(next(iter(candidates.values())))
        totals = dict.fromkeys(candidates.values(), 0.0)
        world = first
        for n in range(self.worlds):
            if n and time.thread_time() - started > self.move_s:
                break
            if n:
                world = _build(worlds, sampler)
            for action in totals:
                totals[action] += self._playout(world.apply(action), world)
        best = max(totals, key=lambda a: (totals[a], -a))
        text = action_to_str(best)
        return text if text in legal else legal[0]

    def _playout(self, state: State, start: State) -> float:
        """Random play to the end of the deal; the team's margin of points in it."""
        deal = start.table.deal
        choice = self.rng.choice
        while not state.is_over and state.table.deal == deal:
            legal = state.legal()
            if legal[-1] == CLAIM:  # playouts play the deal out
                legal = legal[:-1] or legal
            state = state.apply(choice(legal))
        team = self.seat & 1
        if state.is_over:
            winner = state.table.result.winner
            return 0.0 if winner is None else 100.0 if winner == team else -100.0
        before, after = start.table.score, state.table.score
        return (after[team] - before[team]) - (after[1 - team] - before[1 - team])


def _build(worlds: Worlds, sampler: Sampler, tries: int = 20) -> State:
    for _ in range(tries - 1):
        try:
            return worlds.build(sampler.draw())[0]
        except ReplayError:
            continue
    return worlds.build(sampler.draw())[0]
