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
import random
import time
from collections.abc import Callable

from engine.actions import CLAIM, PLAY_LIMIT
from engine.cards import SUIT_MASKS
from engine.state import OVER, PLAY_PHASE, TRICKS_PER_DEAL, State, Table

from .ending import deal_end, last_trick_end, last_trick_forced
from .native import NativeValues
from .outlook import Outlook
from .policy import play_action, policy_action, solver_moves

#: Solve the deal exactly when a candidate leaves at most this many cards in the four hands.
EXACT_CARDS = 12
_DEAL, _TRICKS = Table._fields.index("deal"), Table._fields.index("tricks")
_LAST = TRICKS_PER_DEAL - 1


class Evaluator:
    """Values of finished deals and of actions in one world, for one team.

    ``voids``: the public voids at the decision (``View.voids``); with them the rollout policy
    plays carefully and keeps the voids up to date as the rollout goes; ``None`` rolls out with
    the ``greedy`` policy (the first expert's). ``eps``: the chance that a careful rollout
    plays a uniformly random legal card instead (from ``rng``), against the policy's bias.
    """

    def __init__(
        self,
        outlook: Outlook,
        team: int,
        deal: int,
        exact_cards: int = EXACT_CARDS,
        voids: list[int] | None = None,
        eps: float = 0.0,
        rng: random.Random | None = None,
        shrewd: bool = False,
        smooth: bool = False,
        patience: int = 0,
        race: int = 0,
    ) -> None:
        self.shrewd = shrewd
        #: Shrewd rollouts: a follower contests a trick for a claim or a meld (``race_cards``).
        self.race = race
        #: Shrewd rollouts: a leader with at least this many cards keeps its masters (0: never).
        self.patience = patience
        self.smooth = smooth
        self.eps = eps
        self.rng = rng or random.Random(0)
        self.outlook = outlook
        self.team = team
        self.deal = deal
        self.exact_cards = exact_cards
        self.voids = voids
        #: The same values in C (``native.py``), where a compiler and the options allow.
        self.native: NativeValues | None = None

    def values(self, world: State, actions: list[int]) -> list[float]:
        """``value`` of each of ``actions`` in ``world`` (in C where ``native`` is set)."""
        if self.native is not None:
            return self.native.values(world, actions)
        return [self.value(world, a) for a in actions]

    def value(self, world: State, action: int) -> float:
        """Worth of taking ``action`` in ``world``: the rest of the deal rolled out or solved."""
        voids = self.voids
        if voids is not None:
            voids = _with_void(list(voids), world, action)
        return self.rollout(world.apply(action), voids)

    def leaf(self, state: State) -> float:
        """Worth of a state after the deal ended (the match over, or the next deal started)."""
        table = state[4]
        team = self.team
        if state[0] == OVER:
            winner = table.result.winner
            return 0.5 if winner is None else 1.0 if winner == team else 0.0
        score = table.score
        mine, theirs = score[team], score[1 - team]
        chance = self.outlook.win_chance(mine, theirs)
        if self.smooth and table.history and table.history[-1].number == self.deal:
            # The thirds short of the next card point count pro rata (a third of a point's
            # worth each): the deal's value moves with every third, not only at multiples of 3.
            thirds = table.history[-1].thirds
            up, down = thirds[team] % 3, thirds[1 - team] % 3
            win_chance = self.outlook.win_chance
            if up:
                chance += up / 3 * (win_chance(mine + 1, theirs) - win_chance(mine, theirs))
            if down:
                chance += down / 3 * (win_chance(mine, theirs + 1) - win_chance(mine, theirs))
        return chance

    def ended(self, state: State, card: int | None = None) -> float:
        """``leaf`` of ``state.apply(card)`` where ``card`` ends the deal, or (no ``card``) of
        the deal's forced end (``ending.py``)."""
        over, winner, score = last_trick_end(state) if card is None else deal_end(state, card)
        team = self.team
        if over:
            return 0.5 if winner is None else 1.0 if winner == team else 0.0
        return self.outlook.win_chance(score[team], score[1 - team])

    def rollout(self, state: State, voids: list[int] | None = None) -> float:
        """Finish the deal: exactly if it is small enough already, else with the policy."""
        if state[2].bit_count() <= self.exact_cards:
            return self.solve(state, -1.0, 2.0)
        deal = self.deal
        apply = State.apply
        quick_end = not self.smooth  # ``smooth`` reads the finished deal's record
        if voids is None:
            while state[0] != OVER and state[4].deal == deal:
                state = apply(state, policy_action(state))
            return self.leaf(state)
        rng = self.rng
        eps = self.eps
        shrewd = self.shrewd
        patience = self.patience
        race = self.race
        forced_end = quick_end and not eps  # a random move draws from the RNG: play it
        while True:
            phase = state[0]
            if phase == OVER or state[4][_DEAL] != deal:
                return self.leaf(state)
            trick = state[3]
            last = quick_end and len(state[4][_TRICKS]) == _LAST
            if last and forced_end and phase == PLAY_PHASE and last_trick_forced(state):
                return self.ended(state)
            last = last and len(trick) == 3
            if phase != PLAY_PHASE:
                action = policy_action(state, voids, shrewd, patience, race)
            elif eps and rng.random() < eps:
                legal = state.legal()
                action = legal[rng.randrange(len(legal))]
                if action == CLAIM:
                    action = legal[0]
            else:
                action = play_action(state, voids, shrewd, patience, race)
            if last and action < 32:
                return self.ended(state, action)
            if trick and action < PLAY_LIMIT and (action ^ trick[0]) & 24:
                voids[state[1]] |= SUIT_MASKS[trick[0] >> 3]
            state = apply(state, action)

    def solve(self, state: State, alpha: float, beta: float) -> float:
        """Alpha-beta value of the deal's end: ``team``'s side maximises, the other minimises."""
        phase = state[0]
        if phase == OVER or state[4].deal != self.deal:
            return self.leaf(state)
        if phase != PLAY_PHASE:  # a meld or the like: the policy's choice
            return self.solve(state.apply(policy_action(state)), alpha, beta)
        if len(state[4][_TRICKS]) == _LAST and not self.smooth and last_trick_forced(state):
            return self.ended(state)
        moves = solver_moves(state)
        if len(moves) == 1:  # forced, or the claim
            move = moves[0]
            # The deal's last card: read its end, deal nothing (``smooth`` reads the record).
            last = move < 32 and len(state[3]) == 3 and len(state[4][_TRICKS]) == _LAST
            if last and not self.smooth:
                return self.ended(state, move)
            return self.solve(state.apply(move), alpha, beta)
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
    adaptive: bool = True,
) -> tuple[int, dict[int, float], int]:
    """The best candidate by weighted mean over the worlds drawn by ``deadline`` (this thread's
    CPU time, ``time.thread_time``: waiting for a core costs no world).

    ``prior / sqrt(worlds)`` is added to the mean of ``fallback`` (the policy's choice): sampling
    noise, which shrinks at that rate, alone does not move the search off it.

    Effort (``adaptive``): after half of ``max_worlds`` the search stops if the leader's margin
    over the runner-up exceeds twice its standard error (paired over the shared worlds, in win
    chance: so a decision that moves the match little is settled quickly); otherwise it goes on
    up to 1.5 × ``max_worlds``, the extra going to close decisions with much at stake. Without
    ``adaptive``, exactly ``max_worlds`` (the first expert's rule).
    Returns (action, mean value per action, worlds used); at least one world is always used.
    """
    totals = dict.fromkeys(candidates, 0.0)
    rows: list[tuple[float, list[float]]] = []
    used = 0
    weights = 0.0
    check = max(2, max_worlds // 2) if adaptive else max_worlds
    limit = max_worlds + max_worlds // 2 if adaptive else max_worlds
    while used < limit and (used == 0 or time.thread_time() < deadline):
        if used == check and used >= 4 and _settled(candidates, rows, totals, weights):
            break
        world, weight = worlds()
        values = evaluator.values(world, candidates)
        for a, v in zip(candidates, values, strict=True):
            totals[a] += weight * v
        rows.append((weight, values))
        weights += weight
        used += 1
    means = {a: v / weights for a, v in totals.items()}
    if fallback in means:  # the policy's own choice: leave it only on clear evidence
        means[fallback] += prior / math.sqrt(used)
    best = max(means.values())
    top = [a for a in candidates if means[a] >= best - 1e-9]
    return (fallback if fallback in top else top[0]), means, used


def _settled(
    candidates: list[int], rows: list[tuple[float, list[float]]], totals: dict, weights: float
) -> bool:
    """The leader beats the runner-up by more than twice the (weighted, paired) standard error."""
    if weights <= 0:
        return True
    order = sorted(range(len(candidates)), key=lambda i: -totals[candidates[i]])
    i, j = order[0], order[1]
    diffs = [(w, v[i] - v[j]) for w, v in rows]
    mean = sum(w * d for w, d in diffs) / weights
    var = sum(w * (d - mean) ** 2 for w, d in diffs) / weights
    n_eff = weights**2 / sum(w * w for w, _ in diffs)
    if var <= 0:  # the same margin in every world so far (often none: the choice is moot)
        return True
    return mean > 2 * math.sqrt(var / max(1.0, n_eff - 1))


def _with_void(voids: list[int], state: State, action: int) -> list[int]:
    """``voids`` updated for ``action`` in ``state``: not following suit shows a void."""
    trick = state[3]
    if trick and action < PLAY_LIMIT and (action ^ trick[0]) & 24:
        voids[state[1]] |= SUIT_MASKS[trick[0] >> 3]
    return voids
