"""The conversation and its clocks, on plain processes (the trusted runner) so that each case is
fast; the same cases under bwrap are in test_bwrap_hostile.py."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from sandbox import (
    BotFault,
    BotSession,
    Clock,
    TrustedProgram,
    TrustedRunner,
    open_session,
)
from sandbox.channel import Channel
from sandbox.protocol import encode
from sandbox.session import CLOSE_GRACE_S
from tests.sandbox.helpers import FAST, hello, play_match, python_bot, turn


@pytest.fixture
def trusted(tmp_path: Path):
    sessions: list[BotSession] = []

    def start(source: str, clock: Clock = FAST) -> BotSession:
        path = tmp_path / f"bot{len(sessions)}.py"
        path.write_text(source)
        session = open_session(TrustedRunner(), TrustedProgram((sys.executable, "-u", str(path))),
                               clock)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()
        assert session.process.poll() is not None


def test_a_whole_fake_match(trusted):
    session = trusted(python_bot())
    assert play_match(session, turns=5) == ["play TH"] * 5
    assert len(session.moves_ms) == 5
    assert session.bank_left_ms <= FAST.bank_ms
    session.close()
    assert session.process.poll() == 0  # it exited on end of input: not killed after the grace
    session.close()  # idempotent


def test_ready_reply_is_returned(trusted):
    session = trusted(python_bot(on_hello='send({"type": "ready", "name": "x", "extra": [1]})'))
    assert session.hello(hello()) == {"type": "ready", "name": "x", "extra": [1]}


def test_hello_needs_ready(trusted):
    session = trusted(python_bot(on_hello='send({"type": "hi"})'))
    with pytest.raises(BotFault) as caught:
        session.hello(hello())
    assert caught.value.kind == "protocol"
    assert '"type": "ready"' in caught.value.detail


def test_hello_clock(trusted):
    session = trusted(python_bot(on_hello="time.sleep(5)"), Clock(hello_ms=300))
    start = time.monotonic()
    with pytest.raises(BotFault) as caught:
        session.hello(hello())
    assert time.monotonic() - start < 1.3
    assert caught.value.kind == "timeout"
    assert caught.value.detail.startswith("no ready reply within hello_ms=300 (host: wall_s=")


def test_a_line_when_none_was_asked(trusted):
    session = trusted(python_bot(on_turn="""
        send({"id": m["id"], "action": m["legal"][0]})
        send({"id": m["id"], "action": m["legal"][0]})
    """))
    session.hello(hello())
    assert session.turn(turn(1)) == "play TH"
    time.sleep(0.1)
    with pytest.raises(BotFault) as caught:
        session.turn(turn(2))
    assert caught.value.kind == "protocol"
    assert "when no reply was asked" in caught.value.detail


def test_unasked_line_is_caught_at_notify_too(trusted):
    session = trusted(python_bot(on_hello="""
        send({"type": "ready", "name": "x"})
        send({"type": "ready", "name": "again"})
    """))
    session.hello(hello())
    time.sleep(0.1)
    with pytest.raises(BotFault, match="when no reply was asked"):
        session.notify({"type": "deal_end"})


def test_the_first_fault_sticks(trusted):
    session = trusted(python_bot(on_turn='print("nope", flush=True)'))
    session.hello(hello())
    with pytest.raises(BotFault) as first:
        session.turn(turn(1))
    with pytest.raises(BotFault) as second:
        session.turn(turn(2))
    assert first.value is second.value
    start = time.monotonic()
    session.close()  # after a fault: kill at once, no grace
    assert time.monotonic() - start < CLOSE_GRACE_S


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("[1, 2]", "protocol"),
        ('"play TH"', "protocol"),
        ('{"id": 1}', "illegal"),
        ('{"id": true, "action": "play TH"}', "illegal"),
        ('{"id": "1", "action": "play TH"}', "illegal"),
        ('{"id": 1, "action": ["play TH"]}', "illegal"),
        ('{"id": 1, "action": "play th"}', "illegal"),
    ],
)
def test_malformed_replies(trusted, reply: str, kind: str):
    session = trusted(python_bot(on_turn=f"print({reply!r}, flush=True)"))
    session.hello(hello())
    with pytest.raises(BotFault) as caught:
        session.turn(turn(1))
    assert caught.value.kind == kind


def test_reply_split_over_several_writes(trusted):
    session = trusted(python_bot(on_turn="""
        text = json.dumps({"id": m["id"], "action": m["legal"][2]}) + "\\n"
        for ch in text:
            sys.stdout.write(ch); sys.stdout.flush(); time.sleep(0.001)
    """))
    session.hello(hello())
    assert session.turn(turn(1)) == "play AH"


def test_a_line_of_exactly_the_cap_is_accepted(trusted):
    session = trusted(python_bot(on_turn="""
        line = json.dumps({"id": m["id"], "action": m["legal"][0], "pad": ""})
        line = line[:-2] + "x" * (65536 - len(line)) + '"}'
        assert len(line.encode()) == 65536
        print(line, flush=True)
    """))
    session.hello(hello())
    assert session.turn(turn(1)) == "play TH"


def test_not_utf8(trusted):
    session = trusted(python_bot(on_turn="""
        sys.stdout.buffer.write(b'{"id": 1, "action": "\\xff"}\\n'); sys.stdout.flush()
    """))
    session.hello(hello())
    with pytest.raises(BotFault, match="not UTF-8"):
        session.turn(turn(1))


def test_bot_that_never_reads_its_input(trusted):
    session = trusted(
        "import sys, time\nprint('{\"type\": \"ready\"}', flush=True)\ntime.sleep(30)\n",
        Clock(hello_ms=2000, move_ms=200, bank_ms=2000),
    )
    session.hello(hello())
    big = {"type": "deal_end", "pad": "x" * 60000}
    with pytest.raises(BotFault) as caught:
        for _ in range(100):
            session.notify(big)
    assert caught.value.kind == "timeout"
    assert "not reading its stdin" in caught.value.detail


def test_stderr_tail_is_kept(trusted):
    session = trusted(python_bot(on_hello="""
        sys.stderr.write("x" * 100000 + "last words")
        sys.stderr.flush()
        send({"type": "ready"})
    """))
    session.hello(hello())
    tail = session.stderr_tail
    assert tail.endswith("last words") and len(tail) == 64 * 1024


def test_turn_and_hello_check_their_messages(trusted):
    session = trusted(python_bot())
    with pytest.raises(ValueError):
        session.hello({"type": "turn"})
    session.hello(hello())
    with pytest.raises(ValueError):
        session.turn({"type": "turn", "id": 1, "legal": []})
    with pytest.raises(ValueError):
        session.turn({"type": "turn", "legal": ["a"]})


def test_encode_refuses_a_line_over_the_cap():
    with pytest.raises(ValueError):
        encode({"pad": "x" * 70000})
    assert encode({"a": "é"}) == '{"a":"é"}\n'.encode()


def test_channel_memory_is_bounded_without_newline(tmp_path: Path):
    import os

    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    r_in, w_in = os.pipe()
    channel = Channel(w_in, r_out, r_err)
    os.set_blocking(w_out, False)
    written = 0
    try:
        while written < 4 * 1024 * 1024:
            written += os.write(w_out, b"x" * 65536)
            channel.drain(0)
    except BlockingIOError:
        pass  # the channel stopped reading: the pipe is full, the bot would wait
    assert len(channel.peek_output(1 << 30)) <= 64 * 1024 + (1 << 20)
    channel.close()
    for fd in (w_out, w_err, r_in):
        os.close(fd)


def test_a_process_the_session_cannot_wrap_is_killed_not_leaked(tmp_path: Path, monkeypatch):
    """The runner started the bot but the session cannot take its pipes (no descriptor left):
    the process is killed and its reservations freed before the error reaches the caller."""
    path = tmp_path / "bot.py"
    path.write_text(python_bot())
    started = []
    runner = TrustedRunner()
    start = runner.start

    def start_and_keep(*args, **kwargs):
        started.append(start(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(runner, "start", start_and_keep)
    monkeypatch.setattr(Channel, "__init__", lambda self, *fds: (_ for _ in ()).throw(
        OSError(24, "Too many open files")))
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError, match="Too many open files"):
        open_session(runner, TrustedProgram((sys.executable, str(path))))
    [process] = started
    assert process.popen.poll() is not None
    assert len(os.listdir("/proc/self/fd")) <= before  # the pipes handed over were closed
