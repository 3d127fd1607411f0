"""The referee: messages to the seats, forfeits, replay format 1, per-decision times."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.bots import BotSeat, make_bot
from engine.check import check_replay
from engine.faults import SeatFault
from engine.referee import AnnouncedClock, FunctionSeat, Player, referee_match
from engine.rules import rules_for
from engine.state import new_match
from tests.engine.reference import check_rules

REPLAY_KEYS = {
    "format", "match", "seed", "rules", "players", "deals", "result", "moves_ms", "clock",
}
DEAL_KEYS = {
    "number", "dealer", "redeals", "hands", "said", "tricks", "thirds", "points", "bonus",
    "melds", "score", "end",
}
DEAL_EXTRA_KEYS = {"trick"}  # the trick in progress of a deal cut short (allowed addition)
RESULT_KEYS = {"score", "winner", "reason", "fault"}
PLAYER_KEYS = {"seat", "team", "bot", "version"}
TRICK_KEYS = {"leader", "cards", "winner", "thirds"}
REASONS = {
    "target", "four-sevens", "four-eights", "capot", "eighteen-four", "claim", "forfeit", "limit",
}


class Recorder:
    """A seat playing like a random bot that keeps every message it was sent."""

    def __init__(self, fail_on: str | None = None, at_turn: int = 1, kind: str = "crash",
                 blame: int | None = None):
        self.bot = make_bot("random")
        self.messages: list[dict[str, Any]] = []
        self.fail_on, self.at_turn, self.kind = fail_on, at_turn, kind
        self.blame = blame  # the seat a turn's fault names (one that starved this seat)
        self.turns = 0
        self.closed = False

    def hello(self, message):
        self.messages.append(message)
        self.bot.hello(message)
        if self.fail_on == "hello":
            raise SeatFault(self.kind, "failed at hello")

    def turn(self, message):
        self.messages.append(message)
        self.turns += 1
        if self.fail_on == "turn" and self.turns == self.at_turn:
            raise SeatFault(self.kind, f"failed at turn {self.turns}", log="stderr tail",
                            seat=self.blame)
        if self.fail_on == "illegal" and self.turns == self.at_turn:
            return "play ZZ"
        return self.bot.act(message)

    def notify(self, message):
        self.messages.append(message)
        if self.fail_on == "notify" and message["type"] == "deal_end":
            raise SeatFault(self.kind, "failed at deal_end")

    def close(self):
        self.closed = True

    def of_type(self, kind):
        return [m for m in self.messages if m.get("type") == kind]


def play(preset="quatre-sept", seed=1, seats=None, **options):
    seats = seats or [Recorder() for _ in range(4)]
    outcome = referee_match(
        rules_for(preset, **options),
        seats,
        seed=seed,
        match_id=f"m-{seed}",
        players=[Player("alice/greedy", 3), Player("bob/mcts", 1), Player("carol"), Player("dan")],
    )
    return outcome, seats


def test_hello_reaches_every_seat():
    _outcome, seats = play(seed=3)
    for seat, recorder in enumerate(seats):
        hello = recorder.messages[0]
        assert hello == {
            "type": "hello",
            "protocol": 1,
            "seat": seat,
            "team": seat % 2,
            "match": "m-3",
            "rules": rules_for("quatre-sept").to_dict(),
            "clock": {"hello_ms": 10000, "move_ms": 1000, "bank_ms": 60000, "fixed_turns": False},
            "players": ["alice/greedy v3", "bob/mcts v1", "carol", "dan"],
        }
        assert recorder.closed


def test_custom_clock_is_announced():
    seats = [Recorder() for _ in range(4)]
    referee_match(rules_for("pollack"), seats, seed=2, clock=AnnouncedClock(500, 200, 9000))
    assert seats[0].messages[0]["clock"] == {
        "hello_ms": 500, "move_ms": 200, "bank_ms": 9000, "fixed_turns": False
    }


def test_turn_messages():
    _outcome, seats = play(seed=4)
    for seat, recorder in enumerate(seats):
        ids = []
        for turn in recorder.of_type("turn"):
            assert set(turn) == {"type", "id", "decision", "state", "legal"}
            assert turn["state"]["seat"] == seat
            assert turn["decision"] in ("redeal", "poules", "meld", "play")
            assert turn["legal"] and all(isinstance(a, str) for a in turn["legal"])
            ids.append(turn["id"])
        assert ids == list(range(1, len(ids) + 1)), "each seat's turn ids count its own turns"


def test_turn_ids_say_nothing_of_the_decisions_other_seats_were_asked():
    """In `pollack` a seat holding a meld is asked whether to meld, and may decline in silence;
    with `redeal` a seat without T, 9 or A is asked whether to keep. A seat's ids count its own
    turns only, so they are the same whether or not the others were asked such a question."""
    from engine.referee import FunctionSeat, referee_match
    from engine.rules import rules_for

    def ids_seen(rules, quiet: bool) -> list[list[tuple[int, int]]]:
        seen: list[list[tuple[int, int]]] = [[], [], [], []]

        def seat(number: int):
            def decide(message):
                seen[number].append((message["id"], message["state"]["deal"]))
                if message["decision"] in ("meld", "redeal"):
                    return "done" if quiet and "done" in message["legal"] else (
                        "keep" if quiet and "keep" in message["legal"] else message["legal"][0])
                return message["legal"][0]
            return decide

        referee_match(rules, [FunctionSeat(seat(s)) for s in range(4)], seed=1)
        return seen

    for preset in ("pollack", "politaine"):
        for quiet in (True, False):
            for seat_ids in ids_seen(rules_for(preset), quiet):
                assert [i for i, _ in seat_ids] == list(range(1, len(seat_ids) + 1)), preset


def test_deal_end_and_match_end_reach_every_seat():
    outcome, seats = play(seed=5)
    replay = outcome.replay
    for recorder in seats:
        deal_ends = recorder.of_type("deal_end")
        assert len(deal_ends) == len(replay["deals"])
        for message, record in zip(deal_ends, replay["deals"], strict=True):
            assert message == {"type": "deal_end", **record}
        end = recorder.messages[-1]
        assert end["type"] == "match_end"
        assert {k: end[k] for k in ("score", "winner", "reason")} == {
            k: replay["result"][k] for k in ("score", "winner", "reason")
        }
        # deal_end of the last deal comes before match_end, after the deal's last turn.
        kinds = [m["type"] for m in recorder.messages]
        assert kinds.index("match_end") == len(kinds) - 1
        assert kinds[0] == "hello"


def test_replay_format_1_keys():
    outcome, _ = play("politaine", seed=6)
    replay = outcome.replay
    assert set(replay) == REPLAY_KEYS
    assert replay["format"] == "quatresept-replay/1"
    assert replay["match"] == "m-6" and replay["seed"] == 6
    assert replay["rules"] == rules_for("politaine").to_dict()
    assert replay["players"] == [
        {"seat": 0, "team": 0, "bot": "alice/greedy", "version": 3},
        {"seat": 1, "team": 1, "bot": "bob/mcts", "version": 1},
        {"seat": 2, "team": 0, "bot": "carol", "version": None},
        {"seat": 3, "team": 1, "bot": "dan", "version": None},
    ]
    for d in replay["deals"]:
        assert DEAL_KEYS <= set(d) <= DEAL_KEYS | DEAL_EXTRA_KEYS
        for trick in d["tricks"]:
            assert set(trick) == TRICK_KEYS
        for s in d["said"]:
            assert {"seat", "trick", "say"} <= set(s) <= {"seat", "trick", "say", "card"}
        for r in d["redeals"]:
            assert set(r) == {"by", "hands"}
    assert set(replay["result"]) == RESULT_KEYS
    assert replay["result"]["reason"] in REASONS
    assert json.loads(json.dumps(replay)) == replay


def test_moves_ms_lengths_equal_each_seats_decisions():
    for preset in ("quatre-sept", "politaine", "la-poule", "pollack"):
        outcome, seats = play(preset, seed=7)
        moves = outcome.replay["moves_ms"]
        assert len(moves) == 4
        for seat in range(4):
            assert len(moves[seat]) == len(seats[seat].of_type("turn"))
            assert all(isinstance(ms, int) and ms >= 0 for ms in moves[seat])


def test_a_seat_fault_forfeits_the_match():
    seats = [Recorder() for _ in range(4)]
    seats[1] = Recorder(fail_on="turn", at_turn=3, kind="timeout")
    outcome, _ = play(seed=8, seats=seats)
    result = outcome.replay["result"]
    assert result["reason"] == "forfeit" and result["winner"] == 0
    assert result["fault"] == {"seat": 1, "kind": "timeout", "detail": "failed at turn 3"}
    assert outcome.replay["deals"][-1]["end"] == "forfeit"
    assert outcome.state.is_over and outcome.state.result.fault.seat == 1
    assert outcome.logs == {1: "stderr tail"}
    assert len(outcome.replay["moves_ms"][1]) == 3, "the failed decision is timed too"
    for recorder in seats:
        assert recorder.closed
        assert recorder.messages[-1]["type"] == "match_end"
        assert recorder.messages[-1]["reason"] == "forfeit"
    check_rules(outcome.replay)
    check_replay(outcome.replay)


@pytest.mark.parametrize(("on_turn", "starver", "at_turn"),
                         [(0, 1, 1), (2, 3, 7), (1, 2, 30), (3, 0, 12), (0, 2, 5)])
def test_a_fault_naming_another_seat_forfeits_that_seat(on_turn, starver, at_turn):
    """A seat that starved the seat on turn (the fault of the on-turn call names it) forfeits;
    the on-turn seat's cut decision is timed, and the replay still checks."""
    seats = [Recorder() for _ in range(4)]
    seats[on_turn] = Recorder(fail_on="turn", at_turn=at_turn, kind="timeout", blame=starver)
    outcome, _ = play(seed=8, seats=seats)
    result = outcome.replay["result"]
    assert result["winner"] == 1 - starver % 2
    assert result["fault"] == {"seat": starver, "kind": "timeout",
                               "detail": f"failed at turn {at_turn}"}
    assert outcome.logs == {starver: "stderr tail"}
    assert len(outcome.replay["moves_ms"][on_turn]) == at_turn
    check_rules(outcome.replay)
    check_replay(outcome.replay)


