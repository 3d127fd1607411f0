"""The Docker backend's pool of pre-started containers (``sandbox.runners.docker_warm``): each
container serves one seat of one match and is removed; a dead worker's pool leaves nothing that
the next pool of its name does not remove; a pooled seat sees no other seat. The engine-backed
cases run under ``make test-docker``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from sandbox import Limits, confined_runner, open_session
from sandbox.package import MAX_UNPACKED_BYTES
from sandbox.runners.docker import OWNER_LABEL, DockerRunner, sandbox_owner
from sandbox.runners.docker_warm import (
    POOL_LABEL,
    WarmDockerRunner,
    _Remover,
    owner_folder,
    process_identity,
    remove_stale_pool_containers,
)
from tests.sandbox.helpers import (
    FAST,
    assert_left_nothing,
    hello,
    nothing_runs,
    play_match,
    python_bot,
)

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
    assert made.state.is_dir() and made.state.parent == made.state_root
    made.close()
    made.close()
    assert not made.state_root.exists()
    given = WarmDockerRunner(size=1, client=_offline_client(), state=tmp_path / "state")
    given.close()
    assert (tmp_path / "state").is_dir()

def test_a_pool_sweeps_only_its_own_workers_dead_seat_folders(tmp_path, monkeypatch):
    """Workers sharing a state folder (compose's scaled workers: each in a pid namespace of its
    own, where another worker's pool process looks dead) keep their seats apart: a new pool
    removes its own worker's dead seat folders and never another worker's."""
    state = tmp_path / "state"
    dead = "seat-999999999-1-0-0123456789abcdef"
    for owner in ("worker-a/celery@a", "worker-b/celery@b"):
        (state / owner_folder(owner) / dead).mkdir(parents=True)
    monkeypatch.setenv("QUATRESEPT_SANDBOX_OWNER", "worker-a/celery@a")
    pool = WarmDockerRunner(size=1, client=_offline_client(), state=state)
    try:
        mine = state / owner_folder("worker-a/celery@a")
        assert pool.state == mine
        deadline = time.monotonic() + 10
        while (mine / dead).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not (mine / dead).exists()
        assert (state / owner_folder("worker-b/celery@b") / dead).is_dir()
    finally:
        pool.close()
    assert owner_folder("a/b") != owner_folder("a_b")

def test_the_remover_goes_on_after_an_engine_error():
    """A removal fails with a container queued behind it (queued while the only thread was busy,
    so no thread was added): the queued one is still removed and ``drain`` returns."""
    release, removed = threading.Event(), []

    class Engine:
        def _remove(self, container: str) -> None:
            if container == "dies":
                release.wait(5)
                raise RuntimeError("the engine's client failed")
            removed.append(container)

    remover = _Remover(Engine(), threads=1)  # type: ignore[arg-type]
    remover.put("dies")
    remover.put("queued")
    release.set()
    drained = threading.Thread(target=remover.drain, daemon=True)
    drained.start()
    drained.join(10)
    assert not drained.is_alive()
    assert removed == ["queued"] and remover.pending() == 0

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
        if key in ("Binds", "Tmpfs", "Ulimits") or key in changed:
            continue
        assert warm["host_config"][key] == value, key
    for key, value in changed.items():
        assert warm["host_config"][key] == value
    assert warm["host_config"]["CapDrop"] == ["ALL"]
    assert warm["host_config"]["NetworkMode"] == "none" and warm["network_disabled"]
    assert warm["host_config"]["ReadonlyRootfs"] is True
    assert warm["host_config"]["SecurityOpt"][0] == "no-new-privileges"
    assert warm["host_config"]["Tmpfs"]["/bot"].startswith("rw,nosuid,nodev,size=")
    # every package the platform accepts fits in /bot unpacked (it was /tmp's 16 MiB), and its
    # loader may write each file of it (the bot's own cap is set back, LOADER)
    size = int(warm["host_config"]["Tmpfs"]["/bot"].split("size=")[1].split(",")[0])
    assert size > MAX_UNPACKED_BYTES
    ulimits = {u["Name"]: dict(u) for u in warm["host_config"]["Ulimits"]}
    assert ulimits["fsize"]["Hard"] > MAX_UNPACKED_BYTES
    ulimits["fsize"]["Hard"] = ulimits["fsize"]["Soft"]  # the only difference
    assert ulimits == {u["Name"]: dict(u) for u in cold["host_config"]["Ulimits"]}
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
def test_a_pooled_seat_takes_the_largest_package_the_platform_accepts(docker, make_bot, tmp_path):
    """A zip that unpacks to 24 MiB (the platform takes up to 25) starts in a pre-started
    container: its loader used to run out of /bot's room and the seat died as a crash."""
    import io
    import random
    import zipfile

    import numpy

    # one random bit a byte: 24 MiB that deflate only to about 4 (under the 5 MiB upload cap and
    # the zip-bomb ratio)
    bits = numpy.frombuffer(random.Random(1).randbytes(3 * 1024 * 1024), dtype=numpy.uint8)
    data = (numpy.unpackbits(bits) + ord("0")).tobytes()
    archive_bot = python_bot(on_hello="""
import resource
send({"type": "ready", "name": "big", "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
      "data": os.path.getsize("/bot/data.bin")})
""")
    blob = io.BytesIO()
    with zipfile.ZipFile(blob, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bot.json", json.dumps({"command": "python3 bot.py"}))
        archive.writestr("bot.py", archive_bot)
        archive.writestr("data.bin", data)
    bot = make_bot(blob.getvalue(), "big.zip")
    pool = WarmDockerRunner(size=1)
    try:
        with open_session(pool, bot, FAST) as session:
            ready = session.hello(hello())
            assert ready["data"] == len(data)
            cap = pool.limits.file_bytes
            assert ready["fsize"] == [cap, cap]  # a cold seat's cap on the bot's own files
    finally:
        pool.close()


@pytest.mark.docker
def test_a_pooled_seat_plays_and_its_exit_code_is_its_bots(docker, make_bot):
    pool = WarmDockerRunner(size=1)
    try:
        with open_session(pool, make_bot(python_bot()), FAST) as session:
            assert play_match(session) == ["play TH"] * 3
            session.end_input()
            assert session.process.wait_exit(20) == 0
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
        [pipes] = [p for c, p in handed if c == session.process.container]
        assert pipes.status is None and pipes.fds == []
        assert session.process.poll() is not None
        assert session.process.describe_exit() != "is still running"
        for each in handed:
            put(*each)
        pool._remover.drain()
        assert_left_nothing(session)
    finally:
        pool._remover.put = put
        pool.close()

@pytest.mark.docker
def test_a_pre_started_container_that_died_waiting_costs_no_seat(docker, make_bot):
    """The engine killed the pre-started container (a restart, an operator): the seat is served
    by a new one and plays."""
    pool = WarmDockerRunner(size=1)
    try:
        deadline = time.monotonic() + 60
        while not pool._ready and time.monotonic() < deadline:
            time.sleep(0.05)
        [waiting] = list(pool._ready)
        docker.client.kill(waiting.container, signal="SIGKILL")
        with open_session(pool, make_bot(python_bot()), FAST) as session:
            assert session.process.container != waiting.container
            assert play_match(session) == ["play TH"] * 3
        assert_left_nothing(session)
    finally:
        pool.close()

LEAVES_A_CHILD = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    os.close(0); os.close(1); os.close(2)
    time.sleep(600)
    os._exit(0)
sys.exit(5)
"""


@pytest.mark.docker
def test_a_pooled_seat_whose_bot_leaves_a_process_ends_with_its_bots_code(docker, make_bot):
    """The bot exits leaving a process of its own behind: the seat ends with the bot's code
    without the engine's kill (its pid 1, which may not signal the bot's uid, exits and the
    kernel ends the rest), and nothing of it runs."""
    pool = WarmDockerRunner(size=1)
    try:
        session = open_session(pool, make_bot(LEAVES_A_CHILD), FAST)
        assert session.process.wait_exit(20) == 5
        assert session.process.describe_exit() == "exited with code 5"
        assert nothing_runs(session, within=5)
        session.close()
        assert_left_nothing(session)
    finally:
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
        seats = [path.name for path in live.state.glob("seat-*")]
        assert live.state.parent == state
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
