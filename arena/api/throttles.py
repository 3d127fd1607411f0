"""Upload throttling: bot uploads per user, at ``settings.ARENA_UPLOAD_RATE`` (read per request so
tests and operators can change it)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import UserRateThrottle


class UploadThrottle(UserRateThrottle):
    scope = "uploads"

    def get_rate(self) -> str:
        return settings.ARENA_UPLOAD_RATE