def test_a_fault_names_a_seat_of_the_table():
    with pytest.raises(ValueError, match="seat"):
        SeatFault("timeout", "starved", seat=4)


@pytest.mark.parametrize("seat", range(4))
def test_the_faulting_seats_team_loses(seat):
    seats = [Recorder() for _ in range(4)]
    seats[seat] = Recorder(fail_on="turn", at_turn=1, kind="crash")
    outcome, _ = play(seed=9, seats=seats)
    result = outcome.replay["result"]
    assert result["winner"] == 1 - seat % 2
    assert result["fault"]["seat"] == seat and result["fault"]["kind"] == "crash"


def test_an_illegal_reply_forfeits():
    seats = [Recorder() for _ in range(4)]
    seats[2] = Recorder(fail_on="illegal", at_turn=2)
    outcome, _ = play(seed=10, seats=seats)
    result = outcome.replay["result"]
    assert result["reason"] == "forfeit" and result["winner"] == 1
    assert result["fault"]["seat"] == 2 and result["fault"]["kind"] == "illegal"
    assert "play ZZ" in result["fault"]["detail"]
    check_replay(outcome.replay)


def test_a_reply_that_is_not_a_string_forfeits():
    seats = [FunctionSeat(lambda m: m["legal"][0]) for _ in range(4)]
    seats[3] = FunctionSeat(lambda m: 42)
    outcome = referee_match(rules_for("quatre-sept"), seats, seed=11)
    assert outcome.result["fault"]["kind"] == "illegal" and outcome.result["winner"] == 0


