"""Rendered JSON bodies of answers that do not change (a finished match's replay, a page of a
leaderboard generation), kept by ``arena.kept`` (this process, and the shared cache when asked)
under ``arena:body:<identity>``: the identity must name everything the body depends on.

A cached body is the same bytes DRF renders: it is rendered by the request's own renderer, and
only for plain JSON (no ``indent`` asked for in the Accept header; the browsable API renders
afresh). It carries an ``ETag``; a request whose ``If-None-Match`` names it gets 304 and no body.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.http import HttpResponse, HttpResponseNotModified
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from arena.kept import forget_local, kept, kept_key

__all__ = ["cached_json", "forget_local"]


def cached_json(
    request: Request, view, *, key: str, build: Callable[[], Any],
    shared_seconds: int | None = None,
) -> HttpResponse | Response:
    """The body ``build()`` returns, rendered as DRF would, kept under ``key`` (plus the media
    type): in this process, and for ``shared_seconds`` in the shared cache when given. ``build``
    may raise (404): nothing is kept. Other renderings than plain JSON are built afresh."""
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
    body = kept(
        kept_key("body", digest),
        lambda: renderer.render(build(), media_type, view.get_renderer_context()),
        shared_seconds=shared_seconds,
    )
    response = HttpResponse(body, content_type=renderer.media_type)
    response["ETag"] = etag
    return response
