"""Services for round-robins: create one (every match up front, in one transaction, then one task
each) and its status transitions running → finished → running."""

from __future__ import annotations

import itertools
import secrets
import unicodedata
from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from arena.errors import ArenaError, checked_integer
from arena.models import (
    BotVersion,
    Entry,
    Ladder,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    Schedule,
    Tournament,
    TournamentStatus,
    VersionStatus,
)
from arena.rulesets import requested_rules, rules_key
from arena.services.failing import queued_matches_fail
from arena.services.queue import queue_matches

MAX_VERSIONS = 64
MAX_PAIRS = 100
MAX_MATCHES = 20_000


def round_robin_name(name: str | None) -> str:
    """``name`` stripped, or ``ArenaError``: 1-120 characters, none of them a control or
    formatting character (a right-to-left override reverses the rest of the line it is shown
    in: the seed, score and reason on every match page of the round-robin)."""
    name = (name or "").strip()
    if not name or len(name) > 120:
        raise ArenaError("give the round-robin a name of 1-120 characters", field="name")
    if any(unicodedata.category(char) in ("Cc", "Cf") for char in name):
        raise ArenaError(
            "a round-robin name may not hold control or formatting characters", field="name")
    return name


def tournament_create(
    *,
    created_by: AbstractBaseUser,
    name: str,
    rules: dict,
    version_ids: Sequence[int],
    pairs: int,
    seed: int | None = None,
    schedule: Schedule | None = None,
) -> Tournament:
    """A running round-robin: for each of ``pairs`` duplicate pairs and each pairing of versions A,
    B, two matches with the same seed (A on seats 0 and 2, then B there). Versions are pinned now;
    all rows are created in one transaction and the tasks queued after it commits.

    Seeds: pair ``k`` uses ``seed + k`` for every pairing. ``ArenaError`` for bad input.
    """
    name = round_robin_name(name)
    ruleset = requested_rules(rules)
    checked_integer(pairs, field="pairs", low=1, high=MAX_PAIRS)
    versions = _ready_versions(version_ids)
    total = len(versions) * (len(versions) - 1) * pairs
    if total > MAX_MATCHES:
        raise ArenaError(
            f"that is {total} matches; at most {MAX_MATCHES} per round-robin: fewer versions or "
            "fewer pairs",
            field="pairs",
        )
    if seed is None:
        seed = secrets.randbits(31)
    key = rules_key(ruleset)
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name, created_by=created_by, preset=ruleset.preset, rules=ruleset.to_dict(),
            rules_key=key, pairs=pairs, seed=seed, schedule=schedule,
        )
        Entry.objects.bulk_create(Entry(tournament=tournament, version=v) for v in versions)
        plan = [
            (k, swapped, a, b)
            for k in range(pairs)
            for a, b in itertools.combinations(versions, 2)
            for swapped in (False, True)
        ]
        matches = Match.objects.bulk_create(
            Match(
                kind=MatchKind.TOURNAMENT, tournament=tournament, pair=k, swapped=swapped,
                seed=seed + k, rules=tournament.rules, rules_key=key,
            )
            for k, swapped, _, _ in plan
        )
        seats = []
        for match, (_, swapped, a, b) in zip(matches, plan, strict=True):
            first, second = (b, a) if swapped else (a, b)
            seats += [
                MatchSeat(match=match, seat=s, version=first if s % 2 == 0 else second)
                for s in range(4)
            ]
        MatchSeat.objects.bulk_create(seats)
        queue_matches(match_ids=[m.pk for m in matches])
    return tournament


def tournament_lock(*, tournament_id: int | None) -> None:
    """Lock the round-robin's row until the transaction ends (no-op for ``None``). Every change
    of a round-robin's status, and every re-queue of one of its matches, takes this lock first
    (locks go ladder, round-robin, matches), so that a statement run after it sees the other's
    committed matches: a re-queue and a cancel, or a re-queue and the finish check, never
    interleave."""
    if tournament_id is not None:
        list(Tournament.objects.select_for_update().filter(pk=tournament_id).values_list("pk"))


