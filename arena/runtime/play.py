"""Play one match with real bot processes: start four seats, let the referee play, close them.

Must not import Django.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.runtime.seats import ClosedTogether, FaultedSeat, SessionSeat, StderrEcho
from arena.runtime.specs import BotSpec, start_seat
from engine import AnnouncedClock, MatchOutcome, Player, RuleSet, referee_match
from sandbox.starvation import MatchSeats


@dataclass
class PlayedMatch:
    """The referee's outcome, each seat's stderr tail, and the wall time of starting and playing."""

    outcome: MatchOutcome
    tails: dict[int, str] = field(default_factory=dict)
    play_ms: int = 0


def play_seats(
    rules: RuleSet,
    specs: Sequence[BotSpec],
    *,
    seed: int,
    match_id: str,
    players: Sequence[Player],
    clock: AnnouncedClock | None = None,
    backend: str = "bwrap",
    on_stderr: Callable[[int, str], None] | None = None,
) -> PlayedMatch:
    """Play a whole match; every process started here has ended when this returns or raises.
    ``on_stderr(seat, text)``, when given, gets each seat's stderr as the match plays."""
    if len(specs) != 4:
        raise ValueError("a match needs four bots")
    clock = clock or AnnouncedClock()
    started = time.perf_counter()
    seats: list[SessionSeat | FaultedSeat] = []
    try:
        for spec in specs:
            seats.append(start_seat(spec, clock, backend))
    except BaseException:
        _close_all(seats)
        raise
    played = seats if on_stderr is None else [
        StderrEcho(seat, index, on_stderr) for index, seat in enumerate(seats)
    ]
    outcome = referee_seats(rules, played, seed=seed, match_id=match_id, players=players,
                            clock=clock)
    play_ms = round((time.perf_counter() - started) * 1000)
    tails = {i: seat.stderr_tail for i, seat in enumerate(seats)}
    for seat, log in outcome.logs.items():
        tails[seat] = log or tails.get(seat, "")
    return PlayedMatch(outcome=outcome, tails=tails, play_ms=play_ms)


def referee_seats(
    rules: RuleSet, seats: Sequence[SessionSeat | FaultedSeat | StderrEcho], **options: Any
) -> MatchOutcome:
    """``referee_match`` over started seats (``options`` are its keywords); every seat is closed
    when this returns or raises. The four bots are told the match is over (stdin closed) before
    any is waited for, so they exit and their sandboxes come down together. The seats watch each
    other (``watch_each_other``): one that starves the seat on turn forfeits."""
    watch_each_other(seats)
    try:
        return referee_match(rules, [ClosedTogether(seat) for seat in seats], **options)
    finally:
        for seat in seats:  # the referee closed every input, unless it raised first
            with contextlib.suppress(Exception):
                seat.end_input()
        _close_all(seats)


def _close_all(seats: Sequence[Any]) -> None:
    """Close every seat, each whatever the others raised; then raise the first error."""
    errors: list[BaseException] = []
    for seat in seats:
        try:
            seat.close()
        except BaseException as error:  # the next seats are closed all the same
            errors.append(error)
    if errors:
        raise errors[0]


def watch_each_other(seats: Sequence[SessionSeat | FaultedSeat | StderrEcho]) -> MatchSeats:
    """Join the match's bot sessions by seat, so that a seat that burns CPU between its turns
    and starves the seat on turn past the backstop forfeits (``sandbox.starvation``)."""
    table = MatchSeats()
    for index, seat in enumerate(seats):
        inner = seat.seat if isinstance(seat, StderrEcho) else seat
        if isinstance(inner, SessionSeat):
            table.join(index, inner.session)
    return table
