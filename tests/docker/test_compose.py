"""The real ``compose.yaml`` on a real Docker engine (``make test-docker``): web, two worker
replicas, beat, PostgreSQL and Redis. Two users upload bots over HTTP (validated and played in
Docker sandboxes the workers start through the engine), a round-robin plays through the REST API,
one worker container dies in the middle (its main process SIGKILLed, as a crash would) and every
match ends recorded exactly once; the leaderboard and a replay read back; ``docker compose down``
leaves no container, network or volume of the project. Redis lets in only clients with its
password (every service's URL carries it) and evicts nothing under its memory cap.

The images come from ``make test-docker`` (``docker compose build`` with the bases it chose); the
variables it passes (PYTHON_IMAGE, POSTGRES_IMAGE, ...) select them here. The stack's published
port is on loopback (of the engine's own network namespace under the private engine).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from engine.check import check_replay
from sandbox.runners.docker import sandbox_owner
from tests.arena.conftest import FIRST_BOT
from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
MATCHES = 12  # 3 versions: 3 pairings x 2 seat swaps x 2 pairs

#: A legal bot slow enough (15 ms a decision) for matches to be running when a worker dies.
SLOW_BOT = b"""import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "slow"}), flush=True)
    elif m["type"] == "turn":
        time.sleep(0.015)
        print(json.dumps({"id": m["id"], "action": m["legal"][-1]}), flush=True)
"""

#: Run in a platform container: the stack's Redis through the container's REDIS_URL, and what a
#: client without the password, or with a wrong one, reads (raw replies: -NOAUTH, -WRONGPASS).
REDIS_PROBE = """
import json, os, socket, redis
client = redis.Redis.from_url(os.environ["REDIS_URL"], decode_responses=True, socket_timeout=5)
config = {}
for name in ("maxmemory", "maxmemory-policy", "appendonly"):
    config.update(client.config_get(name))
found = {"ping": client.ping(), "config": config}
for name, said in [("anonymous", b"PING\\r\\n"), ("wrong password", b"AUTH not-it\\r\\n")]:
    with socket.create_connection(("redis", 6379), timeout=5) as sock:
        sock.sendall(said)
        found[name] = sock.recv(200).decode()
print(json.dumps(found))
"""


@dataclass
class Compose:
    """One compose project of the real compose.yaml, and how to reach its web service."""

    project: str
    env: dict[str, str]
    url: str

    def run(self, *args: str, timeout: float = 300, check: bool = True) -> str:
        done = subprocess.run(
            ["docker", "compose", "-f", str(ROOT / "compose.yaml"), "-p", self.project, *args],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"docker compose {' '.join(args)}: {done.stderr[-3000:]}")
        return done.stdout

    def docker(self, *args: str) -> str:
        return subprocess.run(["docker", *args], env=self.env, capture_output=True, text=True,
                              timeout=60, check=True).stdout

    def leftovers(self) -> dict[str, list[str]]:
        """The project's containers, networks and volumes the engine still has."""
        label = f"label=com.docker.compose.project={self.project}"
        commands = {"containers": ["ps", "-aq"], "networks": ["network", "ls", "-q"],
                    "volumes": ["volume", "ls", "-q"]}
        return {kind: self.docker(*command, "--filter", label).split()
                for kind, command in commands.items()}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _docker_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        pytest.fail(f"the compose test mounts the engine's socket into the workers: {host}")
    return host.removeprefix("unix://")


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


