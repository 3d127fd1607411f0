"""Uploading bots and versions through the API: validation on a worker, ownership, bad uploads."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from arena.models import Bot, BotVersion, Match, PackageBlob
from arena.services import bots as bot_services
from engine import new_match, rules_for
from tests.arena.conftest import (
    CRASH_BOT,
    FIRST_BOT,
    ILLEGAL_BOT,
    RANDOM_BOT,
    uploaded,
    zip_of,
)

pytestmark = pytest.mark.django_db


def counts() -> tuple[int, int, int, int]:
    return (Bot.objects.count(), BotVersion.objects.count(), PackageBlob.objects.count(),
            Match.objects.count())


def test_token_then_upload_makes_a_ready_version(alice, run_tasks):
    client = APIClient()
    response = client.post(
        "/api/token/", {"username": "alice", "password": "alice-password-1"}, format="json"
    )
    assert response.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    with run_tasks():
        response = client.post(
            "/api/bots/", {"name": "rnd", "file": uploaded(RANDOM_BOT)}, format="multipart"
        )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "rnd" and body["owner"] == "alice"
    assert body["latest_version"]["number"] == 1
    assert body["latest_version"]["status"] == "pending"  # as created; validation runs after
    version = client.get(f"/api/versions/{body['latest_version']['id']}/").json()
    assert version["status"] == "ready", version
    assert version["fault"] is None
    match = Match.objects.get(pk=version["validation_match"])
    assert match.kind == "validation" and match.status == "finished"
    seats = list(match.seats.order_by("seat").values_list("version__bot__builtin", flat=True))
    assert seats == ["", "random", "", "random"]


def test_wrong_password_gets_no_token(alice):
    response = APIClient().post(
        "/api/token/", {"username": "alice", "password": "nope"}, format="json"
    )
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("source", "kind", "in_detail", "in_log"),
    [
        (CRASH_BOT, "crash", "exited with code 3", "I give up"),
        (ILLEGAL_BOT, "illegal", "play XX", "about to cheat"),
    ],
)
def test_a_faulty_bot_fails_validation_with_fault_and_log(
    alice, bob, upload, client_for, source, kind, in_detail, in_log
):
    body = upload(alice, "bad", source).json()
    version_id = body["latest_version"]["id"]
    mine = client_for(alice).get(f"/api/versions/{version_id}/").json()
    assert mine["status"] == "failed"
    assert mine["fault"]["kind"] == kind
    assert in_detail in mine["fault"]["detail"]
    assert in_log in mine["log"]
    theirs = client_for(bob).get(f"/api/versions/{version_id}/").json()
    assert theirs["status"] == "failed"
    assert theirs["fault"] is None and theirs["log"] is None


def _seed_with_an_instant_win() -> int:
    """A seed whose first deal of the validation preset ends the match at once (four 7s)."""
    rules = rules_for(bot_services.VALIDATION_PRESET)
    return next(seed for seed in range(10_000) if new_match(rules, seed).is_over)


@pytest.mark.parametrize(
    ("source", "kind", "in_detail", "in_log"),
    [
        (CRASH_BOT, "crash", "exited with code 3", "I give up"),
        (b"import sys\nsys.exit(0)\n", "crash", "exited with code 0", ""),
    ],
    ids=["crash-with-a-log", "silent-exit"],
)
def test_a_bot_that_fails_hello_fails_validation_on_an_instant_win_deal(
    alice, upload, client_for, monkeypatch, source, kind, in_detail, in_log
):
    # Hostile: the referee used to drop a hello fault when the first deal was already over (four
    # 7s in one hand, ~0.8% of seeds), so the version read ready and could play round-robins.
    monkeypatch.setattr(bot_services, "validation_seed", lambda rules: _seed_with_an_instant_win())
    version_id = upload(alice, "crashy", source).json()["latest_version"]["id"]
    mine = client_for(alice).get(f"/api/versions/{version_id}/").json()
    assert mine["status"] == "failed"
    assert mine["fault"]["kind"] == kind and in_detail in mine["fault"]["detail"]
    assert in_log in mine["log"]
    match = Match.objects.get(pk=mine["validation_match"])
    assert (match.reason, match.winner) == ("forfeit", 1)


def test_a_validation_match_that_asks_the_version_nothing_validates_nothing(
    alice, upload, client_for, monkeypatch
):
    # A good bot, but the match ended at the deal before it decided anything: not ready.
    monkeypatch.setattr(bot_services, "validation_seed", lambda rules: _seed_with_an_instant_win())
    version_id = upload(alice, "lucky", RANDOM_BOT).json()["latest_version"]["id"]
    mine = client_for(alice).get(f"/api/versions/{version_id}/").json()
    assert mine["status"] == "failed"
    assert mine["fault"]["kind"] == ""
    assert "before seats 0 and 2 made a decision" in mine["fault"]["detail"]
    assert Match.objects.get(pk=mine["validation_match"]).reason == "four-sevens"


def test_validation_seeds_deal_a_first_deal_that_is_played(monkeypatch):
    instant = _seed_with_an_instant_win()
    rules = rules_for(bot_services.VALIDATION_PRESET)
    played = next(seed for seed in range(10_000) if not new_match(rules, seed).is_over)
    draws = iter([instant, instant, played])
    monkeypatch.setattr(bot_services.secrets, "randbits", lambda bits: next(draws))
    assert bot_services.validation_seed(rules) == played


def test_a_zip_with_manifest_is_accepted(alice, upload):
    data = zip_of({"bot.json": b'{"command": "python3 play.py"}', "play.py": FIRST_BOT})
    response = upload(alice, "zipped", data, "bot.zip")
    assert response.status_code == 201, response.content
    version = BotVersion.objects.get(pk=response.json()["latest_version"]["id"])
    assert version.status == "ready", version.fault_detail


@pytest.mark.parametrize(
    ("filename", "data", "message"),
    [
        ("bot.exe", b"MZ...", "unsupported file type"),
        ("bot.py", b"", "empty"),
        ("bot.zip", b"not a zip", "not a zip archive"),
        ("bot.zip", zip_of({"../evil.py": b"x=1"}), ".."),
        ("bot.zip", zip_of({"readme.txt": b"hi"}), "bot.json"),
    ],
)
def test_a_bad_upload_is_a_400_with_a_message_and_stores_nothing(
    alice, client_for, filename, data, message
):
    before = counts()
    response = client_for(alice).post(
        "/api/bots/", {"name": "bad", "file": uploaded(data, filename)}, format="multipart"
    )
    assert response.status_code == 400
    assert message in response.json()["file"][0]
    assert counts() == before


def test_bad_names_and_taken_names_are_refused(alice, upload, client_for):
    assert upload(alice, "rnd").status_code == 201
    before = counts()
    again = client_for(alice).post(
        "/api/bots/", {"name": "rnd", "file": uploaded(RANDOM_BOT)}, format="multipart"
    )
    assert again.status_code == 400 and "already have a bot" in again.json()["name"][0]
    spaces = client_for(alice).post(
        "/api/bots/", {"name": "my bot!", "file": uploaded(RANDOM_BOT)}, format="multipart"
    )
    assert spaces.status_code == 400 and "name" in spaces.json()
    missing = client_for(alice).post("/api/bots/", {"name": "x"}, format="multipart")
    assert missing.status_code == 400 and "file" in missing.json()
    assert counts() == before
    assert "upload a new version to it" in again.json()["name"][0]
    # a retired bot's name: no advice to add a version it would refuse
    client_for(alice).post(f"/api/bots/{Bot.objects.get(name='rnd').pk}/retire/")
    retired = client_for(alice).post(
        "/api/bots/", {"name": "rnd", "file": uploaded(RANDOM_BOT)}, format="multipart"
    )
    message = retired.json()["name"][0]
    assert "retired" in message and "new version" not in message.replace("no new versions", "")


def test_a_name_taken_by_an_upload_racing_this_one_is_refused_with_the_message(
    alice, upload, client_for, monkeypatch
):
    """Two uploads of one name at once both pass the name check; the second's insert then meets
    the unique constraint: the same 400 as a taken name, not a 500."""
    assert upload(alice, "rnd").status_code == 201
    real, calls = bot_services._refuse_taken, []

    def passes_first(owner, name):  # the first check ran before the other upload committed
        calls.append(name)
        if len(calls) > 1:
            real(owner, name)

    monkeypatch.setattr(bot_services, "_refuse_taken", passes_first)
    before = counts()
    again = client_for(alice).post(
        "/api/bots/", {"name": "rnd", "file": uploaded(RANDOM_BOT)}, format="multipart"
    )
    assert again.status_code == 400 and "already have a bot" in again.json()["name"][0]
    assert calls == ["rnd", "rnd"] and counts() == before

def test_anonymous_users_read_but_do_not_write(alice, upload, client_for):
    upload(alice, "rnd")
    anonymous = client_for(None)
    assert anonymous.get("/api/bots/").status_code == 200
    response = anonymous.post(
        "/api/bots/", {"name": "x", "file": uploaded(RANDOM_BOT)}, format="multipart"
    )
    assert response.status_code == 401


def test_only_the_owner_adds_versions_and_retires(alice, bob, upload, client_for, run_tasks):
    bot = upload(alice, "rnd").json()
    url = f"/api/bots/{bot['id']}/versions/"
    forbidden = client_for(bob).post(url, {"file": uploaded(FIRST_BOT)}, format="multipart")
    assert forbidden.status_code == 403
    assert client_for(bob).post(f"/api/bots/{bot['id']}/retire/").status_code == 403
    with run_tasks():
        created = client_for(alice).post(url, {"file": uploaded(FIRST_BOT)}, format="multipart")
    assert created.status_code == 201, created.content
    assert created.json()["number"] == 2
    listed = client_for(None).get(url).json()
    assert [v["number"] for v in listed["results"]] == [1, 2]
    assert [v["status"] for v in listed["results"]] == ["ready", "ready"]
    detail = client_for(None).get(f"/api/bots/{bot['id']}/").json()
    assert detail["latest_version"]["number"] == 2 and len(detail["versions"]) == 2
    retired = client_for(alice).post(f"/api/bots/{bot['id']}/retire/")
    assert retired.status_code == 200 and retired.json()["retired"] is True
    refused = client_for(alice).post(url, {"file": uploaded(RANDOM_BOT)}, format="multipart")
    assert refused.status_code == 400 and "retired" in refused.json()["file"][0]


def test_same_bytes_share_one_blob(alice, bob, upload):
    upload(alice, "one")
    upload(bob, "two")
    assert PackageBlob.objects.count() == 1
    assert BotVersion.objects.filter(blob__isnull=False).count() == 2


def test_uploads_are_throttled(alice, client_for, settings):
    settings.ARENA_UPLOAD_RATE = "2/minute"
    client = client_for(alice)
    codes = [
        client.post(
            "/api/bots/", {"name": f"b{i}", "file": uploaded(RANDOM_BOT)}, format="multipart"
        ).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]
    assert client.get("/api/bots/").status_code == 200  # reading is not throttled


def test_builtin_bots_exist_and_take_no_uploads(alice, client_for):
    bots = client_for(None).get("/api/bots/?owner=arena").json()["results"]
    assert {b["builtin"] for b in bots} >= {"random", "greedy"}
    assert all(b["latest_version"]["status"] == "ready" for b in bots)
    system = User.objects.get(username="arena")
    assert not system.has_usable_password()
    response = client_for(alice).post(
        f"/api/bots/{bots[0]['id']}/versions/", {"file": uploaded(RANDOM_BOT)}, format="multipart"
    )
    assert response.status_code == 403


def test_an_oversized_upload_is_refused_before_it_is_read(alice, client_for):
    before = counts()
    big = b"x = 1\n" * (6 * 1024 * 1024 // 6 + 20_000)
    response = client_for(alice).post(
        "/api/bots/", {"name": "big", "file": uploaded(big)}, format="multipart"
    )
    assert response.status_code == 413
    assert "at most" in response.json()["detail"]
    assert counts() == before


def test_an_upload_just_over_the_cap_gets_the_package_message(alice, client_for):
    from sandbox.package import MAX_PACKAGE_BYTES

    source = b"#" * (MAX_PACKAGE_BYTES + 1)
    response = client_for(alice).post(
        "/api/bots/", {"name": "big", "file": uploaded(source)}, format="multipart"
    )
    assert response.status_code == 400
    assert "limit" in response.json()["file"][0]
