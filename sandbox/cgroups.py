"""One cgroup per seat: memory (tmpfs and shared memory included, no swap) and processes are
capped for the seat as a whole, whatever number of processes it runs.

Both layouts are supported: cgroup v2 (one unified hierarchy, production hosts) and v1 (separate
``memory`` and ``pids`` hierarchies, as on this development machine).

A seat's group also counts the CPU time of everything that ever ran in it, exited threads and
processes included (``cpu_seconds``: v2 ``cpu.stat``'s ``usage_usec``, present whether or not the
cpu controller is enabled; v1 ``cpuacct.usage``, from a ``cpuacct`` hierarchy the seat joins too
when there is one it may write to): the referee uses it to find a seat that starves the seat on
turn (``sandbox.starvation``).

All seats together weigh ``SEATS_CPU_WEIGHT`` against the host's own processes when they compete
for a core (v2 ``cpu.weight`` of the seats' parent, v1 ``cpu.shares`` of a parent in the ``cpu``
hierarchy), and every seat weighs the same inside it: the seats together never outweigh one
ordinary process (the worker's bookkeeping, the database, a service beside them), and a seat with
many busy threads gets no more of a core than a seat with one. A
seat's clock never counts the time it waits for a core, so the weight costs a bot nothing but
wall time. ``detect()`` says which is
in force, or why none can be used; then the runner falls back to per-process rlimits, logs a
warning and shows ``cgroups: none`` in its ``confinement`` report. A seat joins its cgroup in the
child before it drops privileges and execs bwrap, so nothing of the seat ever runs outside it.

Override the location with ``QUATRESEPT_CGROUP_ROOT`` (the cgroup filesystem, default
``/sys/fs/cgroup``) and the group name with ``QUATRESEPT_CGROUP_NAME``. This module must not import
Django or ``engine``.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import secrets
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path(os.environ.get("QUATRESEPT_CGROUP_ROOT", "/sys/fs/cgroup"))
GROUP_NAME = os.environ.get("QUATRESEPT_CGROUP_NAME", "quatresept-seats")
#: The CPU weight of all seats together in cgroup v2 units (100: one host process at nice 0; v1
#: shares are 10.24 times it); 0 leaves the cpu controller alone. Less than one process starves
#: the seats behind any other load on the host (each session of a desktop or a background job
#: weighs one process), and their matches then take several times as long on the wall clock.
SEATS_CPU_WEIGHT = int(os.environ.get("QUATRESEPT_SEATS_CPU_WEIGHT", "100"))
_ids = itertools.count()


def seat_cpu_shares() -> int:
    """``SEATS_CPU_WEIGHT`` in v1 ``cpu.shares`` units (1024: a process at nice 0), 0 when seats
    are not weighted: the bwrap seats' common parent gets it; Docker, whose seat containers have
    no common parent of ours, gives it to each (``--cpu-shares``)."""
    return max(2, SEATS_CPU_WEIGHT * 1024 // 100) if SEATS_CPU_WEIGHT else 0


@dataclass(frozen=True)
class CgroupSupport:
    """Which cgroup layout seats get (``"v2"``, ``"v1"`` or ``"none"``) and why."""

    mode: str
    reason: str
    parents: tuple[Path, ...] = ()  # v2: one folder; v1: memory, pids, then cpuacct if usable
    #: v1: the seats' weighted parent in the ``cpu`` hierarchy (v2: ``parents[0]`` is weighted).
    cpu_parent: Path | None = None
    #: The seats' CPU weight in force (v2 units), 0 if none.
    cpu_weight: int = 0


def detect(root: Path = CGROUP_ROOT) -> CgroupSupport:
    """Find a usable layout and prepare the seats' parent group(s); never raises."""
    try:
        if (root / "cgroup.controllers").exists():
            support = _prepare_v2(root)
        elif (root / "memory" / "memory.limit_in_bytes").exists() and (
            root / "pids" / "cgroup.procs"
        ).exists():
            support = _prepare_v1(root)
        else:
            return CgroupSupport("none", f"no cgroup v2 nor v1 memory+pids hierarchy under {root}")
        for parent in support.parents:  # can this process make a seat's group there?
            _probe(parent)
        return support
    except OSError as exc:
        hint = (" (cgroup v2 enables controllers for children only in a group holding no process:"
                " in a container, move the worker's processes to a child group first)"
                if exc.errno == errno.EBUSY else "")
        return CgroupSupport("none", f"cannot set up seat cgroups under {root}: {exc}{hint}")


