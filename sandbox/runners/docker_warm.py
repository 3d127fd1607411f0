"""Pre-started Docker seats: the container's start moved off the match's path, each seat still
fresh (one container per seat of one match, never reused).

``WarmDockerRunner`` keeps ``size`` containers created and started ahead, each running a trusted
loader (``LOADER``, from the runtime image's own python3) blocked on its stdin, attached through
``docker start -ai`` like the cold runner's. ``start(bot)`` takes one, sends it the bot's files
(a tar) and command, and returns at once; the loader unpacks the files into the container's own
``/bot`` (a size-capped tmpfs), makes them read-only, drops to uid 1000 (its only capabilities,
SETUID and SETGID, go with the switch; ``no-new-privileges`` keeps them gone), sets the
address-space rlimit, and ``exec``s the bot with ``BOT_ENV`` alone. The bot then sees what a cold
seat sees: the same image, limits, network (none), user, environment, its files read-only. A
filler thread starts the next containers meanwhile. Closing removes the container in the
background: it is killed before ``close`` returns, and its removal (the slow part of a close)
is the only thing left for later.

Only the runner's own ``limits`` are served warm; other limits take the cold path. This module
must not import Django or ``engine``.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import subprocess
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any

from sandbox.package import InstalledBot
from sandbox.runners.base import BotProcess, Limits
from sandbox.runners.docker import (
    BOT_DIR,
    BOT_ENV,
    ContainerProcess,
    DockerRunner,
    DockerUnavailable,
)
from sandbox.runners.runtimes import INTERPRETER_FLAGS

#: Runs as root in the container with SETUID and SETGID only; reads an 8-byte length, a JSON
#: header and a tar from stdin (exactly: not a byte of the protocol that follows), then becomes
#: the bot.
LOADER = """
import io, json, os, resource, tarfile
def take(n):
    data = bytearray()
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            os._exit(70)
        data += chunk
    return bytes(data)
head = json.loads(take(int.from_bytes(take(8), "big")))
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
os.setgroups([])
os.setgid(1000)
os.setuid(1000)
resource.setrlimit(resource.RLIMIT_AS, (head["as"], head["as"]))
os.chdir("/bot")
os.execvpe(head["argv"][0], head["argv"], head["env"])
"""


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


class WarmDockerRunner(DockerRunner):
    """A ``DockerRunner`` serving seats from ``size`` pre-started containers."""

    name = "docker"

    def __init__(self, *, size: int = 4, **options: Any) -> None:
        super().__init__(**options)
        self.size = size
        #: Where this runner's files for the engine live (the seats' /proc/meminfo).
        self.state = Path(tempfile.mkdtemp(prefix="qs-docker-warm-"))
        self.state.chmod(0o711)
        self._ready: collections.deque[tuple[str, subprocess.Popen[bytes]]] = collections.deque()
        self._lock = threading.Condition()
        self._closed = False
        self._remover = _Remover(self)
        self._filler = threading.Thread(target=self._fill, name="docker-warm-fill", daemon=True)
        self._filler.start()

    def warm_spec(self) -> dict[str, Any]:
        """The cold spec for this runner's limits, with the loader as root and /bot a tmpfs."""
        limits = self.limits
        spec = self._spec_for(limits)
        host = spec["host_config"]
        host["Binds"] = [bind for bind in host["Binds"] if bind.endswith(":/proc/meminfo:ro")]
        host["Tmpfs"][BOT_DIR] = f"rw,nosuid,nodev,size={limits.tmp_bytes},mode=755"
        host["CapAdd"] = ["SETUID", "SETGID"]
        spec["user"] = "0:0"
        spec["command"] = ["python3", "-I", "-S", "-c", LOADER]
        return spec

    def _spec_for(self, limits: Limits) -> dict[str, Any]:
        class _Stub:  # the meminfo file goes beside a real folder of the runner's
            folder = self.state / "none"
            command = ("python3", "main.py")

        return self.container_spec(_Stub(), limits)  # type: ignore[arg-type]

    def _start_one(self) -> tuple[str, subprocess.Popen[bytes]]:
        container = self.client.create_container(**self.warm_spec())["Id"]
        popen = subprocess.Popen(
            [self.docker_cli, "start", "--attach", "--interactive", container],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            bufsize=0, env=self._cli_env(), start_new_session=True,
        )
        return container, popen

    def _fill(self) -> None:
        while True:
            with self._lock:
                while not self._closed and len(self._ready) >= self.size:
                    self._lock.wait()
                if self._closed:
                    return
            try:
                item = self._start_one()
            except Exception:  # the engine is away: the next start() says so, on the cold path
                with self._lock:
                    self._lock.wait(timeout=1)
                continue
            with self._lock:
                if not self._closed:
                    self._ready.append(item)
                    self._lock.notify_all()
                    continue
            item[1].kill()  # closed meanwhile: this one is nobody's
            self._remover.put(item[0])

    def start(self, bot: object, limits: Limits | None = None) -> BotProcess:
        if not isinstance(bot, InstalledBot):
            raise TypeError(f"the docker runner takes an InstalledBot, not {type(bot).__name__}")
        if limits is not None and limits != self.limits:
            return super().start(bot, limits)
        with self._lock:
            item = self._ready.popleft() if self._ready else None
            self._lock.notify_all()
        container, popen = item if item is not None else self._start_one()
        runtime, entry, *args = bot.command
        data = bot_tar(bot.folder)
        head = json.dumps({
            "tar": len(data), "as": self.limits.memory_bytes, "env": dict(BOT_ENV),
            "argv": [runtime, *INTERPRETER_FLAGS.get(runtime, ()), entry, *args],
        }).encode()
        assert popen.stdin is not None
        try:
            popen.stdin.write(len(head).to_bytes(8, "big") + head + data)
        except OSError as exc:
            popen.kill()
            self._remover.put(container)
            raise DockerUnavailable(f"the pre-started container is gone: {exc}") from exc

        def kill_tree() -> None:
            with contextlib.suppress(Exception):
                self.client.kill(container)
            with contextlib.suppress(ProcessLookupError):
                popen.kill()

        return ContainerProcess(
            popen, container=container, backend=self.name, signal_base=128, kill_tree=kill_tree,
            release=lambda: self._remover.put(container),
        )

    def close(self) -> None:
        """Stop filling and remove the containers not taken."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
            left, self._ready = list(self._ready), collections.deque()
        for container, popen in left:
            popen.kill()
            self._remover.put(container)
        self._filler.join()
        self._remover.drain()


class _Remover:
    """Removes killed containers on a thread of its own (a removal takes 0.1-0.3 s)."""

    def __init__(self, runner: DockerRunner) -> None:
        self.runner = runner
        self.queue: collections.deque[str] = collections.deque()
        self.idle = threading.Condition()
        self.thread: threading.Thread | None = None

    def put(self, container: str) -> None:
        with self.idle:
            self.queue.append(container)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            with self.idle:
                if not self.queue:
                    self.idle.notify_all()
                    return
                container = self.queue.popleft()
            self.runner._remove(container)

    def drain(self) -> None:
        """Return once every container put here is removed."""
        thread = self.thread
        if thread is not None:
            thread.join()
