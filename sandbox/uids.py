"""A pool of unprivileged uids, one per running seat, shared by every worker on the host.

RLIMIT_NPROC counts the processes of a uid machine-wide, so a per-seat process cap needs a uid per
seat. A uid is leased with a non-blocking ``flock`` on ``<lock_dir>/<uid>.lock``: the kernel drops
the lock when the holder exits, so a crashed worker never leaks a uid. A uid is handed out only when
no process runs under it. This module must not import Django or ``engine``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

from sandbox.procs import kill_uid, pids_of_uid

#: First uid and number of uids. Outside the usual ranges of real users (1000-60000) and of
#: systemd's dynamic users; override with QUATRESEPT_SANDBOX_UID_BASE / _COUNT.
UID_BASE = int(os.environ.get("QUATRESEPT_SANDBOX_UID_BASE", "300000"))
UID_COUNT = int(os.environ.get("QUATRESEPT_SANDBOX_UID_COUNT", "512"))
LOCK_DIR = Path(
    os.environ.get("QUATRESEPT_SANDBOX_LOCK_DIR", Path(tempfile.gettempdir()) / "quatresept-uids")
)


class NoFreeUid(RuntimeError):
    """Every uid of the pool is in use: too many seats run at once on this host."""


class UidLease:
    """One leased uid; ``release()`` (idempotent) kills anything left under it, then frees it."""

    def __init__(self, uid: int, lock_fd: int) -> None:
        self.uid = uid
        self._fd: int | None = lock_fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            kill_uid(self.uid)
        finally:
            os.close(self._fd)
            self._fd = None


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
        for step in range(self.count):
            uid = self.base + (self._next + step) % self.count
            path = self.lock_dir / f"{uid}.lock"
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if pids_of_uid(uid) and not kill_uid(uid, timeout=0.5):
                with contextlib.suppress(OSError):
                    os.close(fd)
                continue  # a leftover that will not die: skip this uid
            self._next = (self._next + step + 1) % self.count
            return UidLease(uid, fd)
        raise NoFreeUid(f"all {self.count} sandbox uids from {self.base} are in use")
