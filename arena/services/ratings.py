"""Ratings: the debounced refit of a board, called (after commit) whenever a rated match finishes.

The refit is a state machine on ``RatingBoard.state`` (see ``RefitState``): a request moves idle →
queued and sends one ``refit_ratings`` task, or running → again; the task moves queued → running,
fits every rated result of the board (``arena.rating``: Bradley-Terry on the Elo scale, mean 1500,
cluster-robust intervals with duplicate pairs as clusters), appends one ``Rating`` row per version
as the board's next generation, then running → idle, or again → queued with one more task. So at
most one refit runs per board and a burst of results triggers exactly one more, which starts
``ARENA_REFIT_EVERY`` seconds after the previous refit at the earliest; every result
committed before a refit reads the board is in that refit (the request runs after the result's
commit and the refit reads after its queued → running commit).

Each → queued takes the board's next ``ticket`` and its task carries it: a task runs only the
refit of its own ticket, so a task delivered twice, or sent again, does nothing more. On
PostgreSQL a refit holds the board's refit lock (``arena.services.refit_lock``) from before queued
→ running until after its last write, so a second task of the same ticket never runs beside it,
and a running or again board whose lock nobody holds is known lost (its worker died).

Lost work is recovered by the minutely sweep (``ratings_recover_lost``): a board queued for
``REFIT_GRACE`` past the time its task was due (the worker died between the commit and the send)
has its task sent again, same ticket; a board running or again whose refit is gone (PostgreSQL:
nobody holds its lock; elsewhere: unchanged for ``REFIT_STALE_AFTER``) is queued again with a new
ticket. Must not import the API or ``arena.tasks``.
"""

from __future__ import annotations

import functools
import logging
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from arena.models import Rating, RatingBoard, RefitState
from arena.rating import board as rating_board
from arena.rating import fit_ratings
from arena.selectors.ratings import rated_results
from arena.services.queue import REFIT_RATINGS, send_after_commit
from arena.services.refit_lock import RefitLock, refit_lock, refit_lock_held, refit_locking
from arena.sqlnames import column, one_statement, run_statement, table

log = logging.getLogger(__name__)

#: A queued refit whose task has not started this long after it was due lost its task (the worker
#: that queued it died between the commit and the send): the sweep sends it again.
REFIT_GRACE = timedelta(seconds=30)
#: Where the database cannot tell a live refit from a lost one (no refit lock: SQLite), a board
#: running or again for longer than this is presumed lost.
REFIT_STALE_AFTER = timedelta(minutes=15)


class RefitBusy(Exception):
    """The board's queued refit is this task's, but another session holds the board's refit lock
    for a moment (a refit finishing, or a second delivery of this task starting): try again."""


def ratings_request_refit(*, preset: str, rules_key: str) -> None:
    """Ask for the ratings of board ``rules_key`` (rule preset ``preset``) to be refitted:
    idle → queued (one task sent after commit), running → again; queued and again stay.

    Runs after every rated match, so the usual case takes one read: a queued or again refit needs
    nothing (it has yet to read the board, and this result committed before this request); a
    running one becomes again in one more statement. A lost refit is the sweep's
    (``ratings_recover_lost``)."""
    now = timezone.now()
    if one_statement():
        if _requested_in_one_statement(rules_key, now):
            return
    else:
        boards = RatingBoard.objects.filter(key=rules_key)
        if boards.filter(state__in=(RefitState.QUEUED, RefitState.AGAIN)).exists():
            return
        if boards.filter(state=RefitState.RUNNING).update(
            state=RefitState.AGAIN, state_changed_at=now
        ):
            return
    with transaction.atomic():
        RatingBoard.objects.get_or_create(
            key=rules_key, defaults={"preset": preset, "state_changed_at": now}
        )
        board = RatingBoard.objects.select_for_update().get(key=rules_key)
        if board.state == RefitState.IDLE:
            _queue(board, now)
            _send(_task_of(board, now))
        elif board.state == RefitState.RUNNING:
            _set_state(board, RefitState.AGAIN, now)


@functools.cache
def _request_statement() -> str:
    """The request's usual case as one statement: a queued or again refit needs nothing; a running
    one becomes again. It returns whether either held (else the request takes the locked path).
    Parameters: ``key``, ``now`` and the states ``queued``, ``again``, ``running``."""
    board, key = table(RatingBoard), column(RatingBoard, "key")
    state, changed = column(RatingBoard, "state"), column(RatingBoard, "state_changed_at")
    return f"""
WITH again AS (
    UPDATE {board} SET {state} = %(again)s, {changed} = %(now)s
    WHERE {key} = %(key)s AND {state} = %(running)s
    RETURNING 1)
SELECT EXISTS (SELECT 1 FROM again) OR EXISTS (
    SELECT 1 FROM {board} WHERE {key} = %(key)s AND {state} IN (%(queued)s, %(again)s))
"""


