"""The pages' routes, mounted at ``/`` (namespace ``web``)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from arena.web.views import accounts, boards, bots, docs, matches, tournaments

app_name = "web"

urlpatterns = [
    path("", boards.leaderboard_page, name="leaderboard"),
    path("bots/", bots.bots_page, name="bots"),
    path("bots/new/", bots.bot_new, name="bot-new"),
    path("bots/<int:pk>/", bots.bot_page, name="bot"),
    path("bots/<int:pk>/versions/", bots.version_new, name="version-new"),
    path("bots/<int:pk>/versions/live/", bots.bot_versions, name="bot-versions"),
    path("tournaments/", tournaments.tournaments_page, name="tournaments"),
    path("tournaments/new/", tournaments.tournament_new, name="tournament-new"),
    path("tournaments/<int:pk>/", tournaments.tournament_page, name="tournament"),
    path("tournaments/<int:pk>/live/", tournaments.tournament_live, name="tournament-live"),
    path("tournaments/<int:pk>/cancel/", tournaments.tournament_cancel_view,
         name="tournament-cancel"),
    path("matches/<int:pk>/", matches.match_page, name="match"),
    path("docs/<slug:slug>/", docs.document_page, name="document"),
    path("signup/", accounts.signup, name="signup"),
    path("login/", accounts.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/token/", accounts.api_token, name="token"),
]
