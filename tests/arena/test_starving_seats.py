"""A whole match in the sandbox where one bot burns CPU between its turns and starves the seat on
turn: that bot's seat forfeits (``timeout``), the match ends with a result (it is not the
platform's failure, so it is neither played again nor void), and the replay checks.

The starvation is made real on this small machine as in tests/sandbox/test_starving_seats.py:
the burner and the slow thinkers are pinned to one core, the thinkers' scheduling groups get the
lowest weight and the burner's the highest."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

import arena.runtime.play as play_module
from arena.runtime.play import play_seats
from arena.runtime.seats import SessionSeat
from arena.runtime.specs import BotSpec
from engine import AnnouncedClock, Player, rules_for
from engine.check import check_replay
from sandbox import BotSession
from sandbox.clocks import task_times, tree_pids
from tests.arena.conftest import FIRST_BOT, install_cached
from tests.sandbox.helpers import seats_outweigh_the_host, weigh

CORE = max(os.sched_getaffinity(0))
CLOCK = AnnouncedClock(hello_ms=10_000, move_ms=500, bank_ms=60_000)
#: 0.3 s of CPU per decision, nothing between decisions.
THINKER = b"""import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "thinker"}), flush=True)
    elif m["type"] == "turn":
        t = time.process_time()
        while time.process_time() - t < 0.3:
            pass
        print(json.dumps({"id": m["id"], "action": m["legal"][0]}), flush=True)
"""
#: Answers at once, and burns CPU in eight threads between its turns (0.5 s after hello on).
BURNER = b"""import json, sys, threading, time
def spin():
    time.sleep(0.5)
    while True:
        pass
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        for _ in range(8):
            threading.Thread(target=spin, daemon=True).start()
        print(json.dumps({"type": "ready", "name": "burner"}), flush=True)
    elif m["type"] == "turn":
        print(json.dumps({"id": m["id"], "action": m["legal"][0]}), flush=True)
"""

pytestmark = pytest.mark.skipif(
    task_times([os.getpid()]) is None, reason="this kernel gives no per-thread schedstat"
)


@pytest.fixture
def tmp_path(reachable_folder: Path) -> Path:
    """Sandboxed bots must reach the test's folder."""
    return reachable_folder




def _weigh(session: BotSession, nice: int, pin: bool) -> None:
    """Pin every thread of the seat to ``CORE`` (if ``pin``); the seat gets the weight of
    ``nice`` against the other seats (``weigh``)."""
    with contextlib.suppress(OSError):
        if pin:
            for pid in tree_pids(session.process.pid, session.process.host_uid):
                for tid in os.listdir(f"/proc/{pid}/task"):
                    os.sched_setaffinity(int(tid), {CORE})
        weigh(session, nice)


class PinnedSeat(SessionSeat):
    """A seat pinned and weighted once its bot has answered hello; at the first close every seat
    of the table gets the default weight again, so that the starved ones can exit."""

    def __init__(self, session: BotSession, nice: int | None, table: list[PinnedSeat]) -> None:
        super().__init__(session)
        self.nice = nice
        self.table = table
        table.append(self)

    def hello(self, message: dict[str, Any]) -> None:
        super().hello(message)
        if self is self.table[0] and self.nice is not None:
            # the seats outweigh the host's other work while the match plays
            self.outweigh = contextlib.ExitStack()
            self.outweigh.enter_context(seats_outweigh_the_host(self.session))
        if self.nice is not None:
            _weigh(self.session, self.nice, pin=True)

    def close(self) -> None:
        outweigh = getattr(self.table[0], "outweigh", None)
        if outweigh is not None:
            outweigh.close()
            self.table[0].outweigh = None
        for seat in self.table:
            if seat.nice is not None:
                _weigh(seat.session, 0, pin=False)
                seat.nice = None
        super().close()


def test_a_bot_starving_the_seat_on_turn_forfeits_and_the_match_stands(tmp_path, monkeypatch):
    thinker = BotSpec.for_upload(install_cached(tmp_path, THINKER), "me/thinker v1")
    burner = BotSpec.for_upload(install_cached(tmp_path, BURNER), "rogue/burner v1")
    idle = BotSpec.for_upload(install_cached(tmp_path, FIRST_BOT), "me/first v1")
    nices = iter([19, -20, 19, None])
    table: list[PinnedSeat] = []
    start_seat = play_module.start_seat

    def start_pinned(spec: BotSpec, clock: AnnouncedClock, backend: str) -> PinnedSeat:
        seat = start_seat(spec, clock, backend)
        assert isinstance(seat, SessionSeat)
        return PinnedSeat(seat.session, next(nices), table)

    monkeypatch.setattr(play_module, "start_seat", start_pinned)
    played = play_seats(
        rules_for("quatre-sept"), [thinker, burner, thinker, idle], seed=3, match_id="m-burn",
        players=[Player("me/thinker", 1), Player("rogue/burner", 1), Player("me/thinker", 1),
                 Player("me/first", 1)],
        clock=CLOCK,
    )
    result = played.outcome.result
    assert result["reason"] == "forfeit" and result["winner"] == 0, result
    fault = result["fault"]
    assert fault["seat"] == 1 and fault["kind"] == "timeout", fault
    assert "seat 1 used" in fault["detail"] and "between its turns" in fault["detail"]
    check_replay(played.outcome.replay)
