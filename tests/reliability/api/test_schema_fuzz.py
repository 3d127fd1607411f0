"""The API under schemathesis: every operation of ``/api/schema/`` with generated input (valid and
invalid), signed in and anonymous, through the real WSGI application on a database holding bots,
versions, a finished round-robin with replays and a leaderboard: no 5xx, and every response
(status code, content type, headers, body) matches the schema."""

from __future__ import annotations

import json
import os
import zlib
from unittest import mock

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.utils import timezone
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis import checks
from schemathesis.config import SchemathesisConfig

from arena.models import Match, Rating, RatingBoard, Replay
from arena.services.bots import bot_create, builtin_bots_ensure
from arena.services.tournaments import tournament_create
from config.wsgi import application
from tests.arena.conftest import RANDOM_BOT

pytestmark = pytest.mark.django_db(transaction=True)


#: ``make test``: explicit examples and 5 generated cases an operation; the boundary-value
#: coverage phase (several minutes here) runs under ``make test-reliability`` (``ARENA_FUZZ=full``).
FULL = os.environ.get("ARENA_FUZZ") == "full"
schema = schemathesis.openapi.from_wsgi(
    "/api/schema/", application,
    config=SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": FULL}}}),
)


@pytest.fixture
def world(transactional_db, settings) -> dict[str, dict[str, str]]:
    """Alice (with a token) owns a bot; a round-robin of the built-ins with one finished match
    (seats, replay) and a rated board. Rows are written directly and no task runs (a generated
    round-robin of 200 matches would take minutes to play)."""
    settings.ARENA_UPLOAD_RATE = "100000/minute"
    with (
        mock.patch("arena.tasks.run_match.apply_async"),
        mock.patch("arena.tasks.refit_ratings.apply_async"),
    ):
        alice = User.objects.create_user("alice", password="alice-password-1")
        User.objects.create_user("bob", password="bob-password-1")
        bot_create(owner=alice, name="rnd", filename="bot.py", data=RANDOM_BOT)
        builtins = builtin_bots_ensure()
        versions = [builtins["random"], builtins["greedy"]]
        tournament = tournament_create(
            created_by=alice, name="cup", rules={"preset": "quatre-sept"}, pairs=1,
            version_ids=[v.pk for v in versions],
        )
        match = tournament.matches.first()
        raw = json.dumps({"format": 1, "players": [], "result": {"winner": 0}}).encode()
        Match.objects.filter(pk=match.pk).update(
            status="finished", winner=0, score=[41, 12], reason="target",
            finished_at=timezone.now(),
        )
        Replay.objects.create(match=match, data=zlib.compress(raw), size=len(raw))
        now = timezone.now()
        board = RatingBoard.objects.create(
            key="quatre-sept", preset="quatre-sept", state_changed_at=now, generation=1,
            fitted_at=now, matches=1,
        )
        for rank, version in enumerate(versions, start=1):
            Rating.objects.create(
                board=board, version=version, generation=1, fitted_at=now, rank=rank,
                elo=1500.0, ci95=100.0, matches=1, wins=1, losses=0, draws=0, provisional=True,
                los_next=None,
            )
        token = Token.objects.create(user=alice)
        yield {"alice": {"Authorization": f"Token {token.key}"}, "anonymous": {}}


#: No 5xx, and the response conforms: status code, content type, headers, body. (Not the
#: strictness checks: that every schema-invalid input is refused, every valid one accepted.)
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
    checks.unsupported_method,
    checks.ignored_auth,
]
FUZZ = settings(max_examples=25 if FULL else 5, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


@schema.parametrize()
@FUZZ
def test_the_api_signed_in_matches_its_schema_and_never_fails(case, world):
    case.call_and_validate(headers=world["alice"], checks=CHECKS)


@schema.parametrize()
@FUZZ
def test_the_api_anonymous_matches_its_schema_and_never_fails(case, world):
    case.call_and_validate(headers=world["anonymous"], checks=CHECKS)
