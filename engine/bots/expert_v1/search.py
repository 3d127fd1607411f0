"""Perfect-information Monte Carlo over sampled deals, valued by the match outlook.

For each sampled deal (a "world"), every candidate action is applied and the deal is finished
by the rollout policy for all four seats; once few cards are left the rest of the deal is solved
exactly instead (alpha-beta over the four hands). A finished deal is worth
``Outlook.win_chance`` of the new totals to the searching team (1 or 0 if the match ended), so the
search plays to win the match. All candidates see the same worlds (common random numbers), and the
action with the best mean wins; ties go to the policy's choice.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from engine.actions import PLAY_LIMIT
from engine.bots.expert.outlook import Outlook
from engine.state import OVER, PLAY_PHASE, State

from .policy import policy_action, with_flags

#: Solve the deal exactly when a candidate leaves at most this many cards in the four hands.
EXACT_CARDS = 12


class Evaluator:
    """Values of finished deals and of actions in one world, for one team."""

    def __init__(
        self, outlook: Outlook, team: int, deal: int, exact_cards: int = EXACT_CARDS
    ) -> None:
        self.outlook = outlook
        self.team = team
        self.deal = deal
        self.exact_cards = exact_cards

    def leaf(self, state: State) -> float:
        """Worth of a state after the deal ended (the match over, or the next deal started)."""
        table = state[4]
        team = self.team
        if state[0] == OVER:
            winner = table.result.winner
            return 0.5 if winner is None else 1.0 if winner == team else 0.0
        score = table.score
        return self.outlook.win_chance(score[team], score[1 - team])

    def rollout(self, state: State) -> float:
        """Finish the deal: exactly if it is small enough already, else with the policy."""
        if state[2].bit_count() <= self.exact_cards:
            return self.solve(state, -1.0, 2.0)
        deal = self.deal
        apply = State.apply
        while state[0] != OVER and state[4][2] == deal:
            state = apply(state, policy_action(state))
        return self.leaf(state)

    def solve(self, state: State, alpha: float, beta: float) -> float:
        """Alpha-beta value of the deal's end: ``team``'s side maximises, the other minimises."""
        if state[0] == OVER or state[4][2] != self.deal:
            return self.leaf(state)
        legal = state.legal()
        first = policy_action(state)
        if len(legal) == 1 or first >= PLAY_LIMIT or state[0] != PLAY_PHASE:
            return self.solve(state.apply(first), alpha, beta)  # forced, a claim, or a meld
        moves = [first]
        for a in legal:
            if a < 32:
                a = with_flags(state, a, legal)
                if a != first:
                    moves.append(a)
        if state[1] & 1 == self.team:
            value = -1.0
            for a in moves:
                value = max(value, self.solve(state.apply(a), alpha, beta))
                if value >= beta:
                    return value
                alpha = max(alpha, value)
            return value
        value = 2.0
        for a in moves:
            value = min(value, self.solve(state.apply(a), alpha, beta))
            if value <= alpha:
                return value
            beta = min(beta, value)
        return value


def pimc(
    candidates: list[int],
    worlds: Callable[[], tuple[State, float]],
    evaluator: Evaluator,
    *,
    max_worlds: int,
    deadline: float,
    fallback: int,
    prior: float = 0.0,
) -> tuple[int, dict[int, float], int]:
    """The best candidate by weighted mean over up to ``max_worlds`` worlds drawn by ``deadline``.

    ``prior / sqrt(worlds)`` is added to the mean of ``fallback`` (the policy's choice): sampling
    noise, which shrinks at that rate, alone does not move the search off it.
    Returns (action, mean value per action, worlds used); at least one world is always used.
    """
    totals = dict.fromkeys(candidates, 0.0)
    used = 0
    weights = 0.0
    while used < max_worlds and (used == 0 or time.thread_time() < deadline):
        world, weight = worlds()
        for a in candidates:
            totals[a] += weight * evaluator.rollout(world.apply(a))
        weights += weight
        used += 1
    means = {a: v / weights for a, v in totals.items()}
    if fallback in means:  # the policy's own choice: leave it only on clear evidence
        means[fallback] += prior / math.sqrt(used)
    best = max(means.values())
    top = [a for a in candidates if means[a] >= best - 1e-9]
    return (fallback if fallback in top else top[0]), means, used
