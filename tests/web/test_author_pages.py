"""A bot author's first evening, in a real browser (Debian's headless Chromium) over gunicorn and a
real worker: each page says what is happening without a reload or a click.

- the header is as tall signed in as signed out (wide and at 375 px);
- the bot page follows a validation live (htmx) and stops polling once it is final; a failed
  validation shows its cause (the stderr's SyntaxError) without a click;
- a validation match that passed reads "passed", not a red "lost"; each match offers its owner
  the command line that debugs it at home;
- an error on an option opens the collapsed Options panel;
- the Cancel button leaves a round-robin's page when it finishes, without a reload;
- the standings show W-D-L whole at 375 px;
- the leaderboard says when a refit is pending; ``/?preset=nope`` is a 404;
- Swagger UI and ReDoc render with every request to another host refused (no internet).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from arena.models import RatingBoard, RefitState
from tests.arena.conftest import FIRST_BOT
from tests.e2e.conftest import Stack, wait_for
from tests.web.test_browser import shot

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "erin-password-1"
SYNTAX_ERROR_BOT = b"import json, sys\ndef broken(:\n    pass\n"


def header_height(page) -> float:
    return page.evaluate("document.querySelector('header.site').getBoundingClientRect().height")


def sign_in(page, url: str) -> None:
    page.goto(f"{url}/login/")
    page.fill("#id_username", "erin")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/bots/")


def upload(page, url: str, name: str, source: bytes) -> str:
    page.goto(f"{url}/bots/new/")
    page.fill("#id_name", name)
    page.set_input_files("#id_file", files=[
        {"name": f"{name}.py", "mimeType": "text/x-python", "buffer": source}])
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/bots/*/")
    return page.url


def test_the_pages_speak_where_they_should(stack: Stack, browser, screenshots):
    User.objects.create_user("erin", password=PASSWORD)
    url = stack.url
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    narrow = browser.new_context(viewport={"width": 375, "height": 800})
    small = narrow.new_page()

    # The header's height, signed out then signed in, wide and narrow.
    page.goto(f"{url}/bots/")
    small.goto(f"{url}/bots/")
    heights_out = (header_height(page), header_height(small))
    sign_in(page, url)
    sign_in(small, url)
    page.goto(f"{url}/bots/")
    small.goto(f"{url}/bots/")
    assert (header_height(page), header_height(small)) == heights_out

    # No worker yet: the uploads wait as pending and the page polls.
    broken_url = upload(page, url, "broken", SYNTAX_ERROR_BOT)
    assert page.get_attribute("#versions", "data-polling") == "true"
    assert page.inner_text("#version-1 .status") == "pending"
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "/versions/live/" in r.url else None)
    stack.start_worker(concurrency=2)

    # The status changes on the open page; the cause shows without a click; polling stops.
    page.wait_for_selector("#version-1 .status.failed", timeout=90_000)
    assert page.url == broken_url and polls
    assert page.get_attribute("#versions", "data-polling") == "false"
    log = page.locator("#version-1 pre.log")
    assert log.is_visible() and "SyntaxError" in log.inner_text()
    shot(page, screenshots, "bot-validation-failed")
    seen = len(polls)
    page.wait_for_timeout(5_000)
    assert len(polls) == seen, "the page kept polling after the validation was final"

    # A bot that passes: its validation match reads "passed" (green), never "lost".
    good_url = upload(page, url, "steady", FIRST_BOT)
    page.wait_for_selector("#version-1 .status.ready", timeout=90_000)
    page.reload()
    outcome = page.locator("table.matches .outcome").first
    assert outcome.inner_text() == "passed"
    assert "lost" not in page.locator("table.matches").inner_text()
    red = page.evaluate("""() => { const e = document.createElement('span');
        e.className = 'outcome lost'; document.body.append(e);
        const c = getComputedStyle(e).color; e.remove(); return c; }""")
    assert outcome.evaluate("e => getComputedStyle(e).color") != red
    page.locator("tr.debug-line summary").first.click()
    command = page.locator("tr.debug-line code.command").first.inner_text()
    match_id = page.locator("table.matches tbody th a").first.inner_text().lstrip("#")
    assert f"arena_cli --server {url} debug {match_id} --seat 0" in command
    shot(page, screenshots, "bot-validation-passed")

    # An error on an option (inside the collapsed panel) opens the panel.
    page.goto(f"{url}/tournaments/new/")
    assert not page.locator("details.options").evaluate("e => e.open")
    page.fill("#id_name", "Evening cup")
    for label in ("erin/steady v1", "arena/random v1"):
        page.get_by_label(label, exact=True).check()
    page.locator("details.options summary").click()
    page.fill("#id_target", "0")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert page.locator("details.options").evaluate("e => e.open")
    error = page.locator("details.options .error").first
    assert error.is_visible() and "1" in error.inner_text()
    shot(page, screenshots, "round-robin-option-error")

    # A round-robin: Cancel shows while it runs and is gone once it finishes, with no reload.
    page.fill("#id_target", "")
    page.fill("#id_pairs", "3")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/tournaments/*/")
    tournament_url = page.url
    if page.get_attribute("#live", "data-status") == "running":
        assert page.locator("#cancel").is_visible()
    page.wait_for_selector('#live[data-status="finished"]', timeout=150_000)
    assert page.url == tournament_url
    assert page.locator("#cancel").count() == 0

    # The standings at 375 px: W-D-L whole, inside the visible width.
    small.goto(tournament_url)
    for row in range(2):
        cell = small.locator("#standings tbody tr").nth(row).locator("td.wdl")
        box = cell.bounding_box()
        assert box and box["x"] + box["width"] <= 375, box
        assert cell.evaluate("e => e.scrollWidth <= e.clientWidth")
    shot(small, screenshots, "round-robin-375")

    # The leaderboard says when a refit is pending, and nothing when none is.
    wait_for(lambda: RatingBoard.objects.filter(key="quatre-sept", state=RefitState.IDLE,
                                                generation__gt=0).exists(), 60, "the refit")
    page.goto(f"{url}/")
    assert page.locator("#refit-pending").count() == 0
    RatingBoard.objects.filter(key="quatre-sept").update(state=RefitState.QUEUED)
    page.goto(f"{url}/")
    assert page.locator("#refit-pending").is_visible()
    assert "refit" in page.inner_text("#refit-pending")
    shot(page, screenshots, "leaderboard-refit-pending")
    RatingBoard.objects.filter(key="quatre-sept").update(state=RefitState.IDLE)
    assert page.goto(f"{url}/?preset=nope").status == 404
    assert page.goto(f"{url}/?preset=pollack").status == 200
    assert good_url

    # The API docs with no internet: every request to another host is refused.
    offline = browser.new_context()
    refused: list[str] = []

    def only_local(route):
        if route.request.url.startswith(url):
            return route.continue_()
        refused.append(route.request.url)
        return route.abort()

    offline.route("**/*", only_local)
    docs = offline.new_page()
    docs.goto(f"{url}/api/docs/")
    docs.wait_for_selector(".opblock", timeout=20_000)
    assert docs.locator(".opblock").count() > 10
    docs.goto(f"{url}/api/redoc/")
    docs.wait_for_selector("text=/api/token/", timeout=20_000)
    shot(docs, screenshots, "redoc-offline")
    # ReDoc's bundle asks for its "powered by" logo from its maker's site and hides it when that
    # fails; nothing else leaves this host.
    assert [u for u in refused if u != "https://cdn.redoc.ly/redoc/logo-mini.svg"] == []
    offline.close()
    narrow.close()
    context.close()
    assert errors == []
