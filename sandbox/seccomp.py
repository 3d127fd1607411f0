"""The syscall policy of a confined seat: defined once here, compiled for each backend.
Default allow, and deny what no bot needs and what a covert channel between seats or an escape
uses: every file-lock command (``fcntl`` record and open-file-description locks, leases, dnotify;
``flock``), process inspection (``ptrace``, ``process_vm_*``, ``kcmp``, ``pidfd_getfd``), the
kernel keyring, sockets (``socket``: no seat has a network, and seats may share one empty network
namespace; ``socketpair`` stays), ``perf_event_open``, ``bpf``, ``userfaultfd``, ``io_uring_*``,
every mount and namespace call (``mount``, ``umount2``, the new mount API, ``unshare``, ``setns``,
``clone`` with a namespace flag), page-cache probes and eviction (``cachestat``,
``preadv2``/``pwritev2``, ``fadvise64``, ``readahead``), host-wide counters (``sysinfo``: free
memory, process count), file-change watches (``inotify``, ``fanotify``) and a few admin calls.
Denied calls fail with ``EPERM``; ``clone3`` fails with ``ENOSYS`` (its flags cannot be inspected
by a filter; the C library then falls back to ``clone``, which can).
``bpf_program()`` is the compiled BPF for bwrap's ``--seccomp FD`` (built with libseccomp through
``pyseccomp``, cached per process); ``docker_profile()`` is the same policy as a Docker seccomp
JSON profile. This module must not import Django or ``engine``.
"""

from __future__ import annotations

import errno
import functools
import tempfile
from dataclasses import dataclass
from typing import Any

#: fcntl commands that take, test or watch a lock (record, OFD, lease) or a directory change.
F_GETLK, F_SETLK, F_SETLKW = 5, 6, 7
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY = 1024, 1025, 1026
LOCK_COMMANDS = (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW,
                 F_SETLEASE, F_GETLEASE, F_NOTIFY)
#: clone flags that create a namespace.
NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                   0x40000000, 0x00000080)

#: Denied outright (EPERM), by name; names this kernel's libseccomp does not know are skipped.
DENIED = (
    # locks: a lock on a shared read-only file is visible to every seat
    "flock",
    # other processes' memory and descriptors
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    "move_pages", "migrate_pages", "mbind", "set_mempolicy", "set_mempolicy_home_node",
    "get_mempolicy",
    # the kernel keyring is shared by uid
    "keyctl", "add_key", "request_key",
    # kernel attack surface no bot needs
    "perf_event_open", "bpf", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "lookup_dcookie", "personality",
    # mounts and namespaces (escape)
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at",
    "open_by_handle_at",
    # page-cache probes and eviction (a channel through shared files)
    "cachestat", "preadv2", "pwritev2", "fadvise64", "readahead", "remap_file_pages",
    # host-wide counters: free memory, process count, load (sysconf's _SC_PHYS_PAGES and
    # _SC_AVPHYS_PAGES then mean nothing: /proc/meminfo shows the seat's own cap instead)
    "sysinfo",
    # sockets: a seat has no network, and its network namespace may be shared with the other
    # seats (sandbox.netns), where an abstract Unix socket would join them; socketpair (two ends
    # inside one seat, no name or address) stays allowed
    "socket",
    # watches on shared files
    "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",
    # administration
    "acct", "quotactl", "quotactl_fd", "swapon", "swapoff", "reboot", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "syslog", "iopl",
    "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "vhangup",
    "sethostname", "setdomainname", "uselib", "ustat", "sysfs", "nfsservctl",
    # obsolete or 32-bit only (Docker's default profile refuses them too)
    "create_module", "get_kernel_syms", "query_module", "_sysctl", "stime", "umount", "vm86",
    "vm86old",
)
#: Denied with ENOSYS: a runtime probes these and falls back when the kernel "lacks" them.
NOT_IMPLEMENTED = ("clone3",)


@dataclass(frozen=True)
class Rule:
    """Deny ``syscall`` with ``errno`` when every ``(index, op, value, mask)`` condition holds
    (``op`` is ``"eq"`` or ``"masked_eq"``: ``arg & mask == value``); no condition: always."""

    syscall: str
    errno: int
    args: tuple[tuple[int, str, int, int], ...] = ()


def policy() -> tuple[Rule, ...]:
    """The whole policy, one rule per (syscall, condition set)."""
    rules = [Rule(name, errno.EPERM) for name in DENIED]
    rules += [Rule(name, errno.ENOSYS) for name in NOT_IMPLEMENTED]
    for name in ("fcntl", "fcntl64"):
        rules += [Rule(name, errno.EPERM, ((1, "eq", cmd, 0),)) for cmd in LOCK_COMMANDS]
    rules += [Rule("clone", errno.EPERM, ((0, "masked_eq", flag, flag),))
              for flag in NAMESPACE_FLAGS]
    return tuple(rules)


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its ``pyseccomp`` binding) cannot be loaded on this host."""


@functools.cache
def bpf_program() -> bytes:
    """The policy compiled to a BPF program for this machine's architecture (cached)."""
    try:
        import pyseccomp as sc
    except (ImportError, RuntimeError, OSError) as exc:
        raise SeccompUnavailable(
            f"cannot load libseccomp ({exc}): `apt-get install libseccomp2` and "
            "`pip install pyseccomp`"
        ) from exc
    ops = {"eq": sc.EQ, "masked_eq": sc.MASKED_EQ}
    flt = sc.SyscallFilter(sc.ALLOW)
    for rule in policy():
        number = sc.resolve_syscall(sc.Arch.NATIVE, rule.syscall)
        if number < 0:  # unknown to libseccomp, or not a syscall of this architecture
            continue
        conditions = [sc.Arg(index, ops[op], mask if op == "masked_eq" else value,
                             value if op == "masked_eq" else 0)
                      for index, op, value, mask in rule.args]
        flt.add_rule(sc.ERRNO(rule.errno), number, *conditions)
    with tempfile.TemporaryFile() as out:
        flt.export_bpf(out)
        out.seek(0)
        return out.read()


def docker_profile() -> dict[str, Any]:
    """The same policy as a Docker seccomp profile (``security_opt=["seccomp=<json>"]``)."""
    ops = {"eq": "SCMP_CMP_EQ", "masked_eq": "SCMP_CMP_MASKED_EQ"}
    syscalls = []
    for rule in policy():
        entry: dict[str, Any] = {"names": [rule.syscall], "action": "SCMP_ACT_ERRNO",
                                 "errnoRet": rule.errno}
        if rule.args:
            entry["args"] = [
                {"index": index, "op": ops[op], "value": mask if op == "masked_eq" else value,
                 "valueTwo": value if op == "masked_eq" else 0}
                for index, op, value, mask in rule.args
            ]
        syscalls.append(entry)
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
                          "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"],
        "syscalls": syscalls,
    }
