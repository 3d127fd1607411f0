"""The continuous ladder: create one per board, let an operator pause or cap it, and tick it.

A tick (``ladder_tick``, from celery beat every ``ARENA_LADDER_TICK`` seconds) runs in one
transaction holding the ladder's row lock: it fails the queued matches of versions that left the
ladder (retired bot, newer version ready, benched), benches a version that faulted in most of its
recent matches, and, while fewer than the queue depth of matches are queued on the whole platform
(user round-robins go first) and under the hourly cap, adds duplicate pairs chosen by
``arena.rating.pairing`` on a fresh fit of the board. Each pairing's row (keyed by ladder and
pair number) and its two matches commit together and the tasks are sent after the commit, so a
tick that dies writes nothing, two ticks serialize on the lock, and a lost task is resent by the
stuck-match sweep: no pairing is lost or doubled. Must not import the API or ``arena.tasks``.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from arena.errors import ArenaError, checked_integer
from arena.models import (
    Entry,
    Ladder,
    LadderBench,
    LadderPairing,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    Tournament,
    TournamentStatus,
)
from arena.rating import fit_ratings
from arena.rating.board import PROVISIONAL_MATCHES
from arena.rating.pairing import Entrant, History, belief_from_fit, choose_pairings
from arena.rulesets import requested_rules, rules_key
from arena.selectors import ladder as read
from arena.selectors.ratings import rated_results
from arena.services.bots import builtin_bots_ensure
from arena.services.failing import queued_matches_fail
from arena.services.queue import queue_matches

log = logging.getLogger(__name__)

#: A version is benched once it faulted in more than this share of its recent ladder matches...
BENCH_SHARE = 0.5
#: ... counted over at least this many of them.
BENCH_MIN_MATCHES = 6
#: Largest ``max_per_hour`` and ``queue_depth`` an operator may set.
MAX_PER_HOUR = 100_000
MAX_DEPTH = 200


def ladder_create(*, rules: dict) -> Ladder:
    """The ladder of the board of ``rules`` (a preset, or a preset with options), created with
    its never-ending tournament if missing. Idempotent. ``ArenaError`` for bad rules."""
    ruleset = requested_rules(rules)
    key = rules_key(ruleset)
    with transaction.atomic():
        found = Ladder.objects.select_for_update().filter(rules_key=key).first()
        if found is not None:
            return found
        builtin_bots_ensure()
        system = get_user_model().objects.get(username=settings.ARENA_SYSTEM_USER)
        tournament = Tournament.objects.create(
            name=f"Ladder: {key}", created_by=system, preset=ruleset.preset,
            rules=ruleset.to_dict(), rules_key=key, pairs=1, seed=secrets.randbits(31),
        )
        return Ladder.objects.create(
            rules=ruleset.to_dict(), rules_key=key, preset=ruleset.preset, tournament=tournament
        )


def ladder_configure(
    *,
    ladder: Ladder,
    paused: bool | None = None,
    max_per_hour: int | None = None,
    queue_depth: int | None = None,
) -> Ladder:
    """Pause or resume the ladder, cap its matches per hour (0: no cap), set its queue depth (0:
    ``ARENA_LADDER_DEPTH``). Takes effect at the next tick. ``ArenaError`` for bad values."""
    changes = {}
    if paused is not None:
        if not isinstance(paused, bool):
            raise ArenaError("paused must be true or false", field="paused")
        changes["paused"] = paused
    for name, value, top in (
        ("max_per_hour", max_per_hour, MAX_PER_HOUR), ("queue_depth", queue_depth, MAX_DEPTH)
    ):
        if value is None:
            continue
        changes[name] = checked_integer(value, field=name, low=0, high=top)
    with transaction.atomic():
        locked = Ladder.objects.select_for_update().get(pk=ladder.pk)
        for name, value in changes.items():
            setattr(locked, name, value)
        if changes:
            locked.save(update_fields=list(changes))
        if changes.get("paused") is False:  # resumed: its round-robin runs again if cancelled
            Tournament.objects.filter(
                pk=locked.tournament_id, status=TournamentStatus.CANCELLED
            ).update(status=TournamentStatus.RUNNING, finished_at=None)
    return locked


def ladders_tick(*, now: datetime | None = None) -> dict[int, int]:
    """Tick every ladder; returns pairings created per ladder id."""
    if not settings.ARENA_LADDER:
        return {}
    out = {}
    for ladder_id in Ladder.objects.filter(paused=False).values_list("pk", flat=True):
        out[ladder_id] = len(ladder_tick(ladder_id=ladder_id, now=now))
    return out


def ladder_tick(*, ladder_id: int, now: datetime | None = None) -> list[LadderPairing]:
    """One tick of the ladder (see the module's docstring); the pairings created."""
    now = now or timezone.now()
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().filter(pk=ladder_id).first()
        if ladder is None or ladder.paused or not settings.ARENA_LADDER:
            return []
        if ladder.tournament.status == TournamentStatus.CANCELLED:
            return []  # its round-robin was cancelled (the cancel paused it too)
        ladder.ticked_at = now
        ladder.save(update_fields=["ticked_at"])
        entrants = read.ladder_entrants(ladder=ladder)
        _drop_leavers(ladder, {e.version_id for e in entrants}, now)
        count = _room(ladder, now)
        if count <= 0:
            return []  # the usual case while matches play: a few cheap queries
        staying = _bench_faulting(ladder, entrants)
        if len(staying) < len(entrants):  # benched now: their queued matches go now, not a
            _drop_leavers(ladder, {e.version_id for e in staying}, now)  # tick later
        entrants = staying
        if len(entrants) < 2:
            return []
        chosen = _choose(ladder, entrants, count, now)
        return _create(ladder, chosen, now)


def _room(ladder: Ladder, now: datetime) -> int:
    """Duplicate pairs the tick may add: up to the queue depth counting every queued match of
    the platform, and within the hourly cap."""
    depth = ladder.queue_depth or settings.ARENA_LADDER_DEPTH
    room = (depth - read.ladder_queued_matches()) // 2
    cap = ladder.max_per_hour or settings.ARENA_LADDER_MAX_PER_HOUR
    if cap:
        made = read.ladder_matches_since(ladder=ladder, since=now - timedelta(hours=1))
        room = min(room, (cap - made) // 2)
    return room


def _bench_faulting(ladder: Ladder, entrants: list[read.LadderEntrant]) -> list:
    """Bench every entrant that faulted in more than ``BENCH_SHARE`` of its latest ladder matches
    (at least ``BENCH_MIN_MATCHES``), with the reason; the others stay."""
    record = read.ladder_fault_record(ladder=ladder, version_ids=[e.version_id for e in entrants])
    staying = []
    for entrant in entrants:
        played, faulted, last = record.get(entrant.version_id, (0, 0, ""))
        if played >= BENCH_MIN_MATCHES and faulted > BENCH_SHARE * played:
            reason = (
                f"faulted in {faulted} of its last {played} ladder matches (latest: "
                f"{last[:300]}); the ladder stops scheduling it until a new version is uploaded"
            )
            LadderBench.objects.get_or_create(
                ladder=ladder, version_id=entrant.version_id, defaults={"reason": reason}
            )
            log.warning("ladder %s benched version %s: %s", ladder.rules_key,
                        entrant.version_id, reason)
        else:
            staying.append(entrant)
    return staying


def _drop_leavers(ladder: Ladder, staying: set[int], now: datetime) -> None:
    """Fail the queued ladder matches with a seat held by a version no longer on the ladder
    (its bot retired, a newer version ready, or benched): workers skip them."""
    leaving = (
        MatchSeat.objects.filter(
            match__tournament_id=ladder.tournament_id, match__status=MatchStatus.QUEUED
        )
        .exclude(version_id__in=staying)
        .values_list("match_id", flat=True)
        .distinct()
    )
    queued_matches_fail(
        matches=Match.objects.filter(pk__in=list(leaving)),
        failure="the ladder dropped it: a version left the ladder (bot retired, newer version, "
        "or benched) before it was played",
        now=now, preset=ladder.tournament.preset, rules_key=ladder.rules_key,
    )


def _choose(
    ladder: Ladder, entrants: list[read.LadderEntrant], count: int, now: datetime
) -> list:
    """The pairings to add: the board refitted now, in-flight pairings, recent history, waits."""
    ids = [e.version_id for e in entrants]
    # Built-ins are the platform's reference points, not a competitor: each its own "owner".
    owner = {
        e.version_id: ("builtin", e.bot_id) if e.builtin else e.owner_id for e in entrants
    }
    fit = fit_ratings(rated_results(rules_key=ladder.rules_key))
    belief = belief_from_fit(fit, ids)
    last = read.ladder_last_paired(ladder=ladder, version_ids=ids)
    pool = []
    for entrant in entrants:
        v = entrant.version_id
        if v in fit.ids:
            k = fit.index(v)
            # Being placed until its placement matches are played; a placed all-win or
            # all-loss record stays provisional on the board but pulls no matches (runaway).
            provisional = bool(fit.games[k] < PROVISIONAL_MATCHES)
            runaway = bool(fit.perfect[k])
        else:
            provisional, runaway = True, False
        since = last.get(v) or entrant.ready_at
        waited = (now - since).total_seconds() if since else None
        pool.append(Entrant(v, owner[v], provisional, runaway, waited))
    in_flight = [(p.version_a_id, p.version_b_id) for p in read.ladder_open_pairings(ladder=ladder)]
    history = History()
    for p in read.ladder_recent_pairings(ladder=ladder):
        a, b = p.version_a_id, p.version_b_id
        history.add(a, b, owner.get(a, ("gone", a)), owner.get(b, ("gone", b)))
    return choose_pairings(
        belief, pool, count, in_flight=in_flight, history=history,
        max_wait=settings.ARENA_LADDER_MAX_WAIT,
    )


def _create(ladder: Ladder, chosen: list, now: datetime) -> list[LadderPairing]:
    """The pairing rows and their matches (A on seats 0 and 2, then B there; one random seed
    per pair, unguessable before the matches exist), the versions entered in the ladder's
    tournament, the tasks sent after commit."""
    if not chosen:
        return []
    tournament = ladder.tournament
    first = ladder.next_pair
    pairings = LadderPairing.objects.bulk_create(
        LadderPairing(
            ladder=ladder, pair=first + k, version_a_id=p.a, version_b_id=p.b, reason=p.reason
        )
        for k, p in enumerate(chosen)
    )
    ladder.next_pair = first + len(chosen)
    ladder.save(update_fields=["next_pair"])
    plan = [(p, swapped) for p in pairings for swapped in (False, True)]
    # A fresh random seed per pair, never the tournament's seed + pair: that base and the next
    # pair number are public, and a version uploaded with them built in would know every hand.
    seeds = {p.pair: secrets.randbits(31) for p in pairings}
    matches = Match.objects.bulk_create(
        Match(
            kind=MatchKind.TOURNAMENT, tournament=tournament, pair=p.pair, swapped=swapped,
            seed=seeds[p.pair], rules=ladder.rules, rules_key=ladder.rules_key,
        )
        for p, swapped in plan
    )
    seats = []
    for match, (p, swapped) in zip(matches, plan, strict=True):
        even, odd = p.version_a_id, p.version_b_id
        if swapped:
            even, odd = odd, even
        seats += [
            MatchSeat(match=match, seat=s, version_id=even if s % 2 == 0 else odd)
            for s in range(4)
        ]
    MatchSeat.objects.bulk_create(seats)
    versions = {v for p in pairings for v in (p.version_a_id, p.version_b_id)}
    Entry.objects.bulk_create(
        [Entry(tournament=tournament, version_id=v) for v in sorted(versions)],
        ignore_conflicts=True,
    )
    Tournament.objects.filter(pk=tournament.pk).exclude(status=TournamentStatus.RUNNING).update(
        status=TournamentStatus.RUNNING, finished_at=None
    )
    queue_matches(match_ids=[m.pk for m in matches])
    return pairings
