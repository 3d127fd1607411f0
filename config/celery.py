"""The Celery app: ``celery -A config worker`` (and ``celery -A config beat``).

Configuration comes from Django settings under the ``CELERY_`` namespace (see ``config.settings``).
Must not import ``arena`` at module level: tasks are found by autodiscovery.
"""

from __future__ import annotations

import logging
import os
import socket

from celery import Celery
from celery.signals import (
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_shutdown,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
def _usable_database_connection(task=None, **kwargs) -> None:
    """Before each task, drop a database connection that broke (an error since its last use) or
    outlived ``CONN_MAX_AGE``: what Django does at the start of each request; Celery reuses
    connections across tasks (``CELERY_DB_REUSE_MAX``) without it. Not for eager tasks: they run
    inside the caller's transaction."""
    if task is not None and getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections, connection

    if not connection.in_atomic_block:
        close_old_connections()


@worker_process_init.connect
def _no_health_check_query(**kwargs) -> None:
    """A worker process skips ``CONN_HEALTH_CHECKS``' query before each task's first statement (a
    round trip on every match, a quarter of a match task's). A connection cut while the worker
    waited (PostgreSQL restarted, ``pg_terminate_backend``) fails the task's first statement
    instead, before anything is played; the task is retried (``arena.tasks``) and the retry's
    ``_usable_database_connection`` replaces the broken connection."""
    from django.db import connections

    for alias in connections:
        connections[alias].settings_dict["CONN_HEALTH_CHECKS"] = False


@worker_init.connect
def _sandbox_containers_of_a_dead_predecessor(sender=None, **kwargs) -> None:
    """Under the Docker sandbox, name this worker's seat containers after its host and node name
    (inherited by its pool processes), size their pre-started containers (``ARENA_DOCKER_POOL``,
    their files in the bot cache, which the engine reaches by the same path) and, before it
    plays, remove the containers a dead worker of the same name left (a crashed worker container
    restarts under the same host name)."""
    from django.conf import settings

    if settings.ARENA_SANDBOX != "docker":
        return
    owner = f"{socket.gethostname()}/{getattr(sender, 'hostname', '') or 'celery'}"
    os.environ["QUATRESEPT_SANDBOX_OWNER"] = owner
    os.environ["QUATRESEPT_DOCKER_POOL"] = str(settings.ARENA_DOCKER_POOL)
    seat_files = settings.ARENA_BOT_CACHE / ".docker-seats"
    os.environ.setdefault("QUATRESEPT_DOCKER_STATE", str(seat_files))
    from sandbox.runners.docker import remove_owned_containers

    try:
        removed = remove_owned_containers(owner)
    except Exception as exc:  # no engine yet: its matches will say so
        logging.getLogger(__name__).warning("sandbox containers of %s not swept: %s", owner, exc)
        return
    if removed:
        logging.getLogger(__name__).warning("removed %d sandbox containers %s left", removed, owner)


@worker_process_shutdown.connect
@worker_shutdown.connect
def _sandbox_runners_closed(**kwargs) -> None:
    """A stopping worker process removes the seat containers it pre-started (a killed one leaves
    them to the next worker of its name, or they leave by themselves: see ``docker_warm``)."""
    from arena.runtime.specs import close_confined_runners

    close_confined_runners()
