"""Fair move clocks: what a decision costs the bot, whatever else the worker is doing.

A decision's *charged* time is ``max(cpu, wall - waited)`` over the seat's process tree, where
``cpu`` is the CPU time all its threads used (the larger of the live threads' sum and the seat's
cumulative count, which keeps the CPU of threads and processes that have exited: the seat's
cgroup's, else ``process_cpu``) and ``waited`` the time its threads spent runnable
but waiting for a CPU that something else held (the scheduler's run delay, per thread, from
``/proc/<pid>/task/<tid>/schedstat``). So computing costs its CPU time, sleeping or blocking costs
wall time, and being kept off the CPU by a busy worker costs nothing. The clock runs out when the
charged time reaches the limit (the bot's ``timeout``); a wall-clock backstop of
``BACKSTOP_FACTOR`` times the limit ends a decision that the host starved: then, if the charged
time is still under the limit, the timeout is the platform's (``PlatformTimeout``: the match is
played again), never the bot's, unless another seat of the match burned CPU between its turns
meanwhile: then that seat forfeits (``sandbox.starvation``), or unless the seat lowered its own
scheduling priority (``lowered_priority``): a seat that made itself easy to starve cannot blame
the host.

Invariants: ``charged <= wall`` is not assumed (a bot with many busy threads is charged all their
CPU); the threads of the tree counted are those seen when the meter started, plus any found later
(their CPU counts, their waiting does not: a fork cannot buy time). The tree's processes are
read from the seat's cgroup at every check when it has one (one file); otherwise they are looked
up (a scan of /proc) until the bot has answered ``hello``, then kept: a process forked later is not
seen, which only makes the clock stricter (its waiting is never credited), except that before
the clock takes a seat for a starved one the tree is looked up again (``look_again``), so
that children it forked cannot keep its first process off the CPU and pass for a busy host (a
``PlatformTimeout`` voids the match once it is played again). Only slow
decisions pay for this: the meter starts ``LAZY_S`` after the request (the first ``LAZY_S`` are
charged as wall time; half of ``hello_ms`` for ``hello``), so a quick reply costs no ``/proc`` read
at all; the tree's first lookup (a /proc scan) is paid once per seat, at its first slow decision.
Without ``schedstat`` (a kernel without ``CONFIG_SCHED_INFO``, or Docker, where the bot is no
descendant of the worker) the charged time is the wall time, as before. This module must not
import Django or ``engine``.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: The wall-clock backstop, in multiples of the decision's limit.
BACKSTOP_FACTOR = 3.0
#: A decision is metered only after this long (a quick reply reads nothing from /proc).
LAZY_S = 0.02
_CLK_TCK = os.sysconf("SC_CLK_TCK")
#: The host's CPUs: no seat can spend CPU faster than this many seconds a second.
_CPUS = os.cpu_count() or 1


class PlatformTimeout(Exception):
    """The host kept a seat off the CPU until the backstop while its charged time was under its
    limit, and no other seat of the match burned CPU meanwhile (``sandbox.starvation``): the
    platform's failure (the match is played again), not a bot's fault."""


@dataclass(frozen=True)
class TaskTimes:
    """CPU and run-queue wait of a set of threads, in seconds, keyed by (pid, tid)."""

    cpu: dict[tuple[int, int], float] = field(default_factory=dict)
    waited: dict[tuple[int, int], float] = field(default_factory=dict)


def tree_pids(root: int, uid: int | None = None) -> list[int]:
    """``root`` and its descendants, zombies included (a leader that exited alone may have live
    threads), found through every ``/proc/<pid>/stat``'s parent pid (a scan of /proc; only
    processes owned by ``uid`` or root are read when it is given)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if uid is not None and os.stat(f"/proc/{entry}").st_uid not in (uid, 0):
                continue
        except OSError:
            continue
        fields = _stat_fields(f"/proc/{entry}/stat")
        if fields:  # a zombie too: a leader that exited alone leaves its other threads running
            parents[int(entry)] = int(fields[1])
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        found += frontier
    return found


