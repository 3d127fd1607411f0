"""Failing tournament matches that were never played: one way for every caller.

A failed match counts for nobody, and a finished twin of it (the other match of its duplicate
pair) no longer counts either (``void_pairs``): whoever fails tournament matches must have their
rating board refitted. Invariant: each call that fails at least one match asks for the refit
once; a call that fails none asks for nothing. Must not import ``arena.services.matches`` or
``arena.services.tournaments`` (both call it).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from arena.models import Match, MatchStatus
from arena.services.ratings import ratings_request_refit


def queued_matches_fail(
    *, matches: QuerySet[Match], failure: str, now: datetime, preset: str, rules_key: str
) -> int:
    """Fail the queued matches among ``matches`` (all of one rating board: ``preset``,
    ``rules_key``) with ``failure``, so that workers skip them; how many failed."""
    failed = matches.filter(status=MatchStatus.QUEUED).update(
        status=MatchStatus.FAILED, finished_at=now, failure=failure
    )
    if failed:
        tournament_matches_failed(preset=preset, rules_key=rules_key)
    return failed


def tournament_matches_failed(*, preset: str, rules_key: str) -> None:
    """Tournament matches of this board have just failed (in this transaction): the finished twin
    of each no longer counts, so the board is refitted once the transaction commits."""
    ratings_request_refit(preset=preset, rules_key=rules_key)
