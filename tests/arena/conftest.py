"""Fixtures for the arena's tests: users, API clients, bot sources, and running queued tasks.

Tasks run in-process (Celery eager mode) when the transaction that queued them commits
(``run_tasks``): real engine, real sandbox, real database. The e2e tests use a real worker.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from arena.runtime.cache import cached_install
from config.celery import app as celery_app
from sandbox import InstalledBot
from tests.conftest import clear_cache

RANDOM_BOT = b"""import json, random, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "rnd"}), flush=True)
    elif m["type"] == "turn":
        print(json.dumps({"id": m["id"], "action": random.choice(m["legal"])}), flush=True)
"""

FIRST_BOT = b"""import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "first"}), flush=True)
    elif m["type"] == "turn":
        print(json.dumps({"id": m["id"], "action": m["legal"][0]}), flush=True)
"""

CRASH_BOT = b"""import sys
print("I give up before saying hello", file=sys.stderr)
sys.exit(3)
"""

ILLEGAL_BOT = b"""import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "cheat"}), flush=True)
    elif m["type"] == "turn":
        print("about to cheat", file=sys.stderr, flush=True)
        print(json.dumps({"id": m["id"], "action": "play XX"}), flush=True)
"""


def uploaded(source: bytes, filename: str = "bot.py") -> SimpleUploadedFile:
    return SimpleUploadedFile(filename, source)


def zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in files.items():
            archive.writestr(name, body)
    return buffer.getvalue()


@contextlib.contextmanager
def eager_tasks(settings) -> Iterator[None]:
    """Tasks run in-process; throttling counters start empty; uploads are not throttled unless a
    test says so. Shared by the arena and page tests' fixtures."""
    settings.ARENA_UPLOAD_RATE = "1000/minute"
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    clear_cache()
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = eager
        clear_cache()


@pytest.fixture(autouse=True)
def _eager_tasks_and_clean_cache(settings):
    with eager_tasks(settings):
        yield


@pytest.fixture
def run_tasks(django_capture_on_commit_callbacks):
    """Use as ``with run_tasks(): ...``: tasks queued inside run when the block ends."""

    def runner():
        return django_capture_on_commit_callbacks(execute=True)

    return runner


@pytest.fixture
def alice(db) -> User:
    return User.objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def bob(db) -> User:
    return User.objects.create_user("bob", password="bob-password-1")


@pytest.fixture
def client_for() -> Callable[[User | None], APIClient]:
    def make(user: User | None) -> APIClient:
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return client

    return make


@pytest.fixture
def upload(run_tasks, client_for):
    """``upload(user, name, source, filename)`` → the API response; validation runs."""

    def do(user: User, name: str, source: bytes = RANDOM_BOT, filename: str = "bot.py"):
        with run_tasks():
            return client_for(user).post(
                "/api/bots/",
                {"name": name, "file": uploaded(source, filename)},
                format="multipart",
            )

    return do


@pytest.fixture
def reachable_folder(settings) -> Iterator[Path]:
    """A folder sandboxed bots can reach (pytest's own tmp is mode 700): in this run's folder
    under ``var/``; removed afterwards."""
    root = settings.ARENA_TEST_RUN_DIR / "tmp"
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    folder = Path(tempfile.mkdtemp(dir=root))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def install_cached(folder: Path, source: bytes, filename: str = "bot.py") -> InstalledBot:
    """``source`` installed through the worker's bot cache under ``folder / "cache"``."""
    digest = hashlib.sha256(source).hexdigest()
    return cached_install(folder / "cache", digest, filename, lambda: source)
