"""Who plays a seat and how it is started: a built-in bot in the trusted runner, or an uploaded
package in a confined runner (bwrap or docker). An uploaded bot can never reach the trusted runner:
``BotSpec.builtin`` starts only ``python -m engine.bots NAME`` for a name of ``BUILTIN_BOTS``, and
an upload is an ``InstalledBot`` that only confined runners accept. Must not import Django.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from arena.runtime.seats import SessionSeat
from engine import AnnouncedClock
from engine.bots import BUILTIN_BOTS
from sandbox import (
    Clock as SandboxClock,
)
from sandbox import (
    InstalledBot,
    Runner,
    TrustedProgram,
    TrustedRunner,
    confined_runner,
    open_session,
)

_PROJECT_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class BotSpec:
    """One seat's bot. Invariant: exactly one of ``builtin`` (a name of ``BUILTIN_BOTS``) and
    ``installed`` is set."""

    label: str
    builtin: str = ""
    installed: InstalledBot | None = None

    def __post_init__(self) -> None:
        if bool(self.builtin) == (self.installed is not None):
            raise ValueError("a bot is either a built-in or an installed upload")
        if self.builtin and self.builtin not in BUILTIN_BOTS:
            raise ValueError(
                f"unknown built-in bot {self.builtin!r}; "
                f"built-ins: {', '.join(sorted(BUILTIN_BOTS))}"
            )

    @classmethod
    def for_builtin(cls, name: str, label: str | None = None) -> BotSpec:
        return cls(label=label or f"builtin:{name}", builtin=name)

    @classmethod
    def for_upload(cls, installed: InstalledBot, label: str) -> BotSpec:
        return cls(label=label, installed=installed)


def start_seat(spec: BotSpec, clock: AnnouncedClock, backend: str) -> SessionSeat:
    """Start the bot's process and wrap it as a referee seat. A failure to start is the
    platform's and raises, a runtime missing on this host included (``RuntimeNotFound``: the
    platform accepted the bot's runtime, so the host lacks what it promised; the match is played
    again, elsewhere or later, and no bot loses it)."""
    sandbox_clock = SandboxClock(clock.hello_ms, clock.move_ms, clock.bank_ms)
    if spec.builtin:
        program = TrustedProgram(
            (sys.executable, "-m", "engine.bots", spec.builtin),
            cwd=_PROJECT_ROOT,
            env=_trusted_env(),
        )
        return SessionSeat(open_session(_trusted_runner(), program, sandbox_clock))
    return SessionSeat(open_session(_confined_runner(backend), spec.installed, sandbox_clock))


#: The worker's variables a built-in bot's process gets: the search's C library (where the
#: platform image built it, or the operator's switch to keep the search in Python) included, so
#: that the built-in expert searches as documented (without them it looked for its library in a
#: fresh cache folder, found no compiler in the image, and searched in Python: 88 deals, not 528).
TRUSTED_ENV = ("PATH", "LANG", "EXPERT_NATIVE_DIR", "EXPERT_NATIVE")


def _trusted_env() -> dict[str, str]:
    env = {key: os.environ[key] for key in TRUSTED_ENV if key in os.environ}
    env["PYTHONPATH"] = str(_PROJECT_ROOT)
    return env


@functools.cache
def _trusted_runner() -> Runner:
    return TrustedRunner()


#: This process's confined runners, one per backend, made on first use.
_CONFINED: dict[str, Runner] = {}


def _confined_runner(backend: str) -> Runner:
    if backend not in _CONFINED:
        _CONFINED[backend] = confined_runner(backend)
    return _CONFINED[backend]


def close_confined_runners() -> None:
    """Close this process's confined runners that hold something (the Docker backend's
    pre-started containers): for a worker process that stops."""
    while _CONFINED:
        _, runner = _CONFINED.popitem()
        close = getattr(runner, "close", None)
        if close is not None:
            close()
