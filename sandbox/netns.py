"""One empty network namespace that every seat of this worker joins, instead of a new one each.

A network namespace costs a seat about 1.3 ms of CPU to create and about 2 ms more of the
kernel's to take down (``cleanup_net``), on every seat of every match. What a seat's own
namespace gave it, isolation from the host's and the other seats' network, the shared one gives
as long as no seat can make a socket, which the syscall filter refuses (``sandbox.seccomp``:
``socket`` is denied; ``socketpair``, which makes two connected ends inside one process tree and
no name or address anyone else can reach, stays allowed). Its loopback is down and it has no
other interface: nothing in it can send or receive anything.

Made once per process (the first seat pays ~20 ms), as root only: joining it takes
``CAP_SYS_ADMIN``, which only a root worker has before the seat drops to its uid. This module must
not import Django or ``engine``.
"""

from __future__ import annotations

import functools
import os

from sandbox.nsholder import hold_namespace

CLONE_NEWNET = 0x40000000
#: A child that moves into a new network namespace, says so, and waits for its stdin to close.
_HOLDER = (
    "import ctypes, os, sys\n"
    "if ctypes.CDLL(None, use_errno=True).unshare(0x40000000) != 0:\n"
    "    sys.exit('unshare: ' + os.strerror(ctypes.get_errno()))\n"
    "sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.read()\n"
)


@functools.cache
def shared_netns() -> int | None:
    """A descriptor of this process's empty network namespace (made on first use), or None
    where it cannot be made (not root, or the kernel refuses): seats then unshare their own."""
    if os.geteuid() != 0 or os.environ.get("QUATRESEPT_SHARED_NETNS") == "off":
        return None
    return hold_namespace(_HOLDER, [], "net",
                          "no shared network namespace; each seat makes its own")