def task_times(pids: list[int], states: list[tuple[int, int]] | None = None) -> TaskTimes | None:
    """Every live thread's CPU and run-queue wait, or None where ``schedstat`` is unavailable;
    the threads that are runnable now are added to ``states`` if given."""
    times = TaskTimes()
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                fd = os.open(f"/proc/{pid}/task/{tid}/schedstat", os.O_RDONLY)
            except FileNotFoundError:
                continue
            except OSError:
                return None
            try:
                parts = os.read(fd, 128).split()
            except OSError:  # the thread exited between the open and the read (ESRCH)
                continue
            finally:
                os.close(fd)
            if len(parts) < 2:
                return None
            key = (pid, int(tid))
            times.cpu[key] = int(parts[0]) / 1e9
            times.waited[key] = int(parts[1]) / 1e9
            if states is not None and _runnable(pid, tid):
                states.append(key)
    return times


def _stat_fields(path: str) -> list[bytes]:
    """The fields of a ``/proc`` ``stat`` file after the command name (the state first), or []
    where the process or thread is gone."""
    try:
        with open(path, "rb") as stat:
            text = stat.read()
    except OSError:
        return []
    return text[text.rfind(b")") + 2 :].split()


def process_cpu(pids: list[int]) -> float:
    """CPU seconds of ``pids`` with everything they ever ran: exited threads and the children
    they reaped (``utime + stime + cutime + cstime`` of ``/proc/<pid>/stat``, clock ticks)."""
    ticks = 0
    for pid in pids:
        fields = _stat_fields(f"/proc/{pid}/stat")
        if len(fields) > 14:
            ticks += sum(int(value) for value in fields[11:15])
    return ticks / _CLK_TCK


def lowered_priority(pids: list[int]) -> bool:
    """A thread of ``pids`` runs at a lower priority than this worker gave it: a higher nice, or
    the batch or idle policy it does not have itself, or a session group (autogroup) niced up.
    Such a seat made itself easy to starve: the host is not to blame for its wait."""
    own_nice = os.getpriority(os.PRIO_PROCESS, 0)
    own_policy = os.sched_getscheduler(0)
    weak = {os.SCHED_BATCH, os.SCHED_IDLE} - {own_policy}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/autogroup", "rb") as group:
                if int(group.read().split()[-1]) > 0:
                    return True
        except (OSError, ValueError, IndexError):
            pass
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            fields = _stat_fields(f"/proc/{pid}/task/{tid}/stat")
            if len(fields) > 38 and (int(fields[16]) > own_nice or int(fields[38]) in weak):
                return True
    return False


def _runnable(pid: int, tid: str) -> bool:
    """Whether the thread is running or waiting for a CPU now (state ``R``)."""
    return _stat_fields(f"/proc/{pid}/task/{tid}/stat")[:1] == [b"R"]


def host_state() -> dict[str, float]:
    """The host now: load averages and runnable tasks, this worker's own CPU seconds, and the
    cumulative CPU seconds stolen by the hypervisor (``/proc/stat``)."""
    state: dict[str, float] = {}
    try:
        with open("/proc/loadavg") as loadavg:
            parts = loadavg.read().split()
        state.update(load1=float(parts[0]), load5=float(parts[1]), load15=float(parts[2]),
                     runnable=float(parts[3].split("/")[0]))
    except (OSError, IndexError, ValueError):
        pass
    usage = resource.getrusage(resource.RUSAGE_SELF)
    state["worker_cpu_s"] = round(usage.ru_utime + usage.ru_stime, 3)
    try:
        with open("/proc/stat") as stat:
            cpu = stat.readline().split()
        state["steal_s"] = int(cpu[8]) / _CLK_TCK if len(cpu) > 8 else 0.0
    except (OSError, ValueError):
        pass
    state["cpus"] = float(os.cpu_count() or 1)
    return state


