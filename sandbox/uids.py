"""A pool of unprivileged uids, one per running seat, shared by every worker on the host.

RLIMIT_NPROC counts the processes of a uid machine-wide, so a per-seat process cap needs a uid per
seat. A uid is leased with a non-blocking ``flock`` on ``<lock_dir>/<uid>.lock``: the kernel drops
the lock when the holder exits, so a crashed worker never leaks a uid. A uid is handed out only when
no process runs under it (checked unless its last holder released it clean). The lock folder should
live on a tmpfs (``/run``) so that it starts empty at boot, and no other software may use the uid
range. This module must not import Django or ``engine``.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from sandbox.procs import kill_uid, kill_uids

#: First uid and number of uids. Outside the usual ranges of real users (1000-60000) and of
#: systemd's dynamic users; override with QUATRESEPT_SANDBOX_UID_BASE / _COUNT.
UID_BASE = int(os.environ.get("QUATRESEPT_SANDBOX_UID_BASE", "300000"))
UID_COUNT = int(os.environ.get("QUATRESEPT_SANDBOX_UID_COUNT", "512"))
#: Shared by every worker of the host; must be owned by the worker's uid and private.
LOCK_DIR = Path(
    os.environ.get(
        "QUATRESEPT_SANDBOX_LOCK_DIR",
        "/run/quatresept-uids" if os.path.isdir("/run") and os.access("/run", os.W_OK)
        else Path(tempfile.gettempdir()) / "quatresept-uids",
    )
)


#: A released uid is reused only after this many seconds when another is free: the kernel
#: releases a user namespace's process counts asynchronously (measured here: about 2 s), and until
#: then they count against the next holder's RLIMIT_NPROC.
REUSE_DELAY_S = 5.0
_CLEAN = b"clean"
_BUSY = b"busy"


#: A lock file's state is written over the old one, padded to this width (no truncation, which
#: costs a journal commit on a disk file system); readers split on whitespace.
_STATE_WIDTH = 40


def _mark(fd: int, state: bytes) -> None:
    os.pwrite(fd, state.ljust(_STATE_WIDTH), 0)


class NoFreeUid(RuntimeError):
    """Every uid of the pool is in use: too many seats run at once on this host."""


class UidLease:
    """One leased uid; ``release()`` (idempotent) kills anything left under it, then frees it."""

    def __init__(self, uid: int, lock_fd: int) -> None:
        self.uid = uid
        self._fd: int | None = lock_fd

    def release(self) -> None:
        release_all((self,))

    def release_emptied(self) -> None:
        """Free the uid without a /proc scan, marked clean: the caller has proved that no process
        can run code under it again (its seat's cgroup, which the seat's first process joined
        before taking this uid, was removed, and a cgroup with a process in it cannot be). A
        process leaves its cgroup on its way out, so the seat's pid 1 may still be in the
        kernel's exit path for a moment, reaping the rest of its namespace; until it is gone it
        counts against the uid's RLIMIT_NPROC, which ``REUSE_DELAY_S`` covers. Idempotent."""
        self._free(clean=True, now=time.time())

    def _free(self, *, clean: bool, now: float) -> None:
        """Drop the lock, the uid marked clean (stamped ``now``) if ``clean``, else left marked
        busy for the next holder to sweep. Idempotent."""
        if self._fd is None:
            return
        try:
            if clean:
                _mark(self._fd, b"%s %.3f" % (_CLEAN, now))
        finally:
            os.close(self._fd)
            self._fd = None

    @property
    def released(self) -> bool:
        return self._fd is None


def release_all(leases: Iterable[UidLease]) -> None:
    """Release ``leases`` together: one sweep of /proc kills what is left under any of their uids
    (a scan costs ~3 ms whatever the number of uids), then each uid that is empty is marked clean
    and every lock is dropped (a uid that will not empty stays marked busy: the next holder
    sweeps it first). Idempotent per lease."""
    pending = [lease for lease in leases if lease._fd is not None]
    if not pending:
        return
    empty: set[int] = set()
    try:
        empty = kill_uids({lease.uid for lease in pending})
    finally:
        now = time.time()
        for lease in pending:
            lease._free(clean=lease.uid in empty, now=now)


class UidPool:
    """Uids ``base`` .. ``base + count - 1``, leased through lock files in ``lock_dir``."""

    def __init__(self, base: int = UID_BASE, count: int = UID_COUNT, lock_dir: Path = LOCK_DIR):
        if base < 1000 or count < 1:
            raise ValueError("the sandbox uid range must be above 1000 and not empty")
        self.base, self.count, self.lock_dir = base, count, Path(lock_dir)
        self._next = os.getpid() % count  # spread workers over the range

    def lease(self) -> UidLease:
        """Lease a free uid; ``NoFreeUid`` if all are taken."""
        self.lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(self.lock_dir)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise PermissionError(
                f"{self.lock_dir} must be a folder of uid {os.geteuid()} that only it can write"
            )
        for step in range(2 * self.count):
            first_pass = step < self.count
            uid = self.base + (self._next + step) % self.count
            path = self.lock_dir / f"{uid}.lock"
            try:  # a lock file created now: the uid was never leased since the folder was made
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
                _mark(fd, b"%s 0" % _CLEAN)
            except FileExistsError:
                fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            state = os.pread(fd, 64, 0).split()
            released = float(state[1]) if len(state) == 2 and state[0] == _CLEAN else None
            if first_pass and released is not None and time.time() - released < REUSE_DELAY_S:
                os.close(fd)  # its ended processes may still count against RLIMIT_NPROC
                continue
            # A uid released clean (or new) needs no /proc scan, which costs ~3 ms; one left busy
            # by a worker that died holding it is swept first.
            if released is None and not kill_uid(uid, timeout=0.5):
                os.close(fd)
                continue  # a leftover that will not die: skip this uid
            _mark(fd, _BUSY)
            self._next = (self._next + step % self.count + 1) % self.count
            return UidLease(uid, fd)
        raise NoFreeUid(f"all {self.count} sandbox uids from {self.base} are in use")
