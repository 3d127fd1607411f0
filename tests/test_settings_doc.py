"""``docs/settings.md``'s table lists exactly the environment variables ``config/settings.py``
reads: a variable added to the settings without a line in the table (or a line left for one
removed) fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

#: The settings module's ways of reading a variable: ``os.environ.get(NAME, ...)``,
#: ``os.environ[NAME]`` and its helpers ``_env(NAME, ...)``, ``_env_bool(NAME, ...)``,
#: ``_env_list(NAME, ...)``.
READERS = {"get", "_env", "_env_bool", "_env_list"}

#: Settings compose does not hand on from .env: where the stack puts its files, queues and keys,
#: and the test suite's switch.
NOT_FOR_COMPOSE = {"ARENA_VAR_DIR", "ARENA_QUEUE", "ARENA_REDIS_PREFIX", "CELERY_EAGER"}


def read_by_settings() -> set[str]:
    tree = ast.parse((ROOT / "config" / "settings.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            on_environ = not isinstance(func, ast.Attribute) or (
                isinstance(func.value, ast.Attribute) and func.value.attr == "environ"
            )
            if called in READERS and on_environ:
                names.add(node.args[0].value)
        elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
              and node.value.attr == "environ" and isinstance(node.slice, ast.Constant)):
            names.add(node.slice.value)
    return names


def in_the_table() -> set[str]:
    text = (ROOT / "docs" / "settings.md").read_text()
    return set(re.findall(r"^\| `([A-Z0-9_]+)` \|", text, re.MULTILINE))


def test_the_reader_finds_the_variables_it_should():
    names = read_by_settings()
    assert {"DATABASE_URL", "REDIS_URL", "DJANGO_DEBUG", "ALLOWED_HOSTS",
            "ARENA_NUM_PROXIES", "CELERY_EAGER"} <= names


def test_the_settings_table_lists_exactly_what_settings_reads():
    read, listed = read_by_settings(), in_the_table()
    assert sorted(read - listed) == [], "read by config/settings.py, missing from docs/settings.md"
    assert sorted(listed - read) == [], "in docs/settings.md, not read by config/settings.py"


def test_compose_hands_every_setting_on_to_the_platform():
    """An operator sets any setting in .env (README, "Production with compose"): compose passes
    each one on, or sets it itself. (``ARENA_NUM_PROXIES``, in the README's own .env, used to
    stop at compose, so behind a proxy every client shared the proxy's throttles.)"""
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    for name in ("web", "worker", "beat"):
        environment = set(services[name]["environment"])
        missing = read_by_settings() - NOT_FOR_COMPOSE - environment
        assert sorted(missing) == [], f"compose's {name} service drops these from .env"


def test_compose_redis_needs_its_password_and_evicts_nothing():
    """Redis, the queue of matches, starts only with ``REDIS_PASSWORD`` (compose refuses to start
    without it, as without ``DJANGO_SECRET_KEY``), every platform service's URL to it carries the
    password, and its health check signs in; its memory is capped (``REDIS_MAXMEMORY``) and it
    evicts nothing, since an evicting broker would drop queued matches' tasks. The running stack is
    checked in ``tests/docker/test_compose.py``."""
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    required = "${REDIS_PASSWORD:?"
    command = services["redis"]["command"]
    assert command[0] == "redis-server"
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert options["--requirepass"].startswith(required)
    assert options["--maxmemory"].startswith("${REDIS_MAXMEMORY:-")
    assert options["--maxmemory-policy"] == "noeviction"
    assert options["--appendonly"] == "yes"
    assert services["redis"]["environment"]["REDISCLI_AUTH"].startswith(required)
    for name in ("web", "worker", "beat"):
        url = services[name]["environment"]["REDIS_URL"]
        assert url.startswith("${MAIN_REDIS_URL:-redis://:" + required), name
    readme = (ROOT / "README.md").read_text()
    assert "\nREDIS_PASSWORD=$(" in readme and "MAIN_REDIS_URL=redis://:<REDIS_PASSWORD>@" in readme
