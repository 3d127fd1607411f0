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
