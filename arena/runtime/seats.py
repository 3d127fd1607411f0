"""The adapter that turns a sandbox ``BotSession`` into an engine ``Seat``.

``BotFault`` becomes ``SeatFault`` with the stderr tail as its log. Must not import Django.
"""

from __future__ import annotations

from typing import Any

from engine import SeatFault
from sandbox import BotFault, BotSession


class SessionSeat:
    """A referee seat played by a bot process. After ``close``, ``stderr_tail`` keeps the log."""

    def __init__(self, session: BotSession) -> None:
        self.session = session
        self.stderr_tail = ""

    def hello(self, message: dict[str, Any]) -> None:
        try:
            self.session.hello(message)
        except BotFault as fault:
            raise _seat_fault(fault) from None

    def turn(self, message: dict[str, Any]) -> str:
        try:
            return self.session.turn(message)
        except BotFault as fault:
            raise _seat_fault(fault) from None

    def notify(self, message: dict[str, Any]) -> None:
        try:
            self.session.notify(message)
        except BotFault as fault:
            raise _seat_fault(fault) from None

    def close(self) -> None:
        try:
            self.session.close()
        finally:
            self.stderr_tail = self.session.stderr_tail


class FaultedSeat:
    """A seat whose bot could not even start: every call raises the same fault."""

    def __init__(self, fault: SeatFault) -> None:
        self.fault = fault
        self.stderr_tail = fault.log

    def hello(self, message: dict[str, Any]) -> None:
        raise self.fault

    def turn(self, message: dict[str, Any]) -> str:
        raise self.fault

    def notify(self, message: dict[str, Any]) -> None:
        raise self.fault

    def close(self) -> None:
        pass


def _seat_fault(fault: BotFault) -> SeatFault:
    return SeatFault(fault.kind, fault.detail, fault.stderr_tail)
