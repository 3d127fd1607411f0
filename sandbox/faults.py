"""The one exception a bot conversation raises: ``BotFault``, typed by protocol 1's fault kinds.

This module must not import Django or ``engine``.
"""

from __future__ import annotations

#: Protocol 1's fault kinds, in the order the protocol lists them.
FAULT_KINDS = ("timeout", "crash", "illegal", "protocol")


class BotFault(Exception):
    """A bot broke protocol 1: ``kind`` is one of ``FAULT_KINDS``; ``detail`` is one sentence a bot
    author can act on; ``stderr_tail`` is the end of the bot's stderr when the fault was seen.
    ``seat`` is set when the fault is another seat's than that of the session that raised it (a
    seat that starved the seat on turn, ``sandbox.starvation``): that seat forfeits."""

    def __init__(
        self, kind: str, detail: str, stderr_tail: str = "", seat: int | None = None
    ) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}")
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.stderr_tail = stderr_tail
        self.seat = seat
