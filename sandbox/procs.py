"""Find and end processes by uid through /proc (no psutil). Used to prove a seat left nothing
behind and to sweep a seat's uid before it is reused. One scan of /proc answers for any number of
uids (``pids_by_uid``), so the seats of a match are swept together. This module must not import
Django or ``engine``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable


def _field(status: bytes, name: bytes) -> bytes:
    """The value of one ``Name:`` line of ``/proc/PID/status`` (empty if absent)."""
    at = status.find(b"\n" + name + b":")
    if at < 0:
        return b""
    start = at + len(name) + 2
    end = status.find(b"\n", start)
    return status[start:end if end >= 0 else len(status)].strip()


def _real_uid_and_live(status: bytes) -> tuple[int, bool] | None:
    """(real uid, live) from the text of ``/proc/PID/status``. A zombie is not live, unless it
    is a thread group's leader whose other threads still run: its main thread exited alone, and
    the process goes on (one ``kill`` of its pid ends them all)."""
    fields = _field(status, b"Uid").split()
    if not fields:
        return None
    threads = _field(status, b"Threads")
    zombie = _field(status, b"State")[:1] == b"Z"
    live = not zombie or (threads.isdigit() and int(threads) > 1)
    return int(fields[0]), live


def pids_by_uid(uids: Iterable[int]) -> dict[int, list[int]]:
    """Pids of live processes whose real uid is one of ``uids`` (plain zombies excluded), by uid.

    ``/proc/<pid>`` is owned by the process's effective uid (root when not dumpable), so only
    those candidates have their status read: a scan costs a stat per process.
    """
    wanted = set(uids)
    owners = wanted | {0}
    found: dict[int, list[int]] = {uid: [] for uid in wanted}
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid not in owners:
                    continue
                fd = os.open(f"/proc/{entry.name}/status", os.O_RDONLY | os.O_CLOEXEC)
                try:
                    text = os.read(fd, 4096)
                finally:
                    os.close(fd)
            except OSError:
                continue
            parsed = _real_uid_and_live(text)
            if parsed is not None and parsed[0] in wanted and parsed[1]:
                found[parsed[0]].append(int(entry.name))
    return found


def pids_of_uid(uid: int) -> list[int]:
    """Pids of live processes whose real uid is ``uid`` (plain zombies excluded)."""
    return pids_by_uid((uid,))[uid]


def kill_uids(uids: Iterable[int], timeout: float = 2.0) -> set[int]:
    """SIGKILL every process of each of ``uids`` until none is left or ``timeout`` passes (one
    /proc scan per round for all of them); the uids with no process left.

    Only for uids the caller owns exclusively (leased sandbox uids), never a shared one.
    """
    wanted = set(uids)
    if 0 in wanted:
        raise ValueError("refusing to kill every process of root")
    deadline = time.monotonic() + timeout
    while True:
        left = {uid: pids for uid, pids in pids_by_uid(wanted).items() if pids}
        if not left:
            return wanted
        for pids in left.values():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return wanted - set(left)
        time.sleep(0.005)


def kill_uid(uid: int, timeout: float = 2.0) -> bool:
    """SIGKILL every process of ``uid`` until none is left or ``timeout`` passes; True if none is.

    Only for a uid the caller owns exclusively (a leased sandbox uid), never a shared one.
    """
    return uid in kill_uids((uid,), timeout)
