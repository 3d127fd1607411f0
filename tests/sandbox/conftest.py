"""Fixtures for sandbox tests: a world-reachable folder for installed bots, a bot factory, real
runners, and a fake referee (the sandbox knows nothing of the game, so neither do these tests).

``boxed`` and ``run_boxed`` run a test once per confined backend: bwrap, and Docker (marked
``docker``). Without an engine the Docker cases skip, saying why, except under
``QS_REQUIRE_DOCKER=1`` (``make test-docker``), where a missing engine or image fails them."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox import BotSession, Clock, InstalledBot, Runner, install_package, open_session
from sandbox.runners.bwrap import BwrapRunner
from sandbox.runners.docker import LABEL, DockerRunner
from sandbox.runners.docker_warm import WarmDockerRunner
from tests.sandbox.helpers import FAST, assert_left_nothing, play_match, python_bot


@pytest.fixture(scope="session")
def bots_root() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="qs-sandbox-tests-"))
    root.chmod(0o711)  # sandboxed bots run as another uid, which must reach their folder
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def make_bot(bots_root: Path) -> Callable[..., InstalledBot]:
    def make(source: str | bytes, filename: str = "bot.py") -> InstalledBot:
        data = source.encode() if isinstance(source, str) else source
        return install_package(data, filename, bots_root / f"bot-{next(_ids)}")

    return make


_ids = itertools.count()


@pytest.fixture(scope="session")
def bwrap(bots_root: Path) -> BwrapRunner:
    """A real bwrap runner, or a skip saying why bwrap cannot run here at all (a failure under
    ``CI=true``: there the hostile suite must run, not vanish)."""
    cannot = pytest.fail if os.environ.get("CI", "").lower() in ("1", "true") else pytest.skip
    try:
        runner = BwrapRunner()
        bot = install_package(b"print('hi')\n", "probe.py", bots_root / "bwrap-probe")
        process = runner.start(bot)
        out, err = process.popen.communicate(timeout=30)
        process.kill()
    except Exception as exc:  # no binary, no user namespaces, no libseccomp, ...
        cannot(f"bwrap cannot run on this machine: {exc}")
    if out.strip() != b"hi":
        cannot(f"bwrap cannot run on this machine: {err.decode(errors='replace')[-500:]}")
    return runner


def _unusable(reason: str) -> None:
    if os.environ.get("QS_REQUIRE_DOCKER") == "1":
        pytest.fail(f"make test-docker needs a Docker engine: {reason}")
    pytest.skip(f"no usable Docker engine ({reason}): make test-docker runs these")


@pytest.fixture(scope="session")
def docker(bots_root: Path) -> Iterator[DockerRunner]:
    """A real Docker runner (engine and bot-runtime image), or a skip saying why not. At the
    end no sandbox container is left on the engine."""
    try:
        runner = DockerRunner()
        bot = install_package(b"print('hi')\n", "probe.py", bots_root / "docker-probe")
        process = runner.start(bot)
        out, err = process.popen.communicate(timeout=60)
        process.kill()
    except Exception as exc:  # no engine, no CLI, no image, ...
        _unusable(str(exc))
    if out.strip() != b"hi":
        _unusable(err.decode(errors="replace")[-500:])
    yield runner
    left = runner.client.containers(all=True, filters={"label": LABEL})
    assert [(c["Id"][:12], c["Status"], c["Command"][-60:]) for c in left] == []


@pytest.fixture(scope="session")
def docker_warm(docker: DockerRunner) -> Iterator[WarmDockerRunner]:
    """Docker seats from pre-started containers (``WarmDockerRunner``), closed at the end."""
    runner = WarmDockerRunner(size=2)
    yield runner
    runner.close()


@pytest.fixture(params=["bwrap", pytest.param("docker", marks=pytest.mark.docker),
                        pytest.param("docker_warm", marks=pytest.mark.docker)])
def boxed(request: pytest.FixtureRequest) -> Runner:
    """Each confined backend in turn: bwrap, Docker, Docker from pre-started containers."""
    return request.getfixturevalue(request.param)


def _run_in(runner: Runner, make_bot: Callable[..., InstalledBot]):
    """Start a bot source in ``runner``; every session is closed and checked for leftovers, and
    a healthy bot must still play afterwards (the machine is fit for the next match)."""
    sessions: list[BotSession] = []

    def start(source: str, filename: str = "bot.py", clock: Clock = FAST, **kw: Any) -> BotSession:
        session = open_session(runner, make_bot(source, filename), clock, **kw)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()
        assert_left_nothing(session)
    with open_session(runner, make_bot(python_bot()), FAST) as healthy:
        assert play_match(healthy) == ["play TH"] * 3
    assert_left_nothing(healthy)


@pytest.fixture
def run_in_bwrap(bwrap: BwrapRunner, make_bot: Callable[..., InstalledBot]):
    """``run_boxed`` under bwrap alone."""
    yield from _run_in(bwrap, make_bot)


@pytest.fixture
def run_boxed(boxed: Runner, make_bot: Callable[..., InstalledBot]):
    """``start(source, filename, clock, **kw)`` under each confined backend in turn."""
    yield from _run_in(boxed, make_bot)
