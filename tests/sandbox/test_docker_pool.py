"""The Docker backend's pool of pre-started containers (``sandbox.runners.docker_warm``): each
container serves one seat of one match and is removed; a dead worker's pool leaves nothing that
the next pool of its name does not remove; a pooled seat sees no other seat. The engine-backed
cases run under ``make test-docker``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sandbox import Limits, confined_runner, open_session
from sandbox.runners.docker import OWNER_LABEL, DockerRunner, sandbox_owner
from sandbox.runners.docker_warm import (
    POOL_LABEL,
    WarmDockerRunner,
    process_identity,
    remove_stale_pool_containers,
)
from tests.sandbox.helpers import FAST, assert_left_nothing, hello, play_match, python_bot

REPO = Path(__file__).resolve().parents[2]


def _offline_client():
    import docker

    return docker.APIClient(base_url="unix:///nonexistent/docker.sock", version="1.41")


def test_the_docker_backend_is_a_bounded_pool_unless_sized_zero(monkeypatch):
    monkeypatch.setenv("QUATRESEPT_DOCKER_POOL", "3")
    runner = confined_runner("docker", client=_offline_client())
    try:
        assert isinstance(runner, WarmDockerRunner) and runner.size == 3
    finally:
        runner.close()
    monkeypatch.setenv("QUATRESEPT_DOCKER_POOL", "0")
    cold = confined_runner("docker", client=_offline_client())
    assert type(cold) is DockerRunner
    with pytest.raises(ValueError):
        WarmDockerRunner(size=0, client=_offline_client())


def test_a_pool_removes_the_temporary_folder_it_made_but_not_one_it_was_given(tmp_path,
                                                                              monkeypatch):
    monkeypatch.delenv("QUATRESEPT_DOCKER_STATE", raising=False)
    made = WarmDockerRunner(size=1, client=_offline_client())
    assert made.state.is_dir()
    made.close()
    made.close()
    assert not made.state.exists()
    given = WarmDockerRunner(size=1, client=_offline_client(), state=tmp_path / "state")
    given.close()
    assert (tmp_path / "state").is_dir()

def test_a_pool_container_keeps_every_flag_of_a_cold_seat(tmp_path):
    """The loader runs as root with SETUID and SETGID added, /bot is a tmpfs and pid 1 is the
    loader; everything else is the cold seat's spec (network, read-only root, cap-drop ALL,
    no-new-privileges, seccomp profile, memory and pids limits, masked paths)."""
    runner = WarmDockerRunner(size=1, client=_offline_client(), state=tmp_path / "state",
                              limits=Limits(memory_bytes=256 * 2**20, processes=40))
    try:
        warm, cold = runner.warm_spec(), runner._spec_for(runner.limits)
    finally:
        runner.close()
    changed = {"CapAdd": ["SETUID", "SETGID"], "Init": False}
    for key, value in cold["host_config"].items():
        if key in ("Binds", "Tmpfs") or key in changed:
            continue
        assert warm["host_config"][key] == value, key
    for key, value in changed.items():
        assert warm["host_config"][key] == value
    assert warm["host_config"]["CapDrop"] == ["ALL"]
    assert warm["host_config"]["NetworkMode"] == "none" and warm["network_disabled"]
    assert warm["host_config"]["ReadonlyRootfs"] is True
    assert warm["host_config"]["SecurityOpt"][0] == "no-new-privileges"
    assert warm["host_config"]["Tmpfs"]["/bot"].startswith("rw,nosuid,nodev,size=")
    assert warm["labels"][POOL_LABEL] == runner.identity
    assert runner.identity.startswith(process_identity() + ":")
    assert warm["labels"][OWNER_LABEL] == cold["labels"][OWNER_LABEL]


def _pool_containers(client, owner: str) -> list[dict]:
    return client.containers(all=True, filters={"label": [f"{OWNER_LABEL}={owner}", POOL_LABEL]})


MARKER = """
seen = sorted(os.listdir("/tmp")) + sorted(os.listdir("/bot"))
open("/tmp/was-here", "w").write("x")
send({"type": "ready", "name": "marker", "probe": seen})
"""


@pytest.mark.docker
def test_a_pooled_container_serves_one_seat_only(docker, make_bot):
    """Six seats from a pool of two: six containers, each gone after its seat; no seat finds what
    an earlier one left in /tmp or /bot."""
    pool = WarmDockerRunner(size=2)
    seen, containers = [], []
    try:
        for _ in range(6):
            with open_session(pool, make_bot(python_bot(on_hello=MARKER)), FAST) as session:
                seen.append(session.hello(hello())["probe"])
                containers.append(session.process.container)
            assert_left_nothing(session)
    finally:
        pool.close()
    assert len(set(containers)) == 6
    assert seen == [["main.py"]] * 6
    left = _pool_containers(docker.client, sandbox_owner())
    assert [c for c in left if c["Labels"][POOL_LABEL] == pool.identity] == []


@pytest.mark.docker
def test_a_pooled_seat_plays_and_its_exit_code_is_its_bots(docker, make_bot):
    pool = WarmDockerRunner(size=1)
    try:
        with open_session(pool, make_bot(python_bot()), FAST) as session:
            assert play_match(session) == ["play TH"] * 3
        assert session.process.poll() == 0
        crash = open_session(pool, make_bot("import sys\nsys.exit(3)\n"), FAST)
        assert crash.process.wait_exit(30) == 3
        assert crash.process.describe_exit() == "exited with code 3"
        crash.close()
        assert_left_nothing(crash)
    finally:
        pool.close()


@pytest.mark.docker
def test_a_killed_pooled_seat_leaves_no_descriptor_to_the_remover(docker, make_bot):
    """A seat killed before its bot exited hands its container to the remover thread with its
    status pipe already closed: a later ``poll`` (the match's, racing that thread) can never read
    a descriptor the thread closed, or one reused meanwhile for another seat's pipe."""
    pool = WarmDockerRunner(size=1)
    handed: list = []
    put = pool._remover.put
    pool._remover.put = lambda container, pipes=None: handed.append((container, pipes))
    try:
        session = open_session(pool, make_bot("import time\ntime.sleep(600)\n"), FAST)
        assert session.process.poll() is None
        session.close()
        [(container, pipes)] = handed
        assert pipes.status is None and pipes.fds == []
        assert session.process.poll() is not None
        assert session.process.describe_exit() != "is still running"
        put(container, pipes)
        pool._remover.drain()
        assert_left_nothing(session)
    finally:
        pool._remover.put = put
        pool.close()

DEAD_WORKER = """
import sys, time
sys.path.insert(0, {repo!r})
from sandbox.runners.docker_warm import WarmDockerRunner
pool = WarmDockerRunner(size=2)
while len(pool._ready) < 2:
    time.sleep(0.05)
# One more, created and never started: what a worker killed between the two leaves.
pool.client.create_container(**pool.warm_spec())
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.docker
def test_a_dead_workers_pool_is_removed(docker, monkeypatch, tmp_path):
    """A worker process killed with its pool full: its started containers leave by themselves
    (their pipes end), and the next pool of the same worker removes the one never started and
    the dead pool's seat folders (the worker's state folder, as a real worker sets it); a live
    pool's containers and folders stay."""
    owner = f"pool-test-{os.getpid()}"
    monkeypatch.setenv("QUATRESEPT_SANDBOX_OWNER", owner)
    state = tmp_path / "state"
    monkeypatch.setenv("QUATRESEPT_DOCKER_STATE", str(state))
    worker = subprocess.Popen([sys.executable, "-c", textwrap.dedent(DEAD_WORKER).format(
        repo=str(REPO))], stdout=subprocess.PIPE, env=dict(os.environ))
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == b"ready"
        assert len(_pool_containers(docker.client, owner)) == 3
    finally:
        worker.kill()
        worker.wait()
    live = WarmDockerRunner(size=1)  # sweeps on start, then fills
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            labels = [c["Labels"][POOL_LABEL] for c in _pool_containers(docker.client, owner)]
            if labels == [live.identity]:
                break
            time.sleep(0.2)
        assert labels == [live.identity]
        assert remove_stale_pool_containers(owner, docker.client) == 0
        pid, start, _ = live.identity.split(":")
        seats = [path.name for path in state.glob("seat-*")]
        assert seats and all(name.startswith(f"seat-{pid}-{start}-") for name in seats)
    finally:
        live.close()
    assert _pool_containers(docker.client, owner) == []


