"""Built-in bots. Each works from protocol 1's messages alone, exactly like an uploaded bot.

``python -m engine.bots NAME`` runs one as a JSON-lines program (the platform runs the built-ins
this way, in its trusted runner); ``BotSeat`` plugs one straight into the referee in-process.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from typing import Any, Protocol

from engine.bots.expert import ExpertBot
from engine.bots.expert_v1 import ExpertV1Bot
from engine.bots.greedy import GreedyBot
from engine.bots.levels import LEVELS
from engine.bots.random_bot import RandomBot
from engine.bots.rollout import RolloutBot
from engine.bots.tracker import TrackerBot


class Bot(Protocol):
    """A bot in-process: told ``hello``, asked ``act`` for each turn, told the rest."""

    name: str

    def hello(self, message: dict[str, Any]) -> None: ...

    def act(self, message: dict[str, Any]) -> str: ...

    def notify(self, message: dict[str, Any]) -> None: ...


#: The platform's built-in bots (each gets a bot row and can be named ``builtin:NAME``).
BUILTIN_BOTS: dict[str, type] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "expert": ExpertBot,
    **LEVELS,
}
#: The expert's measuring panel, for local duels only (``python -m engine``, benchmarks): the
#: first expert frozen, and two opponents written apart from it.
PANEL_BOTS: dict[str, type] = {
    "expert-v1": ExpertV1Bot,
    "tracker": TrackerBot,
    "rollout": RolloutBot,
}
LOCAL_BOTS: dict[str, type] = {**BUILTIN_BOTS, **PANEL_BOTS}


def make_bot(name: str) -> Bot:
    """A new built-in or panel bot by name; ``ValueError`` listing the names if unknown."""
    try:
        return LOCAL_BOTS[name]()
    except KeyError:
        raise ValueError(
            f"unknown built-in bot {name!r}; built-ins: {', '.join(sorted(LOCAL_BOTS))}"
        ) from None


class BotSeat:
    """A referee seat played by an in-process bot (no clock: for tests and local runs)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    def hello(self, message: dict[str, Any]) -> None:
        self.bot.hello(message)

    def turn(self, message: dict[str, Any]) -> str:
        return self.bot.act(message)

    def notify(self, message: dict[str, Any]) -> None:
        self.bot.notify(message)

    def close(self) -> None:
        pass


__all__ = [
    "BUILTIN_BOTS",
    "LOCAL_BOTS",
    "PANEL_BOTS",
    "Bot",
    "BotSeat",
    "ExpertBot",
    "GreedyBot",
    "RandomBot",
    "make_bot",
]