@pytest.fixture
def compose() -> Iterator[Compose]:
    if shutil.which("docker") is None or subprocess.run(
        ["docker", "compose", "version"], capture_output=True
    ).returncode != 0:
        if os.environ.get("QS_REQUIRE_DOCKER") == "1":
            pytest.fail("make test-docker needs the docker CLI and its compose plugin")
        pytest.skip("no docker compose: make test-docker runs this")
    # The bot cache: a host folder the workers write (as root) and the engine bind-mounts into
    # the bots' containers (uid 1000 must reach it).
    cache = Path(tempfile.mkdtemp(prefix="qs-compose-bots-"))
    cache.chmod(0o711)
    port = _free_port()
    project = f"qstest{secrets.token_hex(4)}"
    # The test run's own database, broker and settings are not the stack's: compose would hand
    # them on (a worker host names the main host's database that way).
    inherited = {
        key: value for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "LOG_LEVEL") and not key.startswith("ARENA_")
    }
    env = {
        **inherited,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(32),
        "POSTGRES_PASSWORD": secrets.token_urlsafe(16),
        "REDIS_PASSWORD": secrets.token_hex(16),
        "REDIS_MAXMEMORY": "64mb",
        "PORT": f"127.0.0.1:{port}",
        "BOT_CACHE": str(cache),
        "DOCKER_SOCKET": _docker_socket(),
        "WORKER_CONCURRENCY": "1",
        "ARENA_VISIBILITY_TIMEOUT": "30",
        # The site's own name first, as an operator sets it, and no 127.0.0.1: the web service's
        # health check must ask by a name it allows, or the workers (which wait for it to be
        # healthy) never start.
        "ALLOWED_HOSTS": "arena.test,localhost",
    }
    stack = Compose(project, env, f"http://localhost:{port}")
    try:
        stack.run("up", "-d", "--no-build", "--scale", "worker=2", timeout=600)
        wait_for(lambda: _answers(f"{stack.url}/health/"), 240, "the web service to answer")
        yield stack
    except BaseException:
        print(stack.run("logs", "--no-color", "--tail", "60", check=False))
        raise
    finally:
        stack.run("down", "--volumes", "--remove-orphans", "--timeout", "20", check=False)
        shutil.rmtree(cache, ignore_errors=True)
    assert stack.leftovers() == {"containers": [], "networks": [], "volumes": []}
    # No seat container of the stack's workers is left (this test run's own seats are not
    # theirs: other tests may hold some).
    seats = stack.docker("ps", "-a", "--format",
                         '{{.Label "quatresept.owner"}} {{.Status}} {{.Command}}',
                         "--filter", "label=quatresept.sandbox").splitlines()
    assert [seat for seat in seats if not seat.startswith(f"{sandbox_owner()} ")] == []


def _user(stack: Compose, name: str) -> requests.Session:
    """A user made the way the README says (manage.py in the web container), signed in."""
    password = secrets.token_urlsafe(12)
    stack.run("exec", "-T", "-e", f"DJANGO_SUPERUSER_PASSWORD={password}", "web", "python",
              "manage.py", "createsuperuser", "--noinput", "--username", name,
              "--email", f"{name}@example.org")
    session = requests.Session()
    token = session.post(f"{stack.url}/api/token/", json={"username": name, "password": password},
                         timeout=10)
    assert token.status_code == 200, token.text
    session.headers["Authorization"] = f"Token {token.json()['token']}"
    return session


def _upload(stack: Compose, session: requests.Session, name: str, source: bytes) -> int:
    response = session.post(f"{stack.url}/api/bots/", data={"name": name},
                            files={"file": (f"{name}.py", source)}, timeout=30)
    assert response.status_code == 201, response.text
    version = response.json()["latest_version"]["id"]
    wait_for(lambda: requests.get(f"{stack.url}/api/versions/{version}/", timeout=10)
             .json()["status"] == "ready", 120, f"{name} to be validated in a Docker sandbox")
    return version


