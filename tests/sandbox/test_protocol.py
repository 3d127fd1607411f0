"""``encode``: one message, one line, byte for byte what the stdlib's compact, non-ASCII-keeping
``json.dumps`` gives (bots see the same protocol 1 lines whichever encoder ran)."""

from __future__ import annotations

import json

import pytest

from sandbox.protocol import MAX_LINE_BYTES, encode

MESSAGES = [
    {"type": "hello", "protocol": 1, "seat": 2, "players": ["été", "bot \"quoted\"", "\u2660"],
     "clock": {"hello_ms": 10000, "move_ms": 1000, "bank_ms": 60000}},
    {"type": "turn", "id": 17, "decision": "play", "legal": ["play TH", "play 9H"],
     "state": {"hand": ["TH", "9H"], "tricks": [[0, "AS"], [1, "KS"]], "score": [0, -3],
               "trump": None, "done": False, "ratio": 0.25, "control": "\x01\n\t"}},
    {"type": "match_end", "score": [31, 12], "winner": 0, "reason": "target", "huge": 2**70},
    {"type": "deal_end", 1: "a non-str key"},
]


@pytest.mark.parametrize("message", MESSAGES)
def test_encode_is_the_stdlib_line(message):
    expected = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    assert encode(message) == expected
    assert encode(message).count(b"\n") == 1


def test_encode_refuses_a_line_over_the_cap():
    with pytest.raises(ValueError, match="line cap"):
        encode({"type": "turn", "pad": "x" * MAX_LINE_BYTES})