def match_tournament_lock(*, match_id: int) -> None:
    """``tournament_lock`` on the round-robin of match ``match_id`` (none for a validation
    match): one query, locking the round-robin's row alone, not the match's (that one comes
    after, in the order above)."""
    list(Tournament.objects.select_for_update(of=("self",)).filter(matches=match_id)
         .values_list("pk"))


def tournament_finish_if_done(*, tournament_id: int) -> bool:
    """running → finished once no match is queued or running; True if it finished now. The
    round-robin of a ladder never finishes: it is idle between two ticks, not done.

    A conditional UPDATE under the round-robin's lock (``tournament_lock``). Call it after the
    transaction that finished a match has committed (``on_commit``): of two last matches
    finishing together, the later check sees both done.
    """
    open_matches = Match.objects.filter(
        tournament_id=OuterRef("pk"), status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING]
    )
    with transaction.atomic():
        tournament_lock(tournament_id=tournament_id)
        updated = (
            Tournament.objects.filter(pk=tournament_id, status=TournamentStatus.RUNNING)
            .exclude(Exists(open_matches))
            .exclude(ladder__isnull=False)
            .update(status=TournamentStatus.FINISHED, finished_at=timezone.now())
        )
    return bool(updated)


def tournament_cancel(*, tournament: Tournament, by: AbstractBaseUser) -> bool:
    """running → cancelled, by its creator or staff (the caller checks who): every queued match
    fails with the reason, so workers skip it; matches already running finish and are recorded.
    The round-robin of a ladder is cancelled by pausing its ladder too (else the next tick would
    queue new matches in it); resuming the ladder reopens it. False if it was not running
    (finished or cancelled already)."""
    now = timezone.now()
    with transaction.atomic():
        # its ladder, then itself, then its matches: the order of a ladder's tick and resume
        list(Ladder.objects.select_for_update().filter(tournament_id=tournament.pk).values("pk"))
        tournament_lock(tournament_id=tournament.pk)  # a re-queue in flight lands first
        cancelled = Tournament.objects.filter(
            pk=tournament.pk, status=TournamentStatus.RUNNING
        ).update(status=TournamentStatus.CANCELLED, finished_at=now)
        if not cancelled:
            return False
        Ladder.objects.filter(tournament_id=tournament.pk).update(paused=True)
        queued_matches_fail(
            matches=Match.objects.filter(tournament_id=tournament.pk),
            failure=f"cancelled by {by.get_username()} before it was played",
            now=now, preset=tournament.preset, rules_key=tournament.rules_key,
        )
    return True


def tournament_reopen(*, tournament_id: int) -> bool:
    """finished → running, when one of its matches is re-queued (the caller holds
    ``tournament_lock``). True if it changed."""
    updated = Tournament.objects.filter(
        pk=tournament_id, status=TournamentStatus.FINISHED
    ).update(status=TournamentStatus.RUNNING, finished_at=None)
    return bool(updated)


def _ready_versions(version_ids: Sequence[int]) -> list[BotVersion]:
    try:
        ids = [int(v) for v in version_ids]
    except (TypeError, ValueError):
        raise ArenaError("versions must be a list of version ids", field="versions") from None
    if len(set(ids)) != len(ids):
        raise ArenaError("a version may appear only once", field="versions")
    if not 2 <= len(ids) <= MAX_VERSIONS:
        raise ArenaError(f"a round-robin needs 2 to {MAX_VERSIONS} versions", field="versions")
    found = {v.pk: v for v in BotVersion.objects.select_related("bot__owner").filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise ArenaError(f"no such versions: {missing}", field="versions")
    not_ready = [found[i] for i in ids if found[i].status != VersionStatus.READY]
    if not_ready:
        shown = ", ".join(f"{v.pk} ({v.label}: {v.status})" for v in not_ready)
        raise ArenaError(
            f"only validated (ready) versions can play; not ready: {shown}", field="versions"
        )
    retired = [found[i] for i in ids if found[i].bot.retired]
    if retired:
        shown = ", ".join(f"{v.pk} ({v.label})" for v in retired)
        raise ArenaError(f"these bots are retired: {shown}", field="versions")
    return [found[i] for i in ids]
