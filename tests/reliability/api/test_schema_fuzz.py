"""The API under schemathesis: every operation of ``/api/schema/`` with generated input (valid and
invalid), signed in and anonymous, through the real WSGI application on a database holding bots,
versions, a finished round-robin with replays and a leaderboard: no 5xx, and every response
(status code, content type, headers, body) matches the schema."""

from __future__ import annotations

from unittest import mock

import pytest
import schemathesis
from django.contrib.auth.models import User
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis import checks

from arena.models import Tournament
from arena.services.bots import bot_create, builtin_bots_ensure
from arena.services.tournaments import tournament_create
from config.wsgi import application
from tests.arena.conftest import RANDOM_BOT

pytestmark = pytest.mark.django_db(transaction=True)


schema = schemathesis.openapi.from_wsgi("/api/schema/", application)


@pytest.fixture
def world(transactional_db, settings) -> dict[str, dict[str, str]]:
    """Alice (with a token) owns a bot; a finished round-robin of the built-ins, rated. Tasks run
    in-process while it is built; afterwards new matches are created but not played (a generated
    round-robin of 200 matches would take minutes)."""
    settings.ARENA_UPLOAD_RATE = "100000/minute"
    alice = User.objects.create_user("alice", password="alice-password-1")
    User.objects.create_user("bob", password="bob-password-1")
    bot_create(owner=alice, name="rnd", filename="bot.py", data=RANDOM_BOT)
    builtins = builtin_bots_ensure()
    tournament_create(
        created_by=alice, name="cup", rules={"preset": "quatre-sept"}, pairs=1,
        version_ids=[builtins["random"].pk, builtins["greedy"].pk],
    )
    assert Tournament.objects.get().status == "finished"
    token = Token.objects.create(user=alice)
    with mock.patch("arena.tasks.play_match.delay"), mock.patch("arena.tasks.refit_ratings.delay"):
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
FUZZ = settings(max_examples=5, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


@schema.parametrize()
@FUZZ
def test_the_api_signed_in_matches_its_schema_and_never_fails(case, world):
    case.call_and_validate(headers=world["alice"], checks=CHECKS)


@schema.parametrize()
@FUZZ
def test_the_api_anonymous_matches_its_schema_and_never_fails(case, world):
    case.call_and_validate(headers=world["anonymous"], checks=CHECKS)
