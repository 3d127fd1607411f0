"""One lean mount namespace that every seat of this worker starts bwrap from.

bwrap builds a seat's root in a copy of the mount namespace it starts in, and reads the whole
mount table back (``/proc/self/mountinfo``) after every bind mount it makes, ~25 times a seat:
the kernel writes out every line, bwrap parses them. A host's table is mostly mounts no seat is
ever built from (``/sys`` and the cgroup hierarchies, ``/dev/pts``, ``/dev/shm``, what a container
engine binds over ``/proc``), yet every seat pays for copying them, reading them ~25 times and
taking them down. The lean namespace is a private copy of the worker's with those detached
(``detached_mounts``): the root file system and every other real one stay, so every path a seat
is built from (runtimes, staged bots, bwrap itself) is where it was. Detaching in a private copy
changes nothing on the host.

Made once per process, as root only (joining a mount namespace takes ``CAP_SYS_ADMIN``, which a
root worker has until the seat drops to its uid); ``QUATRESEPT_LEAN_MOUNTNS=off`` turns it off.
The seat helper joins it before it drops privileges (``sandbox/seat_exec.c``). This module must
not import Django or ``engine``.
"""

from __future__ import annotations

import functools
import json
import logging
import os

from sandbox.nsholder import hold_namespace

log = logging.getLogger(__name__)

CLONE_NEWNS = 0x00020000
#: File system types no seat is built from: kernel interfaces and per-session pseudo files.
PSEUDO_TYPES = frozenset({
    "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs", "tracefs", "securityfs",
    "pstore", "bpf", "configfs", "fusectl", "binfmt_misc", "hugetlbfs", "autofs", "nsfs",
    "efivarfs", "rpc_pipefs", "selinuxfs",
})
#: Folders whose sub-mounts no seat is built from (the folder itself stays: bwrap reads its own
#: ``/proc`` entries, and binds the four devices from ``/dev``).
UNDER = ("/sys", "/proc", "/dev")

#: A child that moves into a new private mount namespace, detaches the mount points given as a
#: JSON list on argv[1] (deepest first), says so, and waits for its stdin to close.
_HOLDER = (
    "import ctypes, json, os, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def check(result, what):\n"
    "    if result != 0:\n"
    "        sys.exit(what + ': ' + os.strerror(ctypes.get_errno()))\n"
    "check(libc.unshare(0x00020000), 'unshare')\n"
    # private first: a detach in a namespace that still shares the host's mounts would
    # propagate to the host
    "check(libc.mount(None, b'/', None, 0x4000 | 0x40000, None), 'make / private')\n"
    "for path in json.loads(sys.argv[1]):\n"
    "    check(libc.umount2(os.fsencode(path), 2), 'detach ' + path)\n"
    "sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.read()\n"
)


def _unescape(field: str) -> str:
    """A mountinfo path field with its octal escapes (``\\040`` for a space ...) decoded."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


def detached_mounts(mountinfo: str) -> list[str]:
    """The mount points of ``mountinfo`` (a ``/proc/PID/mountinfo`` text) that the lean namespace
    detaches: every mount of a ``PSEUDO_TYPES`` type and every mount below ``UNDER``'s folders,
    listed at its top-most point (detaching it takes what is mounted below it), once per mount
    stacked there, deepest first. The root, ``/proc``, ``/dev`` and every other file system
    stay."""
    points: list[str] = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        point = _unescape(fields[4])
        fstype = line.split(" - ", 1)[1].split()[0]
        if point != "/" and (fstype in PSEUDO_TYPES or any(_inside(point, f) for f in UNDER)):
            points.append(point)
    tops = [p for p in points if not any(_inside(p, q) for q in points)]
    return sorted(tops, key=lambda p: (-p.count("/"), p))


@functools.cache
def lean_mountns() -> int | None:
    """A descriptor of this process's lean mount namespace (made on first use), or None where it
    cannot be made (not root, switched off, or the kernel refuses): seats then start from the
    worker's own."""
    if os.geteuid() != 0 or os.environ.get("QUATRESEPT_LEAN_MOUNTNS") == "off":
        return None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as table:
            detached = detached_mounts(table.read())
    except OSError as error:
        log.warning("sandbox: no lean mount namespace (%s); seats start from the worker's", error)
        return None
    return hold_namespace(_HOLDER, [json.dumps(detached)], "mnt",
                          "no lean mount namespace; seats start from the worker's")