def _requested_in_one_statement(rules_key: str, now: datetime) -> bool:
    """``ratings_request_refit``'s usual case in one statement (``_request_statement``): True
    if the board's refit was already queued or again, or running and now again."""
    ((done,),) = run_statement(_request_statement(), {
        "key": rules_key, "now": now,
        "queued": RefitState.QUEUED, "again": RefitState.AGAIN, "running": RefitState.RUNNING,
    })
    return bool(done)


def ratings_recover_lost(*, now: datetime | None = None) -> list[int]:
    """Recover every board whose refit was lost, so that it is redone within about a minute even
    when no further rated match finishes (periodic, from the minutely sweep): a queued board whose
    task is ``REFIT_GRACE`` overdue has it sent again (same ticket: if the first was only late,
    one of the two runs and the other does nothing); a running or again board whose refit is gone
    is queued again with a new ticket (a late task of the old one does nothing). A live refit is
    never doubled. Returns the board ids recovered."""
    now = now or timezone.now()
    boards = RatingBoard.objects.filter(
        state__in=(RefitState.QUEUED, RefitState.RUNNING, RefitState.AGAIN)
    ).order_by("pk")
    recovered = []
    for board in boards:
        if board.state == RefitState.QUEUED:
            if now >= _due(board) + REFIT_GRACE and _send_again(board, now):
                recovered.append(board.pk)
        elif _queue_again_if_lost(board.pk, board.ticket, now):
            recovered.append(board.pk)
    if recovered:
        log.warning("recovered the lost refits of rating boards %s", recovered)
    return recovered


def _due(board: RatingBoard) -> datetime:
    """When a queued board's task is due: ``ARENA_REFIT_EVERY`` after its last fit, not before it
    was queued (or last sent again)."""
    if board.fitted_at is None:
        return board.state_changed_at
    every = timedelta(seconds=settings.ARENA_REFIT_EVERY)
    return max(board.state_changed_at, board.fitted_at + every)


def _send_again(board: RatingBoard, now: datetime) -> bool:
    """Send the queued board's task again (same ticket, due now) and restart its clock, so it is
    sent at most once per ``REFIT_GRACE`` while it stays queued; False if the board moved on."""
    with transaction.atomic():
        moved = RatingBoard.objects.filter(
            pk=board.pk, state=RefitState.QUEUED, ticket=board.ticket,
            state_changed_at=board.state_changed_at,
        ).update(state_changed_at=now)
        if moved:
            _send(RefitTask(board.pk, board.ticket, None))
    return bool(moved)


def _queue_again_if_lost(board_id: int, ticket: int, now: datetime) -> bool:
    """running | again → queued with a new ticket and its task, if ticket ``ticket``'s refit is
    gone. Row-locked while its refit lock is read: a task of the old ticket that takes the lock
    meanwhile then finds its ticket gone and does nothing."""
    with transaction.atomic():
        board = RatingBoard.objects.select_for_update().filter(pk=board_id).first()
        if board is None or board.ticket != ticket or board.state not in (
            RefitState.RUNNING, RefitState.AGAIN
        ):
            return False
        held = refit_lock_held(board_id)
        lost = (not held) if held is not None else (
            board.state_changed_at < now - REFIT_STALE_AFTER
        )
        if not lost:
            return False
        _queue(board, now)
        _send(_task_of(board, now))
    return True


def ratings_refit(*, board_id: int, ticket: int | None = None, takeover: bool = False) -> bool:
    """queued → running → (idle | queued again): fit the board and append its next generation of
    rating rows. False (nothing done) unless the board was queued with ``ticket`` (None: a task
    of an earlier release, any ticket).

    A board left running or again by this ticket's refit is taken over: on PostgreSQL whenever
    this task holds the board's refit lock (the refit that left it is gone); elsewhere only if
    ``takeover`` (the task delivered again after its worker died, or retried after a lost
    database connection). Raises ``RefitBusy`` if another session holds the lock while the board
    is queued with this ticket. A lost database connection leaves the board running, for the
    retry (or the sweep) to take over; any other error ends the refit with no generation."""
    task = None
    try:
        with refit_lock(board_id) as lock:
            if not lock.held:
                if ticket is not None and RatingBoard.objects.filter(
                    pk=board_id, state=RefitState.QUEUED, ticket=ticket
                ).exists():
                    raise RefitBusy(board_id)
                return False
            board = _start(board_id, ticket, takeover=takeover or refit_locking())
            if board is None:
                return False
            try:
                results = rated_results(rules_key=board.key)
                rows = rating_board(fit_ratings(results))
            except (OperationalError, InterfaceError):
                raise  # left running: the retry (or the sweep) takes it over
            except Exception:
                log.exception("refit of rating board %s failed", board.key)
                task = _finish(board_id, board.ticket, lock, rows=None, matches=0)
                raise
            task = _finish(board_id, board.ticket, lock, rows=rows, matches=len(results))
            return True
    finally:
        if task is not None:  # after the lock is released, so that the task finds it free
            _send(task)


