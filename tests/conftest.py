"""Shared test configuration. pytest-django loads ``tests.settings`` (``config.settings`` under
names of this run's own: database, queue, Redis keys, scratch folder) for every test, but only tests
that ask for a database get one, so engine and sandbox tests run as before. At the end of the run
this run's Redis keys and scratch folder are deleted (pytest-django drops its database). Under
``CI=true`` a skip for want of bubblewrap or PostgreSQL is a failure (``tests.skip_policy``)."""

from __future__ import annotations

import shutil

from django.conf import settings

from tests.skip_policy import pytest_runtest_makereport  # noqa: F401 (the CI skip policy hook)


def clear_cache() -> None:
    """Empty this run's cache: its own keys only (Redis's ``FLUSHDB``, what ``cache.clear()``
    does, would empty every other run's cache and queues in the same Redis database too)."""
    from django.core.cache import cache

    config = settings.CACHES["default"]
    prefix = config.get("KEY_PREFIX")
    if not config["BACKEND"].endswith("RedisCache") or not prefix:
        cache.clear()
        return
    # The cache's own server (a test may point REDIS_URL elsewhere meanwhile); Django's keys are
    # "<prefix>:<version>:<key>".
    _delete_keys(config["LOCATION"], f"{prefix}:*")


def _delete_keys(url: str, pattern: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        batch = []
        for key in client.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) == 500:
                client.unlink(*batch)
                batch = []
        if batch:
            client.unlink(*batch)
    finally:
        client.close()


def pytest_sessionfinish(session, exitstatus) -> None:
    """This run's Redis keys (cache and broker) and its scratch folder go."""
    if settings.REDIS_URL and settings.REDIS_PREFIX:
        try:
            _delete_keys(settings.REDIS_URL, f"{settings.REDIS_PREFIX}*")
        except Exception as error:  # Redis down (a reliability test may have left it so)
            print(f"\nleft this run's Redis keys ({settings.REDIS_PREFIX}*): {error}")
    shutil.rmtree(settings.ARENA_TEST_RUN_DIR, ignore_errors=True)
