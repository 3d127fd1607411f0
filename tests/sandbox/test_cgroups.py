"""Seat cgroups: layout detection and the files a seat's group gets. The real kernel behaviour
(a seat over its cap is killed) is in test_bwrap_channels; this machine has cgroup v1 only, so
the v2 layout is checked on a folder laid out like /sys/fs/cgroup (files, no kernel)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.cgroups import (
    GROUP_NAME,
    SEATS_CPU_WEIGHT,
    SeatCgroup,
    detect,
    sweep_dead_seat_groups,
)


def fake_v2(root: Path, enabled: str = "") -> Path:
    (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n")
    (root / "cgroup.subtree_control").write_text(enabled)
    return root


def test_v2_layout_enables_controllers_and_caps_a_seat(tmp_path: Path):
    parent = tmp_path / GROUP_NAME
    parent.mkdir()
    (parent / "cgroup.subtree_control").write_text("")  # the kernel's file, here a plain one
    support = detect(fake_v2(tmp_path))
    assert support.mode == "v2" and support.parents == (parent,)
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (parent / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (parent / "cpu.weight").read_text() == str(SEATS_CPU_WEIGHT) and support.cpu_weight
    seat = SeatCgroup(support, 64 << 20, 9)
    folder = seat.folders[0]
    assert (folder / "memory.max").read_text() == str(64 << 20)
    assert (folder / "memory.swap.max").read_text() == "0"
    assert (folder / "pids.max").read_text() == "9"
    seat.join_self()
    assert (folder / "cgroup.procs").read_text() == "0"
    assert seat.cpu_source == "cgroup v2 cpu.stat" and seat.cpu_seconds() is None  # no kernel
    (folder / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 5\n")
    assert seat.cpu_seconds() == 1.5
    for name in ("memory.max", "memory.swap.max", "pids.max", "cgroup.procs", "cpu.stat"):
        (folder / name).unlink()  # the kernel's files vanish with the group
    assert seat.remove() and not folder.exists()


def test_v2_without_memory_controller_is_no_support(tmp_path: Path):
    (tmp_path / "cgroup.controllers").write_text("cpu io pids\n")
    support = detect(tmp_path)
    assert support.mode == "none" and "lacks memory" in support.reason


def test_v1_layout(tmp_path: Path):
    for name, files in (("memory", ("memory.limit_in_bytes",)), ("pids", ("cgroup.procs",))):
        (tmp_path / name).mkdir()
        for file in files:
            (tmp_path / name / file).write_text("")
    support = detect(tmp_path)
    assert support.mode == "v1"
    assert support.parents == (tmp_path / "memory" / GROUP_NAME, tmp_path / "pids" / GROUP_NAME)
    (tmp_path / "cpuacct").mkdir()  # a cpuacct hierarchy: the seat joins it too, for its CPU
    (tmp_path / "cpuacct" / "cpuacct.usage").write_text("0")
    support = detect(tmp_path)
    assert support.parents[2] == tmp_path / "cpuacct" / GROUP_NAME and "CPU" in support.reason


def test_v1_seats_share_a_weighted_cpu_group(tmp_path: Path):
    """Where a v1 ``cpu`` hierarchy exists, the seats' parent there gets the seats' weight (in
    shares: 10.24 per unit of ``cpu.weight``) and each seat a group of its own, which it joins
    and which goes with it."""
    for name, files in (("memory", ("memory.limit_in_bytes",)), ("pids", ("cgroup.procs",)),
                        ("cpu", ("cpu.shares",))):
        (tmp_path / name).mkdir()
        for file in files:
            (tmp_path / name / file).write_text("")
    support = detect(tmp_path)
    parent = tmp_path / "cpu" / GROUP_NAME
    assert support.cpu_parent == parent and support.cpu_weight == SEATS_CPU_WEIGHT
    assert (parent / "cpu.shares").read_text() == str(SEATS_CPU_WEIGHT * 1024 // 100)
    seat = SeatCgroup(support, 1 << 20, 4)
    assert seat.folders[-1].parent == parent and len(seat.procs_fds()) == 3
    seat.join_self()
    assert (seat.folders[-1] / "cgroup.procs").read_text() == "0"
    for folder in seat.folders:
        for file in folder.iterdir():
            file.unlink()  # the kernel's files vanish with the group
    assert seat.remove() and not seat.folders[-1].exists()


def test_v1_with_cpu_and_cpuacct_mounted_as_one_hierarchy(tmp_path: Path):
    """systemd's v1 layout: ``cpu`` and ``cpuacct`` are links to one ``cpu,cpuacct`` hierarchy,
    so the seat's CPU-weight group and its CPU-count group are one folder: made, joined and
    removed once (a second ``mkdir`` of it failed every seat's start)."""
    for name, files in (("memory", ("memory.limit_in_bytes",)), ("pids", ("cgroup.procs",)),
                        ("cpu,cpuacct", ("cpu.shares", "cpuacct.usage"))):
        (tmp_path / name).mkdir()
        for file in files:
            (tmp_path / name / file).write_text("")
    (tmp_path / "cpu").symlink_to("cpu,cpuacct")
    (tmp_path / "cpuacct").symlink_to("cpu,cpuacct")
    support = detect(tmp_path)
    assert support.cpu_parent is not None and len(support.parents) == 3
    seats = [SeatCgroup(support, 1 << 20, 4) for _ in range(2)]
    assert seats[0].folders[0].name != seats[1].folders[0].name
    seat = seats[0]
    assert len(seat.procs_fds()) == 3  # memory, pids, cpu,cpuacct
    assert seat.folders[2].resolve() == seat.folders[3].resolve()
    seat.join_self()
    assert (seat.folders[3] / "cgroup.procs").read_text() == "0"
    for each in seats:
        for folder in {folder.resolve() for folder in each.folders}:
            for file in folder.iterdir():
                file.unlink()  # the kernel's files vanish with the group
        assert each.remove()
    assert [path.name for path in (tmp_path / "cpu,cpuacct" / GROUP_NAME).iterdir()] == [
        "cpu.shares"]

def test_the_empty_groups_of_a_dead_worker_process_are_swept(tmp_path: Path):
    """A worker process killed outright leaves its seats' groups; the next runner removes those
    whose maker is gone and keeps a live process's."""
    for name, files in (("memory", ("memory.limit_in_bytes",)), ("pids", ("cgroup.procs",))):
        (tmp_path / name).mkdir()
        for file in files:
            (tmp_path / name / file).write_text("")
    support = detect(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for parent in support.parents:
        (parent / f"seat-{dead.pid}-0-00ff00ff").mkdir()
        (parent / f"seat-{os.getpid()}-0-00ff00ff").mkdir()
    assert sweep_dead_seat_groups(support) == 2
    for parent in support.parents:
        assert [f.name for f in parent.glob("seat-*")] == [f"seat-{os.getpid()}-0-00ff00ff"]

def _cpu_of_seats_on_one_core(support, threads: tuple[int, int], seconds: float) -> list[float]:
    """Two seats burning CPU with ``threads`` processes each on core 0 at once for
    ``seconds``: the CPU each got (its group's count)."""
    code = ("import os, sys, time\n"
            "end = time.monotonic() + float(sys.argv[2])\n"
            "def burn():\n"
            "    while time.monotonic() < end: pass\n"
            "for _ in range(int(sys.argv[1]) - 1):\n"
            "    if os.fork() == 0:\n"
            "        burn()\n"
            "        os._exit(0)\n"
            "burn()\n"
            "while True:\n"
            "    try: os.wait()\n"
            "    except ChildProcessError: break\n")
    seats = [SeatCgroup(support, 256 << 20, 32) for _ in threads]
    try:
        def start(seat, count):
            def enter():
                os.sched_setaffinity(0, {0})
                seat.join_self()
            return subprocess.Popen([sys.executable, "-c", code, str(count), str(seconds)],
                                    preexec_fn=enter)
        for process in [start(seat, count) for seat, count in zip(seats, threads, strict=True)]:
            process.wait()
        return [seat.cpu_seconds() for seat in seats]
    finally:
        for seat in seats:
            seat.remove()


def test_a_seat_with_many_processes_gets_no_more_cpu_than_a_seat_with_one():
    """On this machine's kernel: two seats compete for one core, one with 8 busy processes, one
    with 1. Weighted per seat, each gets about half; by thread (no weight) the one-thread seat
    would get about a ninth."""
    support = detect()
    if support.mode != "v1" or support.cpu_parent is None or len(support.parents) < 3:
        pytest.skip(f"no cgroup v1 cpu and cpuacct here: {support.reason}")
    many, one = _cpu_of_seats_on_one_core(support, (8, 1), 1.0)
    assert one > 0.3 * (many + one), (many, one)


def test_a_real_v1_seat_counts_the_cpu_of_processes_that_ended():
    """On this machine's kernel (cgroup v1 with cpuacct): a child that burned CPU and exited
    still counts."""
    support = detect()
    if support.mode != "v1" or len(support.parents) < 3:
        pytest.skip(f"no cgroup v1 cpuacct here: {support.reason}")
    seat = SeatCgroup(support, 256 << 20, 8)
    try:
        assert seat.cpu_source == "cgroup v1 cpuacct.usage"
        before = seat.cpu_seconds()
        assert before is not None
        code = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass"
        subprocess.run([sys.executable, "-c", code], preexec_fn=seat.join_self, check=True)
        assert seat.pids() == []
        assert seat.cpu_seconds() - before >= 0.2
    finally:
        seat.remove()


def test_nothing_usable_is_no_support(tmp_path: Path):
    support = detect(tmp_path)
    assert support.mode == "none" and str(tmp_path) in support.reason
    with pytest.raises(ValueError, match="no cgroup support"):
        SeatCgroup(support, 1 << 20, 4)
