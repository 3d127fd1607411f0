"""``random``: uniform over the legal actions, seeded by match and seat so a match replays."""

from __future__ import annotations

import random

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class RandomBot:
    name = "random"

    def __init__(self, seed: int | str | None = None) -> None:
        self._rng = random.Random(seed)

    def hello(self, message: dict[str, Any]) -> None:
        self._rng.seed(f"{message.get('match')}:{message.get('seat')}")

    def act(self, message: dict[str, Any]) -> str:
        return self._rng.choice(message["legal"])

    def notify(self, message: dict[str, Any]) -> None:
        pass
