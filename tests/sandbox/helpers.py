"""Helpers for sandbox tests: bot sources, fake referee messages, leftover checks."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox import BotSession, Clock
from sandbox.procs import pids_of_uid
from sandbox.runners.docker import ContainerProcess, default_client

#: Short clocks keep the suite fast; the fault timing assertions scale with them.
FAST = Clock(hello_ms=5000, move_ms=500, bank_ms=5000)

PRELUDE = """\
import json, os, sys, time

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

def messages():
    for line in sys.stdin:
        yield json.loads(line)
"""


def python_bot(on_turn: str = 'send({"id": m["id"], "action": m["legal"][0]})',
               on_hello: str = 'send({"type": "ready", "name": "test"})') -> str:
    """A Python bot whose reactions to hello and turn (message ``m``) are the given statements."""
    return (
        PRELUDE
        + "\nfor m in messages():\n"
        + '    if m["type"] == "hello":\n' + textwrap.indent(textwrap.dedent(on_hello), " " * 8)
        + '\n    elif m["type"] == "turn":\n' + textwrap.indent(textwrap.dedent(on_turn), " " * 8)
        + "\n"
    )


#: The start of an ``on_turn``: turn 1 is slow but legal, so that the clock looks up the seat's
#: process tree (and, without a seat cgroup, keeps it); what follows runs from turn 2.
SLOW_FIRST_TURN = """
    if m["id"] == 1:
        time.sleep(0.1)
        send({"id": m["id"], "action": m["legal"][0]})
        continue
"""
#: A bot whose second decision forks 24 busy children and spins: children the kept tree does
#: not hold, which keep its first process off the CPU.
STARVES_ITSELF = python_bot(on_turn=SLOW_FIRST_TURN + """
    for _ in range(24):
        if os.fork() == 0:
            while True:
                pass
    while True:
        pass
""")


def hello(**extra: Any) -> dict[str, Any]:
    return {"type": "hello", "protocol": 1, "seat": 0, "team": 0, "match": "m-test",
            "clock": FAST.as_message(), **extra}


LEGAL = ("play TH", "play 9H", "play AH")


def turn(turn_id: int, legal: tuple[str, ...] = LEGAL) -> dict[str, Any]:
    return {"type": "turn", "id": turn_id, "decision": "play", "state": {"hand": []},
            "legal": list(legal)}


def play_match(session: BotSession, turns: int = 3) -> list[str]:
    """A fake referee: hello, a few turns, deal_end, match_end. Returns the actions."""
    session.hello(hello())
    actions = [session.turn(turn(i)) for i in range(1, turns + 1)]
    session.notify({"type": "deal_end", "score": [1, 0]})
    session.notify({"type": "match_end", "score": [31, 0], "winner": 0, "reason": "target"})
    return actions


def seat_pids(session: BotSession) -> list[int]:
    """The host pids of the seat's processes: those of its leased uid (bwrap), or those in its
    container (Docker; none once the container is gone)."""
    process = session.process
    if isinstance(process, ContainerProcess):
        import docker

        deadline = time.monotonic() + 10
        while True:
            try:
                top = default_client().top(process.container, ps_args="-eo pid")
            except docker.errors.NotFound:
                return []
            except docker.errors.APIError as exc:
                if exc.response is not None and exc.response.status_code == 409:
                    return []  # killed, not removed yet: no process runs in it
                # A pooled seat's close does not wait for the engine's teardown: asked in the
                # middle of it, the engine answers 500 (its shim is going); ask again.
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
                continue
            return sorted(int(row[0]) for row in top.get("Processes") or [])
    assert process.host_uid is not None, "bwrap without a leased uid: run the tests as root"
    return pids_of_uid(process.host_uid)


#: ``PF_EXITING`` in the flags of ``/proc/PID/stat``: the task is in the kernel's exit path.
_PF_EXITING = 0x4


def _exiting(pid: int) -> bool:
    """The process is gone or past the point of running any code of its own again: killed, it
    is in the kernel's exit path. The seat's pid 1 leaves its cgroup there, then reaps what is
    left of the namespace before it ends, so it may outlive the cgroup's removal by a moment."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return True
    return bool(int(fields[6]) & _PF_EXITING)


def assert_left_nothing(session: BotSession) -> None:
    """The session's process is reaped and, under a leased uid, nothing of that uid runs; under
    Docker the container is gone."""
    assert session.process.poll() is not None
    assert not os.path.exists(f"/proc/{session.process.pid}/status") or _zombie_or_other(
        session.process.pid
    )
    if session.process.host_uid is not None or isinstance(session.process, ContainerProcess):
        assert nothing_runs(session), _describe(seat_pids(session))
    if isinstance(session.process, ContainerProcess):
        import docker

        deadline = time.monotonic() + 15  # a pre-started seat's container is removed in the
        with pytest.raises(docker.errors.NotFound):  # background once killed
            while time.monotonic() < deadline:
                default_client().inspect_container(session.process.container)
                time.sleep(0.05)


