"""Typed seat faults: the one exception a seat may raise to the referee.

Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

FAULT_KINDS = ("timeout", "crash", "illegal", "protocol")


class SeatFault(Exception):
    """A seat failed: ``kind`` is one of ``FAULT_KINDS``; ``detail`` says what happened.

    ``log`` may carry the tail of the bot's stderr for its owner; it never enters a replay.
    ``seat`` names the seat at fault when it is not the seat whose call raised it (a seat that
    burned CPU between its turns and starved the seat on turn): that seat forfeits.
    """

    def __init__(self, kind: str, detail: str, log: str = "", seat: int | None = None) -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"fault kind must be one of {FAULT_KINDS}, not {kind!r}")
        if seat is not None and seat not in range(4):
            raise ValueError(f"a fault's seat is 0 to 3, not {seat!r}")
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.log = log
        self.seat = seat

    def at(self, asked: int) -> int:
        """The seat that forfeits for this fault, raised by a call to seat ``asked``."""
        return asked if self.seat is None else self.seat
