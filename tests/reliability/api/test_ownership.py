"""Nobody let in where they don't belong: another user cannot add versions to, retire, or read the
logs of someone else's bot, nor cancel someone else's round-robin; anonymous users only read
(every unsafe method of every API route); session-authenticated writes and the site's forms need a
CSRF token; the production settings pass ``manage.py check --deploy``."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from arena.models import Match, MatchStatus, Tournament
from arena.services.bots import builtin_bots_ensure
from tests.arena.conftest import CRASH_BOT, RANDOM_BOT, uploaded

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def alices_bot(alice, upload) -> dict:
    """Alice's bot whose validation failed (so it has a fault and a stderr log)."""
    body = upload(alice, "crashy", CRASH_BOT).json()
    return body


def test_another_user_cannot_add_versions_retire_or_read_logs(alice, bob, alices_bot, client_for):
    bot, version = alices_bot["id"], alices_bot["latest_version"]["id"]
    theirs = client_for(bob)
    response = theirs.post(
        f"/api/bots/{bot}/versions/", {"file": uploaded(RANDOM_BOT)}, format="multipart"
    )
    assert response.status_code == 403 and "owner" in response.json()["detail"]
    assert theirs.post(f"/api/bots/{bot}/retire/").status_code == 403
    for who in (theirs, client_for(None)):
        seen = who.get(f"/api/versions/{version}/").json()
        assert seen["status"] == "failed"
        assert seen["fault"] is None and seen["log"] is None
        listed = who.get(f"/api/bots/{bot}/versions/").json()["results"]
        assert all(v["fault"] is None and v["log"] is None for v in listed)
        match = who.get(f"/api/matches/{seen['validation_match']}/").json()
        assert all(seat["log"] is None for seat in match["seats"])
    # The owner sees them; nothing changed for her.
    mine = client_for(alice).get(f"/api/versions/{version}/").json()
    assert mine["fault"]["kind"] == "crash" and "I give up" in mine["log"]
    detail = client_for(alice).get(f"/api/bots/{bot}/").json()
    assert detail["retired"] is False and len(detail["versions"]) == 1


def _running_tournament(user: User) -> Tournament:
    builtins = builtin_bots_ensure()
    response = APIClient()
    response.force_authenticate(user)
    created = response.post(
        "/api/tournaments/",
        {"name": "cup", "rules": {"preset": "quatre-sept"}, "pairs": 2,
         "versions": [builtins["random"].pk, builtins["greedy"].pk]},
        format="json",
    )
    assert created.status_code == 201, created.content
    return Tournament.objects.get(pk=created.json()["id"])


def test_only_the_creator_or_staff_cancels_a_round_robin(alice, bob, client_for):
    tournament = _running_tournament(alice)  # tasks are not run: every match stays queued
    url = f"/api/tournaments/{tournament.pk}/cancel/"
    assert client_for(None).post(url).status_code == 401
    refused = client_for(bob).post(url)
    assert refused.status_code == 403 and "creator" in refused.json()["detail"]
    assert Tournament.objects.get(pk=tournament.pk).status == "running"
    assert not tournament.matches.exclude(status=MatchStatus.QUEUED).exists()

    done = client_for(alice).post(url)
    assert done.status_code == 200 and done.json()["status"] == "cancelled"
    failures = set(tournament.matches.values_list("status", "failure"))
    assert failures == {("failed", "cancelled by alice before it was played")}
    again = client_for(alice).post(url)
    assert again.status_code == 409 and "cancelled" in again.json()["detail"]

    # A worker given one of its tasks now plays nothing; staff cannot re-queue its matches.
    from arena.services.play import match_play

    match = tournament.matches.first()
    assert match_play(match_id=match.pk) is False
    staff = User.objects.create_user("root", password="root-password-1", is_staff=True)
    requeue = client_for(staff).post(f"/api/matches/{match.pk}/requeue/")
    assert requeue.status_code == 409
    assert Match.objects.get(pk=match.pk).status == "failed"

    other = _running_tournament(bob)
    assert client_for(staff).post(f"/api/tournaments/{other.pk}/cancel/").status_code == 200


def _api_routes() -> list[tuple[str, str]]:
    """(method, path) of every unsafe operation in the OpenAPI schema, ids filled in with 1."""
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json").json()
    routes = []
    for path, operations in schema["paths"].items():
        for method in operations:
            if method.upper() in ("POST", "PUT", "PATCH", "DELETE"):
                routes.append((method.upper(), re.sub(r"\{[^}]+\}", "1", path)))
    return routes


