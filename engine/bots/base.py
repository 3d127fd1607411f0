"""What every built-in bot is, in-process (a ``typing.Protocol``; kept apart from
``engine.bots`` so that running one light bot never imports ``typing``)."""

from __future__ import annotations

from typing import Any, Protocol


class Bot(Protocol):
    """A bot in-process: told ``hello``, asked ``act`` for each turn, told the rest."""

    name: str

    def hello(self, message: dict[str, Any]) -> None: ...

    def act(self, message: dict[str, Any]) -> str: ...

    def notify(self, message: dict[str, Any]) -> None: ...
