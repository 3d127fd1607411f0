"""Typed seat faults: the one exception a seat may raise to the referee.

Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

FAULT_KINDS = ("timeout", "crash", "illegal", "protocol")


class SeatFault(Exception):
    """A seat failed: ``kind`` is one of ``FAULT_KINDS``; ``detail`` says what happened.

    ``log`` may carry the tail of the bot's stderr for its owner; it never enters a replay.
    """

    def __init__(self, kind: str, detail: str, log: str = "") -> None:
        if kind not in FAULT_KINDS:
            raise ValueError(f"fault kind must be one of {FAULT_KINDS}, not {kind!r}")
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.log = log
