"""Who starved the seat on turn: a seat that burns CPU between its turns and so starves the seat
on turn past the wall-clock backstop forfeits (``timeout``), instead of the match being void.

The fair clock (``sandbox.clocks``) never charges a seat for waiting for a CPU, and a decision the
host starves until the backstop is the platform's failure (``PlatformTimeout``: the match is
played again, then void). A bot losing a match could use that to void it: burn CPU between its
own turns (up to 32 threads or processes) and starve the seat on turn. ``MatchSeats`` knows the
sessions of one match by seat. When the decision on turn becomes slow (its meter starts), it reads
the cumulative CPU time of every other seat that is between its turns; at the backstop it reads
them again. The seat that used the most CPU meanwhile is to blame if that is at least the
decision's limit and ``BLAME_MIN_S``: more CPU than the starved seat was charged, in the same
time. Only when no seat is to blame is the backstop the platform's failure, as before.

Invariants: a quick decision reads nothing (the baseline is taken only when metering begins).
A seat's CPU is cumulative: from its cgroup when it has one (v2 ``cpu.stat``, v1
``cpuacct.usage``), so threads and processes that ended meanwhile still count; otherwise from the
schedstat of its live threads, where a thread or process that ends before the second reading
hides its CPU (the seat's processes are looked up by a /proc scan once, at its first reading, and
kept: a process it forks later is not seen either). Only seats that answered ``hello`` and have
not faulted are counted: a bot still starting up is not between turns. This module must not
import Django or ``engine``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sandbox.clocks import task_times, tree_pids

if TYPE_CHECKING:
    from sandbox.runners.base import BotProcess
    from sandbox.session import BotSession

#: The least CPU a seat must have burned between its turns during the starved decision to be
#: blamed, whatever the decision's limit (a nearly spent bank can make that limit tiny).
BLAME_MIN_S = 0.1
#: Where a seat's CPU is read from when it has no cgroup that counts CPU.
LIVE_SOURCE = "schedstat of its live threads (no CPU-counting cgroup: ended ones are not seen)"


class SeatCpu:
    """The cumulative CPU time of one seat's processes."""

    def __init__(self, process: BotProcess) -> None:
        self.root = process.pid
        self.uid = process.host_uid
        cgroup = getattr(process, "cgroup", None)
        self._cgroup = cgroup if cgroup is not None and cgroup.cpu_source else None
        #: Where the figure comes from, in words (for the fault's detail).
        self.source: str = self._cgroup.cpu_source if self._cgroup is not None else LIVE_SOURCE
        self._pids: list[int] | None = None  # without a cgroup: the tree, found once

    def seconds(self) -> float | None:
        """CPU seconds so far (None where nothing can be read): one file read with a cgroup; a
        read per live thread without (and a /proc scan, the first time)."""
        if self._cgroup is not None:
            return self._cgroup.cpu_seconds()
        if self._pids is None:
            self._pids = tree_pids(self.root, self.uid)
        times = task_times(self._pids)
        return None if times is None else sum(times.cpu.values())


@dataclass(frozen=True)
class Blame:
    """``seat`` burned ``cpu_s`` of CPU between its turns during the starved decision."""

    seat: int
    cpu_s: float
    source: str


class MatchSeats:
    """The seats of one match, so that a starved decision can name the seat that starved it.
    ``join`` each session with its seat; the sessions call ``begin`` and ``blame``."""

    def __init__(self) -> None:
        self._sessions: dict[int, BotSession] = {}
        self._cpu: dict[int, SeatCpu] = {}
        self._base: dict[int, float] = {}
        self._on_turn: int | None = None

    def join(self, seat: int, session: BotSession) -> None:
        self._sessions[seat] = session
        self._cpu[seat] = SeatCpu(session.process)
        session.match_seats = self
        session.seat = seat

    def seat_session(self, seat: int) -> BotSession:
        return self._sessions[seat]

    def begin(self, on_turn: int) -> None:
        """The decision of seat ``on_turn`` became slow: read the other seats' CPU (baseline)."""
        self._on_turn = on_turn
        self._base = {}
        for seat, session in self._sessions.items():
            if seat != on_turn and session.between_turns:
                cpu = self._cpu[seat].seconds()
                if cpu is not None:
                    self._base[seat] = cpu

    def blame(self, on_turn: int, limit_s: float) -> Blame | None:
        """The seat that burned the most CPU between its turns since ``begin(on_turn)``, if it
        burned at least ``limit_s`` and ``BLAME_MIN_S``; None if no seat did."""
        if self._on_turn != on_turn:
            return None
        used: dict[int, float] = {}
        for seat, base in self._base.items():
            if not self._sessions[seat].between_turns:
                continue
            cpu = self._cpu[seat].seconds()
            if cpu is not None:
                used[seat] = max(0.0, cpu - base)
        if not used:
            return None
        seat = max(used, key=lambda s: used[s])
        if used[seat] < max(limit_s, BLAME_MIN_S):
            return None
        return Blame(seat, used[seat], self._cpu[seat].source)
