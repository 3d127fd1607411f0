"""Rendered JSON bodies of answers that do not change, kept by key: a finished match's replay,
a page of a leaderboard generation. The key must name everything the body depends on (the match
and when it finished; the board's generation and the page's full URL), so an entry is never stale
and nothing needs deleting; entries only age out.

Kept in this process (the most recently used, up to ``LOCAL_BYTES``) and, when asked, in
Django's cache too (Redis in production, shared by the web processes). A cached body is the same
bytes DRF renders: it is rendered by the request's own renderer, and only for plain JSON (no
``indent`` asked for in the Accept header; the browsable API renders afresh). It carries an
``ETag``; a request whose ``If-None-Match`` names it gets 304 and no body.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.http import HttpResponse, HttpResponseNotModified
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

log = logging.getLogger(__name__)

#: Bytes of bodies kept in each process (a replay is a few KB, a leaderboard page about 12 KB).
LOCAL_BYTES = 16 * 1024 * 1024
_local: OrderedDict[str, bytes] = OrderedDict()
_local_bytes = 0
_lock = threading.Lock()


def cached_json(
    request: Request, view, *, key: str, build: Callable[[], Any],
    shared_seconds: int | None = None,
) -> HttpResponse | Response:
    """The body ``build()`` returns, rendered as DRF would, kept under ``key``: in this process,
    and for ``shared_seconds`` in Django's cache when given. ``build`` may raise (404): nothing
    is kept. Other renderings than plain JSON are built afresh each time."""
    renderer = getattr(request, "accepted_renderer", None)
    media_type = getattr(request, "accepted_media_type", "") or ""
    if type(renderer) is not JSONRenderer or "indent" in media_type:
        return Response(build())
    digest = hashlib.sha256(f"{key}|{media_type}".encode()).hexdigest()[:40]
    etag = f'"{digest}"'
    asked = request.headers.get("If-None-Match", "")
    if etag in asked or asked.strip() == "*":
        response = HttpResponseNotModified()
        response["ETag"] = etag
        return response
    body = _local_get(digest)
    if body is None:
        shared_key = f"arena:body:{digest}"
        if shared_seconds is not None:
            try:
                body = cache.get(shared_key)
            except Exception:  # the cache (Redis) is down: build it
                log.warning("cache unavailable; response built afresh", exc_info=True)
        if body is None:
            body = renderer.render(build(), media_type, view.get_renderer_context())
            if shared_seconds is not None:
                with contextlib.suppress(Exception):
                    cache.set(shared_key, body, timeout=shared_seconds)
        _local_put(digest, body)
    response = HttpResponse(body, content_type=renderer.media_type)
    response["ETag"] = etag
    return response


def _local_get(digest: str) -> bytes | None:
    with _lock:
        body = _local.get(digest)
        if body is not None:
            _local.move_to_end(digest)
        return body


def _local_put(digest: str, body: bytes) -> None:
    global _local_bytes
    with _lock:
        if digest in _local:
            return
        _local[digest] = body
        _local_bytes += len(body)
        while _local_bytes > LOCAL_BYTES and _local:
            _local_bytes -= len(_local.popitem(last=False)[1])


def forget_local() -> None:
    """Empty this process's bodies (tests)."""
    global _local_bytes
    with _lock:
        _local.clear()
        _local_bytes = 0
