"""Pre-started Docker seats: the container's start moved off the match's path, each seat still
fresh (one container per seat of one match, never reused).

``WarmDockerRunner`` keeps up to ``size`` containers created and started ahead, each running a
trusted loader (``LOADER``, from the runtime image's own python3). The seat's stdin, stdout and
stderr are three named pipes in a folder of the seat's own (bound read-only at ``/run/seat``): the
worker and the bot talk through the kernel's pipes, not through the engine's attach stream (which
relays every line through containerd's shim, dockerd and the ``docker`` CLI: three more processes
to schedule for each line, the larger part of a Docker match's time on a busy host). The loader
opens the pipes, says so with one byte, and waits for its bot. ``start(bot)`` takes one container,
writes the bot's files (a tar) and command into its stdin pipe and returns at once; the loader
unpacks the files into the container's own ``/bot`` (a size-capped tmpfs), makes them read-only,
puts the three pipes on descriptors 0-2, drops to uid 1000 (its only capabilities, SETUID and
SETGID, go with the switch; ``no-new-privileges`` keeps them gone), sets the address-space rlimit,
and ``exec``s the bot with ``BOT_ENV`` alone. The bot then sees what a cold seat sees: the same
image, limits, network (none), user, environment, its files read-only. A filler thread starts the
next containers meanwhile. The container's life is still watched through ``docker start -ai``
(its exit code). Closing a seat kills its container (SIGKILL to its init: the kernel ends every
process of its pid namespace) without waiting for the engine's teardown; the removal is left to a
thread of its own.

Only the runner's own ``limits`` are served warm; other limits take the cold path.

A pool container carries, besides its worker's name (``OWNER_LABEL``), the identity of the pool
that made it (``POOL_LABEL``: its process's pid and start time, a pool number). When that process
dies its pipes close, and the loader, reading end of input, exits (``auto_remove`` removes it); a
loader not yet connected gives up after ``CONNECT_S``. A new pool also removes the containers (and
seat folders) of its worker whose maker is dead (``remove_stale_pool_containers``), and ``close``
(called at exit) the ones it holds. This module must not import Django or ``engine``.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import errno
import hashlib
import io
import itertools
import json
import os
import re
import secrets
import select
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sandbox.package import MAX_ENTRIES, MAX_UNPACKED_BYTES, InstalledBot
from sandbox.runners.base import BotProcess, Limits, describe_returncode
from sandbox.runners.docker import (
    BOT_DIR,
    BOT_ENV,
    OWNER_LABEL,
    ContainerProcess,
    DockerRunner,
    DockerUnavailable,
    default_client,
    sandbox_owner,
)
from sandbox.runners.runtimes import INTERPRETER_FLAGS

#: Where the seat's pipes appear in its container.
SEAT_DIR = "/run/seat"
#: The size of a pre-started seat's ``/bot`` tmpfs: every package the platform accepts fits,
#: unpacked, each of its entries rounded up to a 4 KiB page (it was the 16 MiB of ``/tmp``, so a
#: bot of 16-25 MiB unpacked, accepted at upload, died in its loader and was charged a crash).
BOT_DIR_BYTES = MAX_UNPACKED_BYTES + (MAX_ENTRIES + 1) * 4096 + 1024 * 1024
#: Seconds a loader and the worker wait for each other's end of the pipes.
CONNECT_S = 30.0

#: The container's pid 1, as root with SETUID and SETGID only: opens the seat's pipes (giving up if
#: the worker does not come, or its attach ends), says "R", reads an 8-byte length, a JSON header
#: and a tar from the stdin pipe (end of input: the worker is gone) and unpacks the bot. Then it
#: forks the bot (uid 1000, the pipes on 0-2, the address-space rlimit, ``BOT_ENV`` alone) and
#: becomes uid 1001 itself (no capability left, not dumpable: the bot can neither signal nor trace
#: it; pid 1 ignores signals it has no handler for). It reaps what is orphaned to it until the bot
#: exits, then reaps what has ended since. Nothing else left: it writes the bot's exit code
#: (``waitstatus_to_exitcode``) to the status pipe and exits, which ends the container. Something
#: of the bot's still running (uid 1001 may not signal uid 1000): it exits at once with the bot's
#: code (128 + N for signal N) and writes no status; the kernel kills the rest of the pid
#: namespace, and the ``docker`` CLI reports that code once the container has stopped.
LOADER = f"connect_s = {CONNECT_S!r}\n" + """
import io, json, os, resource, select, tarfile, time
seat = "/run/seat/"
deadline = time.monotonic() + connect_s
def connect(name):
    while True:
        try:
            return os.open(seat + name, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            if time.monotonic() > deadline or select.select([0], [], [], 0.005)[0]:
                os._exit(71)
fd_in = os.open(seat + "in", os.O_RDONLY | os.O_NONBLOCK)
fd_err = connect("err")
fd_out = connect("out")
fd_status = connect("status")
for fd in (fd_in, fd_err, fd_out, fd_status):
    os.set_blocking(fd, True)
os.write(fd_out, b"R")
def take(n):
    data = bytearray()
    while len(data) < n:
        chunk = os.read(fd_in, n - len(data))
        if not chunk:
            os._exit(70)
        data += chunk
    return bytes(data)
head = json.loads(take(int.from_bytes(take(8), "big")))
file_cap = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, (file_cap, file_cap))  # the bot's files, unpacked
with tarfile.open(fileobj=io.BytesIO(take(head["tar"]))) as archive:
    try:
        archive.extractall("/bot", filter="data")
    except TypeError:
        archive.extractall("/bot")
