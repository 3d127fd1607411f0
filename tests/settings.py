"""The settings of a test run: ``config.settings`` under names of the run's own, so that two runs
on one machine sharing one PostgreSQL server and one Redis (two developers, or a developer and a
benchmark) never collide. pytest-django loads this module (``pyproject.toml``).

The run's id (``ARENA_TEST_RUN``: random unless set) names
- the test database: ``test_<database>_<run>`` (SQLite: ``var/test-runs/<run>/db.sqlite3``);
- the Celery default queue: ``test-<run>`` (the e2e stacks add a queue per test on top);
- every Redis key, the cache's and the broker's: prefix ``test-<run>:``;
- a folder ``var/test-runs/<run>/``: the bot cache and the files sandboxed bots are given.
They go into the environment before ``config.settings`` reads it, so the gunicorn and Celery worker
processes the e2e tests start inherit them. At the end of the run pytest-django drops the database
and ``tests/conftest.py`` deletes the keys and the folder.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

RUN = os.environ.setdefault("ARENA_TEST_RUN", secrets.token_hex(4))
_VAR = Path(os.environ.get("ARENA_VAR_DIR", Path(__file__).resolve().parents[1] / "var"))
#: This run's scratch folder; sandboxed bots run as another user, so every folder is mode 755.
ARENA_TEST_RUN_DIR = (_VAR / "test-runs" / RUN).resolve()
ARENA_TEST_RUN_DIR.mkdir(parents=True, exist_ok=True)
for _folder in (ARENA_TEST_RUN_DIR.parent, ARENA_TEST_RUN_DIR):
    _folder.chmod(0o755)
# Development settings, as before DEBUG defaulted to off (pytest-django still turns DEBUG off while
# a test runs); the production ones are probed in fresh processes (tests/arena/test_settings.py).
os.environ.setdefault("DJANGO_DEBUG", "1")
os.environ.update({
    "ARENA_QUEUE": f"test-{RUN}",
    "ARENA_REDIS_PREFIX": f"test-{RUN}:",
    "ARENA_BOT_CACHE": str(ARENA_TEST_RUN_DIR / "bots"),
    # Rating refits at most a second apart (30 s in production), so the e2e stacks' boards catch
    # up with their round-robins quickly.
    "ARENA_REFIT_EVERY": os.environ.get("ARENA_REFIT_EVERY", "1"),
    # Every test signs in from 127.0.0.1: the run's tests together pass the production quota of
    # sign-in attempts; its own test sets it low.
    "ARENA_LOGIN_RATE": os.environ.get("ARENA_LOGIN_RATE", "100000/hour"),
})

from config.settings import *  # noqa: E402, F403 (the settings, read with the names above)
from config.settings import DATABASES  # noqa: E402

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": str(ARENA_TEST_RUN_DIR / "db.sqlite3")}
else:
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{RUN}"}
