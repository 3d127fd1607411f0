"""Signals (option ``signals``): with any card he plays, a player may add ``tap`` (good cards in
this card's suit) or ``slide`` (good cards in the other suit of the same colour: C-S, D-H).
Information only: every seat sees them in ``said``.
"""

from __future__ import annotations

from engine.actions import SLIDE, TAP
from engine.position import Said

#: Every play comes bare, with ``tap`` and with ``slide``.
FLAGS = (0, TAP, SLIDE)


def with_signals(plays: tuple[int, ...]) -> tuple[int, ...]:
    """Each play of ``plays`` bare, then with ``tap``, then with ``slide``."""
    return tuple(a | flag for a in plays for flag in FLAGS)


def signal(said: tuple[Said, ...], seat: int, trick: int, action: int) -> tuple[Said, ...]:
    """``said`` with the signal of the play ``action`` added, if it carries one."""
    if action & TAP:
        return (*said, Said(seat, trick, "tap", action & 31))
    if action & SLIDE:
        return (*said, Said(seat, trick, "slide", action & 31))
    return said
