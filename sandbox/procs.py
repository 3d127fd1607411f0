"""Find and end processes by uid through /proc (no psutil). Used to prove a seat left nothing
behind and to sweep a seat's uid before it is reused. This module must not import Django or
``engine``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time


def pids_of_uid(uid: int) -> list[int]:
    """Pids of live processes whose real uid is ``uid`` (zombies excluded).

    ``/proc/<pid>`` is owned by the process's effective uid (root when not dumpable), so only
    those candidates have their status read: a scan costs a stat per process.
    """
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid not in (uid, 0):
                continue
            with open(f"/proc/{entry}/status", "rb") as status:
                text = status.read()
        except OSError:
            continue
        fields = dict(line.split(b":", 1) for line in text.splitlines() if b":" in line)
        uids = fields.get(b"Uid", b"").split()
        if uids and int(uids[0]) == uid and not fields.get(b"State", b"").strip().startswith(b"Z"):
            found.append(int(entry))
    return found


def kill_uid(uid: int, timeout: float = 2.0) -> bool:
    """SIGKILL every process of ``uid`` until none is left or ``timeout`` passes; True if none is.

    Only for a uid the caller owns exclusively (a leased sandbox uid), never a shared one.
    """
    if uid == 0:
        raise ValueError("refusing to kill every process of root")
    deadline = time.monotonic() + timeout
    while True:
        pids = pids_of_uid(uid)
        if not pids:
            return True
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
