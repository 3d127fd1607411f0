"""Cancelling a round-robin in a real browser (Debian's headless Chromium, Django's live server):
its creator confirms, the page shows it cancelled with each unplayed match's reason, and htmx stops
polling. Screenshot: ``test-artifacts/screenshots/round-robin-cancelled.png``."""

from __future__ import annotations

import time
from unittest import mock

import pytest

from arena.services.bots import builtin_bots_ensure
from arena.services.tournaments import tournament_create
from tests.web.test_browser import shot

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_creator_cancels_and_the_page_stops_polling(alice, live_server, browser, screenshots):
    builtins = builtin_bots_ensure()
    with mock.patch("arena.tasks.run_match.apply_async"):  # no worker: every match stays queued
        tournament = tournament_create(
            created_by=alice, name="Cancelled cup", rules={"preset": "politaine"}, pairs=1,
            version_ids=[builtins["random"].pk, builtins["greedy"].pk],
        )
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    polls: list[float] = []
    page.on("request", lambda r: "/live/" in r.url and polls.append(time.monotonic()))
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-password-1")
    page.click("main button[type=submit]")
    page.goto(f"{live_server.url}/tournaments/{tournament.pk}/")
    assert page.get_attribute("#live", "hx-trigger") == "every 2s"
    with page.expect_request(lambda r: "/live/" in r.url, timeout=15_000):
        pass  # a running round-robin's page polls

    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
    page.click("#cancel")
    page.wait_for_selector('#live[data-status="cancelled"]')
    assert dialogs and "Cancelled cup" in dialogs[0]
    assert "is cancelled" in page.inner_text(".messages")
    assert page.locator(".progress-text .status.cancelled").inner_text() == "cancelled"
    assert page.locator("#cancelled").is_visible() and page.locator("#cancel").count() == 0
    assert page.get_attribute("#live", "hx-trigger") is None
    reasons = page.locator("table.matches .failure").all_inner_texts()
    assert reasons == ["cancelled by alice before it was played"] * 2
    shot(page, screenshots, "round-robin-cancelled")
    polls.clear()
    page.wait_for_timeout(3000)
    assert polls == [], "a cancelled round-robin's page no longer polls"

    page.goto(f"{live_server.url}/tournaments/")
    assert page.locator("td .status.cancelled").inner_text() == "cancelled"
    context.close()
    assert errors == []