for folder, dirs, files in os.walk("/bot"):
    for name in files:
        os.chmod(os.path.join(folder, name), 0o444)
    for name in dirs:
        os.chmod(os.path.join(folder, name), 0o555)
os.chmod("/bot", 0o555)
bot = os.fork()
if bot == 0:
    try:
        for fd, target in ((fd_in, 0), (fd_out, 1), (fd_err, 2)):
            os.dup2(fd, target)
        os.closerange(3, 65536)
        os.setgroups([])
        os.setresgid(1000, 1000, 1000)
        os.setresuid(1000, 1000, 1000)
        resource.setrlimit(resource.RLIMIT_AS, (head["as"], head["as"]))
        resource.setrlimit(resource.RLIMIT_FSIZE, (head["fsize"], head["fsize"]))
        os.chdir("/bot")
        os.execvpe(head["argv"][0], head["argv"], head["env"])
    finally:
        os._exit(127)
for fd in (fd_in, fd_out, fd_err):
    os.close(fd)
os.setgroups([])
os.setresgid(1001, 1001, 1001)
os.setresuid(1001, 1001, 1001)
while True:
    pid, status = os.waitpid(-1, 0)
    if pid == bot:
        break
code = os.waitstatus_to_exitcode(status)
try:
    while os.waitpid(-1, os.WNOHANG)[0]:
        pass
    os._exit(code if code >= 0 else 128 - code)
except ChildProcessError:
    pass
os.write(fd_status, str(code).encode())
os._exit(0)
"""

#: The pool that made a container: ``"<pid>:<start time>:<pool>"``, its process's identity
#: (``process_identity``) and a number telling the pools of one process apart.
POOL_LABEL = "quatresept.pool"
#: Where a pool keeps the files the engine binds into its containers (the seats' pipes and
#: /proc/meminfo): a folder the engine reaches by the same path (the bot cache, when the worker
#: is a container).
STATE_ENV = "QUATRESEPT_DOCKER_STATE"


def process_identity(pid: int | None = None) -> str:
    """``"<pid>:<start time in clock ticks since boot>"``: names one process, not a reused pid."""
    pid = os.getpid() if pid is None else pid
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return f"{pid}:{int(fields[19])}"


def _process_alive(label: str) -> bool:
    """Whether the process a pool label (or a process identity) names still runs."""
    pid, start, *_ = [*label.split(":"), ""]
    try:
        return process_identity(int(pid)) == f"{pid}:{start}"
    except (OSError, ValueError, IndexError):
        return False


_POOLS = itertools.count()


def remove_stale_pool_containers(owner: str | None = None, client: Any = None) -> int:
    """Remove the pool containers of worker ``owner`` (default: this one) whose maker process is
    gone, running or not; how many. Those of live pools (sibling worker processes) stay."""
    owner = owner or sandbox_owner()
    client = client if client is not None else default_client()
    found = client.containers(all=True, filters={"label": [f"{OWNER_LABEL}={owner}", POOL_LABEL]})
    stale = [c for c in found if not _process_alive((c.get("Labels") or {}).get(POOL_LABEL, ""))]
    for container in stale:
        with contextlib.suppress(Exception):
            client.remove_container(container["Id"], force=True)
    return len(stale)


def owner_folder(owner: str) -> str:
    """The name of worker ``owner``'s folder of seats: readable, and distinct per owner."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", owner)[:40]
    return f"{slug}-{hashlib.sha256(owner.encode()).hexdigest()[:12]}"


