"""Middleware of the platform itself (no ``arena`` import)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from sandbox.package import MAX_PACKAGE_BYTES


class RequestSizeLimitMiddleware:
    """413 for a request whose declared body is over ``ARENA_MAX_REQUEST_BYTES``, before any of it
    is read: Django would otherwise stream a multipart file of any size to a temporary file before
    a view could refuse it. (A body without a Content-Length is read as empty by Django's WSGI
    request, so chunked bodies cannot slip past.) First in the middleware list."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse({"detail": "the Content-Length header is not a number"}, status=400)
        limit = settings.ARENA_MAX_REQUEST_BYTES
        if length > limit:
            response = JsonResponse(
                {"detail": f"the request is {length:,} bytes; requests may be at most {limit:,} "
                           f"bytes (a bot package at most {MAX_PACKAGE_BYTES:,})"},
                status=413,
            )
            if not request.META.get("SERVER_SOFTWARE", "").startswith("WSGIServer"):
                # the unread body must not be taken for the next request; wsgiref (runserver)
                # refuses hop-by-hop headers from the application and closes by itself
                response["Connection"] = "close"
            return response
        return self.get_response(request)


class NulInQueryMiddleware:
    """400 for a query string holding a NUL character (``%00``), which no page or filter takes
    and PostgreSQL refuses in text (a query filtered by it was a 500)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if any("\x00" in key or "\x00" in value for key, values in request.GET.lists()
               for value in values):
            return JsonResponse({"detail": "the query string holds a NUL character (%00)"},
                                status=400)
        return self.get_response(request)


#: The pages' Content-Security-Policy: scripts, styles sheets, images and requests from this
#: site only, no inline script (a name or a bot's text that ever reached the HTML unescaped
#: could not run), no plugins, no framing, forms posted here only. Inline styles stay allowed
#: (``style=`` attributes, htmx's indicator style).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
#: Pages of third-party code that start with an inline script: the API's Swagger UI and ReDoc
#: (drf-spectacular) and the admin. No user's text is shown there.
CSP_EXEMPT_PREFIXES = ("/api/docs/", "/api/redoc/", "/admin/")


class ContentSecurityPolicyMiddleware:
    """``Content-Security-Policy`` on every HTML page of the site's own (``CSP_EXEMPT_PREFIXES``
    apart), unless the view set one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (response.get("Content-Type", "").startswith("text/html")
                and not request.path.startswith(CSP_EXEMPT_PREFIXES)):
            response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response
