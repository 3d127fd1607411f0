"""Decoding one reply line from a bot: strict JSON, one object, bounded nesting, finite numbers.

Invariant: ``decode_reply`` returns a ``dict`` or raises ``BadReply`` (a sentence for the bot's
author); no other exception can come out of it, whatever the bytes (deep nesting that would
overflow the parser's recursion, a 5,000-digit integer, invalid UTF-8, NaN, 1e999, lone
surrogates...). The session turns ``BadReply`` into the bot's ``protocol`` fault, so no line a bot
writes can end a match as the platform's failure. This module must not import Django or
``engine``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: Deepest nesting of arrays and objects a reply may have (protocol 1's replies are flat).
MAX_DEPTH = 32
#: Longest run of digits in a number (Python refuses integers over 4,300 digits itself).
MAX_DIGITS = 400

_OPENERS = re.compile(rb"[\[{]")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")
_LONG_NUMBER = re.compile(rb"[0-9]{%d,}" % (MAX_DIGITS + 1))


class BadReply(ValueError):
    """The line is not one JSON object protocol 1 accepts; ``str()`` says why."""


def nesting(line: bytes) -> int:
    """The deepest nesting of arrays and objects outside strings (linear in the line)."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub(b'""', line)):
        if match.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> Any:
    raise BadReply(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadReply(f"the number {text[:40]} is out of range")
    return value


def decode_reply(line: bytes) -> dict[str, Any]:
    """The reply ``line`` (without its newline) as a dict; ``BadReply`` for anything else."""
    if len(_OPENERS.findall(line)) > MAX_DEPTH and nesting(line) > MAX_DEPTH:
        raise BadReply(f"it nests arrays or objects more than {MAX_DEPTH} deep")
    if _LONG_NUMBER.search(line) and _LONG_NUMBER.search(_STRING.sub(b'""', line)):
        raise BadReply(f"it has a number of more than {MAX_DIGITS} digits")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise BadReply("it is not UTF-8") from None
    try:
        reply = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except BadReply:
        raise
    except json.JSONDecodeError as error:
        raise BadReply(f"it is not JSON ({error.msg})") from None
    except Exception as error:  # RecursionError, ValueError...: still the bot's
        raise BadReply(f"it could not be decoded ({type(error).__name__})") from None
    if not isinstance(reply, dict):
        raise BadReply("it must be a JSON object")
    return reply
