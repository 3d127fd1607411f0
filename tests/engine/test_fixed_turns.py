"""Fixed-time turns: the referee releases every decision ``move_ms`` after it asked, so a seat's
think time (the covert channel between partners, docs/security.md) never reaches another seat.

A hostile sender (seat 0) delays its replies by a bit pattern; its partner (seat 2) times the gap
between its own turns, which is all a bot can time. Without fixed turns the gaps carry the bits
(the reference, so these tests could fail); with them they do not.
"""

from __future__ import annotations

import functools
import itertools
import statistics
import time
from typing import Any

from engine.bots import make_bot
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for

MOVE_MS = 20
DELAY_S = 0.010  # the sender's "1": half the move clock


def sender_bit(turn_id: int) -> int:
    """A fixed pseudo-random bit per turn (the sender's secret, as far as the test goes)."""
    return (turn_id * 2654435761 >> 7) & 1


class Timed:
    """A random bot that logs when each of its turns arrived; the sender delays its replies."""

    def __init__(self, seat: int, log: list[tuple[float, int, int, int]]):
        self.seat, self.log = seat, log
        self.bot = make_bot("random")

    def hello(self, message: dict[str, Any]) -> None:
        self.bot.hello(message)

    def turn(self, message: dict[str, Any]) -> str:
        delayed = self.seat == 0 and sender_bit(message["id"])
        self.log.append((time.perf_counter(), self.seat, int(delayed), len(message["legal"])))
        if delayed:
            time.sleep(DELAY_S)
        return self.bot.act(message)

    def notify(self, message: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


@functools.cache
def play_timed(fixed: bool) -> list[tuple[float, int, int, int]]:
    """(arrival time, seat, sender delayed, legal actions) of every turn of a short match (played
    once a test session: several tests read the same timings)."""
    log: list[tuple[float, int, int, int]] = []
    referee_match(
        rules_for("quatre-sept"),
        [Timed(seat, log) for seat in range(4)],
        seed=5,
        clock=AnnouncedClock(move_ms=MOVE_MS, fixed_turns=fixed),
    )
    return log


def delay_shift(log: list[tuple[float, int, int, int]]) -> tuple[float, int]:
    """How much longer the partner's gap between its own turns was when the sender delayed its
    one turn in between: the median, over such gaps, of the gap less the median gap that spans
    as many turns without a delay; and how many such gaps there were."""
    spans: dict[tuple[int, bool], list[float]] = {}
    last: float | None = None
    between: list[tuple[int, int]] = []
    for at, seat, sender_delayed, _legal in log:
        if seat != 2:
            between.append((seat, sender_delayed))
            continue
        senders = [d for s, d in between if s == 0]
        if last is not None and len(senders) == 1:
            spans.setdefault((len(between), bool(senders[0])), []).append(at - last)
        last, between = at, []
    residuals = [
        gap - statistics.median(spans[(n, False)])
        for (n, delayed), gaps in spans.items()
        if delayed and (n, False) in spans
        for gap in gaps
    ]
    return statistics.median(residuals), len(residuals)


def test_without_fixed_turns_the_partner_reads_the_senders_delay():
    shift, delayed = delay_shift(play_timed(fixed=False))
    assert delayed >= 8
    assert shift > DELAY_S * 0.6, f"the reference channel should be open: shift {shift:.4f} s"


def test_with_fixed_turns_the_partner_cannot_read_the_senders_delay():
    shift, delayed = delay_shift(play_timed(fixed=True))
    assert delayed >= 8
    assert abs(shift) < DELAY_S * 0.3, f"the delay shows through: shift {shift:.4f} s"


def test_every_decision_is_held_to_the_move_clock_forced_ones_too():
    log = play_timed(fixed=True)
    arrivals = [at for at, *_ in log]
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert min(gaps) >= MOVE_MS / 1000, "a reply was released before the move clock"
    forced = [i for i, (*_, legal) in enumerate(log[:-1]) if legal == 1]
    assert forced, "the match had turns with one legal action"
    assert min(gaps[i] for i in forced) >= MOVE_MS / 1000


def test_the_replay_records_the_clock():
    clock = AnnouncedClock(move_ms=MOVE_MS, fixed_turns=True)
    outcome = referee_match(
        rules_for("pollack", target=5), [Timed(s, []) for s in (1, 1, 3, 3)], seed=2, clock=clock
    )
    assert outcome.replay["clock"] == {
        "hello_ms": 10_000,
        "move_ms": MOVE_MS,
        "bank_ms": 60_000,
        "fixed_turns": True,
    }
