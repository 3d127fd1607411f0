"""Protocol 1's wire constants: the clock, the line cap, and encoding one message as one line.

The sandbox knows nothing of the game: it reads only ``type``, ``id`` and ``legal`` of what it sends
and ``type``, ``id`` and ``action`` of what it receives. This module must not import Django or
``engine``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

PROTOCOL_VERSION = 1
#: Longest line either way, in bytes, not counting the final newline.
MAX_LINE_BYTES = 64 * 1024
#: How much of the bot's stderr is kept.
STDERR_TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class Clock:
    """Protocol 1's clocks in milliseconds: ``hello_ms`` to answer hello, ``move_ms`` per decision,
    ``bank_ms`` for all decisions of a match together. All positive."""

    hello_ms: int = 10_000
    move_ms: int = 1_000
    bank_ms: int = 60_000

    def __post_init__(self) -> None:
        if min(self.hello_ms, self.move_ms, self.bank_ms) <= 0:
            raise ValueError(f"clock values must be positive: {self}")

    def as_message(self) -> dict[str, int]:
        """The ``clock`` object of a hello message."""
        return {"hello_ms": self.hello_ms, "move_ms": self.move_ms, "bank_ms": self.bank_ms}


def encode(message: dict[str, Any]) -> bytes:
    """One message as one UTF-8 line ending in ``\\n``; ``ValueError`` if over ``MAX_LINE_BYTES``
    (a referee bug, not the bot's fault)."""
    try:  # the same bytes as json.dumps(ensure_ascii=False, compact), ~10x faster
        line = orjson.dumps(message)
    except TypeError:  # what orjson refuses (non-str keys, ints over 64 bits): the stdlib
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"message of {len(line)} bytes is over the {MAX_LINE_BYTES}-byte line cap")
    return line + b"\n"
