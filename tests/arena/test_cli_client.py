"""The command-line client's own handling of what it is given, without a server of the arena's
(the end-to-end test, tests/e2e/test_cli.py, drives a real one): a package with symbolic links,
a default bot name, a server that is not the arena, the token file's mode, a file that is not a
replay."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena_cli import api as api_module
from arena_cli.__main__ import _default_name, main
from arena_cli.api import package_bytes, save_token
from tests.http_stub import serving


def test_a_folder_with_a_symbolic_link_is_refused_not_followed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET=hunter2")
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "main.py").write_text("print('hi')\n")
    (bot / "notes.txt").symlink_to(secret)
    with pytest.raises(ValueError, match=r"symbolic links.*notes\.txt"):
        package_bytes(bot)
    (bot / "notes.txt").unlink()
    name, data = package_bytes(bot)
    assert name == "bot.zip" and b"hunter2" not in data


@pytest.mark.parametrize(("path", "name"), [
    ("bots/My Bot.PY", "My-Bot"), ("bots/greedy.py", "greedy"), ("bots/_x_.py", "x"),
    ("bots/v1.2.zip", "v1.2"),
])
def test_the_default_bot_name_is_made_valid(path, name):
    assert _default_name(Path(path)) == name


def test_the_default_name_of_the_current_folder_is_its_own(tmp_path, monkeypatch):
    folder = tmp_path / "clever-bot.v2"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert _default_name(Path(".")) == "clever-bot.v2"


@pytest.fixture
def html_site() -> Iterator[str]:
    """A web server that answers every request with 200 and an HTML page (a wrong --server)."""
    with serving(lambda path: (200, "text/html", b"<html>not the arena</html>")) as address:
        yield address


def test_a_server_that_is_not_the_arena_is_an_error_not_data(html_site, tmp_path, capsys,
                                                             monkeypatch):
    monkeypatch.setenv("ARENA_CLI_CONFIG", str(tmp_path / "config"))
    saved = tmp_path / "replay.json"
    assert main(["--server", html_site, "replay", "5", "--save", str(saved)]) == 1
    assert not saved.exists()
    for command in (["status", "10"], ["follow", "3"]):
        assert main(["--server", html_site, *command]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "not the arena API's JSON: is --server the arena's address" in err


def test_the_token_file_is_never_readable_by_others(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_CLI_CONFIG", str(tmp_path / "config"))
    created: list[int] = []
    real_open = os.open

    def watch(path, flags, mode=0o777, *args):
        created.append(mode)
        return real_open(path, flags, mode, *args)

    monkeypatch.setattr(api_module.os, "open", watch)
    path = save_token("http://arena.test", "abc")
    assert created and all(mode == 0o600 for mode in created)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"http://arena.test": "abc"}


def test_debug_refuses_a_file_that_is_not_a_replay(tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}')
    bot = tmp_path / "bot.py"
    bot.write_text("print('hi')\n")
    assert main(["debug", str(other), "--seat", "2", str(bot)]) == 1
    err = capsys.readouterr().err
    assert "is not a replay (quatresept-replay/1)" in err and "Traceback" not in err
