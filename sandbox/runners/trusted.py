"""The trusted runner: a plain subprocess, for the platform's own built-in bots only.

It accepts only a ``TrustedProgram``, which the platform builds from code it ships; it refuses an
``InstalledBot`` (anything uploaded), and ``sandbox.runners.confined_runner`` never returns it.
No isolation and no limits: the child runs with the worker's rights, in its own session so that
``kill`` ends the child and its process group. This module must not import Django or ``engine``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.package import InstalledBot
from sandbox.runners.base import BotProcess, Limits


@dataclass(frozen=True)
class TrustedProgram:
    """A command the platform itself ships (argv[0] an absolute path or a name on PATH).

    ``env`` replaces the environment; ``None`` passes only ``PATH``, ``LANG`` and ``PYTHONPATH``.
    """

    argv: tuple[str, ...]
    cwd: Path | None = None
    env: dict[str, str] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.argv or not all(isinstance(arg, str) for arg in self.argv):
            raise ValueError("argv must be a non-empty tuple of strings")


class TrustedRunner:
    """Runs a ``TrustedProgram`` unconfined. Refuses uploaded bots (``InstalledBot``)."""

    name = "trusted"

    def start(self, bot: object, limits: Limits | None = None) -> BotProcess:
        if isinstance(bot, InstalledBot):
            raise TypeError(
                "the trusted runner never runs an uploaded bot: use sandbox.confined_runner()"
            )
        if not isinstance(bot, TrustedProgram):
            raise TypeError(f"the trusted runner takes a TrustedProgram, not {type(bot).__name__}")
        env = bot.env
        if env is None:
            keep = ("PATH", "LANG", "PYTHONPATH")
            env = {key: os.environ[key] for key in keep if key in os.environ}
        popen = subprocess.Popen(
            bot.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            cwd=bot.cwd,
            env=env,
            start_new_session=True,
        )

        def kill_tree() -> None:
            # Once the child is reaped its pid (and group id, when the group is empty) may be
            # any host process's: signal the group only while the child is known to be alive.
            # The platform's programs start no processes of their own.
            if popen.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(popen.pid, signal.SIGKILL)

        return BotProcess(popen, backend=self.name, signal_base=None, kill_tree=kill_tree)
