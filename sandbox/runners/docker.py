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

The bot's process sees the environment of ``BOT_ENV`` alone (``env -i``: not the image's
variables nor Docker's ``HOSTNAME``) and an address-space rlimit equal to the memory cap
(``prlimit --as``: Docker has no ulimit for it), so a memory bomb fails its allocations as under
bwrap, while the memory cgroup also bounds what the rlimit does not count (``/tmp``, page cache).
Stdin closes when the worker's attach ends (``stdin_once``) and the engine removes a container
once it exits (``auto_remove``): the bots of a worker killed mid-match get end of input, leave, and
leave nothing behind. ``make test-docker`` runs the hostile-bot suite against a real engine.
This module must not import Django or ``engine``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.cgroups import seat_cpu_shares
from sandbox.package import InstalledBot
from sandbox.runners.base import BotProcess, Limits
from sandbox.runners.bwrap import PROC_MASK_DIRS, PROC_MASKS, meminfo
from sandbox.runners.runtimes import INTERPRETER_FLAGS
from sandbox.seccomp import docker_profile

#: The bot runtime image (python3 and node, a user 1000); built from ``platform/``.
DEFAULT_IMAGE = os.environ.get("QUATRESEPT_BOT_IMAGE", "quatresept/bot-runtime:1")
#: The Docker API version asked for when the engine cannot be asked its own (it is down: the
#: client then fails at its first call, as it would anyway): 1.41 is Docker 20.10's (Debian 12's
#: docker.io). An engine that answers is spoken to in its own version: Docker 29 and later
#: refuse anything older than 1.44, so a pinned 1.41 failed every seat there.
API_VERSION = "1.41"
#: How long the version question may take before the fallback is used, in seconds.
VERSION_TIMEOUT_S = 5
BOT_DIR = "/bot"
BOT_USER = "1000:1000"
BOT_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
           "LANG": "C.UTF-8"}
LABEL = "quatresept.sandbox"
#: /proc and /sys paths hidden from a seat: Docker's own defaults (the list replaces them) and the
#: global counters bwrap masks too (another seat's file locks, load, memory and I/O figures).
MASKED_PATHS = (
    "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
    *PROC_MASKS, *PROC_MASK_DIRS,
)
#: Names the worker that created a seat's container (``sandbox_owner()``).
OWNER_LABEL = "quatresept.owner"


def sandbox_owner() -> str:
    """Who owns the containers this process creates: ``$QUATRESEPT_SANDBOX_OWNER`` (a Celery
    worker sets its host and node name there), else the host name."""
    return os.environ.get("QUATRESEPT_SANDBOX_OWNER") or socket.gethostname()


def remove_owned_containers(owner: str, client: Any = None) -> int:
    """Remove every seat container labelled with ``owner``, running or not; how many. For a worker
    starting under a name its dead predecessor had, before it plays: a crash between creating a
    container and starting it leaves one the engine never removes by itself, and a bot that
    ignores the end of its input keeps running."""
    client = client if client is not None else default_client()
    found = client.containers(all=True, filters={"label": f"{OWNER_LABEL}={owner}"})
    for container in found:
        with contextlib.suppress(Exception):
            client.remove_container(container["Id"], force=True)
    return len(found)


def _meminfo_file(folder: Path, limits: Limits) -> Path:
    """A /proc/meminfo showing the seat's cap (bwrap's), in ``folder`` (beside the bots, so the
    engine reaches it by the same path mapping); written once per cap, read-only."""
    path = folder / f".meminfo-{limits.memory_bytes}"
    if not path.exists():
        with contextlib.suppress(OSError):
            scratch = folder / f"{path.name}.{os.getpid()}"
            scratch.write_bytes(meminfo(limits))
            scratch.chmod(0o444)
            os.replace(scratch, path)
    return path


class ContainerProcess(BotProcess):
    """A ``BotProcess`` whose tree is the container ``container`` (its id)."""

    #: The code comes with the ``docker`` CLI's exit, after the engine's teardown of the
    #: container: seconds on a loaded host.
    exit_wait_s = 3.0

    def __init__(self, popen: subprocess.Popen[bytes], *, container: str, **kw: Any) -> None:
        super().__init__(popen, **kw)
        self.container = container


class DockerUnavailable(RuntimeError):
    """No Docker engine (or no ``docker`` CLI) is reachable from this worker."""


