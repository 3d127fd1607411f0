"""The pages in a real browser (Debian's headless Chromium) over real processes: gunicorn, a Celery
worker playing the matches in the sandbox, the test database.

A new user signs up, uploads a bot, waits for its validation, starts a round-robin and watches
the progress bar reach the end; then the leaderboard, the bot page and a replay, stepped through a
whole deal by keyboard alone and checked card by card against the replay's JSON; one seat's view,
the token page, and every page at 375 px without horizontal scrolling. Each page is saved as a
screenshot in ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from tests.arena.conftest import ILLEGAL_BOT, RANDOM_BOT
from tests.e2e.conftest import Stack, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "carol-password-1"
#: What the viewer shows after the current step, read from the page.
READ_VIEWER = """() => {
  const cards = (sel) => Array.from(document.querySelectorAll(sel)).map(e => e.dataset.card);
  return {
    step: Number(document.getElementById("viewer").dataset.step),
    kind: document.getElementById("viewer").dataset.kind,
    trick: cards("#trick svg.card[data-card]"),
    hands: [0, 1, 2, 3].map(s => cards(`#hand-${s} svg.card[data-card]`)),
    backs: [0, 1, 2, 3].map(s => document.querySelectorAll(`#hand-${s} svg.card.back`).length),
    taken: [0, 1].map(t => Number(document.getElementById(`taken-${t}`).dataset.thirds)),
    score: [0, 1].map(t => Number(document.getElementById(`score-${t}`).textContent)),
    said: document.querySelectorAll("#v-said li:not(.muted)").length,
    caption: document.getElementById("v-caption").textContent,
  };
}"""


def shot(page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True, animations="disabled")


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_a_new_user_runs_a_round_robin_and_watches_a_replay(stack: Stack, browser, screenshots):
    stack.start_worker(concurrency=2)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    url = stack.url

    # Sign up, then upload a bot (the sign-up lands on the upload form).
    page.goto(f"{url}/signup/")
    shot(page, screenshots, "signup")
    page.fill("#id_username", "carol")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/bots/new/")
    page.fill("#id_name", "dice")
    page.set_input_files(
        "#id_file", files=[{"name": "dice.py", "mimeType": "text/x-python", "buffer": RANDOM_BOT}]
    )
    shot(page, screenshots, "bot-upload")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/bots/*/")
    bot_url = page.url
    # ... and a cheating bot, whose validation fails with an illegal move.
    page.goto(f"{url}/bots/new/")
    page.fill("#id_name", "cheat")
    page.set_input_files(
        "#id_file", files=[{"name": "cheat.py", "mimeType": "text/x-python", "buffer": ILLEGAL_BOT}]
    )
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/bots/*/")
    cheat_url = page.url

    def validated(where: str, status: str) -> bool:
        page.goto(where)
        return page.locator(f"td .status.{status}").count() == 1

    wait_for(lambda: validated(bot_url, "ready"), 90, "the worker to validate the upload", every=1)
    wait_for(lambda: validated(cheat_url, "failed"), 60, "the cheat to fail validation", every=1)
    # Its owner sees the fault and the stderr tail; the validation replay shows the fault.
    page.locator(".fault summary").first.click()
    assert "about to cheat" in page.locator(".fault pre.log").first.inner_text()
    shot(page, screenshots, "bot-faults")
    page.locator("td a", has_text="match").first.click()
    page.wait_for_selector("#viewer:not([hidden])")
    page.keyboard.press("End")
    assert page.locator(".fault-badge:not([hidden])").count() == 1
    assert "illegal" in page.inner_text("#v-caption")
    shot(page, screenshots, "viewer-fault")

    # Start a round-robin: the new bot against the built-in random and greedy bots.
    page.goto(f"{url}/tournaments/new/")
    page.fill("#id_name", "Browser cup")
    for label in ("carol/dice v1", "arena/random v1", "arena/greedy v1"):
        page.get_by_label(label, exact=True).check()
    page.select_option("#id_preset", "quatre-sept")
    page.fill("#id_pairs", "1")
    shot(page, screenshots, "round-robin-new")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/tournaments/*/")
    tournament_url = page.url
    total = int(page.get_attribute("#live", "data-total"))
    assert total == 6

    # htmx polls the live part: the progress bar reaches the end without a reload.
    page.wait_for_selector('#live[data-status="finished"]', timeout=150_000)
    assert page.get_attribute("#progress", "value") == page.get_attribute("#progress", "max")
    assert page.url == tournament_url
    assert page.locator("#standings tbody tr").count() == 3
    shot(page, screenshots, "round-robin")

    # The leaderboard fills once the worker's refit has run.
    def rated() -> bool:
        page.goto(f"{url}/")
        return page.locator("table.board tbody tr").count() == 3

    wait_for(rated, 60, "the ratings refit", every=1)
    shot(page, screenshots, "leaderboard")
    page.goto(bot_url)
    assert page.locator("svg.chart").count() >= 1
    shot(page, screenshots, "bot")

    # Open a replay from the round-robin's match list.
    page.goto(tournament_url)
    page.locator("table.matches tbody th a").first.click()
    page.wait_for_selector("#viewer:not([hidden])")
    match_id = int(page.url.split("#")[0].rstrip("/").split("/")[-1])
    replay = requests.get(f"{url}/api/matches/{match_id}/replay/", timeout=10).json()
    assert page.get_attribute("#replay-json", "href") == f"/api/matches/{match_id}/replay/"
    names = page.locator(".seat-name").all_inner_texts()
    assert len(names) == 4 and all(names)
    step_through_first_deal(page, replay)
    shot(page, screenshots, "viewer")
    keyboard_controls(page, replay)
    one_seats_view(page, replay)
    shot(page, screenshots, "viewer-seat-view")

    # The API token page shows the token and renews it.
    page.goto(f"{url}/account/token/")
    first = page.input_value("#token")
    shot(page, screenshots, "token")
    page.click("main form button[type=submit]")
    page.wait_for_url(f"{url}/account/token/")
    second = page.input_value("#token")
    assert second and second != first
    assert requests.get(f"{url}/api/bots/", headers={"Authorization": f"Token {second}"},
                        timeout=10).status_code == 200
    assert requests.get(f"{url}/api/bots/", headers={"Authorization": f"Token {first}"},
                        timeout=10).status_code == 401

    # 375 px wide: no page scrolls sideways.
    narrow = browser.new_context(viewport={"width": 375, "height": 800})
    small = narrow.new_page()
    for name, path in [("leaderboard", "/"), ("round-robin", tournament_url[len(url):]),
                       ("bot", bot_url[len(url):]), ("viewer", f"/matches/{match_id}/")]:
        small.goto(url + path)
        if name == "viewer":
            small.wait_for_selector("#viewer:not([hidden])")
            small.keyboard.press("PageDown")
        assert no_horizontal_scroll(small), f"{name} scrolls sideways at 375 px"
        shot(small, screenshots, f"{name}-375")
    narrow.close()

    # Log out and back in.
    page.click("nav button:has-text('Log out')")
    page.goto(f"{url}/login/")
    page.fill("#id_username", "carol")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/bots/")
    assert page.locator("nav").get_by_text("carol").count() == 1
    context.close()
    assert errors == []


def step_through_first_deal(page, replay: dict) -> None:
    """Right arrow through deal 1, checking each card step against the replay: the trick in play
    and the four hands; at the deal's end, the thirds taken, what was said and the total."""
    deal = replay["deals"][0]
    page.keyboard.press("Home")
    state = page.evaluate(READ_VIEWER)
    assert state["kind"] in ("deal", "redeal") and state["trick"] == []
    if state["kind"] == "deal":
        assert state["hands"] == deal["hands"]
    tricks = [*deal["tricks"], *([deal["trick"]] if deal.get("trick") else [])]
    plays = [
        (t, pos, (trick["leader"] + pos) % 4, card)
        for t, trick in enumerate(tricks) for pos, card in enumerate(trick["cards"])
    ]
    played: set[str] = set()
    checked = 0
    while state["kind"] != "end":
        page.keyboard.press("ArrowRight")
        state = page.evaluate(READ_VIEWER)
        if state["kind"] != "card":
            continue
        t, pos, seat, card = plays[checked]
        played.add(card)
        assert state["trick"] == tricks[t]["cards"][: pos + 1], (t, pos, state)
        assert state["hands"] == [[c for c in h if c not in played] for h in deal["hands"]]
        assert str(seat) in state["caption"] and "plays" in state["caption"]
        checked += 1
    assert checked == len(plays)
    assert state["taken"] == deal["thirds"]
    assert state["score"] == deal["score"]
    assert state["said"] == len(deal["said"])