def test_a_fault_after_several_deals_keeps_the_scores_so_far():
    seats = [Recorder() for _ in range(4)]
    seats[0] = Recorder(fail_on="turn", at_turn=40, kind="protocol")
    outcome, _ = play("la-poule", seed=12, seats=seats)
    replay = outcome.replay
    assert len(replay["deals"]) >= 2
    assert replay["result"]["score"] == replay["deals"][-2]["score"]
    assert replay["deals"][-1]["score"] == replay["deals"][-2]["score"]
    assert replay["result"]["winner"] == 1
    check_rules(replay)
    check_replay(replay)


def test_a_fault_at_hello_forfeits():
    seats = [Recorder() for _ in range(4)]
    seats[2] = Recorder(fail_on="hello")
    outcome, _ = play(seed=13, seats=seats)
    result = outcome.replay["result"]
    assert result["reason"] == "forfeit" and result["winner"] == 1
    assert result["fault"]["seat"] == 2
    assert all(not r.of_type("turn") for r in seats)
    assert outcome.replay["moves_ms"] == [[], [], [], []]


def _first_seed_with_an_instant_win(preset: str = "quatre-sept") -> int:
    rules = rules_for(preset)
    return next(seed for seed in range(10_000) if new_match(rules, seed).is_over)


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_a_fault_at_hello_forfeits_even_when_the_first_deal_is_an_instant_win(seat):
    # The deal counts only once every seat has answered hello: a bot that crashed at hello must
    # not win (nor pass validation) because the first deal holds four 7s for one hand.
    seed = _first_seed_with_an_instant_win()
    seats = [Recorder() for _ in range(4)]
    seats[seat] = Recorder(fail_on="hello")
    outcome, _ = play(seed=seed, seats=seats)
    result = outcome.replay["result"]
    assert result["reason"] == "forfeit" and result["winner"] == 1 - seat % 2
    assert result["fault"] == {"seat": seat, "kind": "crash", "detail": "failed at hello"}
    assert result["score"] == [0, 0]
    [deal] = outcome.replay["deals"]
    assert deal["end"] == "forfeit" and deal["tricks"] == []
    assert [len(r.of_type("hello")) for r in seats] == [1] * (seat + 1) + [0] * (3 - seat)
    check_replay(outcome.replay)


