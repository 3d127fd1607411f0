"""The settings' zero-set-up defaults and the Celery reliability options, read in a fresh process
with a chosen environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import clear_cache

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
    "cache_prefix": settings.CACHES["default"].get("KEY_PREFIX"),
}))
"""


def probe(tmp_path, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("DATABASE_URL", "REDIS_URL", "ARENA_QUEUE", "ARENA_REDIS_PREFIX",
                          "ARENA_BOT_CACHE", "ARENA_TEST_RUN")}
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
    assert found["beat"] == [
        "ladder-tick", "prune-old-data", "run-due-schedules", "sweep-stuck-matches"
    ]


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
    assert "global_keyprefix" not in found["options"] and not found["cache_prefix"]


def test_fixed_time_turns_lengthen_the_match_time_limit_and_the_redelivery(tmp_path):
    found = probe(tmp_path, REDIS_URL="redis://cache.example:6379/0", ARENA_FIXED_TURNS="1",
                  ARENA_MOVE_MS="200")
    assert found["time_limit"] == 600 + 5_000 * 200 // 1000  # 5,000 decisions at the clock
    assert found["options"]["visibility_timeout"] == found["time_limit"] + 300
    assert probe(tmp_path, ARENA_MOVE_MS="200")["time_limit"] == 600  # not without fixed turns


def check_output(tmp_path, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "DATABASE_URL"))}
    clean.update({"ARENA_VAR_DIR": str(tmp_path), **env})
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=clean,
                          capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


def test_the_checks_catch_a_clock_the_platform_cannot_keep(tmp_path):
    assert "arena.E001" in check_output(tmp_path, ARENA_MOVE_MS="0")
    pinned = {"REDIS_URL": "redis://cache.example:6379/0", "ARENA_FIXED_TURNS": "1",
              "ARENA_VISIBILITY_TIMEOUT": "900"}
    assert "arena.W002" in check_output(tmp_path, **pinned)  # 900 s < 600 + 5,000 x 1 s
    assert "arena.W002" not in check_output(tmp_path, **pinned, ARENA_MOVE_MS="50")


def test_a_redis_prefix_goes_before_every_cache_and_broker_key(tmp_path):
    found = probe(tmp_path, REDIS_URL="redis://cache.example:6379/0", ARENA_REDIS_PREFIX="site-a:")
    assert found["options"]["global_keyprefix"] == "site-a:"
    assert found["cache_prefix"] == "site-a:"


def test_this_run_has_names_of_its_own(settings):
    """tests/settings.py: the test database, the queue, Redis keys and the bot cache carry the
    run's id, and the environment hands them to the processes the e2e tests start."""
    run = os.environ["ARENA_TEST_RUN"]
    assert run in settings.DATABASES["default"]["TEST"]["NAME"]
    assert settings.CELERY_TASK_DEFAULT_QUEUE == os.environ["ARENA_QUEUE"] == f"test-{run}"
    assert settings.REDIS_PREFIX == os.environ["ARENA_REDIS_PREFIX"] == f"test-{run}:"
    assert settings.ARENA_BOT_CACHE == settings.ARENA_TEST_RUN_DIR / "bots"
    assert settings.ARENA_TEST_RUN_DIR.name == run
    if settings.REDIS_URL:
        assert settings.CACHES["default"]["KEY_PREFIX"] == settings.REDIS_PREFIX
        assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] == settings.REDIS_PREFIX


def test_clearing_the_cache_leaves_other_runs_keys(settings):
    """``cache.clear()`` is Redis's FLUSHDB: the tests clear their own keys only."""
    if not settings.REDIS_URL:
        pytest.skip("needs Redis")
    import redis
    from django.core.cache import cache

    client = redis.Redis.from_url(settings.REDIS_URL)
    other = "test-someone-else::1:throttle"
    client.set(other, b"1", ex=60)
    cache.set("mine", 1)
    try:
        clear_cache()
        assert cache.get("mine") is None
        assert client.get(other) == b"1"
    finally:
        client.delete(other)
        client.close()


