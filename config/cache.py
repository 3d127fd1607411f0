"""The Redis cache backend, with one client object per connection pool (no ``arena`` import).

Django's ``RedisCache`` builds a new ``redis.Redis`` object for every cache call; redis-py's
constructor fills a table of about 170 response callbacks each time: a few tenths of a millisecond
of CPU per call, several calls per API request (throttle counter, cached counts and pages). A
``redis.Redis`` object is safe to share between threads (it takes a connection from its pool for
each command), so one per pool is kept. Everything else is Django's backend.
"""

from __future__ import annotations

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class _ReusingClient(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            if index not in self._pools:
                self._pools[index] = self._pool_class.from_url(
                    self._servers[index], **self._pool_options
                )
            client = self._clients[index] = self._client(connection_pool=self._pools[index])
        return client


class RedisCache(DjangoRedisCache):
    """``django.core.cache.backends.redis.RedisCache`` reusing its ``redis.Redis`` clients."""

    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = _ReusingClient

    def raw_client(self, *, write: bool = True):
        """The ``redis.Redis`` client for native commands (keys through ``make_key``)."""
        return self._cache.get_client(None, write=write)
