"""API throttling: every request per client (``ApiRateThrottle``), and bot uploads per user at
``settings.ARENA_UPLOAD_RATE`` (read per request so tests and operators can change it)."""

from __future__ import annotations

import logging
import math
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import SimpleRateThrottle, UserRateThrottle

log = logging.getLogger(__name__)


def _fail_open(allow, request, view) -> bool:
    """The throttle's answer, or yes when its counters (the cache: Redis) are unreachable: reads
    keep working while Redis restarts."""
    try:
        return allow(request, view)
    except Exception:
        log.warning("throttle counters unavailable; request allowed", exc_info=True)
        return True


class UploadThrottle(UserRateThrottle):
    scope = "uploads"

    def allow_request(self, request, view) -> bool:
        return _fail_open(super().allow_request, request, view)

    def get_rate(self) -> str:
        return settings.ARENA_UPLOAD_RATE


class ApiRateThrottle(SimpleRateThrottle):
    """Every API request: per user when signed in (rate ``user``, ``ARENA_API_USER_RATE``), per
    client address otherwise (rate ``anon``, ``ARENA_API_ANON_RATE``).

    One counter per client: a window opens at the client's first request and lasts the rate's
    period (a minute for ``600/minute``); the first N requests in it pass, the rest get 429 with
    ``Retry-After`` the seconds left. One Redis command per request (a script: increment, set the
    window's expiry if new, read what is left of it). DRF's ``SimpleRateThrottle`` reads and writes
    the list of every request's time instead: thousands of entries for a busy client, and
    concurrent requests overwrite each other's entries."""

    scope = "anon"
    #: Not DRF's key: a DRF throttle's list of times is no counter (both at once, as during a
    #: rolling upgrade, would each fail on the other's value).
    cache_format = "throttle:window:%(scope)s:%(ident)s"

    def allow_request(self, request, view) -> bool:
        self.scope = "user" if request.user and request.user.is_authenticated else "anon"
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        return _fail_open(self._count, request, view)

    def _count(self, request, view) -> bool:
        count, self.left = window_hit(self.key, self.duration)
        return count <= self.num_requests

    def wait(self) -> float:
        return max(float(self.left), 1.0)

    def get_cache_key(self, request, view) -> str:
        ident = request.user.pk if self.scope == "user" else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


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

