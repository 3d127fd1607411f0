"""Fixed-time turns: when the referee sends each turn and releases each reply.

Invariant, under ``fixed_turns`` and for seats that answer within their clocks: the time between
two public events of a match depends on public facts only. Every decision whose answer is public
takes one move clock from its turn going out. A silent answer (a meld declined, ``done``) adds no
time: its move clock is the one of the same seat's card that follows it. A deal's redeal round
takes one move clock for each of the four seats whether it was asked or not (a seat is asked only
when it holds no T, 9 or A, and a kept hand says nothing aloud), and a redeal called in it ends
at its fourth (who called is told only at the deal's end). So no seat learns from the clock how
long another thought, nor that another was asked a question it answered in silence.

A seat can still give itself away by answering a silent question slowly: its card then comes
after the move clock. Only the seat's own choice shows, never its think time otherwise.
"""

from __future__ import annotations

import time

from engine.optional.redeal import MAX_REDEALS
from engine.rules import RuleSet
from engine.state import State

#: Answers that leave no trace in the public record.
SILENT = {"meld": "done"}


class TurnPacer:
    """Holds the referee's turns and replies to the fixed-time schedule above (no-op when
    ``fixed`` is false). Times are ``time.perf_counter()`` readings."""

    def __init__(self, rules: RuleSet, move_ms: int, *, fixed: bool) -> None:
        self._fixed = fixed
        self._redeal = fixed and rules.redeal
        self._move_s = move_ms / 1000
        self._carried: float | None = None  # a silent answer's turn: the start of the next slot
        self._round: tuple[int, int] | None = None  # (deal, redeal) of the redeal round running
        self._round_start = 0.0
        self._round_closed = True

    def before_turn(self, state: State) -> None:
        """Wait out the redeal round's slots of the seats not asked before this turn goes out."""
        if not self._redeal:
            return
        key = (state.deal, state.redeal)
        if key != self._round:
            self._round, self._round_start = key, time.perf_counter()
            self._round_closed = state.redeal >= MAX_REDEALS  # nobody is asked then
        if self._round_closed:
            return
        if state.decision == "redeal":
            slots = (state.to_move - state.leader) % 4
        else:
            slots, self._round_closed = 4, True
        sleep_until(self._round_start + slots * self._move_s)

    def after_reply(self, state: State, reply: str, asked_at: float) -> None:
        """Hold ``reply`` (to the turn of ``state`` sent at ``asked_at``) until its slot ends; a
        silent answer passes at once and its slot becomes the next turn's."""
        if not self._fixed:
            return
        if SILENT.get(state.decision or "") == reply:
            if self._carried is None:
                self._carried = asked_at
            return
        if self._redeal and reply == "redeal":
            # the round's four slots whoever called: who did is told only at the deal's end
            self._round_closed = True
            sleep_until(self._round_start + 4 * self._move_s)
            return
        started = asked_at if self._carried is None else self._carried
        self._carried = None
        sleep_until(started + self._move_s)


def sleep_until(release: float) -> None:
    """Return no sooner than ``release`` (a ``time.perf_counter()`` reading)."""
    while (left := release - time.perf_counter()) > 0:
        time.sleep(left)
