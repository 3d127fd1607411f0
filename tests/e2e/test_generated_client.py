"""A stock generator's client works: openapi-python-client turns the live ``/api/schema/`` into a
Python package in a scratch folder, and the whole flow of a bot author runs through it against
gunicorn and a real worker: a token, an upload, the version's status, a round-robin played to the
end (its cross-table's null diagonal parsed), its matches, a replay typed down to its cards, and
the leaderboard.

Every answer must parse as the schema's type of its success response: a generated client returns
an ``Error`` or ``ValidationErrors`` model (or raises) when the server says something the schema
did not promise.
"""

from __future__ import annotations

import importlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from django.contrib.auth.models import User

from tests.arena.conftest import FIRST_BOT
from tests.e2e.conftest import Stack, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

BIN = Path(sys.executable).parent
PACKAGE = "quatre_sept_arena_api_client"


def generate_client(schema: bytes, folder: Path):
    """The package openapi-python-client generates from ``schema``, imported from ``folder``."""
    (folder / "schema.yaml").write_bytes(schema)
    done = subprocess.run(
        [str(BIN / "openapi-python-client"), "generate", "--path", "schema.yaml",
         "--output-path", "generated", "--meta", "none", "--overwrite"],
        cwd=folder, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout, done.stdout  # every operation and model generated
    sys.path.insert(0, str(folder))
    for name in [m for m in sys.modules if m == "generated" or m.startswith("generated.")]:
        del sys.modules[name]
    return importlib.import_module("generated")


def test_a_generated_client_drives_the_whole_flow(stack: Stack, tmp_path):
    User.objects.create_user("dana", password="dana-password-1")
    stack.start_worker()
    schema = requests.get(f"{stack.url}/api/schema/", timeout=30)
    assert schema.status_code == 200
    gen = generate_client(schema.content, tmp_path)
    api = importlib.import_module("generated.api")
    models = importlib.import_module("generated.models")
    types = importlib.import_module("generated.types")
    for group in ("bots", "leaderboard", "matches", "token", "tournaments", "versions"):
        importlib.import_module(f"generated.api.{group}")
    from generated.api.bots import bots_create, bots_list
    from generated.api.leaderboard import leaderboard_retrieve
    from generated.api.matches import matches_list, matches_replay_retrieve, matches_retrieve
    from generated.api.token import token_create
    from generated.api.tournaments import tournaments_create, tournaments_retrieve
    from generated.api.versions import versions_retrieve
    assert api and gen

    # A token, asked for without one.
    anonymous = gen.Client(base_url=stack.url, raise_on_unexpected_status=True)
    token = token_create.sync(
        client=anonymous,
        body=models.AuthTokenRequest(username="dana", password="dana-password-1"),
    )
    assert isinstance(token, models.AuthToken), token
    client = gen.AuthenticatedClient(
        base_url=stack.url, token=token.token, prefix="Token", raise_on_unexpected_status=True,
    )
    wrong = token_create.sync(
        client=anonymous, body=models.AuthTokenRequest(username="dana", password="nope"),
    )
    assert isinstance(wrong, models.ValidationErrors)

    # An upload (multipart), then its validation followed to the end.
    bot = bots_create.sync(client=client, body=models.BotCreateInputRequest(
        name="first", file=types.File(payload=io.BytesIO(FIRST_BOT), file_name="first.py"),
    ))
    assert isinstance(bot, models.Bot), bot
    version_id = bot.latest_version.id

    def ready():
        version = versions_retrieve.sync(id=version_id, client=client)
        assert isinstance(version, models.Version), version
        final = (models.VersionStatusEnum.READY, models.VersionStatusEnum.FAILED)
        return version if version.status in final else None

    version = wait_for(ready, 90, "validation")
    assert version.status == models.VersionStatusEnum.READY, (version.fault, version.log)
    assert version.log is not None  # the owner sees the validation's log

    # A round-robin against a built-in bot, played to the end by the worker.
    builtins = bots_list.sync(client=client, owner="arena", page_size=50)
    assert isinstance(builtins, models.PaginatedBotList)
    greedy = next(b for b in builtins.results if b.name == "greedy").latest_version.id
    created = tournaments_create.sync(client=client, body=models.TournamentCreateInputRequest(
        name="generated cup", pairs=1, versions=[version_id, greedy],
        rules=models.RulesInputRequest(preset=models.PresetEnum.QUATRE_SEPT, target=11),
    ))
    assert isinstance(created, models.TournamentDetail), created
    assert created.rules.target == 11 and created.preset == models.PresetEnum.QUATRE_SEPT

    def finished():
        detail = tournaments_retrieve.sync(id=created.id, client=client)
        assert isinstance(detail, models.TournamentDetail), detail
        return detail if detail.status == models.TournamentStatusEnum.FINISHED else None

    detail = wait_for(finished, 180, "the round-robin to finish", every=0.5)
    assert detail.done == detail.total == 2
    diagonal = [row.results[i] for i, row in enumerate(detail.crosstable)]
    assert diagonal == [None, None]
    assert {row.version for row in detail.standings} == {version_id, greedy}

    # Its matches, one alone, and a replay typed down to its cards.
    page = matches_list.sync(client=client, tournament=created.id)
    assert isinstance(page, models.PaginatedMatchList), page
    assert page.count == 2
    match = matches_retrieve.sync(id=page.results[0].id, client=client)
    assert isinstance(match, models.Match), match
    assert match.to_dict() == page.results[0].to_dict()
    assert len(match.score) == 2 and match.rules.target == 11
    mine = next(s for s in match.seats if s.version == version_id)
    assert mine.log is not None  # my seat's stderr tail, for me
    replay = matches_replay_retrieve.sync(id=match.id, client=client)
    assert isinstance(replay, models.Replay), replay
    assert replay.format_ == "quatresept-replay/1"
    assert replay.result.score == match.score
    assert all(len(hand) == 8 for hand in replay.deals[0].hands)
    assert [p.seat for p in replay.players] == [0, 1, 2, 3]

    # The leaderboard of the preset (the round-robin changed an option: its own board).
    board = leaderboard_retrieve.sync(
        client=client, board=match.rules_key, preset=leaderboard_retrieve.LeaderboardRetrievePreset(
            "quatre-sept"),
    )
    assert isinstance(board, models.LeaderboardPage), board
    wait_for(
        lambda: leaderboard_retrieve.sync(client=client, board=match.rules_key).count == 2,
        60, "the refit",
    )
