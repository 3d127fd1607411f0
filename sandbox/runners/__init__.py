"""Runners: how a bot program is started. ``confined_runner`` is how the platform gets one for an
uploaded bot; it never returns the trusted runner. This module must not import Django or
``engine``.
"""

from __future__ import annotations

import os
from typing import Any

from sandbox.runners.base import BotProcess, Limits, Runner, describe_returncode
from sandbox.runners.trusted import TrustedProgram, TrustedRunner

#: Backends that confine an uploaded bot, by name (the platform's setting picks one).
CONFINED_BACKENDS = ("bwrap", "docker")
#: How many pre-started containers a Docker runner keeps (``WarmDockerRunner``; 0: none, each
#: seat's container is created and started on the match's path). Default: one match's four seats.
DOCKER_POOL_ENV = "QUATRESEPT_DOCKER_POOL"
DEFAULT_DOCKER_POOL = 4


def confined_runner(backend: str = "bwrap", **options: Any) -> Runner:
    """A runner for uploaded bots: ``"bwrap"`` (``BwrapRunner``) or ``"docker"`` (a
    ``WarmDockerRunner`` of ``$QUATRESEPT_DOCKER_POOL`` containers, or the cold ``DockerRunner``
    when that is 0), ``options`` passed to its constructor. Any other name, ``"trusted"``
    included, is a ``ValueError``."""
    if backend == "bwrap":
        from sandbox.runners.bwrap import BwrapRunner

        return BwrapRunner(**options)
    if backend == "docker":
        size = int(os.environ.get(DOCKER_POOL_ENV) or DEFAULT_DOCKER_POOL)
        if size > 0:
            from sandbox.runners.docker_warm import WarmDockerRunner

            return WarmDockerRunner(size=size, **options)
        from sandbox.runners.docker import DockerRunner

        return DockerRunner(**options)
    raise ValueError(
        f"unknown sandbox backend {backend!r}: choose one of {CONFINED_BACKENDS} (uploaded bots "
        "never run trusted)"
    )


__all__ = [
    "CONFINED_BACKENDS",
    "DOCKER_POOL_ENV",
    "BotProcess",
    "Limits",
    "Runner",
    "TrustedProgram",
    "TrustedRunner",
    "confined_runner",
    "describe_returncode",
]
