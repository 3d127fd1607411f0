"""Quotas against abuse of the service, through the pages and the API alike: uploads per user (one
counter for both), matches queued per user (round-robins by either door), signups per address;
staff exempt. Each refusal is a 429 that says where the user stands and when to try again."""

from __future__ import annotations

import contextlib
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from arena.models import Bot, Match, Tournament
from arena.services.bots import builtin_bots_ensure
from tests.arena.conftest import RANDOM_BOT, uploaded

pytestmark = pytest.mark.django_db


def _web(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_one_upload_quota_for_the_form_and_the_api(alice, client_for, settings):
    settings.ARENA_UPLOAD_RATE = "2/minute"
    api = client_for(alice)
    assert api.post("/api/bots/", {"name": "a", "file": uploaded(RANDOM_BOT)}).status_code == 201
    web = _web(alice)
    assert web.post("/bots/new/", {"name": "b", "file": uploaded(RANDOM_BOT)}).status_code == 302
    refused = api.post("/api/bots/", {"name": "c", "file": uploaded(RANDOM_BOT)})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    page = web.post("/bots/new/", {"name": "d", "file": uploaded(RANDOM_BOT)})
    assert page.status_code == 429 and int(page["Retry-After"]) > 0
    assert "at most 2 bot uploads per minute" in page.content.decode()
    bot = Bot.objects.get(owner=alice, name="a")
    web.post(f"/bots/{bot.pk}/versions/", {"file": uploaded(RANDOM_BOT)})
    assert bot.versions.count() == 1
    assert sorted(Bot.objects.filter(owner=alice).values_list("name", flat=True)) == ["a", "b"]


def test_staff_have_no_upload_quota(client_for, settings, db):
    settings.ARENA_UPLOAD_RATE = "1/minute"
    staff = User.objects.create_user("op", password="op-password-1", is_staff=True)
    codes = [
        client_for(staff).post("/api/bots/", {"name": f"s{i}", "file": uploaded(RANDOM_BOT)})
        .status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 201]


def test_queued_matches_per_user_through_the_api_and_the_form(alice, bob, client_for, settings):
    settings.ARENA_MAX_QUEUED_MATCHES = 10
    builtins = builtin_bots_ensure()
    versions = [builtins["random"].pk, builtins["greedy"].pk]
    api = client_for(alice)
    body = {"name": "cup", "rules": {"preset": "pollack"}, "versions": versions, "pairs": 4}
    assert api.post("/api/tournaments/", body, format="json").status_code == 201  # 8 queued
    refused = api.post("/api/tournaments/", {**body, "pairs": 2}, format="json")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 60
    detail = refused.json()["detail"]
    assert "you have 8 match(es) queued or running and this would add 4" in detail
    assert "at most 10" in detail and "try again in about" in detail
    page = _web(alice).post("/tournaments/new/", {
        "name": "cup 2", "preset": "pollack", "pairs": 2, "versions": versions,
    })
    assert page.status_code == 429 and "you have 8 match(es) queued" in page.content.decode()
    assert Tournament.objects.filter(created_by=alice).count() == 1
    assert Match.objects.count() == 8
    # Another user has a quota of their own; staff have none.
    assert client_for(bob).post("/api/tournaments/", body, format="json").status_code == 201
    staff = User.objects.create_user("op", password="op-password-1", is_staff=True)
    big = {**body, "pairs": 20}
    assert client_for(staff).post("/api/tournaments/", big, format="json").status_code == 201


def test_signups_per_client_address(settings, db):
    settings.ARENA_SIGNUP_RATE = "2/hour"

    def signup(name: str, address: str) -> int:
        return Client(REMOTE_ADDR=address).post("/signup/", {
            "username": name, "password1": "a-long-pass-phrase-1", "password2":
            "a-long-pass-phrase-1",
        }).status_code

    assert [signup(f"u{i}", "203.0.113.7") for i in range(3)] == [302, 302, 429]
    assert not User.objects.filter(username="u2").exists()
    assert signup("other", "198.51.100.9") == 302


def test_a_new_username_is_ascii_so_none_passes_for_another(db):
    """``аrena`` with a Cyrillic а reads as the system user that owns the built-in bots."""
    def signup(name: str) -> int:
        return Client(REMOTE_ADDR="203.0.113.99").post("/signup/", {
            "username": name, "password1": "a-long-pass-phrase-1",
            "password2": "a-long-pass-phrase-1"}).status_code

    assert signup("\u0430rena") == 200  # the form again, with the error
    assert not User.objects.filter(username="\u0430rena").exists()
    assert signup("plain.name-1") == 302

def test_sign_in_attempts_per_client_address_on_the_page_and_the_api_together(settings, db):
    """Password guessing: past ``ARENA_LOGIN_RATE`` the login page and the token view answer
    429 with Retry-After, without checking the password (the right one included); another
    address is not held back."""
    settings.ARENA_LOGIN_RATE = "3/hour"
    User.objects.create_user("victim", password="the-right-password-1")
    page = Client(REMOTE_ADDR="203.0.113.44")
    wrong = {"username": "victim", "password": "guess"}
    assert [page.post("/login/", wrong).status_code for _ in range(2)] == [200, 200]
    api = APIClient(REMOTE_ADDR="203.0.113.44")
    assert api.post("/api/token/", wrong, format="json").status_code == 400
    with mock.patch("django.contrib.auth.forms.authenticate") as checked:
        refused = page.post("/login/", {"username": "victim",
                                        "password": "the-right-password-1"})
    assert not checked.called  # past the quota no password is hashed, right or wrong
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "sign-in attempts" in refused.content.decode()
    assert "_auth_user_id" not in page.session
    token = api.post("/api/token/", {"username": "victim", "password": "the-right-password-1"},
                     format="json")
    assert token.status_code == 429 and "token" not in token.json()
    other = Client(REMOTE_ADDR="198.51.100.44")
    assert other.post("/login/", {"username": "victim",
                                  "password": "the-right-password-1"}).status_code == 302

@pytest.mark.django_db(transaction=True)
def test_two_round_robins_at_once_never_pass_the_cap_together(settings, monkeypatch):
    """Two requests of one user, each alone within the cap, together over it: the quota check
    and the writes hold the user's row lock, so the second counts the first's matches. Each
    request waits (up to 2 s) after counting for the other to count too: without the lock both
    would count before either wrote."""
    import threading

    from django.db import connection

    from arena.services import quotas
    from arena.services.quotas import QuotaExceeded, round_robin_create

    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    settings.ARENA_MAX_QUEUED_MATCHES = 10
    user = User.objects.create_user("racer")
    builtins = builtin_bots_ensure()
    versions = [builtins["random"].pk, builtins["greedy"].pk]
    both_counted = threading.Barrier(2, timeout=2)
    real_count = quotas.queued_matches_of

    def count_then_wait(**kwargs):
        counted = real_count(**kwargs)
        with contextlib.suppress(threading.BrokenBarrierError):
            both_counted.wait()
        return counted

    monkeypatch.setattr(quotas, "queued_matches_of", count_then_wait)
    outcomes: list[str] = []

    def request(name: str) -> None:
        try:
            round_robin_create(created_by=user, name=name, rules={"preset": "pollack"},
                               version_ids=versions, pairs=3)  # 6 matches each, cap 10
            outcomes.append("created")
        except QuotaExceeded:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=request, args=(f"cup {i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["created", "refused"]
    assert Match.objects.count() == 6