def keyboard_controls(page, replay: dict) -> None:
    """End, Home and the buttons reached with Tab and pressed with Enter."""
    last = page.evaluate("window.arenaViewer.steps.length") - 1
    page.keyboard.press("End")
    state = page.evaluate(READ_VIEWER)
    assert state["step"] == last and state["kind"] == "end"
    assert state["score"] == replay["result"]["score"]
    page.keyboard.press("Home")
    assert page.evaluate(READ_VIEWER)["step"] == 0
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "v-next":
            break
    else:
        pytest.fail("the Next button is not reachable with Tab")
    page.keyboard.press("Enter")
    assert page.evaluate(READ_VIEWER)["step"] == 1
    page.keyboard.press("Shift+Tab")  # back to Play; the slider follows the arrow keys too
    page.focus("#v-slider")
    assert page.evaluate("document.activeElement.id") == "v-slider"
    page.keyboard.press("ArrowRight")  # the viewer steps at once, not the browser's range
    assert page.evaluate(READ_VIEWER)["step"] == 2
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(READ_VIEWER)["step"] == 1
    assert page.evaluate("document.getElementById('v-slider').value") == "1"


def one_seats_view(page, replay: dict) -> None:
    """Seat 1's view: its own hand face up, the three others face down."""
    page.select_option("#v-view", "1")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    state = page.evaluate(READ_VIEWER)
    assert state["hands"][1] and all(not state["hands"][s] for s in (0, 2, 3))
    assert all(state["backs"][s] > 0 for s in (0, 2, 3)) and state["backs"][1] == 0
