"""Runners: how a bot program is started. ``confined_runner`` is how the platform gets one for an
uploaded bot; it never returns the trusted runner. This module must not import Django or
``engine``.
"""

from __future__ import annotations

from typing import Any

from sandbox.runners.base import BotProcess, Limits, Runner, describe_returncode
from sandbox.runners.trusted import TrustedProgram, TrustedRunner

#: Backends that confine an uploaded bot, by name (the platform's setting picks one).
CONFINED_BACKENDS = ("bwrap", "docker")


def confined_runner(backend: str = "bwrap", **options: Any) -> Runner:
    """A runner for uploaded bots: ``"bwrap"`` (``BwrapRunner``) or ``"docker"``
    (``DockerRunner``), ``options`` passed to its constructor. Any other name, ``"trusted"``
    included, is a ``ValueError``."""
    if backend == "bwrap":
        from sandbox.runners.bwrap import BwrapRunner

        return BwrapRunner(**options)
    if backend == "docker":
        from sandbox.runners.docker import DockerRunner

        return DockerRunner(**options)
    raise ValueError(
        f"unknown sandbox backend {backend!r}: choose one of {CONFINED_BACKENDS} (uploaded bots "
        "never run trusted)"
    )


__all__ = [
    "CONFINED_BACKENDS",
    "BotProcess",
    "Limits",
    "Runner",
    "TrustedProgram",
    "TrustedRunner",
    "confined_runner",
    "describe_returncode",
]
