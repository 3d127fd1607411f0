"""The hook where rating work starts: called (after commit) whenever a rated match finishes.

A no-op until the ratings issue fills it in (issue 5: a debounced Bradley-Terry refit of the board
``rules_key``). Must not import the API or tasks at module level.
"""

from __future__ import annotations


def ratings_request_refit(*, preset: str, rules_key: str) -> None:
    """Ask for the ratings of board ``rules_key`` (rule preset ``preset``) to be refitted."""
    return None
