"""Leased sandbox uids: a uid is leased again only once proven empty; the seats that end together
are swept with one /proc scan, and a seat's uid stays locked until that sweep."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import sandbox.procs as procs
from sandbox import InstalledBot, open_session
from sandbox.procs import pids_of_uid
from sandbox.runners.bwrap import BwrapRunner
from sandbox.uids import NoFreeUid, UidPool, release_all
from tests.sandbox.helpers import FAST, hello, python_bot

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="leasing uids needs root")


def _sleeper(uid: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"], user=uid, group=uid, extra_groups=[])


def test_leases_released_together_are_swept_with_one_scan(tmp_path: Path, monkeypatch) -> None:
    pool = UidPool(base=310_000, count=4, lock_dir=tmp_path / "locks")
    leases = [pool.lease() for _ in range(3)]
    sleepers = [_sleeper(lease.uid) for lease in leases]
    scans = []
    real = procs.pids_by_uid

    def counting(uids):
        scans.append(set(uids))
        return real(uids)

    monkeypatch.setattr(procs, "pids_by_uid", counting)
    release_all(leases)
    for sleeper in sleepers:
        assert sleeper.wait(timeout=5) == -9
    # each scan answers for all three uids (a kill round, then rounds until none is left)
    assert scans and all(scan == {lease.uid for lease in leases} for scan in scans)
    assert all(lease.released for lease in leases)
    assert all(pids_of_uid(lease.uid) == [] for lease in leases)


def test_a_leased_uid_is_not_leased_twice(tmp_path: Path) -> None:
    first = UidPool(base=310_100, count=1, lock_dir=tmp_path / "locks")
    second = UidPool(base=310_100, count=1, lock_dir=tmp_path / "locks")
    lease = first.lease()
    with pytest.raises(NoFreeUid):
        second.lease()
    lease.release()
    second.lease().release()  # free again (the reuse delay waits only while another is free)


def test_without_a_cgroup_a_seats_uid_stays_locked_until_the_last_seat_of_the_runner_ends(
    tmp_path: Path, make_bot: Callable[..., InstalledBot], bwrap: BwrapRunner,
) -> None:
    locks = tmp_path / "locks"
    runner = BwrapRunner(uid_pool=UidPool(base=310_200, count=2, lock_dir=locks), cgroups=False)
    bot = make_bot(python_bot())
    first = open_session(runner, bot, FAST)
    second = open_session(runner, bot, FAST)
    for session in (first, second):
        session.hello(hello())
    uids = {first.process.host_uid, second.process.host_uid}
    assert len(uids) == 2
    first.close()
    other = UidPool(base=310_200, count=2, lock_dir=locks)
    with pytest.raises(NoFreeUid):  # the first seat's uid waits for the shared sweep
        other.lease()
    second.close()
    assert all(pids_of_uid(uid) == [] for uid in uids)
    other.lease().release()  # both swept and free


def test_a_seat_whose_cgroup_is_removed_frees_its_uid_at_once_without_a_scan(
    tmp_path: Path, make_bot: Callable[..., InstalledBot], bwrap: BwrapRunner, monkeypatch,
) -> None:
    locks = tmp_path / "locks"
    runner = BwrapRunner(uid_pool=UidPool(base=310_300, count=2, lock_dir=locks))
    if runner.cgroup_support.mode == "none":
        pytest.skip(f"no per-seat cgroup here ({runner.cgroup_support.reason})")
    # the bot leaves a child behind that ignores the end of its input
    bot = make_bot(python_bot(on_hello=(
        'import subprocess; subprocess.Popen([sys.executable, "-c", "import time; '
        'time.sleep(60)"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL); '
        'send({"type": "ready", "name": "test"})')))
    first = open_session(runner, bot, FAST)
    second = open_session(runner, bot, FAST)
    for session in (first, second):
        session.hello(hello())
    uid = first.process.host_uid
    assert len(pids_of_uid(uid)) >= 2  # the bot and its child (beside bwrap's own)
    scans = []
    real = procs.pids_by_uid
    monkeypatch.setattr(procs, "pids_by_uid", lambda uids: scans.append(set(uids)) or real(uids))
    first.close()
    assert scans == []  # proven empty by its cgroup, not by a /proc scan
    # What is still listed under the uid has left the cgroup in its exit (the namespace's pid 1
    # waits there for the rest): it never runs the bot's code again, and goes by itself.
    deadline = time.monotonic() + 10
    while pids_of_uid(uid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pids_of_uid(uid) == []
    other = UidPool(base=310_300, count=2, lock_dir=locks)
    lease = other.lease()  # free at once, while the second seat still runs
    assert lease.uid == uid
    lease.release()
    second.close()


#: The main thread exits alone (``SYS_exit``, x86-64): /proc lists the process as a zombie while
#: its other thread goes on.
_LEADER_EXITS_ALONE = """
import ctypes, threading, time
threading.Thread(target=time.sleep, args=(60,)).start()
ctypes.CDLL(None).syscall(60, 0)
"""


def test_a_zombie_leader_whose_thread_lives_on_is_swept() -> None:
    """The uid sweep that proves a seat's uid empty sees a process whose main thread exited
    alone: listed as a zombie, it still runs, and a sweep that skipped it would lease the uid
    again with the bot's thread still in it."""
    uid = 310_400
    process = subprocess.Popen(["/usr/bin/python3", "-c", _LEADER_EXITS_ALONE],
                               user=uid, group=uid, extra_groups=[])
    try:
        status = Path(f"/proc/{process.pid}/status")
        deadline = time.monotonic() + 10
        while b"State:\tZ" not in status.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert b"State:\tZ" in status.read_bytes()
        assert pids_of_uid(uid) == [process.pid]
        assert procs.kill_uid(uid)
        assert process.wait(timeout=5) == -9  # the thread was killed, not left to sleep on
    finally:
        process.kill()
        process.wait()
