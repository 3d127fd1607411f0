"""Upload throttling: bot uploads per user, at ``settings.ARENA_UPLOAD_RATE`` (read per request so
tests and operators can change it)."""

from __future__ import annotations

import logging

from django.conf import settings
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
    client address otherwise (rate ``anon``, ``ARENA_API_ANON_RATE``). One counter per request
    (DRF's separate anonymous and user throttles read and write two)."""

    scope = "anon"

    def allow_request(self, request, view) -> bool:
        self.scope = "user" if request.user and request.user.is_authenticated else "anon"
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return _fail_open(super().allow_request, request, view)

    def get_cache_key(self, request, view) -> str:
        ident = request.user.pk if self.scope == "user" else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}
