"""Fair clocks under load: a bot kept off the CPU by a busy worker does not lose on time (its
decision is charged its CPU, not the time it waited for a CPU); a bot that burns CPU or sleeps
still does; a decision the host starved past the wall-clock backstop is the platform's failure.

The overload is real: CPU hogs pinned with the bot's whole process tree to one core, so the bot
gets a fraction of it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import BotFault, BotSession, Clock, TrustedProgram, TrustedRunner, open_session
from sandbox.clocks import BACKSTOP_FACTOR, PlatformTimeout, task_times, tree_pids
from tests.sandbox.helpers import (
    SLOW_FIRST_TURN,
    STARVES_ITSELF,
    busy_host_processes,
    favour,
    hello,
    python_bot,
    referee_keeps_up,
    turn,
)

MOVE_MS = 500
CLOCK = Clock(hello_ms=10_000, move_ms=MOVE_MS, bank_ms=60_000)
#: The bot's own work per decision: CPU seconds it burns before replying (well under MOVE_MS).
WORK_S = 0.15

BURN_THEN_REPLY = python_bot(on_turn=f"""
    t = time.process_time()
    while time.process_time() - t < {WORK_S}:
        pass
    send({{"id": m["id"], "action": m["legal"][0]}})
""")

pytestmark = pytest.mark.skipif(
    task_times([os.getpid()]) is None, reason="this kernel gives no per-thread schedstat"
)


@pytest.fixture
def hog_processes() -> Iterator[list[subprocess.Popen]]:
    """Four busy processes pinned to the last core (``HOG_CORE``), each in a session (so a
    scheduling group) of its own, as a seat is: the bot gets at most a fifth of the core."""
    with busy_host_processes(4, HOG_CORE) as procs:
        yield procs


HOG_CORE = max(os.sched_getaffinity(0))


@pytest.fixture
def hogs(hog_processes: list[subprocess.Popen]) -> int:
    """The core the hogs (``hog_processes``) keep busy."""
    return HOG_CORE


def _pin(session: BotSession, core: int) -> None:
    """Pin every process of the seat (and so what it starts later) to ``core``."""
    for pid in tree_pids(session.process.pid, session.process.host_uid):
        os.sched_setaffinity(pid, {core})


@pytest.fixture
def start(tmp_path: Path, request) -> Iterator:
    sessions: list[BotSession] = []

    def start(source: str) -> BotSession:
        path = tmp_path / f"bot{len(sessions)}.py"
        path.write_text(source)
        session = open_session(
            TrustedRunner(), TrustedProgram((sys.executable, "-u", str(path))), CLOCK
        )
        sessions.append(session)
        session.hello(hello())
        return session

    yield start
    for session in sessions:
        session.close()


def test_a_starved_bot_does_not_lose_on_time(start, hogs):
    """Today's wall clock would time it out: it replies only after MOVE_MS of wall time."""
    session = start(BURN_THEN_REPLY)
    _pin(session, hogs)
    for turn_id in range(1, 4):
        try:
            assert session.turn(turn(turn_id)) == "play TH"
        except PlatformTimeout:  # the host was busier still: the platform's failure, not the bot's
            break
    assert max(session.moves_ms) > MOVE_MS  # it really was starved past its clock
    assert session.fault is None


def test_a_cpu_burning_bot_still_loses_on_time(start):
    session = start(python_bot(on_turn="while True: pass"))
    favour(session)
    started = time.monotonic()
    with referee_keeps_up(), pytest.raises(BotFault) as raised:
        session.turn(turn(1))
    assert raised.value.kind == "timeout"
    assert time.monotonic() - started < MOVE_MS / 1000 * BACKSTOP_FACTOR
    detail = raised.value.detail
    for recorded in ("cpu_s=", "waited_s=", "load1=", "runnable=", "steal_s=", "worker_cpu_s="):
        assert recorded in detail, detail


def test_threads_cannot_hide_cpu(start):
    """Four busy threads are charged four times the CPU: the clock runs out sooner, not later."""
    session = start(python_bot(on_turn="""
        import threading
        def spin():
            while True:
                pass
        for _ in range(4):
            threading.Thread(target=spin, daemon=True).start()
        time.sleep(60)
    """))
    favour(session)
    with referee_keeps_up(), pytest.raises(BotFault) as raised:
        session.turn(turn(1))
    assert raised.value.kind == "timeout"


