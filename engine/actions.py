"""Actions as small ints for speed, and their protocol strings ("play TH politaine tap").

Encoding (a public part of the engine API): a play is the card int (0-31) plus the flags
``POLITAINE`` (32), ``TAP`` (64) or ``SLIDE`` (128); every other action is a constant >= 256.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

from engine.cards import CODES, SUITS, parse_card

POLITAINE = 32
TAP = 64
SLIDE = 128
PLAY_LIMIT = 256

CLAIM = 256
KEEP = 257
REDEAL = 258
DONE = 259
POULES = 264  # POULES + n announces n poules, n in 0..4
MELD = 272  # MELD + meld id

MAX_POULES = 4

# Meld ids: pollack of suit s -> s; four of rank r (T 9 A: 0 1 2) -> 4 + r;
# three of rank r with suit s missing -> 7 + 4 * r + s.
MELD_FOUR = 4
MELD_THREE = 7
MELD_COUNT = 19
MELD_RANKS = "T9A"


def meld_points(meld: int) -> int:
    """Pollack 3, four of a kind 4, three of a kind 3."""
    return 4 if MELD_FOUR <= meld < MELD_THREE else 3


def meld_name(meld: int) -> str:
    if meld < MELD_FOUR:
        return f"pollack {SUITS[meld]}"
    if meld < MELD_THREE:
        return f"four {MELD_RANKS[meld - MELD_FOUR]}"
    rank, missing = divmod(meld - MELD_THREE, 4)
    return f"three {MELD_RANKS[rank]} {SUITS[missing]}"


def action_to_str(action: int) -> str:
    """The protocol string of an action."""
    if action < PLAY_LIMIT:
        text = "play " + CODES[action & 31]
        if action & POLITAINE:
            text += " politaine"
        if action & TAP:
            text += " tap"
        elif action & SLIDE:
            text += " slide"
        return text
    if action == CLAIM:
        return "claim"
    if action == KEEP:
        return "keep"
    if action == REDEAL:
        return "redeal"
    if action == DONE:
        return "done"
    if POULES <= action <= POULES + MAX_POULES:
        return f"poules {action - POULES}"
    if MELD <= action < MELD + MELD_COUNT:
        return "meld " + meld_name(action - MELD)
    raise ValueError(f"not an action: {action}")


_WORDS = {"claim": CLAIM, "keep": KEEP, "redeal": REDEAL, "done": DONE}
_MELD_IDS = {meld_name(m): m for m in range(MELD_COUNT)}


def parse_action(text: str) -> int:
    """The action int of a protocol string; ``ValueError`` with the reason if malformed.

    Parsing says nothing about legality: compare with the state's legal actions for that.
    """
    if not isinstance(text, str):
        raise ValueError(f"an action is a string, not {type(text).__name__}")
    words = text.split(" ")
    head = words[0]
    if head in _WORDS and len(words) == 1:
        return _WORDS[head]
    if head == "play" and 2 <= len(words) <= 4:
        action = parse_card(words[1])
        flags = words[2:]
        if flags and flags[0] == "politaine":
            action |= POLITAINE
            flags = flags[1:]
        if flags == ["tap"]:
            action |= TAP
        elif flags == ["slide"]:
            action |= SLIDE
        elif flags:
            raise ValueError(f"unknown play flags in {text!r}: use politaine, then tap or slide")
        return action
    if head == "poules" and len(words) == 2 and words[1].isdigit():
        n = int(words[1])
        if n <= MAX_POULES:
            return POULES + n
    if head == "meld":
        meld = _MELD_IDS.get(text[5:])
        if meld is not None:
            return MELD + meld
    raise ValueError(f"not an action of protocol 1: {text!r}")
