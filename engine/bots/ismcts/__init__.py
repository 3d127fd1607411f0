"""``ismcts``: a panel bot written apart from the expert, from the rules and the protocol alone.

The cards are searched by single-observer information-set MCTS (``search.py``) over
determinizations that keep every hard fact of the turn message (``view.py``, ``sampler.py``),
simulated by the engine's own state machine, played out by a rule-based policy and valued by
the match (``policy.py``: 1 or 0 for a deal that ends the match, else a race-to-target logistic
of the totals after it).

The other decisions follow fixed rules: redeal whenever asked (the hand holds no T, 9 or A);
announce every poule held; meld every meld, in the listed order; claim when the claim's count
reaches the target, never otherwise; announce a politaine with every card where it is legal
(a failed announcement costs nothing); send no signal and ignore everyone's.

Budget: ``iterations`` a decision, cut short once the decision has used ``move_ms`` of CPU
(``time.thread_time()``; at most half the announced move clock). The generator is seeded from
the match id and the seat, so a match replays exactly while the CPU cap does not bind. Any
exception falls back to a legal action, counted in ``fallbacks`` and logged on stderr.
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

from engine.actions import action_to_str
from engine.bots.ismcts.search import Determinizer, search
from engine.bots.ismcts.view import read_view
from engine.cards import CODES, parse_card
from engine.rules import RuleSet, rules_from_dict

#: Iterations a decision: a median of 35-55 ms of CPU a searched decision, by preset.
ITERATIONS = 350
#: The hard CPU cap of one decision, in milliseconds.
MOVE_MS = 150.0
#: UCB1's exploration constant (values are in [0, 1]).
EXPLORATION = 0.7


class ISMCTSBot:
    """Information-set MCTS for the cards, fixed rules for the rest."""

    name = "ismcts"

    def __init__(
        self,
        iterations: int = ITERATIONS,
        move_ms: float = MOVE_MS,
        exploration: float = EXPLORATION,
    ) -> None:
        self.iterations = iterations
        self.move_ms = move_ms
        self.exploration = exploration
        self.cap_ms = move_ms
        self.rules: RuleSet | None = None
        self.rng = random.Random(0)
        self.fallbacks = 0
        self.searches = 0

    def hello(self, message: dict[str, Any]) -> None:
        self.rng.seed(f"{message.get('match')}:{message.get('seat')}")
        try:
            self.rules = rules_from_dict(message["rules"])
            clock_ms = (message.get("clock") or {}).get("move_ms", 1000)
            self.cap_ms = min(self.move_ms, clock_ms / 2)
        except Exception as error:  # never fault: every card then falls back
            self.rules = None
            print(f"ismcts: unreadable hello: {error!r}", file=sys.stderr)

    def act(self, message: dict[str, Any]) -> str:
        legal = message["legal"]
        if len(legal) == 1:
            return legal[0]
        try:
            action = self._decide(message)
            if action in legal:
                return action
            raise ValueError(f"chose {action!r}, not among the legal actions")
        except Exception as error:  # never fault: any failure falls back to a legal action
            self.fallbacks += 1
            print(f"ismcts: fallback at turn {message.get('id')}: {error!r}", file=sys.stderr)
            return _safe(legal)

    def notify(self, message: dict[str, Any]) -> None:
        pass

    # -- decisions -----------------------------------------------------------------------------

    def _decide(self, message: dict[str, Any]) -> str:
        legal = message["legal"]
        decision = message["decision"]
        if decision == "redeal":
            return "redeal"
        if decision == "poules":
            return max(legal, key=lambda a: int(a.split()[1]))
        if decision == "meld":
            return legal[0]
        if self.rules is None:
            raise RuntimeError("no hello received")
        if "claim" in legal and message["state"]["claim_count"] >= self.rules.target:
            return "claim"
        plays = sorted({parse_card(a.split()[1]) for a in legal if a.startswith("play ")})
        card = plays[0] if len(plays) == 1 else self._search(message)
        return _card_action(legal, card)

    def _search(self, message: dict[str, Any]) -> int:
        started = time.thread_time()
        assert self.rules is not None
        view = read_view(self.rules, message)
        determinizer = Determinizer(self.rules, view, self.rng)
        deadline = started + self.cap_ms / 1000
        card, _ = search(determinizer.draw, self.rng, self.iterations, deadline, self.exploration)
        self.searches += 1
        return card


def _card_action(legal: list[str], card: int) -> str:
    """The play of ``card``, with a politaine announcement where legal, without a signal."""
    announced = f"play {CODES[card]} politaine"
    return announced if announced in legal else action_to_str(card)


def _safe(legal: list[str]) -> str:
    """A legal action without thought: the first bare play, else the first action."""
    for action in legal:
        if action.startswith("play ") and len(action) == 7:
            return action
    return legal[0]


__all__ = ["ISMCTSBot"]
