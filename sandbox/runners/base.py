"""What every runner returns: a started bot process (``BotProcess``) and the ``Runner`` interface.

A runner turns a program into a ``BotProcess`` whose stdin, stdout and stderr are pipes owned by
the parent, and which can end its whole process tree. This module must not import Django or
``engine``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Per-seat resource caps a confined runner enforces. All positive.

    ``memory_bytes`` is the seat's memory cgroup (everything it allocates: every process, /tmp
    and /dev/shm included) and also each process's address-space rlimit; ``cpu_seconds`` is per
    process and should exceed hello + bank; ``processes`` counts every process and thread of the
    seat; ``file_bytes`` caps each written file; ``tmp_bytes`` the private /tmp; ``shm_bytes``
    the private /dev/shm.
    """

    memory_bytes: int = 1024 * MiB
    cpu_seconds: int = 90
    processes: int = 32
    file_bytes: int = 16 * MiB
    open_files: int = 64
    tmp_bytes: int = 16 * MiB
    shm_bytes: int = 4 * MiB

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive int, got {value!r}")


_SIGNAL_HINTS = {
    signal.SIGKILL: "killed (out of memory, or stopped by the platform)",
    signal.SIGXCPU: "CPU time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
    signal.SIGSEGV: "segmentation fault",
    signal.SIGABRT: "aborted",
}


def describe_returncode(code: int, signal_base: int | None) -> str:
    """``code`` as words. ``signal_base`` is 128 for wrappers (bwrap, docker) that report a child
    killed by signal N as exit code 128 + N; ``None`` for a plain child (negative code)."""
    signum = None
    if code < 0:
        signum = -code
    elif signal_base is not None and code > signal_base:
        signum = code - signal_base
    if signum is None:
        return f"exited with code {code}"
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    hint = _SIGNAL_HINTS.get(signum)  # type: ignore[call-overload]
    return f"was ended by {name}" + (f": {hint}" if hint else "")


class BotProcess:
    """A started bot: its pipes (raw descriptors the caller takes over) and ``kill()``, which ends
    the whole process tree and frees what the runner reserved. ``kill`` is idempotent."""

    #: Seconds to wait for the exit code once the bot has closed its stdout (off its clock: the
    #: seat has already faulted; the code only words the fault).
    exit_wait_s = 0.5

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        *,
        backend: str,
        signal_base: int | None,
        kill_tree: Callable[[], None],
        release: Callable[[], None] = lambda: None,
        host_uid: int | None = None,
        confinement: dict[str, str] | None = None,
        cgroup: Any = None,
    ) -> None:
        assert popen.stdin and popen.stdout and popen.stderr
        self.popen = popen
        self.backend = backend
        self.host_uid = host_uid
        #: What confines the seat, e.g. ``{"seccomp": "on", "cgroups": "v1"}`` (empty: unknown).
        self.confinement = dict(confinement or {})
        #: The seat's ``sandbox.cgroups.SeatCgroup`` while it runs, when it has one.
        self.cgroup = cgroup
        self._signal_base = signal_base
        self._kill_tree = kill_tree
        self._release = release
        self._killed = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def fds(self) -> tuple[int, int, int]:
        """Hand over stdin, stdout and stderr as raw descriptors, once; the caller closes them."""
        streams = (self.popen.stdin, self.popen.stdout, self.popen.stderr)
        if None in streams:
            raise RuntimeError("the pipes were already handed over")
        fds = tuple(os.dup(stream.fileno()) for stream in streams)  # type: ignore[union-attr]
        for stream in streams:
            stream.close()  # type: ignore[union-attr]
        self.popen.stdin = self.popen.stdout = self.popen.stderr = None
        return fds  # type: ignore[return-value]

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait_exit(self, timeout: float) -> int | None:
        """The exit code if the process ends within ``timeout`` seconds, else ``None``."""
        try:
            return self.popen.wait(timeout=max(timeout, 0))
        except subprocess.TimeoutExpired:
            return None

    def describe_exit(self) -> str:
        code = self.popen.poll()
        if code is None:
            return "is still running"
        return describe_returncode(code, self._signal_base)

    def kill(self) -> None:
        """End the whole tree now, reap it and free the runner's reservations. Idempotent."""
        if self._killed:
            return
        self._killed = True
        try:
            self._kill_tree()
            deadline = time.monotonic() + 5
            while self.popen.poll() is None and time.monotonic() < deadline:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.popen.wait(timeout=0.05)
        finally:
            self._release()


class Runner(Protocol):
    """Starts one bot program as a ``BotProcess``. Confined runners take an ``InstalledBot``; the
    trusted runner takes only a ``TrustedProgram``."""

    name: str

    def start(self, bot: object, limits: Limits | None = None) -> BotProcess: ...
