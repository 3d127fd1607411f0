"""The adapter that turns a sandbox ``BotSession`` into an engine ``Seat``.

``BotFault`` becomes ``SeatFault`` with the stderr tail as its log, and the seat it belongs to when
that is another seat (one that starved the seat on turn). Must not import Django.
"""

from __future__ import annotations

from collections.abc import Callable
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

    def end_input(self) -> None:
        """Tell the bot the conversation is over (its stdin closes); ``close`` then waits."""
        self.session.end_input()

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

    def end_input(self) -> None:
        pass

    def close(self) -> None:
        pass


def _seat_fault(fault: BotFault) -> SeatFault:
    return SeatFault(fault.kind, fault.detail, fault.stderr_tail, seat=fault.seat)


class StderrFollower:
    """What a seat's bot wrote to stderr since the last look. The session keeps a tail (64 KiB);
    when it has wrapped, the whole tail counts as new."""

    def __init__(self) -> None:
        self._seen = ""

    def new(self, seat: SessionSeat | FaultedSeat) -> str:
        if not isinstance(seat, SessionSeat):
            return ""
        tail = seat.session.stderr_tail  # after close too: the channel keeps its tail
        fresh = tail[len(self._seen):] if tail.startswith(self._seen) else tail
        self._seen = tail
        return fresh


class StderrEcho:
    """A seat that passes every call on and then hands what its bot wrote to stderr meanwhile to
    ``write(seat_index, text)``: a bot's stderr shown as the match plays (``play --stderr``)."""

    def __init__(self, seat: SessionSeat | FaultedSeat, index: int,
                 write: Callable[[int, str], None]) -> None:
        self.seat = seat
        self.index = index
        self.write = write
        self._follower = StderrFollower()

    @property
    def stderr_tail(self) -> str:
        return self.seat.stderr_tail

    def hello(self, message: dict[str, Any]) -> None:
        try:
            self.seat.hello(message)
        finally:
            self._echo()

    def turn(self, message: dict[str, Any]) -> str:
        try:
            return self.seat.turn(message)
        finally:
            self._echo()

    def notify(self, message: dict[str, Any]) -> None:
        try:
            self.seat.notify(message)
        finally:
            self._echo()

    def end_input(self) -> None:
        self.seat.end_input()

    def close(self) -> None:
        try:
            self.seat.close()
        finally:
            self._echo()

    def _echo(self) -> None:
        text = self._follower.new(self.seat)
        if text:
            self.write(self.index, text)


class ClosedTogether:
    """A seat whose ``close`` (the referee's, at the end of the match) only ends its bot's
    input: the owner closes the real seats afterwards, all together, so the four bots exit and
    their sandboxes come down at once instead of one after another."""

    def __init__(self, seat: SessionSeat | FaultedSeat | StderrEcho) -> None:
        self.seat = seat

    def hello(self, message: dict[str, Any]) -> None:
        self.seat.hello(message)

    def turn(self, message: dict[str, Any]) -> str:
        return self.seat.turn(message)

    def notify(self, message: dict[str, Any]) -> None:
        self.seat.notify(message)

    def close(self) -> None:
        self.seat.end_input()
