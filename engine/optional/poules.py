"""Poules announced before play (option ``politaine`` = ``before-play``, la poule).

Before the first card, every seat in play order from the leader says how many poules it will
try for: 0 up to the number of suits whose T, 9 and A it holds (at most 4; suits are not named).
Each run of three that the seat then completes pays while its announced count lasts
(``politaine.py``).
"""

from __future__ import annotations

from engine.actions import MAX_POULES
from engine.cards import TNA_MASKS
from engine.position import Said


def complete_suits(hand: int) -> int:
    """How many poules ``hand`` may announce: its complete T-9-A suits."""
    return min(MAX_POULES, sum(1 for m in TNA_MASKS if hand & m == m))


def covered_suits(hand: int) -> tuple[int, ...]:
    """The suits (0-3, ``C D H S``) whose T, 9 and A ``hand`` holds, which a poule may be."""
    return tuple(s for s, m in enumerate(TNA_MASKS) if hand & m == m)


def announce(
    poules: tuple[int, int, int, int], said: tuple[Said, ...], seat: int, count: int
) -> tuple[tuple[int, int, int, int], tuple[Said, ...]]:
    """``poules`` and ``said`` once ``seat`` announced ``count`` poules (said at trick 0)."""
    poules = (*poules[:seat], count, *poules[seat + 1 :])
    return poules, (*said, Said(seat, 0, f"poules {count}", -1))
