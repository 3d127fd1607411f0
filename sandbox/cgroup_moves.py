"""Cheap moves into a cgroup: the kernel's ``favordynmods`` cgroup option.

Every seat's first process moves into the seat's cgroup before it execs bwrap. By default the
kernel makes such a move wait for an RCU grace period (it takes ``cgroup_threadgroup_rwsem`` for
writing, which leaves its fast mode through ``synchronize_rcu``): ~10 ms of wall time per seat
start on an idle 2-core host, measured, with no CPU spent. A cgroup hierarchy mounted with
``favordynmods`` keeps that lock in its slow mode for good: moves then take ~0.1 ms, and forks and
exits on the host pay a little more (the kernel's documented trade-off). The lock is global, so
one hierarchy with the option is enough: a named cgroup v1 hierarchy with no controller, mounted
at ``FAVOR_MOUNT``. Nothing about confinement changes. Switch off with
``QUATRESEPT_CGROUP_FAVOR=0``. This module must not import Django or ``engine``.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

FAVOR_MOUNT = Path(os.environ.get("QUATRESEPT_CGROUP_FAVOR_MOUNT", "/run/quatresept-cgroup-favor"))
_NAME = "quatresept-favor"


def _mounted_with_favor() -> bool:
    """Whether some cgroup hierarchy of this host already has ``favordynmods``."""
    try:
        with open("/proc/self/mountinfo") as mounts:
            for line in mounts:
                fields = line.split(" - ", 1)
                if len(fields) == 2 and fields[1].startswith("cgroup") and \
                        "favordynmods" in fields[1]:
                    return True
    except OSError:
        pass
    return False


@functools.cache
def favor_moves() -> str:
    """Make moves into cgroups cheap (once per process); what was found or done, in words."""
    if os.environ.get("QUATRESEPT_CGROUP_FAVOR", "1") == "0":
        return "off (QUATRESEPT_CGROUP_FAVOR=0)"
    if _mounted_with_favor():
        return "on (a hierarchy has favordynmods)"
    if os.geteuid() != 0:
        return "default (not root: cannot mount a hierarchy with favordynmods)"
    try:
        FAVOR_MOUNT.mkdir(mode=0o755, parents=True, exist_ok=True)
        libc = ctypes.CDLL(None, use_errno=True)
        options = f"none,name={_NAME},favordynmods".encode()
        if libc.mount(b"cgroup", str(FAVOR_MOUNT).encode(), b"cgroup", 0, options) != 0:
            error = ctypes.get_errno()
            return f"default (mounting {FAVOR_MOUNT} failed: {os.strerror(error)})"
    except OSError as exc:
        return f"default ({exc})"
    return f"on ({FAVOR_MOUNT} mounted with favordynmods)"