class DecisionMeter:
    """Meters one decision of the seat whose tree starts at ``root`` (owned by ``uid``, if
    known). ``start()`` at the request; ``charged()`` whenever the channel's wait ends without a
    reply; ``over_on_cpu()`` and ``charged_cheap()`` at a reply."""

    def __init__(
        self,
        root: int,
        uid: int | None = None,
        members: Callable[[], list[int]] | None = None,
        total_cpu: Callable[[], float | None] | None = None,
    ) -> None:
        self.root = root
        self.uid = uid
        #: CPU of everything that ever ran in the seat (its cgroup's count), if known: else the
        #: processes' own counts (``process_cpu``) stand for it.
        self.total_cpu = total_cpu
        self._base_total = 0.0
        #: The seat's cumulative CPU at ``start`` (``_cheap_cpu``).
        self._start_cpu = 0.0
        #: The seat's processes read cheaply (its cgroup's ``cgroup.procs``), if it has a cgroup:
        #: then they are looked up at every check, forks included.
        self.members = members
        self.started = 0.0
        self._metered_at: float | None = None
        self._pids: list[int] = []
        #: Look for the tree's processes again at every check (a scan of /proc, milliseconds):
        #: while the bot starts (hello); afterwards the tree found then is kept (threads are
        #: still found anew), which only makes the clock stricter for a bot that forks later.
        self.rescan = True
        self._base: TaskTimes | None = None
        self._host: dict[str, float] = {}
        self.last: dict[str, float] = {}
        #: Whether a thread of the seat was runnable (computing, or waiting for a CPU) at the
        #: last check: a run-queue wait is counted only when it ends, so a thread starved right
        #: now shows no wait yet.
        self.runnable = False

    def starved_now(self, limit_s: float) -> bool:
        """At the last check, a thread of the seat was runnable while the seat's CPU stayed under
        ``limit_s``: it is being kept off the CPU (a sleeping bot is not runnable; a computing
        one that gets a CPU soon passes ``limit_s`` of CPU)."""
        return self.runnable and self.last.get("cpu_s", limit_s) < limit_s

    def start(self) -> None:
        self.runnable = False
        self.started = time.monotonic()
        self._start_cpu = self._cheap_cpu()[0]
        self._metered_at = None
        self._base = None

    def lazy_deadline(self, limit_s: float) -> float:
        """When the meter should start if no reply came by then: ``LAZY_S`` into a decision, half
        the limit into ``hello`` (while ``rescan``: the bot is starting, and looking up its tree
        costs a scan of /proc that would delay a quick start)."""
        return self.started + (limit_s / 2 if self.rescan else LAZY_S)

    def begin_metering(self) -> bool:
        """Take the baseline (the tree, its threads' times, the host's steal): once per slow
        decision. True when it was taken now (the decision has just become slow)."""
        if self._metered_at is not None:
            return False
        self._metered_at = time.monotonic()
        if self.rescan or self.members is not None or not self._pids:
            self._pids = self._lookup()
        self._base = task_times(self._pids)
        self._base_total = self._seat_cpu()
        self._host = host_state()
        return True

    def _seat_cpu(self) -> float:
        """The seat's cumulative CPU: its cgroup's count where there is one, else its processes'
        (exited threads and reaped children included)."""
        return self._cpu_count(self._pids)[0]

    def _cpu_count(self, pids: list[int]) -> tuple[float, float]:
        """The seat's cumulative CPU and the count's resolution: its cgroup's count (in
        nanoseconds) where there is one, else ``pids``' own counts with the children they
        reaped (``process_cpu``, in clock ticks)."""
        total = self.total_cpu() if self.total_cpu is not None else None
        if total is not None:
            return total, 0.0
        return process_cpu(pids), 1 / _CLK_TCK

    def lowered_priority(self) -> bool:
        """The seat lowered its own scheduling priority (``lowered_priority``)."""
        return lowered_priority(self._lookup() if self._base is not None else [self.root])

    def charged(self, *, rescan: bool = True) -> float:
        """The seconds charged to the bot so far in this decision (see the module's docstring);
        ``rescan`` looks for processes the tree started since (while ``self.rescan``)."""
        now = time.monotonic()
        wall = now - self.started
        if self._metered_at is None or self._base is None:
            self.last = {"wall_s": wall}
            return wall
        if rescan and (self.rescan or self.members is not None):
            self._pids = self._lookup()
        runnable: list[tuple[int, int]] = []
        times = task_times(self._pids, runnable if rescan else None)
        self.runnable = bool(runnable)
        if times is None:
            self.last = {"wall_s": wall}
            return wall
        base = self._base
        cpu = sum(v - base.cpu.get(k, 0.0) for k, v in times.cpu.items())
        # Threads and processes that exited since the baseline took their schedstat with them:
        # the cumulative count keeps their CPU (a bot cannot hide work in short-lived tasks).
        cpu = max(cpu, self._seat_cpu() - self._base_total)
        waited = sum(v - base.waited[k] for k, v in times.waited.items() if k in base.waited)
        unmetered = self._metered_at - self.started  # charged as wall time
        charged = unmetered + max(cpu, (now - self._metered_at) - waited)
        self.last = {"wall_s": wall, "cpu_s": cpu, "waited_s": waited, "charged_s": charged}
        return charged

    def look_again(self) -> bool:
        """Where the tree is kept between checks (no cgroup, past ``hello``), look it up again: True
        when it holds processes not counted so far, whose CPU (not their waiting) then counts at
        the next ``charged``. A scan of /proc: only for a seat about to be taken for starved."""
        if self.rescan or self.members is not None or self._base is None:
            return False
        found = self._lookup()
        if set(found) <= set(self._pids):
            return False
        self._pids = found
        return True

    def _lookup(self) -> list[int]:
        """The seat's processes: its cgroup's members (and the root) if known, else a /proc scan."""
        if self.members is not None:
            found = self.members()
            if found:
                return [self.root, *(pid for pid in found if pid != self.root)]
        return tree_pids(self.root, self.uid)

    def over_on_cpu(self, limit_s: float) -> bool:
        """At a reply: the CPU the seat used in this decision reached ``limit_s``, by the larger
        of its cumulative count's rise since ``start`` (its cgroup's, else its first process's
        with the children it reaped: one file read) and the metered threads' CPU. Only CPU
        counts here, never wall time: a reply the worker was slow to read costs nothing. A reply
        too quick for all the host's CPUs together to have spent ``limit_s`` reads nothing."""
        if (time.monotonic() - self.started) * _CPUS < limit_s:
            return False
        now, resolution = self._cheap_cpu()
        cpu = now - self._start_cpu - resolution  # two readings in ticks: one tick of doubt
        if self._metered_at is not None and self._base is not None:
            self.charged(rescan=False)
            cpu = max(cpu, self.last.get("cpu_s", 0.0))
        self.last["cpu_s"] = cpu
        return cpu >= limit_s

    def _cheap_cpu(self) -> tuple[float, float]:
        """The seat's cumulative CPU read cheaply (one file), and its resolution: without a
        cgroup, only its first process's count (its threads', exited ones included, and the
        children it reaped)."""
        return self._cpu_count([self.root])

    def charged_cheap(self) -> float:
        """At a reply: the wall time if the decision was quick (nothing read), else ``charged``."""
        if self._metered_at is None:
            return time.monotonic() - self.started
        return self.charged(rescan=False)

    def describe(self) -> str:
        """The decision's times and the host's state, for a timeout's detail and the logs."""
        now = host_state()
        parts = [f"{k}={v:.3f}" for k, v in self.last.items()]
        parts += [f"{k}={now[k]:g}" for k in ("load1", "runnable", "cpus") if k in now]
        if "steal_s" in now and "steal_s" in self._host:
            parts.append(f"steal_s={now['steal_s'] - self._host['steal_s']:.2f}")
        if "worker_cpu_s" in now and "worker_cpu_s" in self._host:
            parts.append(f"worker_cpu_s={now['worker_cpu_s'] - self._host['worker_cpu_s']:.3f}")
        return "host: " + " ".join(parts)