def _remove_stale_seat_folders(state: Path) -> None:
    """Seat folders (``seat-<pid>-<start>-<n>-<token>``) whose maker process is gone."""
    for folder in state.glob("seat-*"):
        parts = folder.name.split("-")
        if len(parts) >= 3 and not _process_alive(f"{parts[1]}:{parts[2]}"):
            shutil.rmtree(folder, ignore_errors=True)


def bot_tar(folder: Path) -> bytes:
    """The bot's folder as a tar (names relative to it, no owners)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(folder.rglob("*")):
            info = archive.gettarinfo(str(path), str(path.relative_to(folder)))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if info.isreg():
                with path.open("rb") as data:
                    archive.addfile(info, data)
            elif info.isdir():
                archive.addfile(info)
    return buffer.getvalue()


class _Pipes:
    """The worker's ends of a seat's three named pipes and the folder holding them."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        #: stdin, stdout, stderr (until handed over), then none.
        self.fds: list[int] = []
        #: The status pipe: the bot's exit code, written by pid 1 once nothing else runs.
        self.status: int | None = None

    def make(self) -> None:
        """The folder and its pipes: only the owner may open them (the container's root is the
        owner when the worker runs as root; otherwise any uid may, in a folder none can list)."""
        self.folder.mkdir(mode=0o711)
        mode = 0o600 if os.geteuid() == 0 else 0o666
        for name in ("in", "out", "err", "status"):
            os.mkfifo(self.folder / name, mode)
            os.chmod(self.folder / name, mode)

    def connect(self, alive: Any, deadline: float) -> None:
        """Open the worker's ends once the loader holds its own and has said "R"; ``alive()``
        false or the deadline passed: ``DockerUnavailable``."""
        while True:
            try:
                self.fds.append(os.open(self.folder / "in", os.O_WRONLY | os.O_NONBLOCK))
                break
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
            if not alive() or time.monotonic() > deadline:
                raise DockerUnavailable("the pre-started container's loader did not connect")
            time.sleep(0.005)
        err = os.open(self.folder / "err", os.O_RDONLY | os.O_NONBLOCK)
        self.fds.append(err)
        out = os.open(self.folder / "out", os.O_RDONLY | os.O_NONBLOCK)
        self.fds[1:] = [out, err]  # stdin, stdout, stderr
        self.status = os.open(self.folder / "status", os.O_RDONLY | os.O_NONBLOCK)
        while not select.select([out], [], [], 0.05)[0]:
            if not alive() or time.monotonic() > deadline:
                raise DockerUnavailable("the pre-started container's loader did not start")
        if os.read(out, 1) != b"R":
            raise DockerUnavailable("the pre-started container's loader failed")

    def send(self, data: bytes, deadline: float) -> None:
        """Write ``data`` to the stdin pipe by ``deadline``."""
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.fds[0], view):]
            except BlockingIOError:
                pass
            except OSError as exc:
                raise DockerUnavailable(f"the pre-started container is gone: {exc}") from exc
            left = max(0.0, deadline - time.monotonic())
            if view and not select.select([], [self.fds[0]], [], left)[1]:
                raise DockerUnavailable("the pre-started container does not read its files")

    def close(self) -> None:
        for fd in [*self.fds, *([] if self.status is None else [self.status])]:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []
        self.status = None


class _Warm:
    """One pre-started container: its id, its ``docker start -ai`` and its pipes."""

    def __init__(self, container: str, popen: subprocess.Popen[bytes], pipes: _Pipes) -> None:
        self.container = container
        self.popen = popen
        self.pipes = pipes


