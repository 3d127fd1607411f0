"""Hostile integers in filters, path ids, page numbers and request bodies: each is a 4xx (or an
empty page), never a 500, on SQLite and on PostgreSQL (an id is a signed 64-bit integer)."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999999"
NUMBERS = [HUGE, "-" + HUGE, "9223372036854775808", "-9223372036854775809", "1e400", "0x10"]

LISTS = [
    "/api/matches/?tournament={n}", "/api/matches/?version={n}", "/api/versions/?bot={n}",
    "/api/matches/?page={n}", "/api/bots/?page_size={n}", "/api/leaderboard/?page={n}",
]
PATHS = [
    "/api/matches/{n}/", "/api/matches/{n}/replay/", "/api/bots/{n}/", "/api/bots/{n}/versions/",
    "/api/versions/{n}/", "/api/versions/{n}/ratings/", "/api/tournaments/{n}/",
    "/bots/{n}/", "/tournaments/{n}/", "/tournaments/{n}/live/", "/matches/{n}/",
]


@pytest.mark.parametrize("template", LISTS + PATHS)
def test_a_hostile_integer_is_a_client_error_never_a_500(template):
    client = Client(raise_request_exception=False)
    for number in NUMBERS:
        response = client.get(template.format(n=number))
        assert response.status_code < 500, (template, number, response.status_code)
        assert response.status_code in (200, 400, 404), (template, number)


def test_hostile_integers_in_a_round_robin_request_are_a_400(alice, client_for):
    api = client_for(alice)
    for body in (
        {"versions": [int(HUGE), 1], "pairs": 1},
        {"versions": [-int(HUGE), 1], "pairs": 1},
        {"versions": [1, 2], "pairs": int(HUGE)},
        {"versions": [1, 2], "pairs": 2**63},
    ):
        response = api.post("/api/tournaments/", {"name": "x", "rules": {"preset": "pollack"},
                                                  **body}, format="json")
        assert response.status_code == 400, (body, response.status_code)


def test_hostile_integers_in_the_round_robin_form_are_refused(alice):
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    for versions in ([HUGE, "1"], ["-" + HUGE, "1"], ["1e400", "1"]):
        response = client.post("/tournaments/new/", {
            "name": "x", "preset": "pollack", "pairs": "1", "versions": versions,
        })
        assert response.status_code == 200, (versions, response.status_code)  # the form again
    response = client.post("/tournaments/new/", {
        "name": "x", "preset": "pollack", "pairs": HUGE, "versions": ["1", "2"],
    })
    assert response.status_code == 200


@pytest.mark.parametrize("path", [
    "/api/leaderboard/?board=%00", "/?board=%00", "/bots/?owner=%00", "/api/bots/?owner=a%00b",
    "/matches/?%00=1",
])
def test_a_nul_in_the_query_string_is_a_400_never_a_500(path):
    """PostgreSQL refuses NUL in text: a filter that passed it on was a 500 there."""
    response = Client(raise_request_exception=False).get(path)
    assert response.status_code == 400, (path, response.status_code)
    assert "NUL" in response.json()["detail"]
