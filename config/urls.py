"""URL wiring: the pages at /, the API under /api/, its schema and docs, the admin, a health
check."""

from django.conf import settings
from django.contrib import admin
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path
from django.views import defaults
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerView,
)


def health(request: HttpRequest) -> JsonResponse:
    """200 ``{"ok": true, "database": "ok", "redis": "ok"}`` when the database answers (and Redis,
    when it is the broker); 503 naming what does not, without details (they go to the log)."""
    checks = {"database": "ok"}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        checks["database"] = "unavailable"
    if settings.REDIS_URL:
        import redis

        try:
            redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2,
                                 socket_connect_timeout=2).ping()
            checks["redis"] = "ok"
        except (redis.RedisError, OSError):
            checks["redis"] = "unavailable"
    ok = all(value == "ok" for value in checks.values())
    return JsonResponse({"ok": ok, **checks}, status=200 if ok else 503)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """JSON under /api/ (the schema says every API error is JSON), the usual page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """JSON under /api/, the usual page elsewhere; never the error's details (DEBUG is off)."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Server error: it has been logged. Try again later."},
                            status=500)
    return defaults.server_error(request)


handler404 = not_found
handler500 = server_error


urlpatterns = [
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/redoc/", SpectacularRedocView.as_view(
        url_name="schema", template_name="arena/api/redoc.html"), name="redoc"),
    path("api/", include("arena.api.urls")),
    path("admin/", admin.site.urls),
    path("health/", health, name="health"),
    path("", include("arena.web.urls")),
]
