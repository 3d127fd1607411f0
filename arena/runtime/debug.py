"""Debug a played match at home: replay it through the referee with one seat's messages also sent
to a local bot, and report each decision where the local bot's answer differs from what was
played.

The match is played again by ``engine.referee.referee_match`` itself, every seat answering from the
replay (``engine.check.replay_seats``), with the replay's seed, rules, match id, players and the
platform's clocks: so each message the local bot reads is byte for byte the one the server's
referee sent that seat. The match always follows the replay (the local bot's answers are
recorded, never played); a local bot that faults is reported and then left out.

Must not import Django.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.runtime.seats import FaultedSeat, SessionSeat, StderrFollower
from arena.runtime.specs import BotSpec, start_seat
from engine import AnnouncedClock, Player, SeatFault, referee_match, rules_from_dict
from engine.check import replay_seats
from sandbox.protocol import encode


@dataclass(frozen=True)
class Decision:
    """One turn of the debugged seat: where it was, what was played there on the server, what
    the local bot answered (None: it faulted), its time, and what it wrote to stderr meanwhile."""

    turn: int
    deal: int
    trick: int
    decision: str
    played: str | None
    local: str | None
    ms: int
    stderr: str = ""
    fault: str = ""

    @property
    def differs(self) -> bool:
        return self.local != self.played

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn, "deal": self.deal, "trick": self.trick,
            "decision": self.decision, "played": self.played, "local": self.local,
            "ms": self.ms, "differs": self.differs, "stderr": self.stderr, "fault": self.fault,
        }


@dataclass
class DebugReport:
    """Every decision of the seat up to the stop, the messages sent (JSON lines, as the referee
    encoded them) and whether the run stopped before the match's end."""

    seat: int
    decisions: list[Decision] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)
    stopped: bool = False
    hello_fault: str = ""
    hello_stderr: str = ""  # what the local bot wrote before it failed at hello

    @property
    def differences(self) -> list[Decision]:
        return [d for d in self.decisions if d.differs]


class _Stop(Exception):
    """The stop point was passed: the replay ends here."""


class _DebugSeat:
    """The debugged seat: answers as the replay says, and sends each message on to the local bot
    (timing its turns, collecting its stderr) until the local bot faults."""

    def __init__(self, recorded, local: SessionSeat | FaultedSeat, report: DebugReport,
                 stop: tuple[int, int] | None, on_decision: Callable[[Decision], None]) -> None:
        self.recorded = recorded
        self.started = local  # closed at the end, whatever happened
        self.local: SessionSeat | FaultedSeat | None = local  # None once it faulted
        self.report = report
        self.stop = stop
        self.on_decision = on_decision
        self._stderr = StderrFollower()
        self._gone = ""  # why the local bot is out, once it is

    def hello(self, message: dict[str, Any]) -> None:
        self.report.sent.append(encode(message))
        try:
            self._forward("hello", message)
        except SeatFault as fault:
            self.report.hello_fault = f"{fault.kind}: {fault.detail}"
            self.report.hello_stderr = fault.log or self.started.stderr_tail
            self._gone = f"out since hello: {fault.kind}"
            self.local = None
        self.recorded.hello(message)

    def turn(self, message: dict[str, Any]) -> str:
        state = message["state"]
        where = (state["deal"], len(state["tricks"]) + 1)
        if self.stop is not None and where > self.stop:
            raise _Stop
        self.report.sent.append(encode(message))
        local, fault, ms = None, "", 0
        if self.local is not None:
            started = time.perf_counter()
            try:
                local = self.local.turn(message)
            except SeatFault as error:
                fault = f"{error.kind}: {error.detail}"
                self._gone = f"out since turn {message['id']}: {error.kind}"
                self.local = None
            ms = round((time.perf_counter() - started) * 1000)
        else:
            fault = self._gone
        stderr = self._stderr.new(self.started)
        try:
            played: str | None = self.recorded.turn(message)
        except SeatFault:
            played = None
            self._record(message, where, played, local, ms, stderr, fault)
            raise
        self._record(message, where, played, local, ms, stderr, fault)
        return played

    def notify(self, message: dict[str, Any]) -> None:
        self.report.sent.append(encode(message))
        try:
            self._forward("notify", message)
        except SeatFault:
            self.local = None
        self.recorded.notify(message)

    def close(self) -> None:
        self.started.close()

    def _record(self, message, where, played, local, ms, stderr, fault) -> None:
        decision = Decision(
            turn=message["id"], deal=where[0], trick=where[1], decision=message["decision"],
            played=played, local=local, ms=ms, stderr=stderr, fault=fault,
        )
        self.report.decisions.append(decision)
        self.on_decision(decision)

    def _forward(self, method: str, message: dict[str, Any]) -> None:
        if self.local is not None:
            getattr(self.local, method)(message)


def debug_match(
    replay: dict[str, Any],
    seat: int,
    bot: BotSpec,
    *,
    backend: str = "bwrap",
    stop: tuple[int, int] | None = None,
    on_decision: Callable[[Decision], None] = lambda decision: None,
) -> DebugReport:
    """Replay ``replay`` with seat ``seat``'s messages also sent to ``bot`` (started in the
    sandbox ``backend``, with the match's clocks, no turn held); stop after deal and trick
    ``stop``."""
    if not 0 <= seat < 4:
        raise ValueError("a seat is 0, 1, 2 or 3")
    rules = rules_from_dict(replay["rules"])
    players = [Player(p["bot"], p.get("version")) for p in replay["players"]]
    # The match's own clocks, but no turn held: the replayed seats answer at once anyway.
    clock = dataclasses.replace(AnnouncedClock.from_dict(replay.get("clock")), fixed_turns=False)
    seats: list[Any] = list(replay_seats(replay))  # a copy: the replay seats keep theirs
    report = DebugReport(seat=seat)
    seats[seat] = _DebugSeat(seats[seat], start_seat(bot, clock, backend), report, stop,
                             on_decision)
    try:
        referee_match(rules, seats, seed=replay["seed"], match_id=replay["match"], players=players,
                   clock=clock)
    except _Stop:
        report.stopped = True
    return report