def _prepare_v2(root: Path) -> CgroupSupport:
    available = (root / "cgroup.controllers").read_text().split()
    if not {"memory", "pids"} <= set(available):
        return CgroupSupport("none", f"cgroup v2 at {root} lacks memory/pids ({available})")
    weighted = bool(SEATS_CPU_WEIGHT) and "cpu" in available
    parent = root / GROUP_NAME
    reason = f"cgroup v2 at {parent}"
    try:
        _enable(root, parent, ("memory", "pids", "cpu") if weighted else ("memory", "pids"))
        if weighted:
            (parent / "cpu.weight").write_text(str(SEATS_CPU_WEIGHT))
    except OSError as exc:
        if not weighted:
            raise
        reason += f" (no CPU weight: {exc})"
        weighted = False
        _enable(root, parent, ("memory", "pids"))
    return CgroupSupport("v2", reason, (parent,), cpu_weight=SEATS_CPU_WEIGHT if weighted else 0)


def _enable(root: Path, parent: Path, controllers: tuple[str, ...]) -> None:
    """Make ``parent`` under ``root`` and enable ``controllers`` for the children of both."""
    for folder in (root, parent):
        folder.mkdir(exist_ok=True)
        enabled = (folder / "cgroup.subtree_control").read_text().split()
        missing = [name for name in controllers if name not in enabled]
        if missing:
            (folder / "cgroup.subtree_control").write_text(" ".join(f"+{m}" for m in missing))


def _probe(parent: Path) -> None:
    probe = parent / f"probe-{os.getpid()}-{next(_ids)}"
    probe.mkdir()
    probe.rmdir()


def _prepare_v1(root: Path) -> CgroupSupport:
    parents = (root / "memory" / GROUP_NAME, root / "pids" / GROUP_NAME)
    for parent in parents:
        parent.mkdir(exist_ok=True)
    with contextlib.suppress(OSError):  # read-only or already set on recent kernels
        (parents[0] / "memory.use_hierarchy").write_text("1")
    reason = f"cgroup v1 at {parents[0]} and {parents[1]}"
    cpu_parent, weight = None, 0
    if SEATS_CPU_WEIGHT and (root / "cpu" / "cpu.shares").exists():
        try:  # optional: without it, seats weigh what the processes they run weigh
            cpu_parent = root / "cpu" / GROUP_NAME
            cpu_parent.mkdir(exist_ok=True)
            (cpu_parent / "cpu.shares").write_text(str(seat_cpu_shares()))
            _probe(cpu_parent)
            weight = SEATS_CPU_WEIGHT
        except OSError as exc:
            cpu_parent = None
            reason += f" (no CPU weight: {exc})"
    cpuacct = root / "cpuacct" / GROUP_NAME
    if (root / "cpuacct" / "cpuacct.usage").exists():
        try:  # optional: without it, a seat's CPU is read from its live processes
            cpuacct.mkdir(exist_ok=True)
            _probe(cpuacct)
            return CgroupSupport("v1", f"{reason} (CPU: {cpuacct})", (*parents, cpuacct),
                                 cpu_parent, weight)
        except OSError as exc:
            reason += f" (no cpuacct group: {exc})"
    return CgroupSupport("v1", reason, parents, cpu_parent, weight)


def _distinct_folders(folders: Iterable[Path]) -> list[Path]:
    """Each directory once: systemd's v1 layout mounts ``cpu`` and ``cpuacct`` as one
    hierarchy (``cpu,cpuacct``, the two names links to it), where the two are the same."""
    return list({os.path.realpath(folder): folder for folder in folders}.values())


def sweep_dead_seat_groups(support: CgroupSupport) -> int:
    """Remove the empty seat groups (``seat-<pid>-...``) whose maker process is gone: a worker
    process killed outright (out of memory, a hard time limit) never removed its own. A group
    something still runs in is left (the kernel refuses to remove it). How many were removed."""
    parents = [*support.parents, *([support.cpu_parent] if support.cpu_parent else [])]
    removed = 0
    for parent in _distinct_folders(parents):
        for folder in parent.glob("seat-*"):
            try:
                os.kill(int(folder.name.split("-")[1]), 0)
                continue  # its maker (or a process under its pid) runs
            except ProcessLookupError:
                pass
            except (ValueError, IndexError, PermissionError):
                continue
            with contextlib.suppress(OSError):
                folder.rmdir()
                removed += 1
    return removed


