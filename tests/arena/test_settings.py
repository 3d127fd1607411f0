"""The settings' zero-set-up defaults and the Celery reliability options, read in a fresh process
with a chosen environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, django
django.setup()
from django.conf import settings
from config.celery import app
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "name": str(settings.DATABASES["default"]["NAME"]),
    "broker": app.conf.broker_url,
    "options": app.conf.broker_transport_options,
    "acks_late": app.conf.task_acks_late,
    "reject": app.conf.task_reject_on_worker_lost,
    "prefetch": app.conf.worker_prefetch_multiplier,
    "time_limit": app.conf.task_time_limit,
    "queue": app.conf.task_default_queue,
    "beat": sorted(app.conf.beat_schedule),
}))
"""


def probe(tmp_path, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("DATABASE_URL", "REDIS_URL", "ARENA_QUEUE")}
    clean.update({"DJANGO_SETTINGS_MODULE": "config.settings", "ARENA_VAR_DIR": str(tmp_path)})
    clean.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=clean, check=True,
                         capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_no_settings_means_sqlite_and_the_filesystem_broker(tmp_path):
    found = probe(tmp_path)
    assert found["engine"] == "django.db.backends.sqlite3"
    assert found["name"] == str(tmp_path / "db.sqlite3")
    assert found["broker"].startswith("filesystem://")
    assert found["options"]["data_folder_in"] == str(tmp_path / "broker" / "queue")
    assert (tmp_path / "broker" / "queue").is_dir()
    assert found["acks_late"] and found["reject"] and found["prefetch"] == 1
    assert found["beat"] == ["run-due-schedules", "sweep-stuck-matches"]


def test_urls_switch_to_postgres_and_redis(tmp_path):
    found = probe(
        tmp_path,
        DATABASE_URL="postgres://u:p@db.example:5432/arena",
        REDIS_URL="redis://cache.example:6379/0",
        ARENA_MATCH_TIME_LIMIT="120",
        ARENA_QUEUE="matches",
    )
    assert found["engine"] == "django.db.backends.postgresql"
    assert found["broker"] == "redis://cache.example:6379/0"
    assert found["options"]["visibility_timeout"] == 120 + 300  # above the longest match
    assert found["options"]["unacked_restore_interval"] <= 10
    assert found["time_limit"] == 120
    assert found["queue"] == "matches"
