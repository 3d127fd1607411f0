"""Fixtures for the reliability tests: the e2e stack (a real gunicorn and real ``celery -A config
worker`` processes on the test database), optionally on a Redis server of the test's own that the
test can kill and restart, and deterministic bots.

These tests need PostgreSQL and Redis (``make test-reliability`` passes them in); they skip on
SQLite and the filesystem broker, which are for one machine and lose a dead worker's task.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.db import connection

from tests.e2e.conftest import (
    Stack,
    _database_url,
    _free_port,
    start_web,
    upload,
    wait_for,
)

#: A legal, deterministic bot: uniform over the legal actions, seeded by match and seat (as the
#: built-in ``random`` is), a few milliseconds a decision so a match lasts about a second.
SEEDED_BOT = b"""import json, random, sys, time
rng = random.Random()
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        rng.seed(f"{m['match']}:{m['seat']}")
        print(json.dumps({"type": "ready", "name": "seeded"}), flush=True)
    elif m["type"] == "turn":
        time.sleep(0.004)
        print(json.dumps({"id": m["id"], "action": rng.choice(m["legal"])}), flush=True)
"""

#: The same, preferring the last legal action half the time: another deterministic strength.
LEANING_BOT = SEEDED_BOT.replace(
    b'rng.choice(m["legal"])', b'(m["legal"][-1] if rng.random() < 0.5 else rng.choice(m["legal"]))'
)


def needs_services() -> None:
    if connection.vendor != "postgresql" or not settings.REDIS_URL:
        pytest.skip("needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL): make test-reliability")


@dataclass
class RedisServer:
    """A redis-server of the test's own (append-only, fsync always: a restart keeps every queued
    task, as compose's Redis does), on a free loopback port, with a password."""

    port: int
    folder: Path
    password: str
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = open(self.folder / "redis.log", "ab")  # noqa: SIM115 (closed with the process)
        self.proc = subprocess.Popen(
            [shutil.which("redis-server") or "redis-server", "--port", str(self.port),
             "--bind", "127.0.0.1", "--dir", str(self.folder), "--appendonly", "yes",
             "--appendfsync", "always", "--save", "", "--requirepass", self.password],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        wait_for(self._pong, 20, "redis-server to answer")

    def kill(self) -> None:
        """SIGKILL, as a crash or an OOM kill would."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                conn.sendall(f"AUTH {self.password}\r\nPING\r\n".encode())
                time.sleep(0.05)
                return b"+PONG" in conn.recv(256)
        except OSError:
            return False


@pytest.fixture
def redis_server(tmp_path_factory) -> Iterator[RedisServer]:
    if not shutil.which("redis-server"):
        pytest.skip("needs redis-server")
    server = RedisServer(
        port=_free_port(), folder=tmp_path_factory.mktemp("redis"),
        password=f"redis-secret-{uuid.uuid4().hex}",
    )
    server.start()
    try:
        yield server
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.kill()


def start_stack(logs: Path, *, redis_url: str, **env: str) -> Stack:
    """gunicorn (2 workers) on the test database and ``redis_url``, a queue of its own; start
    workers with ``stack.start_worker``. Stop it with ``stack.stop()``."""
    queue = f"rel-{uuid.uuid4().hex[:8]}"
    full_env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "REDIS_URL": redis_url,
        "ARENA_QUEUE": queue,
        "CELERY_EAGER": "0",
        "ARENA_UPLOAD_RATE": "1000/minute",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **env,
    }
    return start_web(Stack(url="", queue=queue, env=full_env, logs=logs))


def upload_ready(stack: Stack, session: requests.Session, name: str, source: bytes) -> int:
    """Upload a bot over HTTP and wait for its validation; the version id."""
    version = upload(stack, session, name, source)

    def status() -> str | None:
        body = requests.get(f"{stack.url}/api/versions/{version}/", timeout=10).json()
        return body["status"] if body["status"] in ("ready", "failed") else None

    assert wait_for(status, 120, f"validation of {name}") == "ready"
    return version