def nothing_runs(session: BotSession, within: float = 2.0) -> bool:
    """No process of the seat can run code any more, now or within ``within`` seconds: every one
    is gone or in the kernel's exit path (``_exiting``). A killed process takes a moment to get
    there, longer on a loaded machine."""
    deadline = time.monotonic() + within
    while [pid for pid in seat_pids(session) if not _exiting(pid)]:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _describe(pids: list[int]) -> str:
    """The state line and command name of each of ``pids``, for a failure message."""
    described = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                described.append(stat.read()[:120])
        except OSError:
            described.append(f"{pid} (gone)")
    return "left behind: " + "; ".join(described)


def _zombie_or_other(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as status:  # the pid was reused by some other process
        return "PPid" in status.read()


def favour(session: BotSession) -> None:
    """Give every process of the seat (and so what it starts later) the highest priority, in its
    session's scheduling group too, so that it gets a CPU on a machine other work keeps busy: a
    test of the bot's own timeout must not become the platform's (``sandbox.clocks``). Root only
    (skips otherwise)."""
    import pytest

    from sandbox.clocks import tree_pids

    for pid in tree_pids(session.process.pid, session.process.host_uid):
        try:
            os.setpriority(os.PRIO_PROCESS, pid, -20)
            with open(f"/proc/{pid}/autogroup", "w") as group:
                group.write("-20")
        except PermissionError:
            pytest.skip("raising a priority needs root")
        except (FileNotFoundError, ProcessLookupError):  # no autogroups, or the process ended
            pass


@contextlib.contextmanager
def busy_host_processes(count: int, core: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` busy host processes pinned to ``core``, each in a session (so a scheduling
    group) of its own, as a seat is; killed afterwards."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, {core}))
        for _ in range(count)
    ]
    time.sleep(0.2)
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def referee_keeps_up() -> Iterator[None]:
    """While it lasts, this thread (the referee that times a ``favour``ed seat) and its session's
    scheduling group get the same highest priority as the seat, so that a seat of many busy
    processes cannot keep the referee itself off the CPU: its timeout would then be seen late,
    or taken for the host's (``PlatformTimeout``). Restored afterwards. Root only (skips
    otherwise)."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    autogroup = Path("/proc/self/autogroup")
    try:  # "/autogroup-85 nice 0"; empty where this process is in no session group
        group_before = (autogroup.read_text().split() or [None])[-1]
    except OSError:  # no autogroups
        group_before = None
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -20)  # this thread only (nice is per thread)
        if group_before is not None:
            autogroup.write_text("-20")
    except PermissionError:
        pytest.skip("raising a priority needs root")
    try:
        yield
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, before)
        if group_before is not None:
            autogroup.write_text(group_before)


@contextlib.contextmanager
def seats_outweigh_the_host(session: BotSession) -> Iterator[None]:
    """While it lasts, the seats' common cgroup (weighted as one host process, ``sandbox.cgroups``)
    gets the highest CPU weight, so that other work on a busy host cannot keep a seat the test
    means to run off its core (the kernel ignores a process's nice and autogroup against other
    cgroups, so ``favour`` alone cannot). Restored afterwards; nothing where seats are not
    weighted (Docker, or no cpu controller)."""
    weight_file = getattr(getattr(session.process, "cgroup", None), "weight_file", None)
    if weight_file is None:
        yield
        return
    parent = weight_file.parent.parent / weight_file.name
    before = parent.read_text()
    parent.write_text("10000" if weight_file.name == "cpu.weight" else "262144")
    try:
        yield
    finally:
        parent.write_text(before)


def weigh(session: BotSession, nice: int) -> None:
    """Give the seat the scheduling weight of nice value ``nice`` against the other seats: its
    own cgroup's CPU weight where seats are weighted (``sandbox.cgroups``), else the weight of
    its processes' session groups (autogroup). Only the weight changes, never the affinity."""
    from sandbox.clocks import tree_pids

    weight_file = getattr(getattr(session.process, "cgroup", None), "weight_file", None)
    if weight_file is not None:
        if weight_file.name == "cpu.weight":  # v2: 1 to 10000, 100 at nice 0
            weight_file.write_text(str(max(1, min(10000, round(100 / 1.25 ** nice)))))
        else:  # v1 shares: 2 to 262144, 1024 at nice 0
            weight_file.write_text(str(max(2, min(262144, round(1024 / 1.25 ** nice)))))
        return
    for pid in tree_pids(session.process.pid, session.process.host_uid):
        with open(f"/proc/{pid}/autogroup", "w") as group:
            group.write(str(nice))
