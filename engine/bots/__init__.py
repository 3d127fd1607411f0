"""Built-in bots. Each works from protocol 1's messages alone, exactly like an uploaded bot.

``python -m engine.bots NAME`` runs one as a JSON-lines program (the platform runs the built-ins
this way, in its trusted runner); ``BotSeat`` plugs one straight into the referee in-process.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping

#: ``typing`` is left unimported at run time (``typing.TYPE_CHECKING``'s own idiom): it costs a
#: light bot's process more than the bot itself.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from engine.bots.base import Bot


class BotRegistry(Mapping[str, type]):
    """Bot names and their classes; a class's module is imported when the class is first asked
    for, so that a process running one bot (``python -m engine.bots random``, started for every
    match) imports only that bot's module, not the expert's search and numpy."""

    def __init__(self, loaders: dict[str, Callable[[], type]]) -> None:
        self._loaders = loaders

    def __getitem__(self, name: str) -> type:
        return self._loaders[name]()

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)


def _class(module: str, name: str) -> Callable[[], type]:
    return lambda: getattr(importlib.import_module(module), name)


def _level(name: str) -> Callable[[], type]:
    return lambda: importlib.import_module("engine.bots.levels").LEVELS[name]


#: The expert's fixed-budget levels (``engine.bots.levels``; a test keeps the two lists equal).
LEVEL_NAMES = ("expert-1", "expert-2", "expert-3", "expert-4")
#: The platform's built-in bots (each gets a bot row and can be named ``builtin:NAME``).
BUILTIN_BOTS = BotRegistry({
    "random": _class("engine.bots.random_bot", "RandomBot"),
    "greedy": _class("engine.bots.greedy", "GreedyBot"),
    "expert": _class("engine.bots.expert", "ExpertBot"),
    **{name: _level(name) for name in LEVEL_NAMES},
})
#: The expert's measuring panel, for local duels only (``python -m engine``, benchmarks): the
#: first expert frozen, and three opponents written apart from it (``ismcts``: information-set
#: MCTS, written from the rules and the protocol alone).
PANEL_BOTS = BotRegistry({
    "expert-v1": _class("engine.bots.expert_v1", "ExpertV1Bot"),
    "tracker": _class("engine.bots.tracker", "TrackerBot"),
    "rollout": _class("engine.bots.rollout", "RolloutBot"),
    "ismcts": _class("engine.bots.ismcts", "ISMCTSBot"),
})
LOCAL_BOTS = BotRegistry({**BUILTIN_BOTS._loaders, **PANEL_BOTS._loaders})
#: Bot classes exported by name, imported on first use.
_CLASSES = {"ExpertBot": "expert", "GreedyBot": "greedy", "RandomBot": "random"}


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        return BUILTIN_BOTS[_CLASSES[name]]
    if name == "Bot":
        return importlib.import_module("engine.bots.base").Bot
    raise AttributeError(f"module 'engine.bots' has no attribute {name!r}")


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
    "LEVEL_NAMES",
    "LOCAL_BOTS",
    "PANEL_BOTS",
    "Bot",
    "BotRegistry",
    "BotSeat",
    "ExpertBot",
    "GreedyBot",
    "RandomBot",
    "make_bot",
]
