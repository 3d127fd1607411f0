"""A seat that burns CPU between its turns and starves the seat on turn past the backstop
forfeits (``timeout``, the fault carrying its seat), instead of the match being played again and
then void; a seat that stays idle is never blamed, whatever happens to the seat on turn.

The starvation is real, in the real sandbox: both seats' processes and threads are pinned to one
core, the seat on turn's scheduling group gets the lowest weight (nice 19) and the burner's the
highest (nice -20), as many busy threads would get it where each thread counts, so the seat on turn
gets a sliver of the core whatever else the machine runs."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandbox import BotFault, BotSession, Clock, TrustedProgram, TrustedRunner, open_session
from sandbox.clocks import PlatformTimeout, task_times, tree_pids
from sandbox.starvation import LIVE_SOURCE, MatchSeats
from tests.sandbox.helpers import (
    busy_host_processes,
    hello,
    python_bot,
    seats_outweigh_the_host,
    turn,
    weigh,
)

MOVE_MS = 500
CLOCK = Clock(hello_ms=10_000, move_ms=MOVE_MS, bank_ms=60_000)
#: How long the burners wait after ``ready`` before burning (the test pins them meanwhile).
DELAY_S = 0.5

#: A slow but honest thinker: 0.6 * MOVE_MS of CPU per decision, nothing between decisions.
THINKER = python_bot(on_turn=f"""
    t = time.process_time()
    while time.process_time() - t < {MOVE_MS / 1000 * 0.6}:
        pass
    send({{"id": m["id"], "action": m["legal"][0]}})
""")
#: Replies at once and does nothing between its turns.
IDLE = python_bot()
#: Eight threads that burn CPU between its turns (from DELAY_S after hello on; more would pass
#: the seat's address-space cap with their stacks and malloc arenas).
THREAD_BURNER = python_bot(on_hello=f"""
    import threading
    def spin():
        time.sleep({DELAY_S})
        while True:
            pass
    for _ in range(8):
        threading.Thread(target=spin, daemon=True).start()
    send({{"type": "ready", "name": "burner"}})
""")
#: Burns CPU between its turns in short-lived child processes only: eight at a time, each
#: burning 30 ms and exiting, so that none is alive long enough to be seen by a look at /proc.
FORK_BURNER = python_bot(on_hello=f"""
    if os.fork() == 0:
        time.sleep({DELAY_S})
        while True:
            children = []
            for _ in range(8):
                pid = os.fork()
                if pid == 0:
                    t = time.monotonic()
                    while time.monotonic() - t < 0.03:
                        pass
                    os._exit(0)
                children.append(pid)
            for pid in children:
                os.waitpid(pid, 0)
    send({{"type": "ready", "name": "forker"}})
""")

#: Eight busy children, each in a session of its own (``setsid``): on a kernel with autogroups
#: every session is a scheduling group of its own, so without per-seat weights each child would
#: weigh as much as another seat's whole session.
SETSID_BURNER = python_bot(on_hello=f"""
    for _ in range(8):
        if os.fork() == 0:
            os.setsid()
            time.sleep({DELAY_S})
            while True:
                pass
    send({{"type": "ready", "name": "sessions"}})
