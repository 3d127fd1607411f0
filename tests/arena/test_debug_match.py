"""Debugging a played match at home (``arena.runtime.debug``, ``python -m arena_cli debug``): the
local bot, confined in the sandbox, reads byte for byte the messages the referee sent that seat;
a bot that deviates deliberately is caught at exactly its deviation, with its stderr and time;
the run stops at the deal and trick asked for; a crash of the local bot is reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.runtime.debug import debug_match
from arena.runtime.local import resolve_bot
from arena.runtime.seats import SessionSeat
from arena.runtime.specs import start_seat
from engine import AnnouncedClock, Player, referee_match, rules_for
from sandbox.protocol import encode
from tests.arena.conftest import CRASH_BOT, FIRST_BOT

ROOT = Path(__file__).resolve().parents[2]

#: First legal action everywhere, but the last one at deal 1, trick 3; says so on stderr.
DEVIANT_BOT = b"""import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "deviant"}), flush=True)
    elif m["type"] == "turn":
        s = m["state"]
        deviate = s["deal"] == 1 and len(s["tricks"]) == 2 and len(m["legal"]) > 1
        pick = m["legal"][-1] if deviate else m["legal"][0]
        print(f"turn {m['id']}: picking {pick}", file=sys.stderr, flush=True)
        print(json.dumps({"id": m["id"], "action": pick}), flush=True)
"""


class Recording:
    """A referee seat that keeps every message it is sent, encoded as the sandbox sends it."""

    def __init__(self, seat: SessionSeat) -> None:
        self.seat = seat
        self.sent: list[bytes] = []

    def hello(self, message):
        self.sent.append(encode(message))
        return self.seat.hello(message)

    def turn(self, message):
        self.sent.append(encode(message))
        return self.seat.turn(message)

    def notify(self, message):
        self.sent.append(encode(message))
        return self.seat.notify(message)

    def close(self):
        self.seat.close()


@pytest.fixture
def bots(settings) -> dict[str, Path]:
    folder = settings.ARENA_TEST_RUN_DIR / "debug-bots"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    found = {}
    for name, source in (("first", FIRST_BOT), ("deviant", DEVIANT_BOT), ("crash", CRASH_BOT)):
        path = folder / f"{name}.py"
        path.write_bytes(source)
        path.chmod(0o644)
        found[name] = path
    return found


@pytest.fixture
def played(bots, settings) -> tuple[dict, list[bytes]]:
    """A match of FIRST_BOT (seats 0, 2) against the built-in greedy bot, with what seat 2 was
    sent, recorded where the referee sent it."""
    first = resolve_bot(str(bots["first"]), settings.ARENA_BOT_CACHE)
    greedy = resolve_bot("builtin:greedy", settings.ARENA_BOT_CACHE)
    clock = AnnouncedClock()
    seats = [start_seat(spec, clock, "bwrap") for spec in (first, greedy, first, greedy)]
    seats[2] = Recording(seats[2])
    players = [Player("alice/first", 1), Player("arena/greedy", 1)] * 2
    outcome = referee_match(rules_for("quatre-sept", target=21), seats, seed=7, match_id="42",
                         players=players, clock=clock)
    return outcome.replay, seats[2].sent


def test_the_local_bot_reads_exactly_what_the_seat_was_sent(played, bots, settings):
    replay, sent = played
    same = resolve_bot(str(bots["first"]), settings.ARENA_BOT_CACHE)
    report = debug_match(replay, 2, same)
    assert report.sent == sent
    assert report.decisions and report.differences == []
    assert not report.stopped and not report.hello_fault


def test_a_deviating_bot_is_caught_where_it_deviates(played, bots, settings):
    replay, _ = played
    deviant = resolve_bot(str(bots["deviant"]), settings.ARENA_BOT_CACHE)
    report = debug_match(replay, 2, deviant)
    deal_1_trick_3 = [d for d in report.decisions if (d.deal, d.trick) == (1, 3)]
    assert report.differences == [d for d in deal_1_trick_3 if d.differs]
    [wrong] = report.differences
    assert wrong.local != wrong.played and wrong.played is not None
    assert f"turn {wrong.turn}: picking {wrong.local}" in wrong.stderr
    assert 0 <= wrong.ms < 1000
    # Every other decision agreed: the match went on as played, not as the local bot answered.
    assert len(report.decisions) == len([d for d in report.decisions if not d.differs]) + 1

    stopped = debug_match(replay, 2, deviant, stop=(1, 2))
    assert stopped.stopped and stopped.differences == []
    assert max((d.deal, d.trick) for d in stopped.decisions) <= (1, 2)


def test_a_crashing_local_bot_is_reported(played, bots, settings):
    replay, _ = played
    crash = resolve_bot(str(bots["crash"]), settings.ARENA_BOT_CACHE)
    report = debug_match(replay, 2, crash)
    assert report.hello_fault.startswith("crash")
    assert report.decisions and all(d.local is None for d in report.decisions)
    # what it wrote before it died, and why every later decision has no answer
    assert "I give up before saying hello" in report.hello_stderr
    assert all(d.fault == "out since hello: crash" for d in report.decisions)


def test_the_command_line_shows_the_deviation(played, bots, settings, tmp_path):
    replay, _ = played
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(replay))
    env = {**os.environ, "ARENA_CLI_CACHE": str(settings.ARENA_BOT_CACHE)}
    done = subprocess.run(
        [sys.executable, "-m", "arena_cli", "debug", str(path), "--seat", "2",
         str(bots["deviant"])],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("match 42, seat 2 (alice/first v1)")
    differing = [line for line in lines if line.startswith("≠ deal 1 trick 3")]
    assert len(differing) == 1 and "local bot play" in differing[0]
    assert any(line.startswith("    stderr | turn ") for line in lines)
    assert lines[-1].endswith("the local bot answered differently at 1")

    stopped = subprocess.run(
        [sys.executable, "-m", "arena_cli", "debug", str(path), "--seat", "2", "--stop", "1.2",
         "--json", str(bots["deviant"])],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert stopped.returncode == 0, stopped.stderr
    summary = json.loads(stopped.stdout.splitlines()[-1])
    assert summary["stopped"] is True and summary["differ"] == 0
