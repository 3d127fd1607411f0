"""A real stack for end-to-end tests: gunicorn serving ``config.wsgi`` and a real
``celery -A config worker`` process, both on the test database and on this run's own queue (Redis
when ``REDIS_URL`` is set, else the filesystem broker). The test talks HTTP to gunicorn and reads
the database directly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def wait_for(check: Callable[[], object], timeout: float, what: str, every: float = 0.2):
    """Poll ``check`` until it returns something truthy; fail the test after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Stack:
    """The running processes, their environment and their logs."""

    url: str
    queue: str
    env: dict[str, str]
    logs: Path
    workers: list[subprocess.Popen] = field(default_factory=list)
    web: subprocess.Popen | None = None
    beat: subprocess.Popen | None = None

    def start_worker(self, concurrency: int = 2, **env: str) -> subprocess.Popen:
        number = len(self.workers)
        log = open(self.logs / f"worker-{number}.log", "wb")  # noqa: SIM115 (closed with the proc)
        worker = subprocess.Popen(
            [str(BIN / "celery"), "-A", "config", "worker", "--loglevel=INFO",
             f"--concurrency={concurrency}", "-n", f"{self.queue}-{number}@%h",
             "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.workers.append(worker)
        wait_for(lambda: b"ready." in self.worker_log(number), 60, "the worker to start")
        return worker

    def start_beat(self, **env: str) -> subprocess.Popen:
        """Celery beat as compose runs it (its own process and schedule file): the minutely sweep
        and the due schedules; the ladder's tick too unless ``ARENA_LADDER=0``."""
        log = open(self.logs / "beat.log", "wb")  # noqa: SIM115 (closed with the process)
        self.beat = subprocess.Popen(
            [str(BIN / "celery"), "-A", "config", "beat", "--loglevel=INFO",
             "-s", str(self.logs / "celerybeat-schedule")],
            cwd=ROOT, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_for(lambda: b"beat: Starting" in (self.logs / "beat.log").read_bytes(), 60,
                 "beat to start")
        return self.beat

    def web_log(self) -> bytes:
        path = self.logs / "web.log"
        return path.read_bytes() if path.exists() else b""

    def worker_log(self, number: int = 0) -> bytes:
        path = self.logs / f"worker-{number}.log"
        return path.read_bytes() if path.exists() else b""

    def kill_worker(self, worker: subprocess.Popen) -> None:
        """SIGKILL the worker and its pool processes (its own session), as a crash would."""
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)

    def stop(self) -> None:
        for proc in [*self.workers, self.web, self.beat]:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in [*self.workers, self.web, self.beat]:
            if proc is None:
                continue
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture
def stack(transactional_db, tmp_path_factory) -> Iterator[Stack]:
    """gunicorn and a worker on the test database and a queue of this test's own."""
    logs = tmp_path_factory.mktemp("e2e-logs")
    queue = f"e2e-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "ARENA_QUEUE": queue,
        "CELERY_EAGER": "0",
        "ARENA_UPLOAD_RATE": "1000/minute",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    if settings.REDIS_URL:
        env["REDIS_URL"] = settings.REDIS_URL
    stack = start_web(Stack(url="", queue=queue, env=env, logs=logs))
    try:
        yield stack
    finally:
        stack.stop()


def start_web(stack: Stack, attempts: int = 3) -> Stack:
    """gunicorn (2 workers) for ``stack``, on a free port. Ready once its own log says it listens
    there and it answers: with another test run on this machine, a port found free can be taken
    before gunicorn binds it, and an answer from the other run's server must not count."""
    for _ in range(attempts):
        port = _free_port()
        stack.url = f"http://127.0.0.1:{port}"
        web_log = open(stack.logs / "web.log", "wb")  # noqa: SIM115 (closed with the process)
        stack.web = subprocess.Popen(
            [str(BIN / "gunicorn"), "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "2",
             "--access-logfile", "-"],
            cwd=ROOT, env=stack.env, stdout=web_log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        listening = f"Listening at: {stack.url}".encode()

        def state(web: subprocess.Popen = stack.web, listening: bytes = listening) -> str | None:
            log = stack.web_log()
            if web.poll() is not None or b"Connection in use" in log:
                return "taken"  # by another process since: try another port
            if listening in log and _answers(stack.url + "/health/"):
                return "ready"
            return None

        try:
            found = wait_for(state, 30, "gunicorn to answer")
        except BaseException:
            stack.stop()
            raise
        if found == "ready":
            return stack
        stack.stop()
    tail = stack.web_log()[-2000:].decode(errors="replace")
    pytest.fail(f"gunicorn did not start in {attempts} attempts; its log ends:\n{tail}")


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=1).status_code == 200
    except requests.RequestException:
        return False


def login(stack: Stack, username: str, password: str) -> requests.Session:
    """A requests session signed in with an API token of ``username``."""
    session = requests.Session()
    response = session.post(
        f"{stack.url}/api/token/", json={"username": username, "password": password}, timeout=10
    )
    assert response.status_code == 200, response.text
    session.headers["Authorization"] = f"Token {response.json()['token']}"
    return session


def upload(stack: Stack, session: requests.Session, name: str, source: bytes) -> int:
    """Upload a one-file Python bot over HTTP as a new bot; its first version's id."""
    response = session.post(
        f"{stack.url}/api/bots/", data={"name": name}, files={"file": (f"{name}.py", source)},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return response.json()["latest_version"]["id"]
