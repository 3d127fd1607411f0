"""The Docker runner, for the compose stack: one throw-away container per seat.

The container is created through the ``docker`` SDK with no network, a read-only root, the bot's
folder read-only at ``/bot``, a size-capped ``/tmp``, memory (no swap), pids and CPU limits,
rlimits, ``cap_drop=ALL``, ``no-new-privileges``, the seats' syscall filter (``sandbox.seccomp``) as
a seccomp profile, a non-root user, an init process that reaps and
forwards signals, and no log driver (a flood on stdout must not fill the host's disk).

The conversation does *not* go through the SDK's attach socket: without a TTY that stream is
multiplexed (8-byte frame headers), writing stdin needs the SDK's private socket, and half-closing
stdin (the end-of-match signal) is unreliable over the hijacked HTTP connection. Instead
``docker start --attach --interactive`` runs as a subprocess: the Docker CLI demultiplexes into
three real pipes, so the same ``Channel`` code serves bwrap and Docker. The worker image therefore
needs the ``docker`` CLI and access to the engine (``DOCKER_HOST``).

No Docker engine runs on the development machines: the tests check the container spec this module
builds (the SDK validates it offline) and the error when no engine answers, not a real container.
This module must not import Django or ``engine``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.package import InstalledBot
from sandbox.runners.base import BotProcess, Limits
from sandbox.runners.runtimes import INTERPRETER_FLAGS
from sandbox.seccomp import docker_profile

#: The bot runtime image (python3 and node, a user 1000); built from ``platform/``.
DEFAULT_IMAGE = os.environ.get("QUATRESEPT_BOT_IMAGE", "quatresept/bot-runtime:1")
#: Docker API version pinned so that creating a client never contacts the engine.
API_VERSION = "1.43"
BOT_DIR = "/bot"
BOT_USER = "1000:1000"
BOT_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
           "LANG": "C.UTF-8"}
LABEL = "quatresept.sandbox"


class DockerUnavailable(RuntimeError):
    """No Docker engine (or no ``docker`` CLI) is reachable from this worker."""


def default_client() -> Any:
    """An ``APIClient`` for ``$DOCKER_HOST`` (default: the local socket); connects lazily."""
    import docker

    base_url = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    return docker.APIClient(base_url=base_url, version=API_VERSION, timeout=30)


class DockerRunner:
    """Runs an ``InstalledBot`` in a fresh container. Only ``InstalledBot`` is accepted.

    ``host_path`` maps the worker's path of a bot folder to the engine host's path (they differ
    when the worker itself runs in a container with the bots on a volume).
    """

    name = "docker"

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        image: str = DEFAULT_IMAGE,
        client: Any = None,
        cpus: float = 1.0,
        host_path: Callable[[Path], str] = str,
        docker_cli: str | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.image = image
        self.client = client if client is not None else default_client()
        self.cpus = cpus
        self.host_path = host_path
        self.docker_cli = docker_cli or shutil.which("docker") or "docker"

    def container_spec(self, bot: InstalledBot, limits: Limits | None = None) -> dict[str, Any]:
        """Keyword arguments for ``APIClient.create_container`` (host config included)."""
        import docker

        limits = limits or self.limits
        ulimits = [
            docker.types.Ulimit(name=name, soft=value, hard=value)
            for name, value in (
                ("nofile", limits.open_files),
                ("fsize", limits.file_bytes),
                ("cpu", limits.cpu_seconds),
                ("core", 0),
            )
        ]
        host_config = self.client.create_host_config(
            binds={self.host_path(bot.folder): {"bind": BOT_DIR, "mode": "ro"}},
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={limits.tmp_bytes},mode=1777"},
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,
            pids_limit=limits.processes,
            nano_cpus=int(self.cpus * 1e9),
            cap_drop=["ALL"],
            security_opt=["no-new-privileges", f"seccomp={json.dumps(docker_profile())}"],
            ulimits=ulimits,
            init=True,
            ipc_mode="private",
            log_config={"type": "none", "config": {}},
        )
        runtime, entry, *args = bot.command
        return {
            "image": self.image,
            "command": [runtime, *INTERPRETER_FLAGS.get(runtime, ()), entry, *args],
            "user": BOT_USER,
            "working_dir": BOT_DIR,
            "environment": dict(BOT_ENV),
            "hostname": "bot",
            "stdin_open": True,
            "tty": False,
            "network_disabled": True,
            "labels": {LABEL: "1"},
            "host_config": host_config,
        }

    def start(self, bot: object, limits: Limits | None = None) -> BotProcess:
        if not isinstance(bot, InstalledBot):
            raise TypeError(f"the docker runner takes an InstalledBot, not {type(bot).__name__}")
        import docker
        import requests

        spec = self.container_spec(bot, limits)
        try:
            container = self.client.create_container(**spec)["Id"]
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise DockerUnavailable(f"cannot create the bot container: {exc}") from exc
        env = {key: os.environ[key] for key in ("PATH", "DOCKER_HOST", "DOCKER_CONFIG")
               if key in os.environ}
        try:
            popen = subprocess.Popen(
                [self.docker_cli, "start", "--attach", "--interactive", container],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                bufsize=0, env=env, start_new_session=True,
            )
        except OSError as exc:
            self._remove(container)
            raise DockerUnavailable(f"cannot run {self.docker_cli!r}: {exc}") from exc

        def kill_tree() -> None:
            with contextlib.suppress(Exception):
                self.client.kill(container)
            with contextlib.suppress(ProcessLookupError):
                popen.kill()

        return BotProcess(
            popen, backend=self.name, signal_base=128, kill_tree=kill_tree,
            release=lambda: self._remove(container),
        )

    def _remove(self, container: str) -> None:
        with contextlib.suppress(Exception):
            self.client.remove_container(container, force=True)