def test_platform_work_has_a_queue_of_its_own_that_workers_consume(settings):
    """Matches go to the default queue; refits, sweeps and schedules to the control queue, so a
    round-robin's backlog never holds them up; a worker started plainly consumes both."""
    from config.celery import app

    router = app.amqp.router
    matches = settings.CELERY_TASK_DEFAULT_QUEUE
    control = settings.ARENA_CONTROL_QUEUE
    assert control != matches
    assert router.route({}, "arena.tasks.run_match")["queue"].name == matches
    assert router.route({}, "arena.tasks.play_match")["queue"].name == matches  # the old name
    for task in ("arena.tasks.refit_ratings", "arena.tasks.sweep_stuck_matches",
                 "arena.tasks.run_due_schedules"):
        assert router.route({}, task)["queue"].name == control
    # What a worker started without -Q consumes (``app.amqp.queues`` also holds any queue a task
    # was sent to in this process, such as the e2e tests' own).
    assert {queue.name for queue in app.conf.task_queues} == {matches, control}


def _bare_env(tmp_path, **env: str) -> dict[str, str]:
    """This process's environment without any DJANGO_/ARENA_ setting nor a database or Redis."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("DJANGO_", "ARENA_")) and k not in ("DATABASE_URL", "REDIS_URL")}
    clean.update({"DJANGO_SETTINGS_MODULE": "config.settings", "ARENA_VAR_DIR": str(tmp_path)})
    clean.update(env)
    return clean


def test_debug_is_off_unless_asked_for(tmp_path):
    """A deployment that forgets DJANGO_DEBUG=0 must not show its settings on an error page."""
    env = _bare_env(tmp_path, DJANGO_SECRET_KEY="k" * 50,
                    REDIS_URL="redis://:hunter2-secret@127.0.0.1:1/0")
    code = ("import django; django.setup(); from django.conf import settings as s; "
            "from django.test import Client; "
            "r = Client(raise_request_exception=False).get('/no-such-page/', secure=True); "
            "print(s.DEBUG, r.status_code, b'hunter2' in r.content)")
    found = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=60)
    assert found.stdout.split() == ["False", "404", "False"], found.stderr[-2000:]
    asked = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                           env={**env, "DJANGO_DEBUG": "1"}, timeout=60)
    assert asked.stdout.split()[0] == "True"


def test_without_a_secret_key_only_a_local_duel_runs(tmp_path):
    env = _bare_env(tmp_path)
    refused = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "DJANGO_SECRET_KEY" in refused.stderr
    duel = subprocess.run(
        [sys.executable, "manage.py", "play", "--rules", "pollack", "builtin:random",
         "builtin:random"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert duel.returncode == 0, duel.stderr[-2000:]
    assert '"matches": 2' in duel.stdout


def test_make_run_asks_for_debug():
    makefile = (ROOT / "Makefile").read_text()
    assert "export DJANGO_DEBUG ?= 1" in makefile
    assert 'env.setdefault("DJANGO_DEBUG", "1")' in (ROOT / "platform" / "run_local.py").read_text()


def test_a_blank_setting_means_its_default(tmp_path):
    """Compose hands a setting left out of .env on as a blank value: the default, not a crash at
    start (``int("")``) nor an empty rate."""
    blank = {name: "" for name in (
        "ARENA_MATCH_TIME_LIMIT", "ARENA_DOCKER_POOL", "ARENA_NUM_PROXIES", "ARENA_UPLOAD_RATE",
        "ARENA_LADDER_TICK", "ARENA_MAX_REQUEST_BYTES", "LOG_LEVEL", "ARENA_VISIBILITY_TIMEOUT",
    )}
    found = probe(tmp_path, REDIS_URL="redis://cache.example:6379/0", **blank)
    assert found["time_limit"] == 600
    assert found["options"]["visibility_timeout"] == 600 + 300