def default_client() -> Any:
    """An ``APIClient`` for ``$DOCKER_HOST`` (default: the local socket) in the engine's own API
    version (``$DOCKER_API_VERSION`` if set, as for the ``docker`` CLI), or ``API_VERSION`` when
    the engine does not answer within ``VERSION_TIMEOUT_S``."""
    import docker

    base_url = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    version = os.environ.get("DOCKER_API_VERSION") or engine_api_version(base_url)
    return docker.APIClient(base_url=base_url, version=version or API_VERSION, timeout=30)


def engine_api_version(base_url: str) -> str | None:
    """The API version the engine at ``base_url`` speaks, or None if it does not answer."""
    import docker

    try:
        probe = docker.APIClient(
            base_url=base_url, version=API_VERSION, timeout=VERSION_TIMEOUT_S
        )
        try:
            # /version answers under any version prefix the engine still serves, and unversioned
            return str(probe.get(probe.base_url + "/version").json()["ApiVersion"])
        finally:
            probe.close()
    except Exception:  # no engine, no socket, not Docker: the caller falls back
        return None


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
        shares = seat_cpu_shares()
        host_config = self.client.create_host_config(
            binds={
                self.host_path(bot.folder): {"bind": BOT_DIR, "mode": "ro"},
                self.host_path(_meminfo_file(bot.folder.parent, limits)): {
                    "bind": "/proc/meminfo", "mode": "ro"},
            },
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={limits.tmp_bytes},mode=1777"},
            mem_limit=limits.memory_bytes,
            memswap_limit=limits.memory_bytes,
            pids_limit=limits.processes,
            nano_cpus=int(self.cpus * 1e9),
            # each seat a container, all weighing the same, the worker's own work first
            # (docs/security.md, "Seats weighted on the CPU"); Docker's default is 1024
            **({"cpu_shares": shares} if shares else {}),
            cap_drop=["ALL"],
            security_opt=["no-new-privileges", f"seccomp={json.dumps(docker_profile())}"],
            ulimits=ulimits,
            init=True,
            ipc_mode="private",
            shm_size=limits.shm_bytes,
            log_config={"type": "none", "config": {}},
            auto_remove=True,
        )
        host_config["MaskedPaths"] = list(MASKED_PATHS)
        runtime, entry, *args = bot.command
        env = [f"{key}={value}" for key, value in BOT_ENV.items()]
        return {
            "image": self.image,
            "command": [
                "prlimit", f"--as={limits.memory_bytes}", "--", "env", "-i", *env,
                runtime, *INTERPRETER_FLAGS.get(runtime, ()), entry, *args,
            ],
            "user": BOT_USER,
            "working_dir": BOT_DIR,
            "environment": dict(BOT_ENV),
            "hostname": "bot",
            "stdin_open": True,  # not detached: the SDK also sets StdinOnce
            "tty": False,
            "network_disabled": True,
            "labels": {LABEL: "1", OWNER_LABEL: sandbox_owner()},
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
        try:
            popen = subprocess.Popen(
                [self.docker_cli, "start", "--attach", "--interactive", container],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                bufsize=0, env=self._cli_env(), start_new_session=True,
            )
        except OSError as exc:
            self._remove(container)
            raise DockerUnavailable(f"cannot run {self.docker_cli!r}: {exc}") from exc

        def kill_tree() -> None:
            with contextlib.suppress(Exception):
                self.client.kill(container)
            with contextlib.suppress(ProcessLookupError):
                popen.kill()

        return ContainerProcess(
            popen, container=container, backend=self.name, signal_base=128, kill_tree=kill_tree,
            release=lambda: self._remove(container),
        )

    @staticmethod
    def _cli_env() -> dict[str, str]:
        """What the docker CLI needs of the worker's environment (the engine's address)."""
        return {key: os.environ[key] for key in ("PATH", "DOCKER_HOST", "DOCKER_CONFIG")
                if key in os.environ}

    def _remove(self, container: str) -> None:
        """Remove the container and return once it is gone (the engine may be removing it
        already: ``auto_remove``)."""
        import docker

        with contextlib.suppress(Exception):
            self.client.remove_container(container, force=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                self.client.inspect_container(container)
            except docker.errors.NotFound:
                return
            except Exception:  # the engine went away: nothing more to do here
                return
            time.sleep(0.02)