def test_without_a_fault_the_instant_win_still_ends_the_match_at_the_deal():
    seed = _first_seed_with_an_instant_win()
    outcome, seats = play(seed=seed)
    assert outcome.replay["result"]["reason"] == "four-sevens"
    assert outcome.replay["result"]["fault"] is None
    assert all(len(r.of_type("hello")) == 1 and not r.of_type("turn") for r in seats)
    check_replay(outcome.replay)


def test_a_fault_at_deal_end_forfeits():
    seats = [Recorder() for _ in range(4)]
    seats[3] = Recorder(fail_on="notify")
    outcome, _ = play(seed=14, seats=seats, four_sevens=False)
    result = outcome.replay["result"]
    assert result["reason"] == "forfeit" and result["winner"] == 0
    assert result["fault"]["seat"] == 3


def test_every_seat_is_closed_even_when_the_engine_fails():
    class Broken(Recorder):
        def turn(self, message):
            raise RuntimeError("not a seat fault")

    seats = [Broken() for _ in range(4)]
    with pytest.raises(RuntimeError):
        play(seed=15, seats=seats)
    assert all(s.closed for s in seats)


def test_a_match_needs_four_seats():
    with pytest.raises(ValueError):
        referee_match(rules_for("quatre-sept"), [Recorder() for _ in range(3)], seed=1)


def test_seat_fault_kinds_are_checked():
    with pytest.raises(ValueError):
        SeatFault("exploded", "no such kind")


def test_same_seed_same_match():
    a = referee_match(
        rules_for("politaine"), [BotSeat(make_bot("random")) for _ in range(4)], seed=21,
        match_id="same",
    )
    b = referee_match(
        rules_for("politaine"), [BotSeat(make_bot("random")) for _ in range(4)], seed=21,
        match_id="same",
    )
    a.replay.pop("moves_ms"), b.replay.pop("moves_ms")
    assert a.replay == b.replay


def test_the_engines_fault_kinds_are_the_sandboxs():
    """engine and sandbox may not import each other; the platform maps ``BotFault`` to
    ``SeatFault`` kind for kind, so the two lists must stay one."""
    from engine.faults import FAULT_KINDS as ENGINE_KINDS
    from sandbox.faults import FAULT_KINDS as SANDBOX_KINDS

    assert ENGINE_KINDS == SANDBOX_KINDS == ("timeout", "crash", "illegal", "protocol")
