"""A rating board's refit lock: on PostgreSQL an advisory lock per board, held by the refit from
before its queued → running write until after its last write commits.

Invariant: a board is running or again only while the refit that made it so holds its lock, so a
running or again board whose lock nobody holds was left by a refit that is gone (its worker
killed, its connection cut). The lock is a transaction-level advisory lock taken on a connection
of its own, whose transaction stays open for the refit (the refit's own writes commit on the
usual connection as they go): PostgreSQL releases it when that transaction ends or its session
does, however the worker died, and a pooler in transaction mode keeps the transaction on one
server connection, which a session-level lock would not survive. Taking the lock never waits
(``pg_try_advisory_xact_lock``); whether someone holds it is read from ``pg_locks`` without taking
it. Elsewhere (SQLite: one machine) there is no lock: taking always succeeds and whether one is
held is unknown (None). Imports Django only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from django.db import DEFAULT_DB_ALIAS, connection, connections

log = logging.getLogger(__name__)

#: The advisory lock class of refits (the first of the two int4 keys; the board id is the second).
REFIT_LOCK_CLASS = 0x52_46_49_54  # "RFIT"

#: Take the lock, and have the server probe the idle connection that holds it (TCP keepalives for
#: this transaction: after 20 s idle, every 5 s, 4 unanswered probes): a worker host that vanishes
#: without closing its connections (power lost, network cut) frees the lock within a minute, not
#: after the system's default of over two hours. A killed process's connection closes at once.
_TAKE = """SELECT pg_try_advisory_xact_lock(%s, %s),
    set_config('tcp_keepalives_idle', '20', true),
    set_config('tcp_keepalives_interval', '5', true),
    set_config('tcp_keepalives_count', '4', true)"""


def refit_locking() -> bool:
    """True where boards have a refit lock (PostgreSQL)."""
    return connection.vendor == "postgresql"


class RefitLock:
    """A board's refit lock as one refit tried to take it: ``held`` says whether it has it."""

    def __init__(self, held: bool, holder=None) -> None:
        self.held = held
        self._holder = holder

    def confirm(self) -> None:
        """Raise Django's ``OperationalError`` unless the lock is still held (its connection
        answers: a cut connection took the lock with it); nothing where there is no lock. Called
        before the refit's last write commits, so a refit that lost its lock writes nothing."""
        if self._holder is not None:
            with self._holder.cursor() as cursor:
                cursor.execute("SELECT 1")


@contextmanager
def refit_lock(board_id: int) -> Iterator[RefitLock]:
    """Take board ``board_id``'s refit lock for the block if nobody else holds it (always held
    where there is no lock). Released when the block ends (its connection closed), or with that
    connection if the process dies first."""
    if not refit_locking():
        yield RefitLock(True)
        return
    usual = connections[DEFAULT_DB_ALIAS]
    holder = type(usual)(dict(usual.settings_dict), usual.alias)  # a connection of its own
    try:
        holder.set_autocommit(False)
        with holder.cursor() as cursor:
            cursor.execute(_TAKE, [REFIT_LOCK_CLASS, board_id])
            held = cursor.fetchone()[0]
        yield RefitLock(bool(held), holder if held else None)
    finally:
        try:
            holder.rollback()  # ends its transaction, so the lock is free once this returns
        except Exception:  # the server went away: so did the lock
            log.warning("refit lock of board %s: its connection was lost", board_id)
        with suppress(Exception):
            holder.close()


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