""")

pytestmark = pytest.mark.skipif(
    task_times([os.getpid()]) is None, reason="this kernel gives no per-thread schedstat"
)
CORE = max(os.sched_getaffinity(0))


def _pin(session: BotSession, nice: int) -> None:
    """Pin every thread of the seat (and so whatever it starts later) to ``CORE``; give the seat
    the weight of nice value ``nice`` against the other seats (``helpers.weigh``)."""
    for pid in tree_pids(session.process.pid, session.process.host_uid):
        for tid in os.listdir(f"/proc/{pid}/task"):
            os.sched_setaffinity(int(tid), {CORE})
    weigh(session, nice)


def _unpin(session: BotSession) -> None:
    """Back to the default weight, so that a starved seat can run to its end when killed."""
    with contextlib.suppress(OSError):
        weigh(session, 0)


@pytest.fixture
def table(run_in_bwrap, request) -> Iterator[Callable[[int, str, int], BotSession]]:
    """``seat(number, source, nice)``: a bot started in bwrap, greeted, pinned to ``CORE`` and
    joined to one match's ``MatchSeats``. At the end the seats are closed, burners first. The
    seats outweigh the host's other work (``seats_outweigh_the_host``) unless the test brings
    ``hogs`` of its own to starve them with."""
    seats = MatchSeats()
    sessions: list[BotSession] = []
    outweigh = contextlib.ExitStack()

    def seat(number: int, source: str, nice: int) -> BotSession:
        session = run_in_bwrap(source, clock=CLOCK)
        if not sessions and "hogs" not in request.fixturenames:
            outweigh.enter_context(seats_outweigh_the_host(session))
        sessions.append(session)
        session.hello(hello(seat=number))
        seats.join(number, session)
        _pin(session, nice)
        return session

    yield seat
    outweigh.close()
    for session in sessions:
        _unpin(session)
    for session in reversed(sessions):
        session.close()


@pytest.fixture
def hogs() -> Iterator[None]:
    """Four busy processes on ``CORE``, each in a session (a scheduling group) of its own: the
    host, not a seat, starves whatever else runs there."""
    with busy_host_processes(4, CORE):
        yield


def _starved_by(victim: BotSession, burner: BotSession, burner_seat: int) -> BotFault:
    time.sleep(DELAY_S + 0.2)  # the burner burns
    with pytest.raises(BotFault) as raised:
        victim.turn(turn(1))
    fault = raised.value
    assert fault.kind == "timeout" and fault.seat == burner_seat, fault
    assert burner.fault is fault, "the burner's session is the one at fault"
    assert victim.fault is None, "the seat on turn is not blamed"
    assert f"seat {burner_seat} used" in fault.detail and "between its turns" in fault.detail
    used_ms = int(fault.detail.split(f"seat {burner_seat} used ")[1].split(" ms")[0])
    assert used_ms >= MOVE_MS
    with pytest.raises(BotFault):  # the burner stays failed
        burner.notify({"type": "match_end"})
    return fault


def test_a_bot_burning_threads_between_its_turns_forfeits(table):
    victim = table(0, THINKER, 19)
    burner = table(1, THREAD_BURNER, -20)
    fault = _starved_by(victim, burner, 1)
    assert "while seat 0 was on turn (turn 1)" in fault.detail
    victim.notify({"type": "match_end"})  # the seat on turn is told the end, not faulted


def test_a_bot_burning_in_short_lived_processes_is_found(table):
    victim = table(2, THINKER, 19)
    burner = table(3, FORK_BURNER, -20)
    cgroup = burner.process.cgroup
    fault = _starved_by(victim, burner, 3)
    if cgroup is not None and cgroup.cpu_source:
        assert cgroup.cpu_source in fault.detail  # counted by the cgroup: ended ones too


def test_weighted_seats_keep_a_burner_from_starving_the_seat_on_turn(table):
    """With the seats weighted equally (``sandbox.cgroups``), eight busy processes of one seat,
    each in a session of its own, get no more of the shared core than the one thinking thread
    of the other: the thinker decides in time and nobody is at fault. Unweighted, the thinker
    would get a ninth of the core and the burner would forfeit (the tests above)."""
    victim = table(0, THINKER, 0)
    if getattr(victim.process.cgroup, "weight_file", None) is None:
        pytest.skip("seats are not CPU-weighted here")
    burner = table(1, SETSID_BURNER, 0)
    time.sleep(DELAY_S + 0.2)  # the burner burns
    assert victim.turn(turn(1)) == "play TH"
    assert victim.fault is None and burner.fault is None


def test_an_idle_bot_beside_a_starved_thinker_is_not_blamed(table, hogs):
    """The host starves the thinker: the platform's failure, as before, and no seat's."""
    victim = table(0, THINKER, 19)
    idle = table(1, IDLE, 0)
    with pytest.raises(PlatformTimeout):
        victim.turn(turn(1))
    assert idle.fault is None and victim.fault is None
    assert idle.turn(turn(2)) == "play TH"


def test_an_idle_bot_beside_a_bot_out_of_time_is_not_blamed(table):
    """Its own timeout (favoured, so that the busy machine does not make it the platform's)."""
    victim = table(0, python_bot(on_turn="while True: pass"), -20)
    idle = table(1, IDLE, 0)
    with pytest.raises(BotFault) as raised:
        victim.turn(turn(1))
    assert raised.value.kind == "timeout" and raised.value.seat is None
    assert victim.fault is raised.value and idle.fault is None


def test_without_a_cgroup_the_live_threads_are_read(tmp_path: Path):
    """Seats with no cgroup (trusted processes here): the burner's live threads are read, and the
    detail says where the figure came from."""
    seats = MatchSeats()
    sessions: list[BotSession] = []
    try:
        for number, (source, nice) in enumerate(((THINKER, 0), (THREAD_BURNER, -20))):
            path = tmp_path / f"bot{number}.py"
            path.write_text(source)
            session = open_session(
                TrustedRunner(), TrustedProgram((sys.executable, "-u", str(path))), CLOCK
            )
            sessions.append(session)
            session.hello(hello(seat=number))
            seats.join(number, session)
            _pin(session, nice)
        fault = _starved_by(*sessions, 1)
        assert LIVE_SOURCE in fault.detail
    finally:
        for session in sessions:
            _unpin(session)
        for session in reversed(sessions):
            session.close()