def test_anonymous_users_only_read(alice, alices_bot, client_for):
    tournament = _running_tournament(alice)
    routes = _api_routes()
    assert ("POST", "/api/bots/") in routes and len(routes) >= 6
    anonymous = client_for(None)
    for method, path in routes:
        path = path.replace("/1/", f"/{alices_bot['id']}/") if "/bots/" in path else path
        path = path.replace("/1/", f"/{tournament.pk}/") if "/tournaments/" in path else path
        response = anonymous.generic(method, path, "{}", content_type="application/json")
        if path == "/api/token/":  # logging in is the one write anyone may try
            assert response.status_code == 400
            continue
        assert response.status_code in (401, 403), (method, path, response.status_code)
    for path in ("/api/bots/", f"/api/bots/{alices_bot['id']}/", "/api/matches/",
                 f"/api/tournaments/{tournament.pk}/", "/api/leaderboard/", "/api/versions/"):
        assert anonymous.get(path).status_code == 200, path
    assert Tournament.objects.get(pk=tournament.pk).status == "running"


def test_session_writes_need_a_csrf_token(alice):
    client = APIClient(enforce_csrf_checks=True)
    client.login(username="alice", password="alice-password-1")
    refused = client.post("/api/bots/", {"name": "x", "file": uploaded(RANDOM_BOT)},
                          format="multipart")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    # With the token from the cookie, the same request goes through.
    client.get("/api/bots/")
    page = Client().get("/admin/login/")
    assert page.status_code == 200
    token = client.cookies.get("csrftoken") or page.cookies.get("csrftoken")
    assert token is not None
    client.cookies["csrftoken"] = token.value
    ok = client.post("/api/bots/", {"name": "x", "file": uploaded(RANDOM_BOT)},
                     format="multipart", HTTP_X_CSRFTOKEN=token.value)
    assert ok.status_code == 201, ok.content


def _form_pages(user: User) -> dict[str, str]:
    """The pages with forms (those that answer), read as ``user``."""
    client = Client()
    client.force_login(user)
    pages = {}
    for pattern in ("/admin/login/", "/signup/", "/login/", "/bots/new/", "/tournaments/new/",
                    "/account/token/"):
        response = client.get(pattern)
        if response.status_code == 200 and b"<form" in response.content:
            pages[pattern] = response.content.decode()
    return pages


def test_every_form_carries_a_csrf_token_and_posts_without_it_are_refused(alice):
    pages = _form_pages(alice)
    assert "/admin/login/" in pages and len(pages) >= 2, sorted(pages)
    for path, html in pages.items():
        for form in re.findall(r"<form\b.*?</form>", html, flags=re.S | re.I):
            if re.search(r'method=["\']?post', form, flags=re.I):
                assert "csrfmiddlewaretoken" in form, path
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        assert client.post(path, {}).status_code == 403, path


def test_production_settings_pass_the_deploy_check(tmp_path):
    """``manage.py check --deploy`` with the production environment of docs/reliability.md: no
    warning; secure session and CSRF cookies, HSTS, HTTPS redirect."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "ARENA_"))}
    env.update({
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "arena.example.org",
        "CSRF_TRUSTED_ORIGINS": "https://arena.example.org",
        "ARENA_VAR_DIR": str(tmp_path),
    })
    deploy = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
    open_channel = subprocess.run(deploy, cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=120)
    said = open_channel.stdout + open_channel.stderr
    assert open_channel.returncode != 0 and "arena.W001" in said
    env.update({"ARENA_FIXED_TURNS": "1", "ARENA_MOVE_MS": "200"})
    check = subprocess.run(deploy, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "no issues" in check.stdout
    probe = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from django.conf import settings "
         "as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, "
         "s.SECURE_HSTS_SECONDS > 0, s.DEBUG)"],
        cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"}, capture_output=True,
        text=True, timeout=120,
    )
    assert probe.stdout.split() == ["True", "True", "True", "True", "False"], probe.stderr
    # Without a secret key production refuses to start.
    del env["DJANGO_SECRET_KEY"]
    refused = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert refused.returncode != 0 and "DJANGO_SECRET_KEY" in refused.stderr


def test_production_errors_show_no_stack_trace(settings, client_for):
    settings.DEBUG = False
    client = Client(raise_request_exception=False)
    missing = client.get("/api/no-such-thing/")
    assert missing.status_code == 404
    assert b"Traceback" not in missing.content and b"urlpatterns" not in missing.content.lower()
    from unittest import mock

    with mock.patch("arena.api.views.leaderboard", side_effect=RuntimeError("db password=hunter2")):
        broken = client.get("/api/leaderboard/")
    assert broken.status_code == 500
    assert b"Traceback" not in broken.content and b"hunter2" not in broken.content
