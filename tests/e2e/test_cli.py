"""The command-line client (``python -m arena_cli``) against gunicorn and a real worker, as a bot
author uses it: sign in once (the token is kept), upload a folder and watch it validate, upload a
broken file and read its fault and stderr, start a round-robin and follow its progress to the
standings, save a replay, and debug one of its matches by id against a local bot."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from arena.models import BotVersion
from tests.arena.conftest import FIRST_BOT
from tests.e2e.conftest import Stack

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def cli(stack: Stack, config: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "ARENA_CLI_CONFIG": str(config), "ARENA_SERVER": stack.url,
           "ARENA_CLI_CACHE": os.environ["ARENA_BOT_CACHE"]}
    return subprocess.run([sys.executable, "-m", "arena_cli", *args], cwd=ROOT, env=env,
                          input=stdin, capture_output=True, text=True, timeout=300)


def test_a_bot_author_works_from_the_command_line(stack: Stack, tmp_path):
    User.objects.create_user("finn", password="finn-password-1")
    config = tmp_path / "config"
    stack.start_worker(concurrency=2)

    # Nothing works before signing in; signing in keeps the token (this user's alone).
    refused = cli(stack, config, "upload", "--name", "x", str(tmp_path))
    assert refused.returncode == 1 and "login" in refused.stderr
    wrong = cli(stack, config, "login", "-u", "finn", "--password-stdin", stdin="nope\n")
    assert wrong.returncode == 1 and "Unable to log in" in wrong.stderr
    done = cli(stack, config, "login", "-u", "finn", "--password-stdin",
               stdin="finn-password-1\n")
    assert done.returncode == 0, done.stderr
    tokens = config / "tokens.json"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    assert list(json.loads(tokens.read_text())) == [stack.url]

    # A folder (main.py and a helper module) uploads as a zip and validates.
    folder = tmp_path / "steady"
    folder.mkdir()
    (folder / "main.py").write_bytes(b"from helper import run\nrun()\n")
    (folder / "helper.py").write_bytes(b"def run():\n" + b"".join(
        b"    " + line + b"\n" for line in FIRST_BOT.splitlines()))
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "junk.pyc").write_bytes(b"\0")
    done = cli(stack, config, "upload", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "uploaded finn/steady v1" in done.stdout
    assert done.stdout.splitlines()[-1] == "finn/steady v1: ready"
    mine = BotVersion.objects.get(bot__name="steady").pk

    # A broken file: the fault and the stderr's cause, and exit status 1.
    broken = tmp_path / "broken.py"
    broken.write_bytes(b"def broken(:\n")
    done = cli(stack, config, "upload", str(broken))
    assert done.returncode == 1
    assert "finn/broken v1: failed" in done.stdout and "fault: crash" in done.stdout
    assert "SyntaxError" in done.stdout

    # A new version of the same bot by id.
    bot_id = BotVersion.objects.get(pk=mine).bot_id
    done = cli(stack, config, "upload", "--bot", str(bot_id), "--no-wait", str(folder))
    assert done.returncode == 0 and "finn/steady v2" in done.stdout

    # A round-robin against the built-in greedy bot, followed to its standings.
    greedy = BotVersion.objects.get(bot__builtin="greedy").pk
    done = cli(stack, config, "run", str(mine), str(greedy), "--name", "cli cup",
               "--set", "target=11", "--pairs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "quatre-sept{target=11}" in lines[0] and "2 matches" in lines[0]
    assert any(line.startswith("[") and line.endswith("2/2 finished") for line in lines)
    assert {line.split()[1] for line in lines[-2:]} == {"finn/steady", "arena/greedy"}
    one = cli(stack, config, "run", str(mine))
    assert one.returncode == 1 and "at least two versions" in one.stderr

    # A replay saved, then the match debugged by id against a local bot that deviates.
    match_id = stack_match(stack, mine)
    saved = tmp_path / "replay.json"
    done = cli(stack, config, "replay", str(match_id), "--save", str(saved))
    assert done.returncode == 0 and json.loads(saved.read_text())["result"]
    same = tmp_path / "same.py"
    same.write_bytes(FIRST_BOT)
    seat = next(p["seat"] for p in json.loads(saved.read_text())["players"]
                if p["bot"].startswith("finn/"))
    done = cli(stack, config, "debug", str(match_id), "--seat", str(seat), str(same))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].endswith("answered differently at 0")


def stack_match(stack: Stack, version: int) -> int:
    import requests

    found = requests.get(f"{stack.url}/api/matches/?version={version}&kind=tournament",
                         timeout=10).json()
    return found["results"][0]["id"]
