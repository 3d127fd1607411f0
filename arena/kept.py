"""The one cache of the arena: values that never change for their key (a leaderboard
generation's rows, a finished match's rendered replay, a rendered leaderboard page), kept in this
process (the most recently used, up to ``LOCAL_BYTES``) and, for ``shared_seconds``, in Django's
cache (Redis in production, shared by the web processes).

One key scheme: ``arena:<kind>:<identity>``, where the identity names everything the value
depends on (a board's generation and refit time; a match's attempts and finish time; a page's
URL), so an entry is never stale and nothing is ever deleted: entries only age out. A cache that
is down costs a rebuild, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import cache

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Bytes of values kept in each process (a replay is a few KB, a leaderboard page about 12 KB).
LOCAL_BYTES = 16 * 1024 * 1024
_local: OrderedDict[str, tuple[Any, int]] = OrderedDict()
_local_bytes = 0
_lock = threading.Lock()


def kept_key(kind: str, identity: str) -> str:
    """``arena:<kind>:<identity>``; a long identity (a URL) as its digest."""
    if len(identity) > 120:
        identity = hashlib.sha256(identity.encode()).hexdigest()[:40]
    return f"arena:{kind}:{identity}"


def kept(key: str, build: Callable[[], T], *, shared_seconds: int | None = None,
         cost: Callable[[T], int] | None = None) -> T:
    """The value under ``key`` (``kept_key``): from this process, else the shared cache (when
    ``shared_seconds``), else ``build()``, then kept. ``cost``: the value's size in bytes for the
    process's bound (default: its length for bytes, else 64 KiB). ``build`` may raise: nothing
    is kept then."""
    found = _local_get(key)
    if found is not None:
        return found
    value = None
    if shared_seconds is not None:
        try:
            value = cache.get(key)
        except Exception:  # the cache (Redis) is down: build it
            log.warning("cache unavailable; %s built afresh", key, exc_info=True)
    if value is None:
        value = build()
        if shared_seconds is not None:
            with contextlib.suppress(Exception):
                cache.set(key, value, timeout=shared_seconds)
    size = cost(value) if cost else len(value) if isinstance(value, bytes) else 64 * 1024
    _local_put(key, value, size)
    return value


def _local_get(key: str) -> Any:
    with _lock:
        found = _local.get(key)
        if found is None:
            return None
        _local.move_to_end(key)
        return found[0]


def _local_put(key: str, value: Any, size: int) -> None:
    global _local_bytes
    with _lock:
        if key in _local:
            return
        _local[key] = (value, size)
        _local_bytes += size
        while _local_bytes > LOCAL_BYTES and _local:
            _local_bytes -= _local.popitem(last=False)[1][1]


def forget_local() -> None:
    """Empty this process's values (tests)."""
    global _local_bytes
    with _lock:
        _local.clear()
        _local_bytes = 0