def test_a_sleeping_bot_loses_on_time_even_on_a_starved_core(start, hogs):
    """Waiting without asking for a CPU is the bot's own time: it cannot use a busy worker to
    turn its timeout into the platform's failure (a void match)."""
    session = start(python_bot(on_turn="time.sleep(60)"))
    _pin(session, hogs)
    with pytest.raises(BotFault) as raised:
        session.turn(turn(1))
    assert raised.value.kind == "timeout"


def test_a_bot_starved_past_the_backstop_is_the_platforms_failure(start, hogs, hog_processes):
    """A decision that needs more than a third of a starved core is not the bot's timeout. The
    host raises its own work (a seat that lowered itself would be to blame: ``test_hidden_cpu``)."""
    session = start(python_bot(on_turn=f"""
        t = time.process_time()
        while time.process_time() - t < {MOVE_MS / 1000 * 0.6}:
            pass
        send({{"id": m["id"], "action": m["legal"][0]}})
    """))
    _pin(session, hogs)
    for hog in hog_processes:
        with open(f"/proc/{hog.pid}/autogroup", "w") as group:  # their sessions' groups: the top
            group.write("-20")
    with pytest.raises(PlatformTimeout) as raised:
        session.turn(turn(1))
    assert "kept the bot off the CPU" in str(raised.value) and "load1=" in str(raised.value)
    with pytest.raises(PlatformTimeout):  # the session stays failed; close ends it at once
        session.turn(turn(2))


def test_a_starved_bot_in_bwrap_does_not_lose_on_time(run_in_bwrap, hogs):
    """The same in the real sandbox: the meter finds the seat's tree (bwrap, its pid 1, the bot)
    under the seat's own uid."""
    session = run_in_bwrap(BURN_THEN_REPLY, clock=CLOCK)
    session.hello(hello())
    _pin(session, hogs)
    assert len(tree_pids(session.process.pid, session.process.host_uid)) >= 3
    try:
        assert session.turn(turn(1)) == "play TH"
    except PlatformTimeout:  # the host was busier still: the platform's failure, not the bot's
        return
    assert session.moves_ms[-1] > MOVE_MS and session.fault is None


def test_children_forked_on_turn_cannot_pass_their_cpu_for_a_busy_host(start):
    """A seat whose tree is kept (no cgroup) forks busy children on its turn, which keep its
    first process off the CPU: at the backstop the clock looks the tree up again and charges
    their CPU, so it is the bot's timeout, not the platform's (which voids the match once it is
    played again). Under bwrap: ``test_hostile``."""
    session = start(STARVES_ITSELF)
    assert session.turn(turn(1)) == "play TH"
    started = time.monotonic()
    with pytest.raises(BotFault) as raised:
        session.turn(turn(2))
    assert raised.value.kind == "timeout", raised.value
    assert time.monotonic() - started < MOVE_MS / 1000 * BACKSTOP_FACTOR + 1.0


def test_a_reply_after_the_limits_worth_of_cpu_is_late_even_between_checks(start):
    """Two children burn 0.6 of MOVE_MS's CPU each on two cores: the bot replies after about
    0.6 of MOVE_MS on the wall clock, before the clock's next check, having used 1.2 times its
    limit in CPU. The reply is a timeout, not a move. (The favoured children may keep the
    referee off the CPU until they are done, so that no check comes before the reply at all.)"""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores for CPU to outrun the wall clock")
    burn_s = 0.6 * MOVE_MS / 1000
    session = start(python_bot(on_turn=SLOW_FIRST_TURN + f"""
    children = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            t = time.process_time()
            while time.process_time() - t < {burn_s}:
                pass
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    send({{"id": m["id"], "action": m["legal"][0]}})
    """))
    assert session.turn(turn(1)) == "play TH"
    favour(session)
    with pytest.raises(BotFault) as raised:
        session.turn(turn(2))
    assert raised.value.kind == "timeout", raised.value
    assert "its reply came after" in raised.value.detail, raised.value.detail
