"""The seat-exec helper: a seat it starts is set up exactly as the preexec fallback sets it up
(uid, groups, rlimits, cgroups, parent-death signal), and a failed set-up is the platform's error,
raised in the worker, never a bot crash."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox import BotSession, InstalledBot, open_session
from sandbox.runners.base import Limits
from sandbox.runners.bwrap import BwrapRunner, _helper_argv, _rlimits
from sandbox.seat_exec import helper
from tests.sandbox.helpers import FAST, hello

PROBE = """\
import json, os, sys
for line in sys.stdin:
    fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    sys.stdout.write(json.dumps({"type": "ready", "name": "probe", "fds": fds}) + "\\n")
    sys.stdout.flush()
"""


@pytest.fixture(scope="module")
def built() -> str:
    path = helper()
    if path is None:
        pytest.skip("no C compiler here: seats start through the preexec fallback")
    return path


def _first_process(session: BotSession) -> dict[str, str]:
    """What the kernel says of the seat's first process (bwrap): ids, limits, cgroups, signal."""
    pid = session.process.pid
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {
        "uid": fields["Uid"].split()[0],
        "gid": fields["Gid"].split()[0],
        "groups": fields["Groups"].strip(),
        "limits": Path(f"/proc/{pid}/limits").read_text(),
        "cgroups": "\n".join(sorted(
            line.split(":", 2)[2] for line in Path(f"/proc/{pid}/cgroup").read_text().split()
            if any(name in line for name in ("memory", "pids", "0::"))
        )),
    }


def test_helper_and_fallback_set_a_seat_up_alike(
    built: str, bwrap: BwrapRunner, make_bot: Callable[..., InstalledBot],
) -> None:
    bot = make_bot(PROBE)
    seen = []
    for use_helper in (True, False):
        runner = BwrapRunner(use_helper=use_helper)
        with open_session(runner, bot, FAST) as session:
            fds = session.hello(hello())["fds"]
            seen.append((_first_process(session), session.process.host_uid,
                         session.process.cgroup, fds))
    (through_helper, uid_a, cgroup_a, fds_a), (through_fork, uid_b, cgroup_b, fds_b) = seen
    # the bot holds its pipes (and the listing's own descriptor), none of the worker's
    # namespaces: the fallback passed them on through bwrap
    assert fds_a == fds_b == [0, 1, 2, 3]
    if uid_a is not None:  # a root worker: each seat has a leased uid, no groups
        assert through_helper["uid"] == str(uid_a) and through_fork["uid"] == str(uid_b)
        assert through_helper["groups"] == through_fork["groups"] == ""
    assert through_helper["limits"] == through_fork["limits"]
    limits = through_helper["limits"]
    assert f"{Limits().memory_bytes}" in limits and f"{Limits().cpu_seconds}" in limits
    if cgroup_a is not None:  # each in its own seat cgroup, not the worker's
        assert all(folder.name in through_helper["cgroups"] for folder in cgroup_a.folders)
        assert all(folder.name in through_fork["cgroups"] for folder in cgroup_b.folders)


def test_a_failed_set_up_is_reported_and_nothing_runs(built: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    status_read, status_write = os.pipe()
    command = _helper_argv(built, status_write, None, None, _rlimits(Limits(), 64),
                           "/bin/sh", ["sh", "-c", f"touch {marker}"])
    command[2] = "987"  # a cgroup descriptor that is not open: joining it fails
    child = subprocess.run(command, pass_fds=(status_write,), timeout=30)
    os.close(status_write)
    with os.fdopen(status_read, "rb") as status:
        report = status.read().decode()
    assert child.returncode == 127
    assert "cannot join the seat's cgroup" in report
    assert not marker.exists()


def test_the_helper_fails_if_its_parent_is_not_the_worker_that_started_it(
    built: str, tmp_path: Path
) -> None:
    """The helper checks its parent by the worker's pid (given), not by ``getppid() == 1``: a
    worker that is pid 1 of its container starts seats; a parent that is not the one named (the
    worker died, the helper was adopted) starts nothing."""
    marker = tmp_path / "ran"
    for parent, ran in ((os.getpid(), True), (os.getpid() + 1, False)):
        status_read, status_write = os.pipe()
        command = _helper_argv(built, status_write, None, None, _rlimits(Limits(), 64),
                               "/bin/sh", ["sh", "-c", f"touch {marker}"])
        command[7] = str(parent)
        child = subprocess.run(command, pass_fds=(status_write,), timeout=30)
        os.close(status_write)
        with os.fdopen(status_read, "rb") as status:
            report = status.read().decode()
        assert (child.returncode == 0, marker.exists()) == (ran, ran), report
        assert ran or "parent gone" in report
        marker.unlink(missing_ok=True)

def test_a_failed_set_up_raises_in_the_worker(
    built: str, bwrap: BwrapRunner, make_bot: Callable[..., InstalledBot], monkeypatch,
) -> None:
    import sandbox.runners.bwrap as module

    real = module._helper_argv

    def broken(*args, **kwargs):
        command = real(*args, **kwargs)
        command[6] = "7=-1"  # a negative rlimit: refused before anything runs
        return command

    monkeypatch.setattr(module, "_helper_argv", broken)
    with pytest.raises(subprocess.SubprocessError, match="rlimit"):
        BwrapRunner().start(make_bot(PROBE))


@pytest.mark.skipif(os.geteuid() != 0, reason="joining a namespace takes root")
@pytest.mark.parametrize(("kind", "position", "failure"), [
    ("net", 3, "cannot join the shared network namespace"),
    ("mnt", 4, "cannot join the lean mount namespace"),
])
def test_the_helper_joins_the_workers_namespace_or_fails_before_anything_runs(
    built: str, tmp_path: Path, kind: str, position: int, failure: str,
) -> None:
    from sandbox.mountns import lean_mountns
    from sandbox.netns import shared_netns

    fd = shared_netns() if kind == "net" else lean_mountns()
    assert fd is not None
    out = tmp_path / "ns"
    status_read, status_write = os.pipe()
    command = _helper_argv(built, status_write, None, None, (), "/bin/sh",
                           ["sh", "-c", f"readlink /proc/self/ns/{kind} > {out}"],
                           *((fd, None) if kind == "net" else (None, fd)))
    child = subprocess.run(command, pass_fds=(status_write, fd), timeout=30)
    os.close(status_write)
    os.close(status_read)
    assert child.returncode == 0
    assert out.read_text().strip() == os.readlink(f"/proc/self/fd/{fd}")
    assert out.read_text().strip() != os.readlink(f"/proc/self/ns/{kind}")  # not the worker's
    status_read, status_write = os.pipe()
    command[position] = "986"  # a descriptor that is not open: joining fails, nothing runs
    child = subprocess.run(command, pass_fds=(status_write,), timeout=30)
    os.close(status_write)
    with os.fdopen(status_read, "rb") as status:
        assert failure in status.read().decode()
    assert child.returncode == 127


def test_exec_success_leaves_the_status_pipe_empty(built: str) -> None:
    status_read, status_write = os.pipe()
    command = _helper_argv(built, status_write, None, None, (), "/bin/sh",
                           ["sh", "-c", "exit 3"])
    child = subprocess.run(command, pass_fds=(status_write,), timeout=30)
    os.close(status_write)
    with os.fdopen(status_read, "rb") as status:
        assert status.read() == b""
    assert child.returncode == 3
