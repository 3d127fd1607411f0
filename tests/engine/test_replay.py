"""Replay re-check: real matches pass, tampered replays raise ReplayMismatch."""

from __future__ import annotations

import copy

import pytest

from engine.bots import BotSeat, make_bot
from engine.check import ReplayMismatch, check_replay
from engine.faults import SeatFault
from engine.referee import referee_match
from engine.rules import rules_for
from tests.engine.reference import check_rules

PRESETS = ["quatre-sept", "politaine", "la-poule", "pollack"]


def match(preset="politaine", seed=1, bot="random", **options):
    seats = [BotSeat(make_bot(bot)) for _ in range(4)]
    return referee_match(rules_for(preset, **options), seats, seed=seed, match_id=f"r{seed}").replay


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("bot", ["random", "greedy"])
def test_real_matches_recheck(preset, bot):
    for seed in range(5):
        replay = match(preset, seed, bot)
        check_replay(replay)
        check_rules(replay)


def _played_deal(replay):
    return next(d for d in replay["deals"] if d["tricks"])


def _tampered(replay, change):
    bad = copy.deepcopy(replay)
    change(bad)
    return bad


def test_a_card_changed():
    """check.py: any rule broken or number wrong in the replay "shows as a ReplayMismatch"."""
    replay = match(seed=3)

    def change(r):
        cards = _played_deal(r)["tricks"][0]["cards"]
        cards[0], cards[1] = cards[1], cards[0]

    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, change))
    with pytest.raises(AssertionError):
        check_rules(_tampered(replay, change))


def test_a_card_replaced_by_one_not_held():
    replay = match(seed=4)

    def change(r):
        d = _played_deal(r)
        leader = d["tricks"][0]["leader"]
        other = next(c for c in d["hands"][(leader + 1) % 4] if c not in d["tricks"][0]["cards"])
        d["tricks"][0]["cards"][0] = other

    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, change))


def test_a_score_changed():
    replay = match(seed=5)

    def change(r):
        r["deals"][0]["score"][0] += 1

    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, change))


def test_a_final_score_changed():
    replay = match(seed=5)

    def change(r):
        r["result"]["score"][1] += 3

    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, change))


def test_a_winner_changed():
    replay = match(seed=6)

    def change(r):
        r["result"]["winner"] = 1 - r["result"]["winner"]

    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, change))
    with pytest.raises(AssertionError):
        check_rules(_tampered(replay, change))


def test_thirds_or_points_changed():
    replay = match(seed=7)
    for key in ("thirds", "points", "bonus", "melds"):

        def change(r, key=key):
            r["deals"][0][key][0] += 1

        with pytest.raises(ReplayMismatch):
            check_replay(_tampered(replay, change))


def test_a_trick_winner_changed():
    replay = match(seed=8)

    def change(r):
        trick = _played_deal(r)["tricks"][0]
        trick["winner"] = (trick["winner"] + 1) % 4

    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, change))


def test_hands_or_seed_changed():
    replay = match(seed=9)
    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, lambda r: r.__setitem__("seed", 10)))

    def swap_hands(r):
        hands = r["deals"][0]["hands"]
        hands[0], hands[1] = hands[1], hands[0]

    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, swap_hands))


def test_rules_changed():
    replay = match("quatre-sept", seed=2)
    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, lambda r: r["rules"].__setitem__("target", 41)))


def test_a_politaine_announcement_removed():
    for seed in range(200):
        replay = match("quatre-sept", seed, bot="greedy")
        if any(d["bonus"] != [0, 0] for d in replay["deals"]):
            break
    else:
        pytest.fail("no politaine in 200 greedy matches")

    def change(r):
        for d in r["deals"]:
            d["said"] = [s for s in d["said"] if s["say"] != "politaine"]

    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, change))


def test_not_a_replay():
    with pytest.raises(ReplayMismatch):
        check_replay({"format": "quatresept-replay/1"})
    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(match(seed=1), lambda r: r["rules"].__setitem__("preset", "x")))


def test_a_truncated_replay():
    replay = match("la-poule", seed=1)
    with pytest.raises(ReplayMismatch):
        check_replay(_tampered(replay, lambda r: r["deals"].pop()))


class _FailingSeat(BotSeat):
    def __init__(self, where: str, at: int = 1):
        super().__init__(make_bot("random"))
        self.where, self.at, self.count = where, at, 0

    def hello(self, message):
        super().hello(message)
        if self.where == "hello":
            raise SeatFault("crash", "died at hello")

    def turn(self, message):
        self.count += 1
        if self.where == "turn" and self.count == self.at:
            raise SeatFault("timeout", "too slow")
        return super().turn(message)

    def notify(self, message):
        if self.where == "deal_end" and message["type"] == "deal_end":
            raise SeatFault("crash", "died at deal_end")


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("at", [1, 2, 5, 17])
def test_forfeited_matches_recheck(preset, at):
    seats = [BotSeat(make_bot("random")) for _ in range(4)]
    seats[at % 4] = _FailingSeat("turn", at)
    replay = referee_match(rules_for(preset), seats, seed=at, match_id="f").replay
    if replay["result"]["reason"] == "forfeit":
        assert replay["result"]["fault"]["seat"] == at % 4
    check_replay(replay)
    check_rules(replay)


@pytest.mark.parametrize("seat", range(4))
def test_a_match_forfeited_at_hello_rechecks(seat):
    """docs/protocol.md: a replay holds "everything needed to replay it card by card and re-check
    every rule"; docs/rules.md: a bot's fault forfeits, and "the record names the seat"."""
    seats = [BotSeat(make_bot("random")) for _ in range(4)]
    seats[seat] = _FailingSeat("hello")
    replay = referee_match(rules_for("quatre-sept", four_sevens=False), seats, seed=3).replay
    assert replay["result"]["fault"]["seat"] == seat
    check_replay(replay)


@pytest.mark.parametrize("seat", range(4))
def test_a_match_forfeited_at_deal_end_rechecks(seat):
    """As above, for a fault while the referee tells a seat the deal's end."""
    seats = [BotSeat(make_bot("random")) for _ in range(4)]
    seats[seat] = _FailingSeat("deal_end")
    replay = referee_match(rules_for("quatre-sept", four_sevens=False), seats, seed=3).replay
    assert replay["result"]["fault"]["seat"] == seat
    check_replay(replay)
