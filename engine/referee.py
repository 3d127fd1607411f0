"""The referee: plays one whole match between four seats and writes its replay.

Seats are anything with ``hello``, ``turn``, ``notify`` and ``close`` (the ``Seat`` protocol);
a seat fails by raising ``SeatFault``, and the first fault ends the match as a forfeit of the seat
it names (``SeatFault.seat``: another seat that starved the one asked), else of the seat asked.
The referee also refuses replies that are not among the legal actions. It measures each
decision; clocks are enforced by whatever runs the seat (the platform's sandbox). Under
``fixed_turns`` it releases every decision ``move_ms`` after the turn went out, however early the
reply came, and takes no time for a silent answer (``engine.pacing``), so that no seat learns from
the clock how long another seat thought, nor what it declined in silence.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.faults import SeatFault
from engine.observe import observe
from engine.pacing import TurnPacer, sleep_until
from engine.replay import build_replay, deal_dict, result_dict
from engine.rules import RuleSet
from engine.state import State, forfeit_at_hello, new_match

PROTOCOL = 1


class Seat(Protocol):
    """One player as the referee sees it. Any method may raise ``SeatFault``."""

    def hello(self, message: dict[str, Any]) -> None: ...

    def turn(self, message: dict[str, Any]) -> str: ...

    def notify(self, message: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Player:
    """Who sits in a seat, for ``hello`` and the replay."""

    bot: str
    version: int | None = None

    @property
    def label(self) -> str:
        return self.bot if self.version is None else f"{self.bot} v{self.version}"


@dataclass(frozen=True)
class AnnouncedClock:
    """The clocks the referee announces in ``hello`` (protocol 1); it enforces none of them.

    Whoever runs a seat enforces its own copy (the platform builds ``sandbox.Clock`` from this
    one in ``arena/runtime/specs.py``; engine and sandbox may not import each other).
    ``fixed_turns``: the referee holds every reply until ``move_ms`` after its turn went out,
    and hides silent answers in time as in the record (``engine.pacing``), which closes the
    think-time channel between partners.
    """

    hello_ms: int = 10_000
    move_ms: int = 1_000
    bank_ms: int = 60_000
    fixed_turns: bool = False

    def to_dict(self) -> dict[str, int | bool]:
        return {
            "hello_ms": self.hello_ms,
            "move_ms": self.move_ms,
            "bank_ms": self.bank_ms,
            "fixed_turns": self.fixed_turns,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> AnnouncedClock:
        """The clock of a ``hello`` or replay ``clock`` object; the defaults where it has none
        (replays written before the field existed)."""
        if not data:
            return cls()
        return cls(
            hello_ms=int(data["hello_ms"]),
            move_ms=int(data["move_ms"]),
            bank_ms=int(data["bank_ms"]),
            fixed_turns=bool(data.get("fixed_turns", False)),
        )

    def hold_reply(self, asked_at: float) -> None:
        """Under ``fixed_turns``, return no sooner than ``move_ms`` after ``asked_at`` (a
        ``time.perf_counter()`` reading taken before the turn went out); otherwise at once.
        Every decision is held, forced ones too: that a seat had one legal action is private.
        (The referee paces a match by ``engine.pacing.TurnPacer``, which also hides silent
        answers; this is one decision's hold.)"""
        if self.fixed_turns:
            sleep_until(asked_at + self.move_ms / 1000)

    def pacer(self, rules: RuleSet) -> TurnPacer:
        """The referee's pacing of a match under these clocks (``engine.pacing``)."""
        return TurnPacer(rules, self.move_ms, fixed=self.fixed_turns)


@dataclass
class MatchOutcome:
    """A finished match: final state, replay format 1, and each seat's fault log if it failed."""

    state: State
    replay: dict[str, Any]
    logs: dict[int, str] = field(default_factory=dict)

    @property
    def result(self) -> dict[str, Any]:
        return self.replay["result"]


class FunctionSeat:
    """A seat answered by a plain function of the ``turn`` message (tests, local play)."""

    def __init__(self, decide: Callable[[dict[str, Any]], str]) -> None:
        self._decide = decide

    def hello(self, message: dict[str, Any]) -> None:
        pass

    def turn(self, message: dict[str, Any]) -> str:
        return self._decide(message)

    def notify(self, message: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass


def referee_match(
    rules: RuleSet,
    seats: Sequence[Seat],
    *,
    seed: int,
    match_id: str = "local",
    players: Sequence[Player] | None = None,
    clock: AnnouncedClock | None = None,
) -> MatchOutcome:
    """Referee one match to its end; every seat is closed afterwards, whatever happened.

    (Named apart from the platform's Celery task ``arena.tasks.play_match``, which runs this
    through ``arena.runtime.play_seats``.)
    """
    if len(seats) != 4:
        raise ValueError("a match needs four seats")
    players = list(players) if players is not None else [Player(f"seat{i}") for i in range(4)]
    clock = clock or AnnouncedClock()
    moves_ms: list[list[int]] = [[], [], [], []]
    logs: dict[int, str] = {}
    try:
        state = _hello_all(seats, rules, seed, match_id, players, clock, logs)
        told = 0  # deals whose deal_end went out
        # Each seat counts its own turns: a match-wide count would tell every seat how many
        # decisions the others were asked, some of them hidden (a meld declined, a hand without
        # T, 9 or A kept), so a jump in it would say that a partner holds a meld it kept quiet.
        turn_ids = [0, 0, 0, 0]
        pacer = clock.pacer(rules)
        while not state.is_over:
            seat = state.to_move
            pacer.before_turn(state)
            legal = state.legal_strings()
            turn_ids[seat] += 1
            message = {
                "type": "turn",
                "id": turn_ids[seat],
                "decision": state.decision,
                "state": observe(state, seat),
                "legal": legal,
            }
            started = time.perf_counter()
            try:
                reply = seats[seat].turn(message)
            except SeatFault as fault:
                moves_ms[seat].append(_ms_since(started))
                logs[fault.at(seat)] = fault.log
                state = state.forfeit(fault.at(seat), fault.kind, fault.detail)
                break
            moves_ms[seat].append(_ms_since(started))
            pacer.after_reply(state, reply, started)
            if reply not in legal:
                shown = reply if isinstance(reply, str) else repr(reply)
                state = state.forfeit(seat, "illegal", f"action {shown[:200]!r} is not in legal")
                break
            state = state.step(reply)
            while told < len(state.history) and not state.is_over:
                state = _tell_all(state, seats, _deal_end(state, told), logs)
                told += 1
        _finish(state, seats, told)
    finally:
        for s in seats:
            _close_quietly(s)
    replay = build_replay(
        state,
        match_id=match_id,
        players=_player_dicts(players),
        moves_ms=moves_ms,
        clock=clock.to_dict(),
    )
    return MatchOutcome(state=state, replay=replay, logs=logs)


def _hello_all(
    seats: Sequence[Seat],
    rules: RuleSet,
    seed: int,
    match_id: str,
    players: Sequence[Player],
    clock: AnnouncedClock,
    logs: dict[int, str],
) -> State:
    """Greet the seats in order, then deal: the first deal, or the forfeit of the first seat that
    failed at ``hello`` (no later seat is greeted). A fault at ``hello`` forfeits even when the
    first deal is an instant win: the deal counts only once every seat has answered."""
    for seat, player in enumerate(seats):
        message = {
            "type": "hello",
            "protocol": PROTOCOL,
            "seat": seat,
            "team": seat % 2,
            "match": match_id,
            "rules": rules.to_dict(),
            "clock": clock.to_dict(),
            "players": [p.label for p in players],
        }
        try:
            player.hello(message)
        except SeatFault as fault:
            logs[fault.at(seat)] = fault.log
            return forfeit_at_hello(rules, seed, fault.at(seat), fault.kind, fault.detail)
    return new_match(rules, seed)


def _deal_end(state: State, index: int) -> dict[str, Any]:
    return {"type": "deal_end", **deal_dict(state.history[index])}


def _tell_all(
    state: State, seats: Sequence[Seat], message: dict[str, Any], logs: dict[int, str]
) -> State:
    """Send a message that wants no reply; a fault still forfeits while the match runs."""
    for seat, player in enumerate(seats):
        try:
            player.notify(message)
        except SeatFault as fault:
            logs[fault.at(seat)] = fault.log
            if not state.is_over:
                return state.forfeit(fault.at(seat), fault.kind, fault.detail)
    return state


def _finish(state: State, seats: Sequence[Seat], told: int) -> None:
    """Tell everyone the deals not yet told and the result; faults no longer matter."""
    messages = [
        _deal_end(state, i)
        for i in range(told, len(state.history))
        if state.history[i].end != "forfeit"
    ]
    messages.append({"type": "match_end", **result_dict(state.result)})
    for player in seats:
        for message in messages:
            try:
                player.notify(message)
            except SeatFault:
                break


def _close_quietly(seat: Seat) -> None:
    with contextlib.suppress(SeatFault):
        seat.close()


def _player_dicts(players: Sequence[Player]) -> list[dict[str, Any]]:
    return [
        {"seat": i, "team": i % 2, "bot": p.bot, "version": p.version}
        for i, p in enumerate(players)
    ]


def _ms_since(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)
