"""Engine states for sampled deals: the public record replayed on hidden hands.

``replay_world`` starts the deal with ``deal_state`` from the hands as dealt (the sampled hidden
hands plus each seat's plays) and re-applies everything public in order (redeal ``keep``s,
``poules``, melds, plays with their flags), so every field the engine keeps (politaine runs, the
low lead, bonuses, melds) is exactly what it would be in that deal. Where those fields do not
depend on hidden cards, ``Worlds`` replays once and moves the other samples in with
``with_hands``. Invariant: a world's ``to_move`` is the viewing seat, at the message's decision.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.actions import DONE, KEEP
from engine.rules import RuleSet
from engine.state import MELD_PHASE, POULES_PHASE, REDEAL_PHASE, State, deal_state

from .policy import policy_action
from .view import View


class ReplayError(Exception):
    """The public record did not replay on these hands (it should never happen)."""


def replay_world(
    rules: RuleSet,
    view: View,
    hands: tuple[int, int, int, int],
    decision: str,
    judge: Callable[[State], int] | None = None,
    miss: float = 1.0,
) -> tuple[State, float]:
    """The state of the deal in progress, had the hidden hands been ``hands`` (held now).

    With ``judge`` (a policy), also a likelihood weight: each card an opponent played that
    differs from ``judge``'s choice in its place multiplies the weight by ``miss``.
    """
    weight = 1.0
    dealt = tuple(hands[s] | view.by_seat[s] for s in range(4))
    state = deal_state(
        rules, dealt, dealer=view.dealer, deal=view.deal, score=view.score,
        redeal=view.redeals,
    )  # fmt: skip
    while state.phase == REDEAL_PHASE:
        state = state.apply(KEEP)
    calls = iter(view.poule_calls)
    while state.phase == POULES_PHASE:
        _, action = next(calls, (None, None))
        if action is None:
            break
        state = state.apply(action)
    melds = list(view.melds)
    for seat, action in view.plays:
        state = _melds_before(state, melds, seat)
        if state.to_move != seat:
            raise ReplayError(f"seat {seat} played out of turn in the replay")
        if judge is not None and (seat ^ view.seat) & 1 and (judge(state) ^ action) & 31:
            weight *= miss
        state = state.apply(action)
    state = _melds_before(state, melds, view.seat, finish=decision == "play")
    if state.to_move != view.seat:
        raise ReplayError("the replay did not reach the viewing seat")
    return state, weight


def _melds_before(state: State, melds: list, seat: int, finish: bool = True) -> State:
    """Apply ``seat``'s melds said at this point, then ``done`` if the play came next."""
    while state.phase == MELD_PHASE and state.to_move == seat:
        number = len(state.tricks) + 1
        if melds and melds[0][0] == seat and melds[0][1] == number:
            state = state.apply(melds.pop(0)[2])
        elif finish:
            state = state.apply(DONE)
        else:
            break
    return state


class Worlds:
    """Builds the state of each sampled deal for one decision, with its likelihood weight.

    ``miss`` < 1 weighs deals by how well the rollout policy explains the others' plays (soft
    evidence: a seat that plays like the policy reveals its hand); 1 treats all alike.
    """

    def __init__(self, rules: RuleSet, view: View, decision: str, miss: float = 1.0) -> None:
        self.rules = rules
        self.view = view
        self.decision = decision
        self.miss = miss
        # Before-play poules start a run on whether the winner holds the rest of T-9-A.
        self.replay_each = rules.politaine == "before-play" or miss < 1.0
        self._template: State | None = None

    def build(self, hands: tuple[int, int, int, int]) -> tuple[State, float]:
        if self.replay_each or self._template is None:
            judge = policy_action if self.miss < 1.0 else None
            state, weight = replay_world(
                self.rules, self.view, hands, self.decision, judge, self.miss
            )
            self._template = state
            return state, weight
        return self._template.with_hands(hands), 1.0
