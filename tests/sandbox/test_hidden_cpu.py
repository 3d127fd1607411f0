"""Hostile bots that hide CPU from their clock or make themselves easy to starve, under bwrap with
seat cgroups and without: each must end as its own ``timeout`` (or be charged its CPU), never as
the host's ``PlatformTimeout``, which has the match played again and then void. Every one of
these passed as the host's failure, or went uncharged, before the fixes they came with
(``sandbox.clocks``: the seat's cumulative CPU, zombies kept in the tree, a lowered priority)."""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Iterator

import pytest

from sandbox import BotFault, Clock, open_session
from sandbox.clocks import BACKSTOP_FACTOR, task_times, tree_pids
from sandbox.runners.bwrap import BwrapRunner
from tests.sandbox.helpers import (
    FAST,
    SLOW_FIRST_TURN,
    busy_host_processes,
    hello,
    nothing_runs,
    python_bot,
    turn,
)

pytestmark = pytest.mark.skipif(
    task_times([os.getpid()]) is None, reason="this kernel gives no per-thread schedstat"
)



def _starves_its_first_process(child: str) -> str:
    """A bot that, from turn 2 (``SLOW_FIRST_TURN``), pins itself to one core, runs ``child`` in
    a forked child there, and spins at nice 19: its first process gets little CPU."""
    return python_bot(on_turn=SLOW_FIRST_TURN + """
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    if os.fork() == 0:
""" + textwrap.indent(textwrap.dedent(child), " " * 8) + """
    os.setpriority(os.PRIO_PROCESS, 0, 19)
    while True:
        pass
""")


#: The child forks a chain of 20 ms busy grandchildren and reaps each: the work is in tasks that
#: exit.
HIDES_CPU_IN_SHORT_TASKS = _starves_its_first_process("""
    while True:
        pid = os.fork()
        if pid == 0:
            t = time.monotonic()
            while time.monotonic() - t < 0.02:
                pass
            os._exit(0)
        os.waitpid(pid, 0)
""")
#: The child's main thread exits alone (its /proc entry says zombie) while its other thread spins.
HIDES_CPU_BEHIND_A_ZOMBIE = _starves_its_first_process("""
    import ctypes, threading
    def spin():
        while True:
            pass
    threading.Thread(target=spin).start()
    ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: this thread only
""")
#: Two children compute 0.33 s of CPU each and exit before the bot replies.
WORKS_IN_CHILDREN = python_bot(on_turn="""
    kids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            t = time.process_time()
            while time.process_time() - t < 0.33:
                pass
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
    send({"id": m["id"], "action": m["legal"][0]})
""")
#: The same in two threads of its own process, joined before the reply.
WORKS_IN_THREADS = python_bot(on_turn="""
    import hashlib, threading
    data = b"x" * (1 << 20)
    def work():
        t = time.thread_time()
        while time.thread_time() - t < 0.33:
            hashlib.sha256(data).digest()
    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    send({"id": m["id"], "action": m["legal"][0]})
""")
SETS_ITSELF_IDLE = python_bot(on_turn="""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    while True:
        pass
""")
NICES_ITS_SESSION = python_bot(on_turn="""
    with open("/proc/self/autogroup", "w") as group:
        group.write("19")
    os.setpriority(os.PRIO_PROCESS, 0, 19)
    while True:
        pass
""")
#: Room for the clock's checks on a loaded machine.
LONG = Clock(hello_ms=5000, move_ms=2000, bank_ms=20_000)


@pytest.fixture(params=["cgroups", "no-cgroup"])
def runner(request: pytest.FixtureRequest, bwrap: BwrapRunner) -> BwrapRunner:
    """bwrap with seat cgroups (where the host allows them), and without."""
    if request.param == "cgroups":
        return bwrap
    return BwrapRunner(cgroups=False, uid_pool=bwrap.uid_pool)


@pytest.fixture
def hog() -> Iterator[int]:
    """One ordinary busy host process on the last core (a session of its own); yields the core."""
    core = max(os.sched_getaffinity(0))
    with busy_host_processes(1, core):
        yield core


def _turn_two_faults(session) -> BotFault:
    session.hello(hello())
    assert session.turn(turn(1)) == "play TH"
    started = time.monotonic()
    with pytest.raises(BotFault) as raised:
        session.turn(turn(2))
    assert time.monotonic() - started < FAST.move_ms / 1000 * BACKSTOP_FACTOR + 1.0
    return raised.value


@pytest.mark.parametrize("source", [HIDES_CPU_IN_SHORT_TASKS, HIDES_CPU_BEHIND_A_ZOMBIE],
                         ids=["short-tasks", "zombie-leader"])
def test_cpu_hidden_from_the_clock_is_still_the_bots_timeout(runner, make_bot, source):
    with open_session(runner, make_bot(source), FAST) as session:
        fault = _turn_two_faults(session)
        assert fault.kind == "timeout", fault
    assert nothing_runs(session)


@pytest.mark.parametrize("source", [WORKS_IN_CHILDREN, WORKS_IN_THREADS],
                         ids=["children", "threads"])
def test_work_in_tasks_that_exit_before_the_reply_is_charged(runner, make_bot, source):
    """0.66 s of CPU in two tasks that are gone by the reply: the decision is charged it."""
    with open_session(runner, make_bot(source), LONG) as session:
        session.hello(hello())
        bank_before = session.bank_left_ms
        assert session.turn(turn(1)) == "play TH"
        charged_ms = bank_before - session.bank_left_ms
        assert charged_ms >= 600, (charged_ms, session.moves_ms)
    assert nothing_runs(session)


@pytest.mark.parametrize("source", [SETS_ITSELF_IDLE, NICES_ITS_SESSION], ids=["idle", "niced"])
def test_a_bot_that_lowers_its_priority_cannot_blame_the_host(runner, make_bot, hog, source):
    """Pinned beside one busy host process, a bot that spins at its priority times out on its
    own clock; one that first lowers its priority is starved, and that is its timeout too."""
    with open_session(runner, make_bot(source), FAST) as session:
        session.hello(hello())
        for pid in tree_pids(session.process.pid, session.process.host_uid):
            os.sched_setaffinity(pid, {hog})
        with pytest.raises(BotFault) as raised:
            session.turn(turn(1))
        assert raised.value.kind == "timeout", raised.value
    assert nothing_runs(session)


def test_a_thread_exiting_while_its_times_are_read_is_skipped(monkeypatch):
    """A bot churning threads made the read of a schedstat that was open fail (ESRCH), and the
    error ended the match as the platform's failure: that thread is now skipped."""
    import sandbox.clocks as clocks

    real_read, failed = os.read, []

    def read(fd: int, size: int) -> bytes:
        if not failed:
            failed.append(fd)
            raise ProcessLookupError(3, "No such process")
        return real_read(fd, size)

    import threading

    done = threading.Event()
    other = threading.Thread(target=done.wait)  # a second thread to be read
    other.start()
    try:
        monkeypatch.setattr(clocks.os, "read", read)
        times = task_times([os.getpid()])
    finally:
        done.set()
        other.join()
    assert failed and times is not None and times.cpu  # the other threads are still read
