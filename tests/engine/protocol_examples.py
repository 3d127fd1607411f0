"""The example messages of docs/protocol.md, from a real match: ``test_docs.py`` checks the doc's
examples against these. Print them with ``python -m tests.engine.protocol_examples``.

The match: la-poule (poules, low lead), seed 163, each seat choosing with its own seeded RNG;
the examples are what seat 2 received.
"""

from __future__ import annotations

import json
import random
from typing import Any

from engine import FunctionSeat, Player, referee_match, rules_for

SEED = 163
SEAT = 2


class _Recorder(FunctionSeat):
    """A seat choosing at random (its own seeded RNG) that keeps every message it is sent."""

    def __init__(self, seat: int) -> None:
        rng = random.Random(seat)
        super().__init__(lambda message: rng.choice(message["legal"]))
        self.messages: list[dict[str, Any]] = []

    def hello(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    def turn(self, message: dict[str, Any]) -> str:
        self.messages.append(message)
        return super().turn(message)

    def notify(self, message: dict[str, Any]) -> None:
        self.messages.append(message)


def examples() -> dict[str, dict[str, Any]]:
    """``hello``, a ``turn`` (deal 1: seat 2 to lead, bound by the low lead), the first
    ``deal_end`` and the ``match_end``, as seat 2 received them; JSON round-tripped."""
    seats = [_Recorder(seat) for seat in range(4)]
    players = [Player("alice/greedy", 3), Player("bob/mcts", 1)] * 2
    referee_match(rules_for("la-poule"), seats, seed=SEED, match_id="m-1024", players=players)
    got = json.loads(json.dumps(seats[SEAT].messages))
    turn = next(
        m
        for m in got
        if m["type"] == "turn"
        and m["state"]["deal"] == 1
        and m["state"]["low_lead"]
        and not m["state"]["trick"]["cards"]
    )
    return {
        "hello": got[0],
        "turn": turn,
        "deal_end": next(m for m in got if m["type"] == "deal_end"),
        "match_end": got[-1],
    }


def show(message: dict[str, Any]) -> str:
    """A message as the doc shows it: a field a line (the ``state`` too), values compact."""
    lines = []
    for key, value in message.items():
        if isinstance(value, dict) and key == "state":
            inner = ",\n".join(f"   {json.dumps(k)}: {_compact(v)}" for k, v in value.items())
            lines.append(f' "{key}": {{\n{inner}\n }}')
        else:
            lines.append(f" {json.dumps(key)}: {_compact(value, ' ')}")
    return "{\n" + ",\n".join(lines) + "\n}"


def _compact(value: Any, indent: str = "   ") -> str:
    """Compact JSON; a list of objects or lists goes an element a line."""
    if isinstance(value, list) and len(value) > 1 and isinstance(value[0], dict | list):
        inner = ",\n".join(f"{indent} {_compact(v)}" for v in value)
        return f"[\n{inner}\n{indent}]"
    return json.dumps(value, separators=(", ", ": "))


if __name__ == "__main__":
    for name, message in examples().items():
        print(f"<!-- example: {name} -->\n```json\n{show(message)}\n```\n")
