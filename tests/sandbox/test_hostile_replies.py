"""No way out through the platform: whatever line a bot writes, the session either accepts it or
raises the bot's own ``protocol``/``illegal`` fault, never another exception (which would end the
match as the platform's failure, a non-result the losing bot could choose).

The reply decoder is fuzzed with hypothesis (raw bytes, JSON-shaped text and hostile values); the
hostile lines are then written by real bots, in the trusted runner (fast) and in bwrap through
``manage.py play``, which must finish and count the fault."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox import BotFault, BotSession, TrustedProgram, TrustedRunner, open_session
from sandbox.protocol import MAX_LINE_BYTES
from sandbox.replies import MAX_DEPTH, BadReply, decode_reply, nesting
from tests.sandbox.helpers import FAST, hello, python_bot, turn

ROOT = Path(__file__).resolve().parents[2]

#: Lines a hostile bot sends to void a match it is losing, and what each must be.
HOSTILE = {
    "recursion": b"[" * 60_000,
    "deep-object": b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
    "huge-int": b'{"id": ' + b"7" * 5_000 + b', "action": "play TH"}',
    "huge-int-in-id-only": b'{"id": 1' + b"0" * 4_400 + b"}",
    "invalid-utf8": b'{"id": 1, "action": "play \xff\xfe"}',
    "nan": b'{"id": 1, "action": "play TH", "x": NaN}',
    "infinity": b'{"id": 1, "action": "play TH", "x": -Infinity}',
    "huge-float": b'{"id": 1, "action": "play TH", "x": 1e999}',
    "lone-surrogate": b'{"id": 1, "action": "\\ud800"}',
    "nul": b'{"id": 1, "action": "play TH\\u0000"}',
    "float-id": b'{"id": 1.0, "action": "play TH"}',
    "bool-id": b'{"id": true, "action": "play TH"}',
    "array": b"[1, 2, 3]",
    "bare-number": b"1" * 4_000,
    "empty": b"",
}


@given(st.binary(max_size=2_000))
@settings(max_examples=400, deadline=None)
def test_any_bytes_decode_to_an_object_or_bad_reply(line: bytes):
    _decodes_or_refuses(line)


JSON_TOKENS = st.sampled_from(
    [b"[", b"]", b"{", b"}", b'"', b"\\", b":", b",", b"1", b"-", b"e", b"9" * 50, b"1e400",
     b"NaN", b"Infinity", b"true", b"null", b'"id"', b'"action"', b"\\ud800", b"\xff", b" "]
)


@given(st.lists(JSON_TOKENS, max_size=400).map(b"".join))
@settings(max_examples=400, deadline=None)
def test_json_shaped_noise_decodes_or_is_refused(line: bytes):
    _decodes_or_refuses(line)


@given(st.integers(min_value=1, max_value=30_000), st.sampled_from([b"[", b'{"a":', b'[{"b":']))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_nesting_depth_is_refused_past_the_cap(depth: int, opener: bytes):
    closer = {b"[": b"]", b'{"a":': b"}", b'[{"b":': b"}]"}[opener]
    line = opener * depth + b"0" + closer * depth
    if len(line) > MAX_LINE_BYTES:
        return
    reply = _decodes_or_refuses(line)
    assert reply is None or nesting(line) <= MAX_DEPTH


def test_nesting_ignores_brackets_inside_strings():
    line = json.dumps({"id": 1, "action": "[[[[" * 100 + '\\"{{{{' * 100}).encode()
    assert nesting(line) == 1
    assert decode_reply(line)["id"] == 1


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_line_is_refused_or_a_plain_object(name: str):
    _decodes_or_refuses(HOSTILE[name])


def _decodes_or_refuses(line: bytes) -> dict | None:
    """The decoder's whole contract: a dict, or ``BadReply``; nothing else escapes."""
    try:
        reply = decode_reply(line)
    except BadReply as error:
        assert str(error)
        return None
    assert isinstance(reply, dict)
    json.dumps(reply)  # finite numbers only: it can always be written back
    return reply


@pytest.fixture
def trusted(tmp_path: Path):
    sessions: list[BotSession] = []

    def start(source: str) -> BotSession:
        path = tmp_path / f"bot{len(sessions)}.py"
        path.write_text(source)
        session = open_session(
            TrustedRunner(), TrustedProgram((sys.executable, "-u", str(path))), FAST
        )
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()


def _writer(line: bytes) -> str:
    """A bot that answers hello, then writes ``line`` as its reply to the first turn."""
    return python_bot(
        on_turn=f"sys.stdout.buffer.write({line!r} + b'\\n'); sys.stdout.flush()"
    )


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_reply_is_the_bots_own_fault(trusted, name: str):
    session = trusted(_writer(HOSTILE[name]))
    session.hello(hello())
    with pytest.raises(BotFault) as raised:
        session.turn(turn(1, ("play TH",)))
    assert raised.value.kind in ("protocol", "illegal"), raised.value
    assert len(raised.value.detail) < 1_000
    with pytest.raises(BotFault):  # the same fault again: the session stays faulted
        session.turn(turn(2))


HOSTILE_BOT = """import json, sys
LINE = {line!r}
for raw in sys.stdin:
    m = json.loads(raw)
    if m["type"] == "hello":
        print(json.dumps({{"type": "ready", "name": "voider"}}), flush=True)
    elif m["type"] == "turn":
        sys.stdout.buffer.write(LINE + b"\\n")
        sys.stdout.flush()
"""


@pytest.mark.parametrize("name", ["recursion", "huge-int", "nan", "invalid-utf8"])
def test_manage_py_play_counts_a_hostile_reply_as_the_bots_fault(name: str, tmp_path: Path):
    """In bwrap, through the command bot authors run: it finishes, and the bot loses both."""
    from tests.settings import ARENA_TEST_RUN_DIR

    bot = ARENA_TEST_RUN_DIR / f"hostile-{name}.py"
    bot.write_text(HOSTILE_BOT.format(line=HOSTILE[name]))
    env = {**os.environ, "DATABASE_URL": "postgres://nobody@127.0.0.1:1/nothing"}
    done = subprocess.run(
        [sys.executable, "manage.py", "play", "--rules", "quatre-sept", str(bot),
         "builtin:random"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["faults"] == {str(bot): 2, "builtin:random": 0}
    assert summary["wins"] == {str(bot): 0, "builtin:random": 2}
    assert done.stdout.count(" protocol: ") == 2
