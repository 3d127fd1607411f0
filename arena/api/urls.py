"""The API's routes, mounted at ``/api/``."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from arena.api import ladder, views

router = DefaultRouter()
router.register("bots", views.BotViewSet, basename="bot")
router.register("versions", views.VersionViewSet, basename="version")
router.register("tournaments", views.TournamentViewSet, basename="tournament")
router.register("matches", views.MatchViewSet, basename="match")

urlpatterns = [
    path("token/", views.TokenView.as_view(), name="api-token"),
    path("leaderboard/", views.LeaderboardView.as_view(), name="leaderboard"),
    path("ladders/", ladder.LadderListView.as_view(), name="ladders"),
    path("ladders/<int:pk>/", ladder.LadderDetailView.as_view(), name="ladder"),
    path("", include(router.urls)),
]
