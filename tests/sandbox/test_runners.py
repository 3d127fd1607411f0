"""Runner selection: uploaded bots can never reach the trusted runner; the bwrap command line;
the Docker spec (no Docker engine runs here: the SDK validates the spec offline, and a missing
engine is a clear DockerUnavailable)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from sandbox import (
    CONFINED_BACKENDS,
    Limits,
    TrustedProgram,
    TrustedRunner,
    confined_runner,
    open_session,
)
from sandbox.runners.base import describe_returncode
from sandbox.runners.bwrap import BOT_ENV, BwrapRunner, bwrap_argv
from sandbox.runners.docker import DockerRunner, DockerUnavailable, default_client
from sandbox.runners.runtimes import host_runtime
from sandbox.seccomp import docker_profile
from tests.http_stub import serving
from tests.sandbox.helpers import FAST, play_match, python_bot


def test_trusted_runner_refuses_uploaded_bots(make_bot):
    with pytest.raises(TypeError, match="never runs an uploaded bot"):
        TrustedRunner().start(make_bot(python_bot()))
    with pytest.raises(TypeError):
        TrustedRunner().start(("python3", "bot.py"))


def test_confined_runner_never_returns_trusted():
    assert CONFINED_BACKENDS == ("bwrap", "docker")
    for name in ("trusted", "subprocess", "", "BWRAP"):
        with pytest.raises(ValueError, match="never run trusted"):
            confined_runner(name)


def test_confined_runners_refuse_trusted_programs():
    program = TrustedProgram((sys.executable, "-c", "pass"))
    with pytest.raises(TypeError):
        BwrapRunner(bwrap="/nonexistent/bwrap").start(program)
    with pytest.raises(TypeError):
        DockerRunner(client=default_client()).start(program)


def test_trusted_runner_plays(tmp_path):
    path = tmp_path / "bot.py"
    path.write_text(python_bot())
    with open_session(TrustedRunner(), TrustedProgram((sys.executable, str(path))), FAST) as s:
        assert play_match(s) == ["play TH"] * 3


def test_a_reaped_bwrap_seat_is_never_signalled(bwrap, make_bot, monkeypatch):
    # Once the seat's bwrap has exited and been reaped (a crash is reaped when the session sees
    # it; the end of the match kills every seat later), its pid is free for any new process of
    # the host: the root worker must then send it nothing.
    process = bwrap.start(make_bot("import sys\nsys.exit(3)\n"))
    for stream in (process.popen.stdin, process.popen.stdout, process.popen.stderr):
        stream.close()
    assert process.wait_exit(30) is not None
    real_kill, signalled = os.kill, []

    def kill(pid: int, sig: int) -> None:
        if pid == process.pid:
            signalled.append(sig)
        else:
            real_kill(pid, sig)

    monkeypatch.setattr(os, "kill", kill)
    process.kill()
    assert signalled == []


def test_a_reaped_trusted_program_is_never_signalled(monkeypatch):
    import sys

    from sandbox import TrustedProgram, TrustedRunner

    process = TrustedRunner().start(TrustedProgram((sys.executable, "-c", "pass")))
    for stream in (process.popen.stdin, process.popen.stdout, process.popen.stderr):
        stream.close()
    assert process.wait_exit(30) is not None
    real_killpg, signalled = os.killpg, []

    def killpg(group: int, sig: int) -> None:
        if group == process.pid:
            signalled.append(sig)
        else:
            real_killpg(group, sig)

    monkeypatch.setattr(os, "killpg", killpg)
    process.kill()
    assert signalled == []


def test_bwrap_command_line(make_bot):
    bot = make_bot(python_bot())
    runtime = host_runtime("python3")
    argv = bwrap_argv("/opt/bwrap", runtime, bot, Limits(tmp_bytes=1234))
    joined = " ".join(argv)
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                 "--disable-userns", "--die-with-parent", "--new-session", "--clearenv"):
        assert flag in argv
    assert f"--ro-bind {bot.folder} /bot" in joined
    assert "--size 1234 --perms 1777 --tmpfs /tmp" in joined
    assert "--remount-ro / --" in joined
    assert argv[-1] == "main.py"
    assert argv[argv.index("--") + 1] == runtime.binary
    assert not any(arg.startswith(("/work", "/root", "/home", "/etc")) for arg in argv[1:])
    env = {argv[i + 1]: argv[i + 2] for i, arg in enumerate(argv) if arg == "--setenv"}
    assert env == BOT_ENV


def test_describe_returncode():
    assert describe_returncode(3, 128) == "exited with code 3"
    assert describe_returncode(-9, None).startswith("was ended by SIGKILL")
    assert "CPU time limit" in describe_returncode(128 + 24, 128)


def test_limits_must_be_positive():
    with pytest.raises(ValueError):
        Limits(processes=0)


def offline_docker() -> DockerRunner:
    import docker

    client = docker.APIClient(base_url="unix:///nonexistent/docker.sock", version="1.41")
    return DockerRunner(client=client, image="quatresept/bot-runtime:test",
                        limits=Limits(memory_bytes=256 * 2**20, processes=40, tmp_bytes=2**20))


def test_docker_container_spec(make_bot):
    bot = make_bot(python_bot())
    spec = offline_docker().container_spec(bot)
    host = spec["host_config"]
    assert spec["image"] == "quatresept/bot-runtime:test"
    assert spec["command"] == [
        "prlimit", f"--as={256 * 2**20}", "--", "env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin",
        "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "python3", "-u", "-B", "-X", "utf8", "main.py",
    ]
    assert spec["user"] == "1000:1000" and spec["working_dir"] == "/bot"
    assert spec["stdin_open"] and not spec["tty"]
    config = offline_docker().client.create_container_config(**spec)
    assert config["StdinOnce"] is True  # the worker's attach ending closes the bot's stdin
    assert host["AutoRemove"] is True
    assert spec["network_disabled"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"][0] == "no-new-privileges"
    assert json.loads(host["SecurityOpt"][1].removeprefix("seccomp=")) == docker_profile()
    assert host["Memory"] == host["MemorySwap"] == 256 * 2**20
    assert host["PidsLimit"] == 40
    assert host["NanoCpus"] == 10**9
    assert host["CpuShares"] == 1024  # one ordinary process, never more
    assert host["Binds"] == [f"{bot.folder}:/bot:ro",
                             f"{bot.folder.parent}/.meminfo-{256 * 2**20}:/proc/meminfo:ro"]
    meminfo = (bot.folder.parent / f".meminfo-{256 * 2**20}").read_text()
    assert meminfo.split()[:3] == ["MemTotal:", "262144", "kB"]  # the seat's cap
    assert "/proc/locks" in host["MaskedPaths"] and "/proc/kcore" in host["MaskedPaths"]
    assert host["ShmSize"] == Limits().shm_bytes
    assert host["Tmpfs"]["/tmp"].startswith("rw,nosuid,nodev,size=1048576")
    assert host["LogConfig"]["Type"] == "none"
    assert host["Init"] is True
    assert {u["Name"] for u in host["Ulimits"]} == {"nofile", "fsize", "cpu", "core"}


def test_docker_without_an_engine_says_so(make_bot):
    with pytest.raises(DockerUnavailable, match="cannot create the bot container"):
        offline_docker().start(make_bot(python_bot()))


@pytest.mark.docker
def test_a_dead_workers_containers_are_removed_by_its_successor(docker, make_bot, monkeypatch):
    """A container created and never started (its worker died in between) is removed by the
    next worker of the same name, and only its own are."""
    import docker as sdk

    from sandbox.runners.docker import remove_owned_containers

    monkeypatch.setenv("QUATRESEPT_SANDBOX_OWNER", "host-a/celery@dead")
    spec = docker.container_spec(make_bot(python_bot()))
    orphan = docker.client.create_container(**spec)["Id"]
    monkeypatch.setenv("QUATRESEPT_SANDBOX_OWNER", "host-a/celery@alive")
    other = docker.client.create_container(**docker.container_spec(make_bot(python_bot())))["Id"]
    try:
        assert remove_owned_containers("host-a/celery@dead", docker.client) == 1
        with pytest.raises(sdk.errors.NotFound):
            docker.client.inspect_container(orphan)
        assert docker.client.inspect_container(other)["State"]["Status"] == "created"
    finally:
        docker.client.remove_container(other, force=True)


def _engine_speaking(api_version: str):
    """An engine's ``/version`` answer (a Docker 29 stand-in: no such engine can run here,
    Debian's is 20.10), refusing every request under an older API version prefix."""

    def respond(path: str) -> tuple[int, str, bytes]:
        if path.startswith("/v1.4") and not path.startswith("/v1.44"):
            return 400, "application/json", b'{"message": "client version 1.41 is too old"}'
        return 200, "application/json", json.dumps({"ApiVersion": api_version}).encode()

    return respond


def test_the_client_speaks_the_engines_api_version(tmp_path, monkeypatch):
    """An engine that refuses API 1.41 (Docker 29 and later) is spoken to in its own version,
    where a client pinned to 1.41 failed every seat; no engine at all falls back to 1.41 at once,
    so that the first call fails with the usual ``DockerUnavailable``."""
    with serving(_engine_speaking("1.52"), unix_path=str(tmp_path / "engine.sock")) as engine:
        monkeypatch.setenv("DOCKER_HOST", engine)
        monkeypatch.delenv("DOCKER_API_VERSION", raising=False)
        assert default_client()._version == "1.52"
        monkeypatch.setenv("DOCKER_API_VERSION", "1.47")
        assert default_client()._version == "1.47"
    monkeypatch.delenv("DOCKER_API_VERSION")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'none.sock'}")
    assert default_client()._version == "1.41"
