"""The lean mount namespace seats start bwrap from: it leaves out the host's pseudo file systems,
keeps every real one, changes nothing on the host, and is where a root runner's seats start."""

from __future__ import annotations

import ctypes
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox import InstalledBot, open_session
from sandbox.mountns import CLONE_NEWNS, detached_mounts, lean_mountns
from sandbox.runners.bwrap import BwrapRunner
from tests.sandbox.helpers import FAST, hello, python_bot

#: A container's table: cgroups under /sys, the engine's masks over /proc, stacked /dev/pts, a
#: data volume and a path with a space (escaped as the kernel writes it).
CONTAINER = """\
700 600 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
701 700 0:51 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
702 700 0:52 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
703 702 0:53 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw,gid=5,mode=620
704 700 0:54 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro
705 704 0:55 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw
706 702 0:56 / /dev/mqueue rw,nosuid,nodev,noexec,relatime - mqueue mqueue rw
707 700 254:1 /volumes/data /data rw,relatime - ext4 /dev/vda1 rw
708 700 254:1 /etc/hosts /etc/hosts rw,relatime - ext4 /dev/vda1 rw
709 702 0:57 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k
710 701 0:51 /bus /proc/bus ro,nosuid,nodev,noexec,relatime - proc proc rw
711 701 0:58 / /proc/kcore rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
712 703 0:59 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw,gid=5,mode=620
713 700 0:60 / /run/my\\040bots rw,relatime - tmpfs tmpfs rw
714 700 0:61 / /run/netns/x rw - nsfs nsfs rw
"""


def test_only_pseudo_file_systems_and_what_lies_below_proc_dev_and_sys_are_detached() -> None:
    detached = detached_mounts(CONTAINER)
    assert sorted(detached) == sorted([
        "/dev/pts", "/dev/pts", "/dev/mqueue", "/dev/shm", "/sys", "/proc/bus", "/proc/kcore",
        "/run/netns/x",
    ])
    # /sys/fs/cgroup goes with /sys; the deepest points come first
    assert detached.index("/run/netns/x") < detached.index("/sys")
    for kept in ("/", "/proc", "/dev", "/data", "/etc/hosts", "/run/my bots"):
        assert kept not in detached


def test_stacked_mounts_are_detached_once_each() -> None:
    # a detach takes the top mount of a point (and what is mounted on it), not those it covers
    stacked = CONTAINER + "715 712 0:62 / /dev/pts rw - devpts devpts rw\n"
    assert detached_mounts(stacked).count("/dev/pts") == 3
    twice = (
        "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "2 1 0:5 / /dev rw - devtmpfs udev rw\n"
        "3 2 0:6 / /dev/shm rw - tmpfs tmpfs rw\n"
        "4 2 0:7 / /dev/shm rw - tmpfs tmpfs rw\n"
    )
    assert detached_mounts(twice) == ["/dev/shm", "/dev/shm"]  # siblings: one detach each


def _join(fd: int) -> None:
    if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def _mount_points(pid: int | str) -> set[str]:
    table = Path(f"/proc/{pid}/mountinfo").read_text()
    return {line.split()[4] for line in table.splitlines()}


@pytest.mark.skipif(os.geteuid() != 0, reason="a mount namespace of one's own takes root")
def test_the_lean_namespace_keeps_the_real_file_systems_and_leaves_the_host_alone() -> None:
    host_before = _mount_points("self")
    fd = lean_mountns()
    assert fd is not None
    holder = subprocess.run(
        ["/bin/sh", "-c", "cat /proc/self/mountinfo"], capture_output=True, text=True,
        preexec_fn=lambda: _join(fd), pass_fds=(fd,), timeout=30, check=True,
    )
    lean = {line.split()[4] for line in holder.stdout.splitlines()}
    assert {"/", "/proc", "/dev"} <= lean
    assert not any(p == "/sys" or p.startswith(("/sys/", "/dev/pts", "/dev/shm")) for p in lean)
    assert len(lean) < len(host_before)
    assert _mount_points("self") == host_before  # nothing detached on the host


@pytest.mark.skipif(os.geteuid() != 0, reason="joining a mount namespace takes root")
def test_a_root_runners_seats_start_in_the_lean_namespace(
    make_bot: Callable[..., InstalledBot],
) -> None:
    fd = lean_mountns()
    assert fd is not None
    runner = BwrapRunner()
    assert runner.confinement["mountns"] == "lean"
    with open_session(runner, make_bot(python_bot()), FAST) as session:
        session.hello(hello())
        bwrap = session.process.pid  # bwrap's monitor stays where the helper put it
        assert os.readlink(f"/proc/{bwrap}/ns/mnt") == os.readlink(f"/proc/self/fd/{fd}")
        assert "/sys" not in _mount_points(bwrap)
    assert BwrapRunner(lean_mountns=False).confinement["mountns"] == "worker's"
