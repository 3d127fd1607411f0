"""What the schema promises a generated client, and what the server does: one request body type
per operation (multipart for uploads, JSON elsewhere) and the server accepts exactly that; the
token endpoint open to anonymous callers; enums for presets and options; the docs from this
site's own static files; and messages that say what to change."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from rest_framework.test import APIClient

from arena.models import Bot
from engine.rules import PRESETS
from tests.arena.conftest import FIRST_BOT, uploaded

pytestmark = pytest.mark.django_db

UPLOADS = {("/api/bots/", "post"), ("/api/bots/{id}/versions/", "post")}


@pytest.fixture
def schema(client_for) -> dict:
    return client_for(None).get("/api/schema/?format=json").json()


def test_one_request_body_type_per_operation(schema):
    bodies = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody")
            if body is None:
                continue
            bodies += 1
            wanted = "multipart/form-data" if (path, method) in UPLOADS else "application/json"
            assert list(body["content"]) == [wanted], (path, method)
    assert bodies == 4  # token, bot, version, round-robin


def test_the_server_takes_the_body_type_the_schema_names(alice, client_for):
    client = client_for(alice)
    json_upload = client.post("/api/bots/", {"name": "x", "file": "print()"}, format="json")
    assert json_upload.status_code == 415
    form = client.post("/api/tournaments/", {"name": "x", "pairs": 1}, format="multipart")
    assert form.status_code == 415
    token = APIClient().post(
        "/api/token/", {"username": "alice", "password": "alice-password-1"}, format="json"
    )
    assert token.status_code == 200 and token.json()["token"]


def test_the_token_endpoint_is_open_to_anonymous_callers(schema):
    operation = schema["paths"]["/api/token/"]["post"]
    assert operation.get("security", []) in ([], [{}])


def test_presets_and_options_are_enums(schema):
    components = schema["components"]["schemas"]
    assert sorted(components["PresetEnum"]["enum"]) == sorted(PRESETS)
    rules_input = components["RulesInputRequest"]["properties"]
    assert rules_input["preset"] == {"$ref": "#/components/schemas/PresetEnum"}
    for option in ("politaine", "low_lead", "claim_out", "deck"):
        assert "$ref" in rules_input[option], option
    assert components["RulesInputRequest"]["required"] == ["preset"]
    assert set(components["Rules"]["required"]) == {"preset", *PRESETS["quatre-sept"].to_dict()}
    leaderboard = schema["paths"]["/api/leaderboard/"]["get"]["parameters"]
    preset = next(p for p in leaderboard if p["name"] == "preset")
    assert sorted(preset["schema"]["enum"]) == sorted(PRESETS)
    match = components["Match"]["properties"]
    assert match["score"]["type"] == "array" and match["score"]["nullable"] is True
    assert match["rules"] == {"$ref": "#/components/schemas/Rules"}
    replay = schema["paths"]["/api/matches/{id}/replay/"]["get"]["responses"]["200"]
    assert replay["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Replay"}
    cells = components["CrossRow"]["properties"]["results"]["items"]
    assert cells["nullable"] is True


def test_docs_are_served_from_this_sites_static_files(client_for):
    client = client_for(None)
    for path in ("/api/docs/", "/api/redoc/"):
        page = client.get(path).content.decode()
        assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css|png))"', page)
        assert assets, path
        for asset in assets:
            assert asset.startswith("/static/"), (path, asset)
            assert finders.find(asset.removeprefix("/static/")), asset
        assert "cdn" not in page.lower() and "https://" not in page, path


def test_a_bearer_header_is_told_the_scheme_is_token(alice, client_for):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer abc")
    response = client.post("/api/tournaments/", {}, format="json")
    assert response.status_code == 401
    assert "Token" in response.json()["detail"] and "Bearer" in response.json()["detail"]


def test_one_version_is_told_a_round_robin_needs_two(alice, client_for):
    response = client_for(alice).post("/api/tournaments/", {
        "name": "solo", "rules": {"preset": "quatre-sept"}, "versions": [1], "pairs": 1,
    }, format="json")
    assert response.status_code == 400
    assert response.json()["versions"] == [
        "a round-robin needs at least two versions (their ids)"]


def test_an_unknown_preset_is_a_bad_request(client_for):
    response = client_for(None).get("/api/leaderboard/?preset=nope")
    assert response.status_code == 400
    assert "nope" in response.json()["preset"][0] and "quatre-sept" in response.json()["preset"][0]


def test_a_taken_bot_name_names_its_versions_url(alice, client_for, run_tasks):
    client = client_for(alice)
    with run_tasks():
        client.post("/api/bots/", {"name": "first", "file": uploaded(FIRST_BOT)},
                    format="multipart")
    again = client.post("/api/bots/", {"name": "first", "file": uploaded(FIRST_BOT)},
                        format="multipart")
    bot = Bot.objects.get(owner=alice, name="first")
    assert again.status_code == 400
    assert f"POST /api/bots/{bot.pk}/versions/" in again.json()["name"][0]
