"""The runtime without a database: the seat adapter, bot specs, the bot cache."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from arena.rulesets import rules_key
from arena.runtime.cache import cached_install
from arena.runtime.play import play_seats
from arena.runtime.seats import SessionSeat
from arena.runtime.specs import BotSpec
from engine import Player, SeatFault, rules_for
from engine.check import check_replay
from sandbox import BotFault, TrustedRunner
from tests.arena.conftest import CRASH_BOT, RANDOM_BOT, install_cached


@pytest.fixture
def tmp_path(reachable_folder: Path) -> Path:
    """Sandboxed bots must reach the test's folder."""
    return reachable_folder




def test_uploaded_and_builtin_bots_play_a_match_in_the_sandbox(tmp_path):
    upload = BotSpec.for_upload(install_cached(tmp_path, RANDOM_BOT), "me/rnd v1")
    builtin = BotSpec.for_builtin("greedy")
    players = [Player("me/rnd", 1), Player("arena/greedy", 1)] * 2
    played = play_seats(
        rules_for("quatre-sept"), [upload, builtin, upload, builtin], seed=7, match_id="m-x",
        players=players,
    )
    assert played.outcome.result["fault"] is None
    assert played.play_ms > 0
    check_replay(played.outcome.replay)


def test_a_bot_fault_becomes_a_seat_fault_with_the_stderr_tail(tmp_path):
    crash = BotSpec.for_upload(install_cached(tmp_path, CRASH_BOT), "me/crash v1")
    builtin = BotSpec.for_builtin("random")
    played = play_seats(
        rules_for("quatre-sept"), [builtin, crash, builtin, crash], seed=1, match_id="m-y",
        players=[Player(f"p{i}") for i in range(4)],
    )
    fault = played.outcome.result["fault"]
    assert fault["seat"] == 1 and fault["kind"] == "crash"
    assert played.outcome.result["winner"] == 0
    assert "I give up" in played.tails[1]


def test_the_adapter_translates_faults():
    class Failing:
        stderr_tail = "tail"

        def hello(self, message):
            raise BotFault("timeout", "too slow", "the log")

        def close(self):
            pass

    seat = SessionSeat(Failing())  # type: ignore[arg-type]
    with pytest.raises(SeatFault) as caught:
        seat.hello({"type": "hello"})
    assert (caught.value.kind, caught.value.detail, caught.value.log) == (
        "timeout", "too slow", "the log"
    )
    seat.close()
    assert seat.stderr_tail == "tail"


def test_a_spec_is_builtin_xor_upload(tmp_path):
    with pytest.raises(ValueError, match="unknown built-in"):
        BotSpec.for_builtin("rm -rf /")
    with pytest.raises(ValueError):
        BotSpec(label="x")
    with pytest.raises(ValueError):
        BotSpec(label="x", builtin="random", installed=install_cached(tmp_path, RANDOM_BOT))


def test_the_trusted_runner_refuses_an_upload(tmp_path):
    with pytest.raises(TypeError):
        TrustedRunner().start(install_cached(tmp_path, RANDOM_BOT))


def test_the_cache_unpacks_once(tmp_path):
    calls = []

    def load() -> bytes:
        calls.append(1)
        return RANDOM_BOT

    digest = hashlib.sha256(RANDOM_BOT).hexdigest()
    first = cached_install(tmp_path, digest, "bot.py", load)
    second = cached_install(tmp_path, digest, "bot.py", load)
    assert first == second and len(calls) == 1
    assert (first.folder / first.package.entry).read_bytes() == RANDOM_BOT


def test_rules_keys():
    assert rules_key(rules_for("pollack")) == "pollack"
    assert rules_key(rules_for("quatre-sept", target=41, capot=True)) == (
        "quatre-sept{capot=true,target=41}"
    )


def test_a_stopping_worker_closes_its_confined_runners(monkeypatch):
    """``close_confined_runners`` (the worker's shutdown signal) closes each runner that holds
    something (the Docker pool) once and forgets them all."""
    from arena.runtime import specs

    class Pool:
        name = "docker"
        closed = 0

        def close(self) -> None:
            Pool.closed += 1

    monkeypatch.setattr(specs, "_CONFINED", {"docker": Pool(), "bwrap": TrustedRunner()})
    specs.close_confined_runners()
    specs.close_confined_runners()
    assert Pool.closed == 1 and specs._CONFINED == {}


#: A bot that, once its input ends, marks it in a shared folder and waits (up to 5 s) for the
#: other three seats' marks before it exits, saying on stderr whether it saw them all.
_WAITS_FOR_ALL = b"""import json, os, pathlib, random, sys, time
folder = pathlib.Path(sys.argv[1])
seat = None
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        seat = m["seat"]
        print(json.dumps({"type": "ready", "name": "w"}), flush=True)
    elif m["type"] == "turn":
        print(json.dumps({"id": m["id"], "action": random.choice(m["legal"])}), flush=True)
(folder / f"eof-{seat}").touch()
deadline = time.monotonic() + 5
while len(list(folder.glob("eof-*"))) < 4 and time.monotonic() < deadline:
    time.sleep(0.01)
print("saw all four" if len(list(folder.glob("eof-*"))) == 4 else "alone", file=sys.stderr)
"""


def test_the_four_bots_are_told_the_match_is_over_before_any_is_waited_for(tmp_path):
    """Closing seat by seat would wait for the first bot (killed after its grace) before the
    second heard anything; together, every bot sees its three partners' ends of input."""
    import sys

    from arena.runtime.play import referee_seats
    from sandbox import TrustedProgram, open_session

    (tmp_path / "bot.py").write_bytes(_WAITS_FOR_ALL)
    marks = tmp_path / "marks"
    marks.mkdir()
    program = TrustedProgram((sys.executable, str(tmp_path / "bot.py"), str(marks)),
                             cwd=tmp_path)
    seats = [SessionSeat(open_session(TrustedRunner(), program)) for _ in range(4)]
    outcome = referee_seats(rules_for("quatre-sept", target=11), seats, seed=3)
    assert outcome.result["fault"] is None
    assert [seat.stderr_tail.strip() for seat in seats] == ["saw all four"] * 4


def test_a_builtin_seat_finds_the_experts_c_library_where_the_worker_does(monkeypatch, tmp_path):
    """The platform image builds the expert's C library into ``EXPERT_NATIVE_DIR`` (it has no
    compiler at run time): a built-in seat's process gets that variable, and nothing else of the
    worker's but what it needs."""
    import re

    from arena.runtime.specs import start_seat
    from engine import AnnouncedClock

    dockerfile = (Path(__file__).resolve().parents[2] / "platform" / "Dockerfile").read_text()
    assert re.search(r"\bEXPERT_NATIVE_DIR=/", dockerfile)
    monkeypatch.setenv("EXPERT_NATIVE_DIR", str(tmp_path))
    monkeypatch.setenv("DJANGO_SECRET_KEY", "not for bots")
    seat = start_seat(BotSpec.for_builtin("random"), AnnouncedClock(), "bwrap")
    try:
        environ = Path(f"/proc/{seat.session.process.pid}/environ").read_bytes()
    finally:
        seat.close()
    names = {item.split(b"=", 1)[0].decode(): item for item in environ.split(b"\0") if item}
    assert names["EXPERT_NATIVE_DIR"] == f"EXPERT_NATIVE_DIR={tmp_path}".encode()
    assert "DJANGO_SECRET_KEY" not in names
