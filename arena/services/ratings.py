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

A board left queued, running or again for ``REFIT_STALE_AFTER`` (a lost task or worker) is queued
again by the next request. Must not import the API or ``arena.tasks``.
"""

from __future__ import annotations

import functools
import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from arena.models import Rating, RatingBoard, RefitState
from arena.rating import board as rating_board
from arena.rating import fit_ratings
from arena.selectors.ratings import rated_results
from arena.services.queue import REFIT_RATINGS, send_after_commit
from arena.sqlnames import column, one_statement, run_statement, table

log = logging.getLogger(__name__)

#: A refit queued or running for longer than this is presumed lost.
REFIT_STALE_AFTER = timedelta(minutes=15)


def ratings_request_refit(*, preset: str, rules_key: str) -> None:
    """Ask for the ratings of board ``rules_key`` (rule preset ``preset``) to be refitted:
    idle → queued (one task sent after commit), running → again; queued and again stay.

    Runs after every rated match, so the usual case takes one read: a fresh queued or again
    refit needs nothing (it has yet to read the board, and this result committed before this
    request); a fresh running one becomes again in one more statement."""
    now = timezone.now()
    if one_statement():
        if _requested_in_one_statement(rules_key, now):
            return
    else:
        fresh = RatingBoard.objects.filter(
            key=rules_key, state_changed_at__gte=now - REFIT_STALE_AFTER
        )
        if fresh.filter(state__in=(RefitState.QUEUED, RefitState.AGAIN)).exists():
            return
        if fresh.filter(state=RefitState.RUNNING).update(
            state=RefitState.AGAIN, state_changed_at=now
        ):
            return
    with transaction.atomic():
        RatingBoard.objects.get_or_create(
            key=rules_key, defaults={"preset": preset, "state_changed_at": now}
        )
        board = RatingBoard.objects.select_for_update().get(key=rules_key)
        stale = board.state_changed_at < now - REFIT_STALE_AFTER
        if board.state == RefitState.IDLE or (
            stale and board.state in (RefitState.QUEUED, RefitState.RUNNING, RefitState.AGAIN)
        ):
            _set_state(board, RefitState.QUEUED, now)
            _send_refit(board.pk, since_fit=now - board.fitted_at if board.fitted_at else None)
        elif board.state == RefitState.RUNNING:
            _set_state(board, RefitState.AGAIN, now)


@functools.cache
def _request_statement() -> str:
    """The request's usual case as one statement: a fresh queued or again refit needs nothing; a
    fresh running one becomes again. It returns whether either held (else the request takes the
    locked path). Parameters: ``key``, ``fresh`` (the oldest fresh state change), ``now`` and
    the states ``queued``, ``again``, ``running``."""
    board, key = table(RatingBoard), column(RatingBoard, "key")
    state, changed = column(RatingBoard, "state"), column(RatingBoard, "state_changed_at")
    return f"""
WITH again AS (
    UPDATE {board} SET {state} = %(again)s, {changed} = %(now)s
    WHERE {key} = %(key)s AND {changed} >= %(fresh)s AND {state} = %(running)s
    RETURNING 1)
SELECT EXISTS (SELECT 1 FROM again) OR EXISTS (
    SELECT 1 FROM {board} WHERE {key} = %(key)s AND {changed} >= %(fresh)s
        AND {state} IN (%(queued)s, %(again)s))
"""


def _requested_in_one_statement(rules_key: str, now: datetime) -> bool:
    """``ratings_request_refit``'s usual case in one statement (``_request_statement``): True
    if the board's refit was already queued or again, or running and now again."""
    ((done,),) = run_statement(_request_statement(), {
        "key": rules_key, "fresh": now - REFIT_STALE_AFTER, "now": now,
        "queued": RefitState.QUEUED, "again": RefitState.AGAIN, "running": RefitState.RUNNING,
    })
    return bool(done)


def ratings_requeue_stale(*, now: datetime | None = None) -> list[int]:
    """Request again the refit of every board left queued, running or again for longer than
    ``REFIT_STALE_AFTER`` (its task or its worker was lost), so that it is redone even when no
    further rated match finishes to request it (periodic, from the minutely sweep). Returns the
    board ids requested."""
    now = now or timezone.now()
    stale = RatingBoard.objects.filter(
        state__in=(RefitState.QUEUED, RefitState.RUNNING, RefitState.AGAIN),
        state_changed_at__lt=now - REFIT_STALE_AFTER,
    ).order_by("pk")
    requested = []
    for board_id, key, preset in stale.values_list("pk", "key", "preset"):
        ratings_request_refit(preset=preset, rules_key=key)
        requested.append(board_id)
    if requested:
        log.warning("requested again the lost refits of rating boards %s", requested)
    return requested


def ratings_refit(*, board_id: int, takeover: bool = False) -> bool:
    """queued → running → (idle | queued again): fit the board and append its next generation of
    rating rows. False (nothing done) unless the board was queued.

    ``takeover``: this is the task delivered again (its worker died mid-refit, or the refit hit a
    lost database connection and is retried), so a board left running or again is this task's
    own, and is taken over instead of waiting ``REFIT_STALE_AFTER`` for the next request."""
    now = timezone.now()
    states = [RefitState.QUEUED]
    if takeover:
        states += [RefitState.RUNNING, RefitState.AGAIN]
    started = RatingBoard.objects.filter(pk=board_id, state__in=states).update(
        state=RefitState.RUNNING, state_changed_at=now
    )
    if not started:
        return False
    board = RatingBoard.objects.get(pk=board_id)
    try:
        results = rated_results(rules_key=board.key)
        rows = rating_board(fit_ratings(results))
    except Exception:
        log.exception("refit of rating board %s failed", board.key)
        _finish(board_id, rows=None, matches=0)
        raise
    _finish(board_id, rows=rows, matches=len(results))
    return True


def _finish(board_id: int, *, rows: list | None, matches: int) -> None:
    """Append the generation (unless the fit failed) and leave running: → idle, or again →
    queued with one more task."""
    now = timezone.now()
    with transaction.atomic():
        board = RatingBoard.objects.select_for_update().get(pk=board_id)
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
        if board.state == RefitState.AGAIN:
            board.state = RefitState.QUEUED
            _send_refit(board.pk, since_fit=timedelta(0))
        elif board.state == RefitState.RUNNING:
            board.state = RefitState.IDLE
        # queued: a request found this refit stale and queued another; that one will run.
        board.state_changed_at = now
        board.save()


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


def _set_state(board: RatingBoard, state: RefitState, now) -> None:
    board.state = state
    board.state_changed_at = now
    board.save(update_fields=["state", "state_changed_at"])


def _send_refit(board_id: int, *, since_fit: timedelta | None) -> None:
    """One ``refit_ratings`` task once the current transaction commits, due ``ARENA_REFIT_EVERY``
    seconds after the board's last fit (``since_fit`` ago; None: never fitted, due now)."""
    wait = settings.ARENA_REFIT_EVERY - (1e9 if since_fit is None else since_fit.total_seconds())
    send_after_commit(REFIT_RATINGS, board_id, countdown=max(0.0, round(wait, 3)) or None)
