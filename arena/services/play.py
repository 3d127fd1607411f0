"""Playing a match row on this worker: start it, fetch and unpack its bots, let the referee play
with four sandboxed seats, record the result. Uploaded versions always run confined
(``ARENA_SANDBOX``); built-in versions run trusted."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError

from arena.models import BotVersion, Match, MatchKind, MatchSeat, PackageBlob
from arena.runtime.cache import cached_install, prune_if_due
from arena.runtime.play import play_seats
from arena.runtime.specs import BotSpec
from arena.services.matches import match_after_record, match_record_result, match_start
from arena.services.platform_failures import (
    match_platform_failure,
    match_started_too_often,
)
from engine import AnnouncedClock, Player, rules_from_dict

log = logging.getLogger(__name__)


def match_play(*, match_id: int) -> bool:
    """Play match ``match_id`` if it is queued (or running after a lost worker) and record it.
    True if this call recorded the result; False if there was nothing to do or it failed.
    A failure of the platform's own (any exception but a lost database) plays the match again a
    bounded number of times, then makes it void (``match_platform_failure``).

    A lost database connection is not the match's failure: ``OperationalError`` and
    ``InterfaceError`` propagate (the task retries; the match is still running and is played
    again). A second delivery of a recorded match redoes only the after-commit work (the
    tournament's finish check, the rating refit request), in case its worker died in between."""
    started = match_start(match_id=match_id)
    if started is None:
        match_after_record(match_id=match_id)
        return False
    match = started.match
    if match_started_too_often(match=match):
        return False
    try:
        specs, players = match_bots(seats=started.seats)
        played = play_seats(
            rules_from_dict(match.rules),
            specs,
            seed=match.seed,
            match_id=match.protocol_id,
            players=players,
            clock=match_clock(match=match),
            backend=settings.ARENA_SANDBOX,
        )
        return match_record_result(match=match, played=played)
    except (OperationalError, InterfaceError):
        raise  # the database went away: retried, not the match's fault
    except Exception as error:  # no bot reaches here: a bot's misbehaviour is a SeatFault
        # (recording included: the task's soft time limit may land there, and the match must
        # not stay running, its task acknowledged, until the stuck-match sweep voids it)
        log.exception("match %s could not be played", match_id)
        match_platform_failure(match_id=match_id, error=error)
        return False


def match_clock(*, match: Match) -> AnnouncedClock:
    """The clock ``match`` is played with: the platform's move clock, and fixed-time turns
    (``ARENA_FIXED_TURNS``) for rated matches only: a validation match rates no one."""
    return AnnouncedClock(
        move_ms=settings.ARENA_MOVE_MS,
        fixed_turns=settings.ARENA_FIXED_TURNS and match.kind != MatchKind.VALIDATION,
    )


def match_bots(*, seats: list[MatchSeat]) -> tuple[list[BotSpec], list[Player]]:
    """The four seats' bot specs (uploaded ones unpacked into this host's cache) and players;
    ``seats`` in order with their versions, bots and owners loaded (as ``match_start`` gives)."""
    specs: dict[int, BotSpec] = {}
    for seat in seats:
        version = seat.version
        if version.pk not in specs:
            specs[version.pk] = version_spec(version=version)
    return (
        [specs[s.version.pk] for s in seats],
        [Player(s.version.bot.label, s.version.number) for s in seats],
    )


def version_spec(*, version: BotVersion) -> BotSpec:
    """How to start ``version``: a built-in (system-owned, no blob) in the trusted runner, or its
    package from the database, unpacked once per host, in a confined runner."""
    label = version.label
    if version.builtin:
        if version.blob_id is not None or version.bot.owner.username != settings.ARENA_SYSTEM_USER:
            raise PermissionError(f"{label} claims to be built-in but is not the system's")
        return BotSpec.for_builtin(version.builtin, label)

    def load() -> bytes:
        return bytes(PackageBlob.objects.values_list("data", flat=True).get(pk=version.blob_id))

    installed = cached_install(settings.ARENA_BOT_CACHE, version.blob_id, version.filename, load)
    prune_if_due(settings.ARENA_BOT_CACHE, idle_days=settings.ARENA_KEEP_BOT_CACHE_DAYS)
    return BotSpec.for_upload(installed, label)