def _start(board_id: int, ticket: int | None, *, takeover: bool) -> RatingBoard | None:
    """queued (or, ``takeover``, running | again) → running, for ``ticket`` (None: any); the
    board, or None if it was not so."""
    states = [RefitState.QUEUED]
    if takeover:
        states += [RefitState.RUNNING, RefitState.AGAIN]
    boards = RatingBoard.objects.filter(pk=board_id, state__in=states)
    if ticket is not None:
        boards = boards.filter(ticket=ticket)
    if not boards.update(state=RefitState.RUNNING, state_changed_at=timezone.now()):
        return None
    return RatingBoard.objects.get(pk=board_id)


def _finish(
    board_id: int, ticket: int, lock: RefitLock, *, rows: list | None, matches: int
) -> RefitTask | None:
    """Append the generation (unless the fit failed) and leave running: → idle, or again →
    queued with a new ticket, whose task is returned for the caller to send (after commit). A
    board no longer on ``ticket`` (queued again meanwhile as stale, without a refit lock) keeps
    its state; a refit whose lock was lost meanwhile (its connection cut) writes nothing."""
    now = timezone.now()
    task = None
    with transaction.atomic():
        board = RatingBoard.objects.select_for_update().get(pk=board_id)
        lock.confirm()
        if rows is not None:
            board.generation += 1
            board.fitted_at = now
            board.matches = matches
            Rating.objects.bulk_create(
                Rating(
                    board=board, version_id=row.version, generation=board.generation,
                    fitted_at=now, rank=rank, elo=row.elo, ci95=row.ci95, matches=row.matches,
                    wins=row.wins, losses=row.losses, draws=row.draws,
                    provisional=row.provisional, los_next=row.los_next,
                )
                for rank, row in enumerate(rows, start=1)
            )
            _thin_history(board)
        if board.ticket == ticket and board.state == RefitState.AGAIN:
            _queue(board, now)
            task = _task_of(board, now)
        elif board.ticket == ticket and board.state == RefitState.RUNNING:
            board.state, board.state_changed_at = RefitState.IDLE, now
        board.save()
    return task


def _thin_history(board: RatingBoard) -> None:
    """Keep a board's history sparse: of the generations before the latest two, keep one per
    ``ARENA_RATING_HISTORY_EVERY`` seconds (the first fitted that long after the one kept before
    it) and delete the rows of the others. Refits come every ``ARENA_REFIT_EVERY`` seconds while
    matches finish, a row per version each; the latest two generations always stay whole, so a
    reader who has just read the board's generation still finds its rows."""
    candidate = board.generation - 2
    if candidate < 2:
        return
    generations = Rating.objects.filter(board=board)
    fitted = generations.filter(generation=candidate).values_list("fitted_at", flat=True).first()
    kept = (
        generations.filter(generation__lt=candidate)
        .order_by("-generation")
        .values_list("fitted_at", flat=True)
        .first()
    )
    if fitted is None or kept is None:
        return
    if (fitted - kept).total_seconds() < settings.ARENA_RATING_HISTORY_EVERY:
        generations.filter(generation=candidate).delete()


def _set_state(board: RatingBoard, state: RefitState, now: datetime) -> None:
    board.state = state
    board.state_changed_at = now
    board.save(update_fields=["state", "state_changed_at"])


def _queue(board: RatingBoard, now: datetime) -> None:
    """→ queued with the board's next ticket (saved; the caller sends its task after commit)."""
    board.state = RefitState.QUEUED
    board.ticket += 1
    board.state_changed_at = now
    board.save(update_fields=["state", "ticket", "state_changed_at"])


class RefitTask(NamedTuple):
    """One ``refit_ratings`` task to send: board, ticket, and seconds until due (None: now)."""

    board_id: int
    ticket: int
    countdown: float | None


def _task_of(board: RatingBoard, now: datetime) -> RefitTask:
    """The task of the board's queued ticket, due ``ARENA_REFIT_EVERY`` seconds after its last fit
    (never fitted: due now)."""
    since_fit = None if board.fitted_at is None else (now - board.fitted_at).total_seconds()
    wait = settings.ARENA_REFIT_EVERY - (1e9 if since_fit is None else since_fit)
    return RefitTask(board.pk, board.ticket, max(0.0, round(wait, 3)) or None)


def _send(task: RefitTask) -> None:
    """Send ``task`` once the current transaction commits (now, outside one)."""
    send_after_commit(REFIT_RATINGS, task.board_id, task.ticket, countdown=task.countdown)
