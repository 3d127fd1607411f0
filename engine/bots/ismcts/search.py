"""Single-observer information-set MCTS (Cowling, Powley and Whitehouse, 2012) over the cards
of the rest of the deal.

Each iteration draws a determinization, walks the one tree of the observer's information sets
(every seat's cards are its edges), choosing among the children the determinization allows by
UCB1 with availability counts, adds one node, plays the deal out with the playout policy and
backs the value up. Invariant: the tree is keyed by public actions only (cards), and the engine
state of each determinization is rebuilt from the view's public actions and the drawn hands, so
nothing but the view reaches the search.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from engine.actions import DONE, KEEP, MELD
from engine.bots.ismcts.policy import cards, outcome, play_action, playout_card, settle
from engine.bots.ismcts.sampler import Sampler
from engine.bots.ismcts.view import View
from engine.position import MELD_PHASE, OVER, REDEAL_PHASE
from engine.rules import Politaine, RuleSet
from engine.state import State, deal_state


class Node:
    """A node of the observer's tree: reached by one card; ``total`` is the sum of the values
    backed up through it, seen from the team that played that card."""

    __slots__ = ("avail", "children", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.total = 0.0
        self.avail = 1


def rebuild(rules: RuleSet, view: View, hands: tuple[int, int, int, int]) -> State | None:
    """The engine state of this turn if the seats hold ``hands`` now: the deal dealt as they
    held it and its public actions played again (hidden redeal and meld answers as ``keep``
    and ``done``). None if these hands could not have played the deal so far."""
    dealt = tuple(hands[s] | view.played[s] for s in range(4))
    state = deal_state(rules, dealt, dealer=view.dealer, deal=view.deal, score=view.score)
    for seat, action in view.script:
        state = _silent(state, seat, action >= MELD)
        if state.to_move != seat or action not in state.legal():
            return None
        state = state.apply(action)
    state = _silent(state, view.seat, False)
    return state if state.to_move == view.seat and state.phase != OVER else None


def _silent(state: State, seat: int, melding: bool) -> State:
    """The answers nobody hears, up to ``seat``'s next public action."""
    while state.phase == REDEAL_PHASE:
        state = state.apply(KEEP)
    if state.phase == MELD_PHASE and state.to_move == seat and not melding:
        state = state.apply(DONE)
    return state


class Determinizer:
    """Draws engine states consistent with the view. Outside the before-play politaine one
    rebuilt state takes each draw's hands (``State.with_hands``); under before-play each draw is
    rebuilt. (``with_hands`` now also reads the before-play run from the hands, so one rebuilt
    state would serve there too; the rebuild stays because switching would draw the random
    numbers differently and change this bot's measured play.)"""

    def __init__(self, rules: RuleSet, view: View, rng: random.Random) -> None:
        self.rules = rules
        self.view = view
        self.sampler = Sampler(view, rng, rules)
        self.base: State | None = None
        if rules.politaine is not Politaine.BEFORE_PLAY:
            self.base = self._rebuilt()

    def draw(self) -> State:
        if self.base is not None:
            return self.base.with_hands(self.sampler.deal())
        return self._rebuilt()

    def _rebuilt(self) -> State:
        for _ in range(100):
            state = rebuild(self.rules, self.view, self.sampler.deal())
            if state is not None:
                return state
        raise RuntimeError("no determinization replays this deal")


def search(
    draw: Callable[[], State],
    rng: random.Random,
    iterations: int,
    deadline: float,
    exploration: float,
) -> tuple[int, Node]:
    """The card to play after ``iterations`` iterations or once ``time.thread_time()`` passes
    ``deadline``: the root's most visited child (the first one on ties)."""
    root = Node()
    for done in range(iterations):
        if done and time.thread_time() > deadline:
            break
        _iterate(root, draw(), rng, exploration)
    card = max(root.children.items(), key=lambda item: item[1].visits)[0]
    return card, root


def _iterate(root: Node, state: State, rng: random.Random, exploration: float) -> None:
    """One iteration: select, expand, play out, back up."""
    deal = state[4].deal
    node = root
    path: list[tuple[Node, int]] = []
    while True:
        state = settle(state, deal)
        if state[0] == OVER or state[4].deal != deal:
            break
        legal = cards(state)
        mover = state[1] & 1
        children = node.children
        untried = [c for c in legal if c not in children]
        if untried:
            card = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
            node = children[card] = Node()
            path.append((node, mover))
            state = state.apply(play_action(state, card))
            break
        card, node = _select(children, legal, exploration)
        path.append((node, mover))
        state = state.apply(play_action(state, card))
    value = _playout(state, rng, deal)
    for visited, mover in path:
        visited.visits += 1
        visited.total += value if mover == 0 else 1.0 - value


def _select(children: dict[int, Node], legal: tuple[int, ...], c: float) -> tuple[int, Node]:
    """UCB1 over the children available here, each child's availability counted once more."""
    best_card, best, best_score = -1, None, -1.0
    log, sqrt = math.log, math.sqrt
    for card in legal:
        child = children[card]
        child.avail += 1
        score = child.total / child.visits + c * sqrt(log(child.avail) / child.visits)
        if score > best_score:
            best_card, best, best_score = card, child, score
    assert best is not None
    return best_card, best


def _playout(state: State, rng: random.Random, deal: int) -> float:
    """Team 0's value of the deal played out by the policy from ``state``."""
    while True:
        state = settle(state, deal)
        if state[0] == OVER or state[4].deal != deal:
            return outcome(state, deal)
        legal = cards(state)
        state = state.apply(play_action(state, playout_card(state, rng, legal)))
