"""What an operator of a service running untrusted code expects: a health endpoint that says what
is down, API throttles, a request size limit, JSON errors without details under /api/."""

from __future__ import annotations

import socket
from unittest import mock

import pytest
from django.db import DatabaseError
from django.test import Client
from rest_framework.throttling import SimpleRateThrottle

pytestmark = pytest.mark.django_db


def test_health_says_ok_and_what_is_down(client_for, settings):
    body = Client().get("/health/")
    assert body.status_code == 200 and body.json()["ok"] is True
    assert body.json()["database"] == "ok"
    if settings.REDIS_URL:
        assert body.json()["redis"] == "ok"
        with socket.socket() as sock:  # a port nothing listens on
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
        down = Client().get("/health/")
        assert down.status_code == 503 and down.json()["redis"] == "unavailable"
    with mock.patch("django.db.backends.utils.CursorWrapper.execute",
                    side_effect=DatabaseError("connection refused, password=hunter2")):
        down = Client().get("/health/")
    assert down.status_code == 503
    assert down.json()["database"] == "unavailable" and b"hunter2" not in down.content


def test_the_api_is_throttled_per_address_and_per_user(alice, client_for):
    rates = {**SimpleRateThrottle.THROTTLE_RATES, "anon": "5/minute", "user": "8/minute"}
    with mock.patch.object(SimpleRateThrottle, "THROTTLE_RATES", rates):
        anonymous = [client_for(None).get("/api/bots/").status_code for _ in range(6)]
        assert anonymous == [200] * 5 + [429]
        refused = client_for(None).get("/api/matches/")
        assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
        assert "throttled" in refused.json()["detail"].lower()
        signed_in = [client_for(alice).get("/api/bots/").status_code for _ in range(9)]
        assert signed_in == [200] * 8 + [429]


def test_a_forged_x_forwarded_for_does_not_pass_the_throttle():
    """With no proxy configured (``ARENA_NUM_PROXIES`` 0) the client is its ``REMOTE_ADDR``:
    a header it writes anew on every request (DRF's default read the whole header as the
    client) gives it no fresh window."""
    rates = {**SimpleRateThrottle.THROTTLE_RATES, "anon": "5/minute", "user": "8/minute"}
    client = Client(REMOTE_ADDR="192.0.2.77")
    with mock.patch.object(SimpleRateThrottle, "THROTTLE_RATES", rates):
        codes = [client.get("/api/bots/", HTTP_X_FORWARDED_FOR=f"10.9.8.{n}").status_code
                 for n in range(6)]
    assert codes == [200] * 5 + [429]


def test_any_request_over_the_size_limit_is_refused_before_it_is_read(settings):
    settings.ARENA_MAX_REQUEST_BYTES = 1000
    body = b"{" + b" " * 2000 + b"}"
    for path in ("/api/token/", "/api/tournaments/", "/admin/login/", "/signup/"):
        response = Client().generic("POST", path, body, content_type="application/json")
        assert response.status_code == 413, path
        assert "at most 1,000 bytes" in response.json()["detail"]
    bad = Client().generic("POST", "/api/token/", b"{}", content_type="application/json",
                           CONTENT_LENGTH="twelve")
    assert bad.status_code == 400


def test_api_errors_are_json(client_for):
    for path in ("/api/nothing/", "/api/bots/0.5/", "/api/matches/x/replay/"):
        response = client_for(None).get(path)
        assert response.status_code == 404, path
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"detail": "Not found."}
    page = Client().get("/no-such-page/")
    assert page.status_code == 404 and "text/html" in page["Content-Type"]
