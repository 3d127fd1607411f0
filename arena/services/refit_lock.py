"""A rating board's refit lock: on PostgreSQL a session-level advisory lock per board, held by the
refit from before its queued → running write until after its last write commits.

Invariant: a board is running or again only while the session of the refit that made it so holds
its lock, so a running or again board whose lock nobody holds was left by a refit that is gone
(its worker killed, its connection cut): PostgreSQL releases a session's advisory locks when the
session ends, however it ends. Taking the lock never waits (``pg_try_advisory_lock``), and
whether someone holds it is read from ``pg_locks`` without taking it. Elsewhere (SQLite: one
machine) there is no lock: taking always succeeds and whether one is held is unknown (None).
Imports Django only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

log = logging.getLogger(__name__)

#: The advisory lock class of refits (the first of the two int4 keys; the board id is the second).
REFIT_LOCK_CLASS = 0x52_46_49_54  # "RFIT"


def refit_locking() -> bool:
    """True where boards have a refit lock (PostgreSQL)."""
    return connection.vendor == "postgresql"


@contextmanager
def refit_lock(board_id: int) -> Iterator[bool]:
    """Hold board ``board_id``'s refit lock for the block if nobody else does: yields whether it
    is held (always True where there is no lock). Released when the block ends, or with the
    session if the process dies first."""
    if not refit_locking():
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [REFIT_LOCK_CLASS, board_id])
        (held,) = cursor.fetchone()
    try:
        yield bool(held)
    finally:
        if held:
            _release(board_id)


def _release(board_id: int) -> None:
    """Release the lock; if the connection broke meanwhile its session (and the lock) is gone
    already, and the connection is closed so the next use opens a session of its own."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [REFIT_LOCK_CLASS, board_id])
    except Exception:
        log.warning("refit lock of board %s: connection lost, released with it", board_id)
        connection.close()


def refit_lock_held(board_id: int) -> bool | None:
    """Whether a session (this one included) holds board ``board_id``'s refit lock now; None where
    there is no lock."""
    if not refit_locking():
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND classid = %s AND objid = %s AND objsubid = 2)""",
            [REFIT_LOCK_CLASS, board_id],
        )
        (held,) = cursor.fetchone()
    return bool(held)
