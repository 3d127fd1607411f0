"""Enqueueing Celery tasks after the current transaction commits (never before: a worker must
find the rows).

Tasks are sent by their registered name through the Celery app (``app.signature(name)``), so
services never import ``arena.tasks`` (which imports services): the dependency runs one way, and
the import-linter contract "services never import arena.tasks" keeps it so. Where the task is
registered in this process (always, once the app has autodiscovered ``arena.tasks``), the
signature goes through the task's own ``apply_async``, which honours eager mode
(``CELERY_EAGER``, the tests); otherwise it is published by name.
"""

from __future__ import annotations

from collections.abc import Iterable

from celery import current_app
from django.conf import settings
from django.db import transaction

#: Registered task names, the one place services and ``arena.tasks`` take them from.
RUN_MATCH = "arena.tasks.run_match"
REFIT_RATINGS = "arena.tasks.refit_ratings"


def send_after_commit(name: str, *args: object, countdown: float | None = None) -> None:
    """Send task ``name`` with ``args`` once the current transaction commits (now, outside one);
    ``countdown``: due that many seconds later."""

    def send() -> None:
        current_app.signature(name, args=args).apply_async(countdown=countdown)

    transaction.on_commit(send)


def queue_matches(*, match_ids: Iterable[int]) -> None:
    """Send one ``run_match`` task per id once the transaction commits."""
    ids = list(match_ids)

    def send() -> None:
        for match_id in ids:
            current_app.signature(RUN_MATCH, args=(match_id,)).apply_async()

    transaction.on_commit(send)


def matches_waiting_in_broker() -> int | None:
    """How many match tasks wait in the broker's matches queue (not counting those workers have
    taken), or None if the broker cannot tell now (unreachable)."""
    try:
        with current_app.connection_for_read() as connection:
            # Not passive: Redis keeps no key for an empty queue, which a passive declare takes
            # for a missing queue; declaring creates nothing on Redis or the filesystem broker.
            declared = connection.default_channel.queue_declare(
                queue=settings.CELERY_TASK_DEFAULT_QUEUE
            )
            return int(declared.message_count)
    except Exception:  # the broker is down or refuses: nothing can be concluded
        return None
