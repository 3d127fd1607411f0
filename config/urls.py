"""URL wiring: the pages at /, the API under /api/, its schema and docs, the admin, a health
check."""

from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView


def health(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


urlpatterns = [
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/", include("arena.api.urls")),
    path("admin/", admin.site.urls),
    path("health/", health, name="health"),
    path("", include("arena.web.urls")),
]
