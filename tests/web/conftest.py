"""Fixtures for the pages' tests: in-process tasks and a small played world for the Django test
client, and (for the browser tests) headless Chromium over the e2e stack's real gunicorn and
worker."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.arena.conftest import alice, bob, eager_tasks, run_tasks  # noqa: F401 (fixtures)
from tests.e2e.conftest import stack  # noqa: F401 (the real web server and worker)

ROOT = Path(__file__).resolve().parents[2]
#: Where the browser tests write a screenshot of every page they visit.
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture
def eager(settings):
    """Tasks run in-process when the transaction that queued them commits (not autouse here: the
    browser tests need the real worker)."""
    with eager_tasks(settings):
        yield


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's Chromium, headless, driven by Playwright (no downloaded browser)."""
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium: `apt-get install -y chromium` (make test and .ci/run do)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread; the test's own database
    # reads are still synchronous, so Django's async-safety check is off while it runs.
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
