"""API throttling: every request per client (``ApiRateThrottle``), and bot uploads per user at
``settings.ARENA_UPLOAD_RATE`` (``UploadThrottle``: the quota the upload form shares)."""

from __future__ import annotations

import logging

from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from arena.services.quotas import (
    QuotaExceeded,
    client_address,
    quota_login,
    quota_upload,
    window_hit,
)

log = logging.getLogger(__name__)


def _fail_open(allow, request, view) -> bool:
    """The throttle's answer, or yes when its counters (the cache: Redis) are unreachable: reads
    keep working while Redis restarts."""
    try:
        return allow(request, view)
    except Exception:
        log.warning("throttle counters unavailable; request allowed", exc_info=True)
        return True


class QuotaThrottle(BaseThrottle):
    """A throttle that counts the request against one of the quotas the pages share
    (``count``); past it, 429 with the quota's ``Retry-After``."""

    def count(self, request) -> None:
        raise NotImplementedError

    def allow_request(self, request, view) -> bool:
        try:
            self.count(request)
        except QuotaExceeded as refused:
            self._wait = refused.retry_after
            return False
        return True

    def wait(self) -> float:
        return float(self._wait)


class UploadThrottle(QuotaThrottle):
    """Bot uploads through the API count against the same per-user quota as the upload form
    (``quota_upload``: ``ARENA_UPLOAD_RATE``, staff exempt)."""

    def count(self, request) -> None:
        quota_upload(user=request.user)


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


class LoginThrottle(QuotaThrottle):
    """Sign-in attempts through the API count against the same per-address quota as the login
    page (``quota_login``: ``ARENA_LOGIN_RATE``)."""

    def count(self, request) -> None:
        quota_login(address=client_address(request.META))
