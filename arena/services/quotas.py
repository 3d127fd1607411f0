"""Quotas against abuse of the service, the same for the pages and the API: bot uploads per user,
matches queued per user, signups per client address. Staff are exempt from the per-user ones.

Invariant: each quota is checked by the one function here, whichever door the request came in
by; a refusal is ``QuotaExceeded`` (an ``ArenaError``) that says what the limit is, where the user
stands and when to try again (``retry_after`` seconds), and nothing was stored. Counters live in
the cache (Redis in production: one round trip each); while the cache is unreachable the upload
and signup quotas let requests through (logged), the queued-match quota (a database count) never
does.
"""

from __future__ import annotations

import logging
import math
import time
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from arena.errors import ArenaError
from arena.models import Match, MatchKind, MatchStatus, Tournament
from arena.services.tournaments import MAX_PAIRS, MAX_VERSIONS, tournament_create

log = logging.getLogger(__name__)

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class QuotaExceeded(ArenaError):
    """A quota refused the request; ``retry_after`` is the seconds until it may pass."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = max(1, int(retry_after))


def parse_rate(rate: str) -> tuple[int, int]:
    """``"60/hour"`` → (60, 3600): requests and the window's seconds (DRF's rate syntax)."""
    count, period = rate.split("/")
    return int(count), _PERIODS[period.strip()[0].lower()]


_WINDOW_HIT = """
local count = redis.call('INCR', KEYS[1])
local left = redis.call('TTL', KEYS[1])
if left < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {count, left}
"""


def window_hit(key: str, seconds: int) -> tuple[int, int]:
    """Count one request in the window at ``key`` (opened for ``seconds`` by its first request):
    the count so far and the seconds the window has left."""
    raw_client = getattr(cache, "raw_client", None)
    if raw_client is not None:  # Redis (``config.cache.RedisCache``): one round trip
        script = raw_client().register_script(_WINDOW_HIT)  # EVALSHA (loaded once per server)
        count, left = script(keys=[cache.make_and_validate_key(key)], args=[seconds])
        return int(count), int(left)
    # Any other cache (local memory): the counter and the window's end time under one key.
    now = time.monotonic()
    count, ends = cache.get(key) or (0, now + seconds)
    if ends <= now:
        count, ends = 0, now + seconds
    cache.set(key, (count + 1, ends), timeout=max(1, math.ceil(ends - now)))
    return count + 1, max(1, math.ceil(ends - now))


def _counted(key: str, rate: str, what: str) -> None:
    """One more in the window of ``rate`` at ``key``; ``QuotaExceeded`` past it."""
    limit, seconds = parse_rate(rate)
    try:
        count, left = window_hit(key, seconds)
    except Exception:
        log.warning("quota counters unavailable; %s allowed", what, exc_info=True)
        return
    if count > limit:
        raise QuotaExceeded(
            f"at most {limit} {what} per {_period_words(seconds)}; try again in {left} s",
            retry_after=left,
        )


def _period_words(seconds: int) -> str:
    return {1: "second", 60: "minute", 3600: "hour", 86400: "day"}.get(seconds, f"{seconds} s")


def quota_upload(*, user: AbstractBaseUser) -> None:
    """Count one bot upload (new bot or new version) of ``user`` against ``ARENA_UPLOAD_RATE``,
    shared by the upload form and the API. Staff are exempt."""
    if user.is_staff:
        return
    _counted(f"quota:uploads:{user.pk}", settings.ARENA_UPLOAD_RATE, "bot uploads")


def quota_signup(*, address: str) -> None:
    """Count one signup from client ``address`` against ``ARENA_SIGNUP_RATE``."""
    _counted(f"quota:signups:{address}", settings.ARENA_SIGNUP_RATE, "signups from one address")


def quota_login(*, address: str) -> None:
    """Count one sign-in attempt from client ``address`` (the login page and the API's token
    view together) against ``ARENA_LOGIN_RATE``."""
    _counted(f"quota:logins:{address}", settings.ARENA_LOGIN_RATE,
             "sign-in attempts from one address")


def queued_matches_of(*, user: AbstractBaseUser) -> int:
    """Matches of ``user``'s round-robins and of their own bots' validations that are queued or
    running."""
    waiting = Match.objects.filter(status__in=[MatchStatus.QUEUED, MatchStatus.RUNNING])
    tournaments = waiting.filter(kind=MatchKind.TOURNAMENT, tournament__created_by=user).count()
    validations = waiting.filter(
        kind=MatchKind.VALIDATION, seats__seat=0, seats__version__bot__owner=user
    ).count()
    return tournaments + validations


def round_robin_size(*, versions: int, pairs: int) -> int:
    """Matches in a round-robin of ``versions`` versions and ``pairs`` duplicate pairs."""
    return versions * (versions - 1) * pairs


def quota_queued_matches(*, user: AbstractBaseUser, adding: int) -> None:
    """Refuse ``adding`` more matches if ``user`` would then have more than
    ``ARENA_MAX_QUEUED_MATCHES`` queued or running; the refusal says how many are queued and
    estimates when enough will have been played (from the last ten minutes' pace). Staff are
    exempt. ``round_robin_create`` checks it and writes in one transaction holding the user's row
    lock, so that two requests at once never pass the cap together."""
    if user.is_staff:
        return
    cap = settings.ARENA_MAX_QUEUED_MATCHES
    queued = queued_matches_of(user=user)
    if queued + adding <= cap:
        return
    over = queued + adding - cap
    since = timezone.now() - timedelta(minutes=10)
    pace = Match.objects.filter(finished_at__gte=since).count() / 600  # matches per second
    wait = min(3600, max(60, math.ceil(over / pace))) if pace > 0 else 600
    raise QuotaExceeded(
        f"you have {queued} match(es) queued or running and this would add {adding}; at most "
        f"{cap} may wait at once: try again in about {math.ceil(wait / 60)} minute(s), when some "
        "have been played, or schedule fewer versions or pairs",
        retry_after=wait,
    )


def quota_round_robin(*, user: AbstractBaseUser, versions: list, pairs: int) -> None:
    """``quota_queued_matches`` for a round-robin of these versions and pairs; input the
    round-robin itself refuses (too few versions, pairs out of range) is left to it."""
    count = len(set(versions))
    if 2 <= count <= MAX_VERSIONS and isinstance(pairs, int) and 1 <= pairs <= MAX_PAIRS:
        quota_queued_matches(user=user, adding=round_robin_size(versions=count, pairs=pairs))


def round_robin_create(
    *, created_by: AbstractBaseUser, name: str, rules: dict, version_ids: list, pairs: int,
) -> Tournament:
    """``tournament_create`` within ``created_by``'s queued-matches quota: the check and the
    writes in one transaction that holds the user's row lock, so two requests of one user at
    once take turns (on PostgreSQL) and the second counts the first's matches. Raises
    ``QuotaExceeded`` or ``ArenaError``; the tasks are sent after the commit."""
    with transaction.atomic():
        list(get_user_model().objects.select_for_update().filter(pk=created_by.pk))
        quota_round_robin(user=created_by, versions=version_ids, pairs=pairs)
        return tournament_create(
            created_by=created_by, name=name, rules=rules, version_ids=version_ids, pairs=pairs,
        )


def client_address(meta: dict) -> str:
    """The client's address: ``REMOTE_ADDR``, or behind ``NUM_PROXIES`` trusted proxies the
    matching entry of ``X-Forwarded-For`` (as the API's throttles read it)."""
    remote = meta.get("REMOTE_ADDR", "")
    proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES")
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return remote or "unknown"
