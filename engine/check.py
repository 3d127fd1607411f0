"""Re-checking a replay: play it again through the engine and compare every field.

A replay passes when the engine, answering each decision from the replay itself, rebuilds the
same document. Any rule broken or any number wrong in the replay shows as a ``ReplayMismatch``.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from typing import Any

from engine.cards import parse_card
from engine.faults import SeatFault
from engine.referee import Player, referee_match
from engine.rules import rules_from_dict
from engine.state import State, new_match


class ReplayMismatch(ValueError):
    """The replay does not follow from its seed, rules and decisions."""


def check_replay(replay: dict[str, Any]) -> None:
    """Raise ``ReplayMismatch`` unless replaying ``replay`` rebuilds it exactly."""
    try:
        rules = rules_from_dict(replay["rules"])
        seed = replay["seed"]
        players = [Player(p["bot"], p.get("version")) for p in replay["players"]]
        seats = replay_seats(replay)
    except (KeyError, TypeError, ValueError) as error:
        raise ReplayMismatch(f"not a replay of format 1: {error}") from error
    outcome = referee_match(rules, seats, seed=seed, match_id=replay["match"], players=players)
    rebuilt = outcome.replay
    rebuilt["moves_ms"] = replay.get("moves_ms")
    rebuilt.pop("clock")  # the clock is how the match was timed, not what follows from its record
    if "clock" in replay:
        rebuilt["clock"] = replay["clock"]
    _compare(replay, rebuilt, "replay")


def replay_seats(replay: dict[str, Any]) -> list[_ReplaySeat]:
    """Four referee seats that answer every turn as the replay says its seats did (and fault
    where it says one did): ``referee_match`` with them, the replay's seed, rules, match id and
    players sends each seat exactly the messages the match sent it."""
    rules = rules_from_dict(replay["rules"])
    state = new_match(rules, replay["seed"])
    seats = [_ReplaySeat(seat, replay, replay["deals"], state) for seat in range(4)]
    for seat in seats:
        seat.others = seats
    return seats


class _ReplaySeat:
    """A seat that answers every turn from the replay, and fails where the replay says it did.

    All four share the engine's state (``shadow``), moved on by each answer. A fault outside a
    turn (at ``hello`` or ``deal_end``) shows in the replay as a forfeit whose seat has no
    decision time for it in ``moves_ms``; it is raised at the first such message that fits. A
    fault of a seat that starved another seat's decision shows as a forfeit by the first while
    the second has one decision time more than it answered: that decision raises it.
    """

    def __init__(self, seat: int, replay: dict[str, Any], deals: list[dict], state: State) -> None:
        self.seat = seat
        self.replay = replay
        self.deals = deals
        self.shadow = state
        self.answered = 0
        self.others: list[_ReplaySeat] = []
        result = replay.get("result") or {}
        fault = result.get("fault") if result.get("reason") == "forfeit" else None
        self.fault = fault if fault and fault.get("seat") == seat else None
        #: The match's fault, whichever seat it was (it may end another seat's decision).
        self.match_fault = fault
        #: Decisions timed for this seat: one more than it answered if the match ended in one.
        self.moves = len(replay.get("moves_ms", [[]] * 4)[seat])
        timed = self.moves if self.fault else 0
        self.timed = timed

    def _fail(self) -> None:
        assert self.fault is not None
        raise SeatFault(self.fault["kind"], self.fault["detail"])

    def _fails_outside_turns(self) -> bool:
        return (self.fault is not None and self.timed == self.answered
                and not self._pending_elsewhere())

    def _pending_elsewhere(self) -> bool:
        """Another seat has a timed decision still to come (the match does not end here)."""
        return any(o.moves > o.answered for o in self.others if o is not self)

    def _cut_here(self) -> bool:
        """This decision is the last timed one of the match and another seat's fault ended it
        (that seat starved this one)."""
        fault = self.match_fault
        return (fault is not None and fault.get("seat") != self.seat
                and self.moves == self.answered + 1 and not self._pending_elsewhere())

    def hello(self, message: dict[str, Any]) -> None:
        forfeit_deal = self.deals[-1] if self.deals else {}
        nobody_moved = not any(self.replay.get("moves_ms", [[]] * 4))
        if self._fails_outside_turns() and forfeit_deal.get("number") == 1 and nobody_moved:
            self._fail()

    def notify(self, message: dict[str, Any]) -> None:
        if message.get("type") != "deal_end" or not self._fails_outside_turns():
            return
        if message.get("number") == len(self.deals) - 1 and self.shadow.deal == len(self.deals):
            self._fail()

    def close(self) -> None:
        pass

    def turn(self, message: dict[str, Any]) -> str:
        state = self.shadow
        cut = self._cut_here()
        if cut:
            fault_seat: int | None = self.match_fault["seat"]  # type: ignore[index]
        else:
            fault_seat = None if self._pending_elsewhere() else self.seat
        try:
            action = _answer(state, self.deals, self.replay["result"], self.seat, fault_seat)
        except (IndexError, KeyError, ValueError) as error:
            raise ReplayMismatch(
                f"deal {state.deal}: no decision for seat {self.seat}: {error}"
            ) from error
        if action is None:
            if cut:
                fault = self.match_fault or {}
                raise SeatFault(fault["kind"], fault["detail"], seat=fault_seat)
            if self.fault is None:
                raise ReplayMismatch(
                    f"deal {state.deal}: replay stops with seat {self.seat} to move"
                )
            self._fail()
        if action not in message["legal"]:
            raise ReplayMismatch(
                f"deal {state.deal}, trick {len(state.tricks) + 1}: seat {self.seat} "
                f"{action!r} is not legal there"
            )
        self.answered += 1
        following = state.step(action)
        for seat in self.others:
            seat.shadow = following
        return action


def _answer(
    state: State, deals: list[dict], result: dict, seat: int, fault_seat: int | None
) -> str | None:
    """The action the replay says ``seat`` took now; None where the replay's fault happened
    (a fault of ``fault_seat`` may end this decision; None: no fault can)."""
    index = len(state.history)
    deal = deals[index]
    trick_no = len(state.tricks) + 1
    said = [s for s in deal["said"] if s["seat"] == seat]
    decision = state.decision
    fault = result.get("fault")
    if decision == "redeal":
        done = len(state.redeals)
        if done < len(deal["redeals"]) and deal["redeals"][done]["by"] == seat:
            return "redeal"
        if index == len(deals) - 1 and _faulted_here(state, deal, fault, fault_seat, redeal=True):
            return None
        return "keep"
    if decision == "poules":
        for s in said:
            if s["trick"] == 0 and s["say"].startswith("poules "):
                return s["say"]
        return None
    if decision == "meld":
        melds = [s["say"] for s in said if s["trick"] == trick_no and s["say"].startswith("meld ")]
        made = sum(
            1
            for s in state.said
            if s.seat == seat and s.trick == trick_no and s.say.startswith("meld ")
        )
        if made < len(melds):
            return melds[made]
        if _faulted_here(state, deal, fault, fault_seat):
            return None
        return "done"
    # play
    position = len(state.trick)
    tricks = deal["tricks"]
    if trick_no <= len(tricks):
        code = tricks[trick_no - 1]["cards"][position]
    else:
        cut = deal.get("trick", {"cards": []})["cards"]
        if position < len(cut):
            code = cut[position]
        elif any(s["say"] == "claim" and s["trick"] == trick_no for s in said):
            return "claim"
        else:
            return None
    action = "play " + code
    flags = {s["say"] for s in said if s["trick"] == trick_no and s.get("card") == code}
    if "politaine" in flags:
        action += " politaine"
    if "tap" in flags:
        action += " tap"
    elif "slide" in flags:
        action += " slide"
    parse_card(code)
    return action


def _faulted_here(
    state: State, deal: dict, fault: dict | None, seat: int | None, redeal: bool = False
) -> bool:
    """Whether the replay's forfeit (of ``seat``) fell on this decision: the deal shows nothing
    after it."""
    if not fault or seat is None or fault["seat"] != seat or deal.get("end") != "forfeit":
        return False
    if redeal:
        return not deal["tricks"] and len(state.redeals) == len(deal["redeals"])
    trick = deal.get("trick", {"cards": []})["cards"]
    return len(state.tricks) == len(deal["tricks"]) and len(state.trick) == len(trick)


def _compare(expected: Any, actual: Any, path: str) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual or key not in expected:
                raise ReplayMismatch(f"{path}.{key}: present in only one of replay and replayed")
            _compare(expected[key], actual[key], f"{path}.{key}")
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            raise ReplayMismatch(f"{path}: {len(expected)} entries, replaying gives {len(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _compare(e, a, f"{path}[{i}]")
    elif expected != actual:
        raise ReplayMismatch(f"{path}: replay says {expected!r}, replaying gives {actual!r}")