class PooledSeatProcess(ContainerProcess):
    """A seat of a pre-started container: its pipes are the named pipes, not the CLI's, and its
    exit code comes from the status pipe, written by the container's pid 1 once the bot has exited
    and nothing else of the seat runs (``LOADER``); the container's own end, and the ``docker``
    CLI's exit after it (0.1-0.2 s of engine work), are waited for by nobody.

    ``kill``: once the status is in, nothing is left to kill; the CLI is killed and the container
    removed by the runner's remover thread. Otherwise the engine kills the container first (its
    SIGKILL returns once the container has stopped).
    """

    def __init__(self, warm: _Warm, runner: WarmDockerRunner, **kw: Any) -> None:
        super().__init__(warm.popen, container=warm.container, kill_tree=self._end,
                         release=self._release_warm, **kw)
        self._warm = warm
        self._runner = runner
        self._code: int | None = None
        self._status = bytearray()

    def fds(self) -> tuple[int, int, int]:
        pipes = self._warm.pipes
        if not pipes.fds:
            raise RuntimeError("the pipes were already handed over")
        fds = tuple(pipes.fds)
        pipes.fds = []
        return fds  # type: ignore[return-value]

    def poll(self) -> int | None:
        return self.wait_exit(0)

    def wait_exit(self, timeout: float) -> int | None:
        """The bot's exit code once its whole seat has ended; from the CLI (the container's exit
        code) if pid 1 itself was killed."""
        if self._code is not None:
            return self._code
        status = self._warm.pipes.status
        deadline = time.monotonic() + max(timeout, 0)
        while status is not None:
            try:
                chunk = os.read(status, 64)
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([status], [], [], left)[0]:
                    return None
                continue
            if chunk:
                self._status += chunk
                continue
            if self._status:  # pid 1 wrote the code and left
                with contextlib.suppress(ValueError):
                    self._code = int(self._status.decode())
                    return self._code
            break  # pid 1 was killed: the CLI reports the container's exit
        code = self.popen.poll()
        if code is None and timeout > 0:
            code = super().wait_exit(max(0.0, deadline - time.monotonic()))
        if code is not None:
            self._code = code
        return code

    def describe_exit(self) -> str:
        code = self.poll()
        if code is None:
            return "is still running"
        return describe_returncode(code, 128)

    def _end(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(Exception):
                self._runner.client.kill(self.container, signal="SIGKILL")
        with contextlib.suppress(ProcessLookupError):
            self.popen.kill()

    def _release_warm(self) -> None:
        """Keep the exit code pid 1 may have written, close the status pipe here (no later
        ``poll`` may read a descriptor the remover thread closed, or one the process has since
        reused for another seat's pipe), and leave the container to the remover."""
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                stream.close()
        pipes = self._warm.pipes
        self.wait_exit(0)
        status, pipes.status = pipes.status, None
        if status is not None:
            with contextlib.suppress(OSError):
                os.close(status)
        self._runner._remover.put(self.container, pipes)


class WarmDockerRunner(DockerRunner):
    """A ``DockerRunner`` serving seats from at most ``size`` pre-started containers, each handed
    out once and removed after its seat. ``state``: where the seats' pipes and /proc/meminfo
    files go, in a subfolder per worker (``owner_folder``; default ``$STATE_ENV``, else a new
    temporary folder)."""

    name = "docker"

    def __init__(self, *, size: int = 4, state: Path | None = None, **options: Any) -> None:
        if size < 1:
            raise ValueError(f"a pool holds at least one container, not {size}")
        super().__init__(**options)
        self.size = size
        #: This pool's ``POOL_LABEL`` value.
        self.identity = f"{process_identity()}:{next(_POOLS)}"
        if state is None and os.environ.get(STATE_ENV):
            state = Path(os.environ[STATE_ENV])
        #: The state folder is this runner's own (a temporary one): ``close`` removes it.
        self.owns_state = state is None
        #: The folder given (or made); the seats' files go in ``state``, a subfolder of it.
        self.state_root = state or Path(tempfile.mkdtemp(prefix="qs-docker-warm-"))
        #: This worker's seats' folder: workers sharing the root (compose's scaled workers, each
        #: in a pid namespace of its own, where another's pool process looks dead) never meet.
        self.state = self.state_root / owner_folder(sandbox_owner())
        self.state.mkdir(parents=True, exist_ok=True)
        for folder in (self.state_root, self.state):
            folder.chmod(0o711)
        self._base_spec = self.warm_spec()
        self._seat_names = itertools.count()
        self._ready: collections.deque[_Warm] = collections.deque()
        self._lock = threading.Condition()
        self._closed = False
        self._remover = _Remover(self)
        self._filler = threading.Thread(target=self._fill, name="docker-warm-fill", daemon=True)
        self._filler.start()
        atexit.register(self.close)

    def warm_spec(self) -> dict[str, Any]:
        """The cold spec for this runner's limits, with the loader as root and /bot a tmpfs (the
        seat's pipes are bound per container, ``_start_one``)."""
        limits = self.limits
        spec = self._spec_for(limits)
        host = spec["host_config"]
        host["Binds"] = [bind for bind in host["Binds"] if bind.endswith(":/proc/meminfo:ro")]
        # room for any package the platform accepts, unpacked (a cold seat binds its folder)
        host["Tmpfs"][BOT_DIR] = f"rw,nosuid,nodev,size={BOT_DIR_BYTES},mode=755"
        # The loader may write a package's largest file (its soft limit raised to this hard
        # one, ``LOADER``); the bot gets a cold seat's cap on each file it writes, hard and soft.
        for ulimit in host["Ulimits"]:
            if ulimit["Name"] == "fsize":
                ulimit["Hard"] = max(ulimit["Hard"], BOT_DIR_BYTES)
        host["CapAdd"] = ["SETUID", "SETGID"]
        host["Init"] = False  # the loader is pid 1
        spec["user"] = "0:0"
        spec["command"] = ["python3", "-I", "-S", "-c", LOADER]
        spec["labels"][POOL_LABEL] = self.identity
        return spec

    def _spec_for(self, limits: Limits) -> dict[str, Any]:
        class _Stub:  # the meminfo file goes beside a real folder of the runner's
            folder = self.state / "none"
            command = ("python3", "main.py")

        return self.container_spec(_Stub(), limits)  # type: ignore[arg-type]

    def _start_one(self) -> _Warm:
        pid, start, _ = self.identity.split(":")
        name = f"seat-{pid}-{start}-{next(self._seat_names)}-{secrets.token_hex(8)}"
        pipes = _Pipes(self.state / name)
        pipes.make()
        spec = json.loads(json.dumps(self._base_spec))
        spec["host_config"]["Binds"].append(f"{self.host_path(pipes.folder)}:{SEAT_DIR}:ro")
        try:
            container = self.client.create_container(**spec)["Id"]
        except BaseException:
            shutil.rmtree(pipes.folder, ignore_errors=True)
            raise
        try:
            popen = subprocess.Popen(
                [self.docker_cli, "start", "--attach", "--interactive", container],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                bufsize=0, env=self._cli_env(), start_new_session=True,
            )
        except BaseException:
            self._remover.put(container, pipes)
            raise
        warm = _Warm(container, popen, pipes)
        try:
            pipes.connect(lambda: popen.poll() is None, time.monotonic() + CONNECT_S)
        except BaseException:
            self._discard(warm)
            raise
        return warm

    def _discard(self, warm: _Warm) -> None:
        """A container nobody will use: killed, its pipes closed, removed in the background."""
        with contextlib.suppress(Exception):
            warm.popen.kill()
            warm.popen.wait(timeout=5)
        for stream in (warm.popen.stdin, warm.popen.stdout, warm.popen.stderr):
            if stream is not None:
                stream.close()
        self._remover.put(warm.container, warm.pipes)

    def _fill(self) -> None:
        with contextlib.suppress(Exception):  # no engine yet: the next pool sweeps
            remove_stale_pool_containers(client=self.client)
        with contextlib.suppress(OSError):
            _remove_stale_seat_folders(self.state)
        while True:
            with self._lock:
                while not self._closed and len(self._ready) >= self.size:
                    self._lock.wait()
                if self._closed:
                    return
            try:
                warm = self._start_one()
            except Exception:  # the engine is away: the next start() says so, on the cold path
                with self._lock:
                    self._lock.wait(timeout=1)
                continue
            with self._lock:
                if not self._closed:
                    self._ready.append(warm)
                    self._lock.notify_all()
                    continue
            self._discard(warm)  # closed meanwhile: this one is nobody's

    def start(self, bot: object, limits: Limits | None = None) -> BotProcess:
        if not isinstance(bot, InstalledBot):
            raise TypeError(f"the docker runner takes an InstalledBot, not {type(bot).__name__}")
        if limits is not None and limits != self.limits:
            return super().start(bot, limits)
        runtime, entry, *args = bot.command
        data = bot_tar(bot.folder)
        head = json.dumps({
            "tar": len(data), "as": self.limits.memory_bytes, "fsize": self.limits.file_bytes,
            "env": dict(BOT_ENV),
            "argv": [runtime, *INTERPRETER_FLAGS.get(runtime, ()), entry, *args],
        }).encode()
        files = len(head).to_bytes(8, "big") + head + data
        # Bounded: at most two matches' containers wait for removal behind the one starting.
        self._remover.wait_below(2 * self.size, timeout=30)
        warm = self._take()
        if warm is not None:
            with contextlib.suppress(DockerUnavailable):  # it died waiting (the engine
                return self._hand_over(warm, files)       # restarted, say): a new one
        try:
            warm = self._start_one()
        except DockerUnavailable:
            raise
        except Exception as exc:
            raise DockerUnavailable(f"cannot start a bot container: {exc}") from exc
        return self._hand_over(warm, files)

    def _hand_over(self, warm: _Warm, files: bytes) -> PooledSeatProcess:
        """The seat of ``warm``, its loader sent the bot's ``files``; the container is
        discarded if that fails."""
        try:
            warm.pipes.send(files, time.monotonic() + 30)
        except BaseException:
            self._discard(warm)
            raise
        return PooledSeatProcess(warm, self, backend=self.name, signal_base=128)

    def _take(self) -> _Warm | None:
        """A pre-started container whose ``docker start`` still runs, each handed out once;
        the dead ones met on the way are removed."""
        while True:
            with self._lock:
                warm = self._ready.popleft() if self._ready else None
                self._lock.notify_all()
            if warm is None or warm.popen.poll() is None:
                return warm
            self._discard(warm)

    def close(self) -> None:
        """Stop filling, remove the containers not taken, wait until every container this
        runner removes is gone, and remove the state folder if the runner made it. Idempotent
        (also called at exit)."""
        atexit.unregister(self.close)
        with self._lock:
            self._closed = True
            self._lock.notify_all()
            left, self._ready = list(self._ready), collections.deque()
        for warm in left:
            self._discard(warm)
        self._filler.join()
        self._remover.drain()
        if self.owns_state:
            shutil.rmtree(self.state_root, ignore_errors=True)


class _Remover:
    """Removes killed containers, and then their seat folders, on up to ``threads`` threads of
    its own (a removal takes 0.1-0.3 s, mostly waiting for the engine)."""

    def __init__(self, runner: DockerRunner, threads: int = 4) -> None:
        self.runner = runner
        self.threads = threads
        self.queue: collections.deque[tuple[str, _Pipes | None]] = collections.deque()
        self.idle = threading.Condition()
        self.running: list[threading.Thread] = []
        self.busy = 0

    def put(self, container: str, pipes: _Pipes | None = None) -> None:
        with self.idle:
            self.queue.append((container, pipes))
            self._spawn()

    def _spawn(self) -> None:
        """Start one more thread if fewer than ``threads`` run (the lock held)."""
        self.running = [thread for thread in self.running if thread.is_alive()]
        if len(self.running) < self.threads:
            thread = threading.Thread(target=self._run, name="docker-remove", daemon=True)
            self.running.append(thread)
            thread.start()

    def pending(self) -> int:
        """Containers put here and not yet removed."""
        with self.idle:
            return len(self.queue) + self.busy

    def wait_below(self, count: int, timeout: float) -> None:
        """Return once fewer than ``count`` containers wait for removal (or after ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self.idle:
            while len(self.queue) + self.busy >= count and time.monotonic() < deadline:
                self.idle.wait(max(0.0, deadline - time.monotonic()))

    def _run(self) -> None:
        while True:
            with self.idle:
                if not self.queue:  # leaves the list under the lock: a ``put`` from now on
                    with contextlib.suppress(ValueError):  # starts a thread of its own
                        self.running.remove(threading.current_thread())
                    self.idle.notify_all()
                    return
                container, pipes = self.queue.popleft()
                self.busy += 1
            try:
                with contextlib.suppress(Exception):  # the engine's error: the next pool sweeps
                    self.runner._remove(container)
                if pipes is not None:
                    pipes.close()
                    shutil.rmtree(pipes.folder, ignore_errors=True)
            finally:
                with self.idle:
                    self.busy -= 1
                    self.idle.notify_all()

    def drain(self) -> None:
        """Return once every container put here is removed."""
        while True:
            with self.idle:
                threads = [thread for thread in self.running if thread.is_alive()]
                if not threads and not self.queue:
                    return
                if not threads:  # a thread died with work left: never spin on it
                    self._spawn()
                    threads = list(self.running)
            for thread in threads:
                thread.join()
