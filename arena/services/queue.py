"""Enqueueing Celery tasks after the current transaction commits (never before: a worker must
find the rows). The task module is imported late: tasks import services, not the other way."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction


def queue_matches(*, match_ids: Iterable[int]) -> None:
    """Send one ``play_match`` task per id once the transaction commits."""
    ids = list(match_ids)

    def send() -> None:
        from arena.tasks import play_match

        for match_id in ids:
            play_match.delay(match_id)

    transaction.on_commit(send)
