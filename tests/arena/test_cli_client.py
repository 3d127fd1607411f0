"""The command-line client's own handling of what it is given, without a server of the arena's
(the end-to-end test, tests/e2e/test_cli.py, drives a real one): a package with symbolic links,
a default bot name, a server that is not the arena, the token file's mode, a file that is not a
replay, and ``--timeout`` on the waits for a validation (a stub server, a fake clock)."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from arena_cli import __main__ as cli_module
from arena_cli import api as api_module
from arena_cli.__main__ import EXIT_TIMEOUT, Pace, _default_name, main
from arena_cli.api import Api, package_bytes, save_token
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


# --- --timeout on the waits for a validation ------------------------------------------------------


class FakeClock:
    """A monotonic clock that moves only when the client sleeps; a client still waiting after a
    (fake) hour fails the test instead of hanging it."""

    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0 and self.now < 3600, f"sleep({seconds}) at {self.now} s"
        self.now += seconds


@dataclass
class StubArena:
    """A stub arena whose version 34 answers ``statuses`` in turn (the last one for ever);
    ``polls``: the fake clock's time at each poll."""

    address: str
    statuses: list[str]
    polls: list[float]


@pytest.fixture
def stub_arena(tmp_path, monkeypatch) -> Iterator[StubArena]:
    """The stub, the client's waits on a fake clock polling every second, and ``upload`` making
    bot 7 with version 34 (the stub answers GETs alone)."""
    monkeypatch.setenv("ARENA_CLI_CONFIG", str(tmp_path / "config"))
    monkeypatch.setattr(Api, "upload_bot", lambda self, name, filename, data: {
        "id": 7, "owner": "finn", "name": name, "latest_version": {"id": 34}})
    fake = FakeClock()
    monkeypatch.setattr(cli_module, "PACE", Pace(every=1.0, clock=fake.clock, sleep=fake.sleep))
    arena = StubArena("", ["pending"], [])

    def respond(path: str) -> tuple[int, str, bytes]:
        if path != "/api/versions/34/":
            return 404, "application/json", b'{"detail": "Not found."}'
        arena.polls.append(fake.now)
        status = arena.statuses[min(len(arena.polls), len(arena.statuses)) - 1]
        body = {"id": 34, "bot_name": "finn/steady", "number": 1, "status": status}
        return 200, "application/json", json.dumps(body).encode()

    with serving(respond) as address:
        arena.address = address
        yield arena


WAITS = [pytest.param("upload", id="upload"), pytest.param("status", id="status --wait")]


def wait(arena: StubArena, command: str, tmp_path: Path, *options: str) -> int:
    if command == "upload":
        bot = tmp_path / "steady.py"
        bot.write_text("print('hi')\n")
        return main(["--server", arena.address, "upload", str(bot), *options])
    return main(["--server", arena.address, "status", "34", "--wait", *options])


@pytest.mark.parametrize("command", WAITS)
def test_a_validation_still_pending_at_the_timeout_stops_the_wait(stub_arena, command, tmp_path,
                                                                   capsys):
    assert wait(stub_arena, command, tmp_path, "--timeout", "2.5") == EXIT_TIMEOUT == 3
    assert stub_arena.polls == [0, 1, 2, 2.5]  # one last poll at the deadline
    out, err = capsys.readouterr()
    assert out.count("version 34: pending") == 1 and "finn/steady v1:" not in out
    assert err == (
        "error: version 34 is still pending after 2.5 s: the queue may be busy, or no worker is "
        "running; "
        f"`python -m arena_cli --server {stub_arena.address} status 34 --wait` to keep waiting "
        "(--timeout 0: for ever)\n"
    )


@pytest.mark.parametrize("command", WAITS)
def test_the_default_timeout_is_ten_minutes(stub_arena, command, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli_module, "PACE", replace(cli_module.PACE, every=100.0))
    stub_arena.statuses = ["pending", "validating"]
    assert wait(stub_arena, command, tmp_path) == EXIT_TIMEOUT
    assert stub_arena.polls == [0, 100, 200, 300, 400, 500, 600]
    assert "version 34 is still validating after 600 s" in capsys.readouterr().err


@pytest.mark.parametrize("command", WAITS)
def test_timeout_0_waits_for_ever(stub_arena, command, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli_module, "PACE", replace(cli_module.PACE, every=100.0))
    stub_arena.statuses = ["pending"] * 10 + ["ready"]  # ready after 1000 s, past the default
    assert wait(stub_arena, command, tmp_path, "--timeout", "0") == 0
    assert stub_arena.polls[-1] == 1000
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "finn/steady v1: ready" and err == ""


@pytest.mark.parametrize("command", WAITS)
@pytest.mark.parametrize(("statuses", "polls"), [
    (["pending", "validating", "ready"], [0, 1, 2]),
    (["pending"] * 5 + ["ready"], [0, 1, 2, 3, 4, 5]),  # at the deadline's own poll
])
def test_a_validation_final_before_the_timeout_succeeds(stub_arena, command, statuses, polls,
                                                        tmp_path, capsys):
    stub_arena.statuses = statuses
    assert wait(stub_arena, command, tmp_path, "--timeout", "5") == 0
    assert stub_arena.polls == polls
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "finn/steady v1: ready" and err == ""


@pytest.mark.parametrize("value", ["-1", "nan", "soon", "inf", "1e-400", "0.5"])
def test_a_timeout_is_0_or_seconds_from_1_up(value, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["status", "34", "--wait", "--timeout", value])
    assert exited.value.code == 2
    assert "--timeout: expected 0 or seconds from 1 up" in capsys.readouterr().err


def test_the_waits_read_a_monotonic_clock():
    assert Pace().clock is time.monotonic and Pace().sleep is time.sleep
