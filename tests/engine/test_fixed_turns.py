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
    # half the delay: the open channel shifts by all of it, a busy host's noise by a few ms
    assert abs(shift) < DELAY_S * 0.5, f"the delay shows through: shift {shift:.4f} s"


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


# --- silent answers (engine.pacing) -------------------------------------------------------------


class Quiet:
    """Declines every meld (``done``) and keeps every hand (``keep``), else plays its first card
    without a signal; logs ``(arrival, seat, decision, deal)`` for every turn and the arrival of
    every ``deal_end``."""

    def __init__(self, seat: int, log: list[tuple[float, int, str, int]], calls: bool = False):
        self.seat, self.log, self.calls = seat, log, calls

    def hello(self, message: dict[str, Any]) -> None:
        pass

    def turn(self, message: dict[str, Any]) -> str:
        decision = message["decision"]
        self.log.append((time.perf_counter(), self.seat, decision, message["state"]["deal"]))
        if decision == "meld":
            return "done"
        if decision == "redeal":
            return "redeal" if self.calls else "keep"
        return next(a for a in message["legal"] if a.startswith("play ") and a.count(" ") == 1)

    def notify(self, message: dict[str, Any]) -> None:
        if message["type"] == "deal_end":
            self.log.append((time.perf_counter(), self.seat, "deal_end", message["number"]))

    def close(self) -> None:
        pass


def play_quiet(rules, seed: int, calls: bool = False) -> list[tuple[float, int, str, int]]:
    log: list[tuple[float, int, str, int]] = []
    referee_match(
        rules, [Quiet(seat, log, calls) for seat in range(4)], seed=seed,
        clock=AnnouncedClock(move_ms=MOVE_MS, fixed_turns=True),
    )
    return log


def _silent_turns(rules, seed: int, decision: str) -> int:
    """How many ``decision`` turns ``Quiet`` seats are asked in match ``seed`` (no clock)."""
    log: list[tuple[float, int, str, int]] = []
    referee_match(rules, [Quiet(seat, log) for seat in range(4)], seed=seed)
    return sum(1 for entry in log if entry[2] == decision)


def test_a_declined_meld_takes_no_time_of_its_own():
    """The gap between two cards played is one move clock whether or not the second player was
    asked, in between, about a meld he declined (before, it was two: a partner could tell from
    the clock that the player holds a meld he keeps quiet)."""
    rules = rules_for("pollack", target=60)
    seed = next(s for s in range(1, 400) if _silent_turns(rules, s, "meld") >= 8)
    log = play_quiet(rules, seed=seed)
    plays = [(i, entry) for i, entry in enumerate(log) if entry[2] == "play"]
    after_silence: list[float] = []
    plain: list[float] = []
    for (i, (earlier, _, _, deal)), (j, (later, _, _, next_deal)) in itertools.pairwise(plays):
        if deal != next_deal or any(log[k][2] == "deal_end" for k in range(i, j)):
            continue
        declined = any(log[k][2] == "meld" for k in range(i + 1, j))
        (after_silence if declined else plain).append(later - earlier)
    assert len(after_silence) >= 5, "the match should have declined melds to time"
    shift = statistics.median(after_silence) - statistics.median(plain)
    assert abs(shift) < MOVE_MS / 1000 * 0.3, f"a declined meld shows in time: {shift:.4f} s"
    assert statistics.median(plain) >= MOVE_MS / 1000


def deal_starts(log: list[tuple[float, int, str, int]]) -> dict[int, float]:
    """Per deal after the first: the time from the previous deal's ``deal_end`` to its first
    card, as any seat can time it."""
    ended: dict[int, float] = {}
    first_card: dict[int, float] = {}
    for at, _, kind, deal in log:
        if kind == "deal_end":
            ended.setdefault(deal, at)
        elif kind == "play":
            first_card.setdefault(deal, at)
    return {deal: at - ended[deal - 1] for deal, at in first_card.items() if deal - 1 in ended}


def _deals_with_redeal_askers(seed: int) -> set[int]:
    """The deals of ``politaine`` seed ``seed`` (played by ``Quiet`` seats) in which some seat was
    asked whether to call the deal off."""
    log: list[tuple[float, int, str, int]] = []
    referee_match(rules_for("politaine"), [Quiet(seat, log) for seat in range(4)], seed=seed)
    return {deal for _, _, decision, deal in log if decision == "redeal"}


def test_the_redeal_round_takes_four_move_clocks_whoever_is_asked():
    """From a deal's start to its first card is four move clocks, whether no seat, one or more
    was asked about a redeal and kept its hand (before, each seat asked added one: the clock told
    which seats held no T, 9 or A)."""
    seed = next(s for s in range(1, 400) if len(_deals_with_redeal_askers(s) - {1}) >= 2)
    log = play_quiet(rules_for("politaine"), seed=seed)
    asked = {deal for _, _, decision, deal in log if decision == "redeal"}
    spans = deal_starts(log)
    with_askers = [span for deal, span in spans.items() if deal in asked]
    without = [span for deal, span in spans.items() if deal not in asked]
    assert len(with_askers) >= 2 and len(without) >= 2, (sorted(asked), sorted(spans))
    round_s = 4 * MOVE_MS / 1000
    assert min(spans.values()) >= round_s
    shift = statistics.median(with_askers) - statistics.median(without)
    assert abs(shift) < MOVE_MS / 1000 * 0.3, f"the redeal askers show in time: {shift:.4f} s"


def _early_callers(seed: int) -> int:
    """How many redeals of ``politaine`` seed ``seed`` (every eligible seat calling) are called by
    a seat other than the last of the round, with their deal's replay (no clock)."""
    outcome = referee_match(
        rules_for("politaine"), [Quiet(seat, [], calls=True) for seat in range(4)], seed=seed
    )
    return sum(
        (called["by"] - (deal["dealer"] + 1)) % 4 < 3
        for deal in outcome.replay["deals"] for called in deal["redeals"]
    )


def test_a_called_redeal_takes_the_rest_of_its_round_whoever_calls():
    """A redeal called by the round's first seat takes as long as one called by its last: the
    round still takes its four move clocks (who called is told only at the deal's end). Before,
    the next deal's round began as soon as the call was made."""
    seed = next(s for s in range(1, 600) if _early_callers(s) >= 1)
    log = play_quiet(rules_for("politaine"), seed=seed, calls=True)
    outcome = referee_match(
        rules_for("politaine"), [Quiet(seat, [], calls=True) for seat in range(4)], seed=seed
    )
    redeals = {deal["number"]: len(deal["redeals"]) for deal in outcome.replay["deals"]}
    called = {deal: span for deal, span in deal_starts(log).items() if redeals.get(deal)}
    assert called, (seed, redeals)
    for deal, span in called.items():
        rounds = 1 + redeals[deal]
        assert span >= rounds * 4 * MOVE_MS / 1000, (deal, redeals[deal], span)