SEE = """
import socket
probe = {
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "tmp": sorted(os.listdir("/tmp")),
    "seat": attempt(lambda: sorted(os.listdir("/run/seat"))),
    "hostname": socket.gethostname(),
    "uid": os.getuid(),
}
open("/tmp/" + m["role"], "w").write(m["role"])
send({"type": "ready", "name": "see", "probe": probe})
"""

ATTEMPT = """
def attempt(f):
    try:
        return f()
    except Exception as exc:
        return "failed: " + type(exc).__name__
"""


@pytest.mark.docker
def test_a_pooled_seat_cannot_see_other_seats(docker, make_bot):
    """Four seats at once from one pool: each sees its own two processes (pid 1, the bot), its
    own /tmp, and cannot list or open the seats' pipes."""
    pool = WarmDockerRunner(size=4)
    sessions = []
    try:
        bot = make_bot(python_bot(on_hello=ATTEMPT + SEE))
        sessions = [open_session(pool, bot, FAST) for _ in range(4)]
        probes = [s.hello(hello(role=f"seat{i}"))["probe"] for i, s in enumerate(sessions)]
    finally:
        for session in sessions:
            session.close()
        pool.close()
    for session in sessions:
        assert_left_nothing(session)
    for probe in probes:
        assert len(probe["pids"]) == 2 and probe["pids"][0] == 1
        assert probe["tmp"] == []  # written after listing: a seat's own file only, later
        assert probe["seat"].startswith("failed"), probe["seat"]
        assert probe["uid"] == 1000 and probe["hostname"] == "bot"
