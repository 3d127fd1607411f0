"""Enqueueing Celery tasks after the current transaction commits (never before: a worker must
find the rows). The task module is imported late: tasks import services, not the other way."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import transaction


def queue_matches(*, match_ids: Iterable[int]) -> None:
    """Send one ``play_match`` task per id once the transaction commits."""
    ids = list(match_ids)

    def send() -> None:
        from arena.tasks import play_match

        for match_id in ids:
            play_match.delay(match_id)

    transaction.on_commit(send)


def matches_waiting_in_broker() -> int | None:
    """How many match tasks wait in the broker's matches queue (not counting those workers have
    taken), or None if the broker cannot tell now (unreachable)."""
    from arena.tasks import play_match

    try:
        with play_match.app.connection_for_read() as connection:
            # Not passive: Redis keeps no key for an empty queue, which a passive declare takes
            # for a missing queue; declaring creates nothing on Redis or the filesystem broker.
            declared = connection.default_channel.queue_declare(
                queue=settings.CELERY_TASK_DEFAULT_QUEUE
            )
            return int(declared.message_count)
    except Exception:  # the broker is down or refuses: nothing can be concluded
        return None