class SeatCgroup:
    """One seat's cgroup(s): created with its caps, joined by the seat's first process
    (``join_self`` in the child), removed by ``remove()`` after killing what is left."""

    def __init__(self, support: CgroupSupport, memory_bytes: int, processes: int) -> None:
        if support.mode not in ("v1", "v2"):
            raise ValueError(f"no cgroup support: {support.reason}")
        self.mode = support.mode
        # the token: a later process under a dead one's pid never meets the groups it left
        name = f"seat-{os.getpid()}-{next(_ids)}-{secrets.token_hex(4)}"
        self.folders = tuple(parent / name for parent in support.parents) + (
            (support.cpu_parent / name,) if support.cpu_parent else ())
        self._distinct = _distinct_folders(self.folders)
        self._procs: list[int] = []
        #: Where the seat's processes are listed, and the file of its cumulative CPU time.
        self._members = self.folders[0] if self.mode == "v2" else self.folders[1]
        self._cpu_file: Path | None = None
        self._cpu_fd: int | None = None
        if self.mode == "v2":
            self._cpu_file = self.folders[0] / "cpu.stat"
        elif len(support.parents) > 2:
            self._cpu_file = self.folders[2] / "cpuacct.usage"
        #: The file of the seat's CPU weight among seats (None: seats are not weighted).
        self.weight_file: Path | None = None
        if support.cpu_weight and self.mode == "v2":
            self.weight_file = self.folders[0] / "cpu.weight"
        elif support.cpu_parent is not None:
            self.weight_file = self.folders[-1] / "cpu.shares"
        try:
            for folder in self._distinct:
                folder.mkdir()
            if self.mode == "v2":
                (folder,) = self.folders
                (folder / "memory.max").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):  # no swap accounting: nothing to cap
                    (folder / "memory.swap.max").write_text("0")
                (folder / "pids.max").write_text(str(processes))
            else:
                memory, pids = self.folders[:2]
                (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                with contextlib.suppress(OSError):  # swap accounting off: no memsw files
                    (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
                (pids / "pids.max").write_text(str(processes))
            # Opened now so that the child joins with a plain ``write`` (no path lookup, no
            # alloc). (O_CREAT is a no-op on a cgroup filesystem, where the kernel made the file.)
            for folder in self._distinct:
                self._procs.append(os.open(folder / "cgroup.procs",
                                           os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC))
        except BaseException:
            self.remove()
            raise

    def procs_fds(self) -> tuple[int, ...]:
        """The open ``cgroup.procs`` descriptors: writing ``0`` to each joins the seat."""
        return tuple(self._procs)

    def join_self(self) -> None:
        """Move the calling process into the seat's cgroup(s); for a child before ``exec``."""
        for fd in self._procs:
            os.write(fd, b"0")

    def peak_memory(self) -> int | None:
        """Highest memory use of the seat so far, in bytes (None if the kernel does not say)."""
        name = "memory.peak" if self.mode == "v2" else "memory.max_usage_in_bytes"
        try:
            return int((self.folders[0] / name).read_text())
        except (OSError, ValueError):
            return None

    @property
    def cpu_source(self) -> str | None:
        """Where ``cpu_seconds`` reads, in words (None: this seat's group does not count CPU)."""
        if self._cpu_file is None:
            return None
        return "cgroup v2 cpu.stat" if self.mode == "v2" else "cgroup v1 cpuacct.usage"

    def cpu_seconds(self) -> float | None:
        """CPU time used so far by everything that ever ran in the seat (exited threads and
        processes included), or None where the kernel does not say. One small read."""
        if self._cpu_file is None:
            return None
        try:
            if self._cpu_fd is None:  # kept open: a read at offset 0 is the count now
                self._cpu_fd = os.open(self._cpu_file, os.O_RDONLY | os.O_CLOEXEC)
            text = os.pread(self._cpu_fd, 4096, 0)
            if self.mode == "v1":
                return int(text) / 1e9
            for line in text.splitlines():
                key, _, value = line.partition(b" ")
                if key == b"usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            pass
        return None

    def pids(self) -> list[int]:
        procs = self._members / "cgroup.procs"
        try:
            return [int(line) for line in procs.read_text().split()]
        except OSError:
            return []

    def remove(self, timeout: float = 2.0) -> bool:
        """Kill what is left in the seat and remove its cgroup(s); True when they are gone."""
        for fd in (*self._procs, *((self._cpu_fd,) if self._cpu_fd is not None else ())):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._procs, self._cpu_fd = [], None
        deadline = time.monotonic() + timeout
        while True:
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            gone = True
            for folder in self._distinct:
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    pass
                except OSError:
                    gone = False
            if gone or time.monotonic() > deadline:
                return gone
            time.sleep(0.005)