def _check_redis(stack: Compose) -> None:
    """Redis refuses clients without its password, while web, the workers and beat (each through
    its own REDIS_URL) sign in; it is healthy (its health check signs in too), capped at
    REDIS_MAXMEMORY and evicts nothing; the password is in no service's log."""
    redis_container = stack.run("ps", "-q", "redis").strip()
    assert stack.docker("inspect", "--format", "{{.State.Health.Status}}",
                        redis_container).strip() == "healthy"
    for service in ("web", "worker", "beat"):
        found = json.loads(stack.run("exec", "-T", service, "python", "-c", REDIS_PROBE))
        assert found["ping"] is True, service
        assert found["anonymous"].startswith("-NOAUTH"), found
        assert found["wrong password"].startswith("-WRONGPASS"), found
        assert found["config"] == {"maxmemory": str(64 * 2**20), "maxmemory-policy": "noeviction",
                                   "appendonly": "yes"}
    assert stack.env["REDIS_PASSWORD"] not in stack.run("logs", "--no-color")


def test_compose_stack_plays_a_round_robin_through_a_worker_crash(compose: Compose):
    stack = compose
    workers = stack.run("ps", "-q", "worker").split()
    assert len(workers) == 2
    _check_redis(stack)
    alice, bob = _user(stack, "alice"), _user(stack, "bob")
    slow = _upload(stack, alice, "slow", SLOW_BOT)
    first = _upload(stack, bob, "first", FIRST_BOT)
    bots = requests.get(f"{stack.url}/api/bots/?owner=arena", timeout=10).json()["results"]
    builtin = next(b["latest_version"]["id"] for b in bots if b["builtin"] == "random")
    versions = [slow, first, builtin]
    created = alice.post(
        f"{stack.url}/api/tournaments/",
        json={"name": "compose cup", "rules": {"preset": "quatre-sept"}, "versions": versions,
              "pairs": 2},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    url = f"{stack.url}/api/tournaments/{created.json()['id']}/"
    matches_url = f"{stack.url}/api/matches/?tournament={created.json()['id']}&page_size=100"

    # Both workers take matches off the one queue; kill one while both are busy.
    def both_busy() -> bool:
        listed = requests.get(matches_url, timeout=10).json()["results"]
        return sum(m["status"] == "running" for m in listed) == 2
    wait_for(both_busy, 120, "both workers to be playing a match", every=0.1)
    victim = workers[1]
    pid = int(stack.docker("inspect", "--format", "{{.State.Pid}}", victim).strip())
    os.kill(pid, signal.SIGKILL)  # the worker's main process: the container dies with it

    detail = wait_for(
        lambda: (body := requests.get(url, timeout=10).json())["status"] == "finished" and body,
        300, "the round-robin to finish", every=0.5,
    )
    assert detail["total"] == detail["done"] == MATCHES
    assert detail["progress"]["failed"] == 0

    # Every match recorded exactly once: twelve distinct matches, each finished with one result,
    # and the match the dead worker held was played again from the start.
    listed = requests.get(matches_url, timeout=10).json()
    assert listed["count"] == MATCHES
    assert len({m["id"] for m in listed["results"]}) == MATCHES
    assert all(m["status"] == "finished" for m in listed["results"])
    assert any(m["attempts"] >= 2 for m in listed["results"])
    standings = {row["version"]: row for row in detail["standings"]}
    assert all(standings[v]["played"] == 8 for v in versions)
    assert sum(standings[v]["points"] for v in versions) == MATCHES  # one point a match

    # The crashed worker came back (restart: unless-stopped).
    restarts = stack.docker("inspect", "--format", "{{.RestartCount}}", victim).strip()
    assert int(restarts) >= 1

    replay = requests.get(f"{stack.url}/api/matches/{listed['results'][0]['id']}/replay/",
                          timeout=10).json()
    check_replay(replay)
    assert {p["bot"] for p in replay["players"]} <= {"alice/slow", "bob/first", "arena/random"}

    board = wait_for(
        lambda: (rows := requests.get(f"{stack.url}/api/leaderboard/", timeout=10)
                 .json()["results"]) and {r["version"] for r in rows} >= set(versions) and rows,
        120, "the leaderboard to rate the three versions", every=1,
    )
    assert sorted(r["rank"] for r in board)[:3] == [1, 2, 3]
    print(json.dumps({"standings": detail["standings"], "leaderboard": board})[:2000])
