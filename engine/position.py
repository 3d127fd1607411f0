"""The parts of a position: phases, the records a match keeps, the ``Table``, and the helpers
every rule uses to move a state on (``evolve``, ``deal_record``, ``match_over``).

``state.py`` holds the ``State`` class and its hot path and sequences a deal; the optional rules
in ``engine/optional`` build on this module alone, so that ``state.py`` can import them.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from engine.rules import RuleSet

if TYPE_CHECKING:
    from engine.state import State

REDEAL_PHASE, POULES_PHASE, MELD_PHASE, PLAY_PHASE, OVER = range(5)
#: The protocol's decision in each phase (None once the match is over).
DECISIONS = ("redeal", "poules", "meld", "play", None)

#: [ruling] A match that reaches this many deals ends: higher total wins, equal totals draw.
MAX_DEALS = 100
TRICKS_PER_DEAL = 8
#: The four hands live in one int, 32 bits a seat: ``packed >> (seat << 5) & HAND``.
HAND = (1 << 32) - 1

_new = tuple.__new__


def pack_hands(hands: tuple[int, ...]) -> int:
    """Four 32-bit hands in one int, seat ``s`` in bits ``32s..32s+31``."""
    return hands[0] | hands[1] << 32 | hands[2] << 64 | hands[3] << 96


class Trick(NamedTuple):
    """A finished trick: ``cards[i]`` was played by seat ``(leader + i) % 4``.

    ``thirds`` is the trick's worth to its winner, the last-trick bonus included, so the eight
    tricks of a deal add up to 35.
    """

    leader: int
    cards: tuple[int, ...]
    winner: int
    thirds: int


class Said(NamedTuple):
    """Something said in public: ``say`` as in the protocol; ``card`` is -1 when none goes with it.

    ``trick`` is the 1-based trick it was said in, 0 before play.
    """

    seat: int
    trick: int
    say: str
    card: int


class FaultRecord(NamedTuple):
    """The record of the seat failure that forfeited a match (``Result.fault``).

    A record, not an exception: the exception a seat raises to the referee is
    ``engine.faults.SeatFault``; a sandboxed bot's is ``sandbox.BotFault``, which the platform
    turns into a ``SeatFault`` (``arena/runtime/seats.py``).
    """

    seat: int
    kind: str
    detail: str


class Result(NamedTuple):
    """How a match ended. ``winner`` is a team, or None for a draw at the safety limit."""

    winner: int | None
    reason: str
    score: tuple[int, int]
    fault: FaultRecord | None


class DealRecord(NamedTuple):
    """A finished (or interrupted) deal, as replay format 1 keeps it."""

    number: int
    dealer: int
    redeals: tuple[tuple[int, tuple[int, int, int, int]], ...]
    hands: tuple[int, int, int, int]
    said: tuple[Said, ...]
    tricks: tuple[Trick, ...]
    thirds: tuple[int, int]
    points: tuple[int, int]
    bonus: tuple[int, int]
    melds: tuple[int, int]
    score: tuple[int, int]
    end: str | None
    trick: tuple[int, tuple[int, ...]] = (0, ())  # (leader, cards) of a trick cut short


class Table(NamedTuple):
    """Everything of a state but the four fields that change with every card (see ``State``).

    ``state.py`` builds it by position in two places, the start of a deal and the end of a trick
    (callgrind: building it by name at each deal start alone costs 2.4% of the instructions per
    decision); everywhere else it changes through ``evolve`` by name. ``test_play.py`` checks
    both positional builds field by field.
    """

    rules: RuleSet
    seed: int
    deal: int
    dealer: int
    redeal: int
    score: tuple[int, int]
    dealt: tuple[int, int, int, int]
    leader: int
    tricks: tuple[Trick, ...]
    taken: tuple[int, int]
    won: tuple[int, int]
    said: tuple[Said, ...]
    low: bool
    run: tuple[int, int, int] | None
    announced: tuple[tuple[int, int], ...]
    poules: tuple[int, int, int, int]
    bonus: tuple[int, int]
    melds: tuple[int, int]
    melded: int
    redeals: tuple[tuple[int, tuple[int, int, int, int]], ...]
    history: tuple[DealRecord, ...]
    result: Result | None


_HOT = frozenset(("phase", "to_move", "packed", "trick"))


def evolve(state: State, **changes: object) -> State:
    """``state`` with fields changed, whether they live in the state or in its table."""
    phase, to_move, packed, trick, table = state
    cold = {name: value for name, value in changes.items() if name not in _HOT}
    if cold:
        table = table._replace(**cold)
    return _new(
        type(state),
        (
            changes.get("phase", phase),
            changes.get("to_move", to_move),
            changes.get("packed", packed),
            changes.get("trick", trick),
            table,
        ),
    )


def deal_record(state: State, score: tuple[int, ...], end: str | None) -> DealRecord:
    """The deal of ``state`` as it stands, with the totals ``score`` and how it ``end``ed."""
    taken = state.taken
    return DealRecord(
        state.deal,
        state.dealer,
        state.redeals,
        state.dealt,
        state.said,
        state.tricks,
        taken,
        (taken[0] // 3, taken[1] // 3),
        state.bonus,
        state.melds,
        tuple(score),
        end,
        (state.leader, state.trick),
    )


def match_over(state: State, record: DealRecord, result: Result) -> State:
    """The final state: ``record`` closes the history, nobody is to move."""
    return evolve(
        state,
        phase=OVER,
        to_move=-1,
        history=(*state.history, record),
        result=result,
        score=result.score,
    )


def add(pair: tuple[int, int], team: int, amount: int) -> tuple[int, int]:
    """``pair`` with ``amount`` added to one team's entry."""
    return (pair[0] + amount, pair[1]) if team == 0 else (pair[0], pair[1] + amount)
