"""The one exception services raise for input a person must correct; the API turns it into a 400.

Must not import Django models, services or selectors.
"""

from __future__ import annotations


class ArenaError(ValueError):
    """Input the service refuses, with a message a person can act on; ``field`` names the input
    it is about (``None`` for the request as a whole). Nothing was stored."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def checked_integer(value: object, *, field: str, low: int, high: int | None = None) -> int:
    """``value`` if it is an integer (not a bool) from ``low`` to ``high`` (no upper bound when
    None); else an ``ArenaError`` on ``field`` that says so."""
    if (not isinstance(value, int) or isinstance(value, bool) or value < low
            or (high is not None and value > high)):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ArenaError(f"{field} must be an integer {span}", field=field)
    return value
