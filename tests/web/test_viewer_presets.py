"""The replay viewer in a real browser (Debian's headless Chromium) on the other presets: La
Politaine's signals and politaine bonus, a deal called off and dealt again, La Poule's poules
announced before play and its long match, Pollack's German faces, melds and claim. Each replay is
played by the engine in this process with bots that seek the preset's specifics, stored as a
finished match of a round-robin, and served by Django's live server; the viewer must show what the
replay holds, and stepping to the end must show the match's result as the API gives it. Every page
is saved as a screenshot in ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
import requests
from django.utils import timezone

from arena.models import Match, Replay
from arena.services.bots import builtin_bots_ensure
from arena.services.tournaments import tournament_create
from engine import FunctionSeat, Player, referee_match, rules_from_dict
from tests.web.test_browser import READ_VIEWER, shot

pytestmark = pytest.mark.django_db(transaction=True)

#: Every step of the replay as the page shows it, read by going to each step in turn.
READ_EVERY_STEP = """() => {
  const viewer = window.arenaViewer;
  const read = (READ_VIEWER);
  const out = [];
  for (let i = 0; i < viewer.steps.length; i++) {
    viewer.go(i);
    const state = read();
    state.bubbles = [0, 1, 2, 3].map(s => {
      const b = document.getElementById(`say-${s}`);
      return b.hidden ? "" : b.textContent;
    });
    state.saidItems = Array.from(document.querySelectorAll("#v-said li:not(.muted)")).map(
      li => ({text: li.textContent, cards: Array.from(li.querySelectorAll(".chip")).map(
        c => c.dataset.card)}));
    state.scoreRows = Array.from(document.querySelectorAll("#v-scores tr")).map(
      tr => Array.from(tr.children).map(c => c.textContent));
    out.push(state);
  }
  return out;
}""".replace("READ_VIEWER", READ_VIEWER)


def seeking(seed: int, seat: int, target: int) -> Callable[[dict[str, Any]], str]:
    """A deterministic bot that seeks the presets' specifics: it asks for every redeal it may,
    announces every poule it can, melds all it can, announces politaines and signals often, and
    claims only when its team has surely reached ``target``; otherwise a random legal action."""
    rng = random.Random(f"{seed}:{seat}")

    def decide(message: dict[str, Any]) -> str:
        legal = message["legal"]
        state = message["state"]
        team = seat % 2
        if "claim" in legal and state["score"][team] + state["taken"][team] // 3 >= target:
            return "claim"
        legal = [action for action in legal if action != "claim"]
        for wanted in ("redeal", "meld"):
            found = [action for action in legal if action.startswith(wanted)]
            if found:
                return rng.choice(found)
        if message["decision"] == "poules":
            return legal[-1]
        politaines = [action for action in legal if "politaine" in action]
        if politaines and rng.random() < 0.8:
            return rng.choice(politaines)
        return rng.choice(legal)

    return decide


def play(rules: dict, seed: int, match_id: str, players: list[Player] | None = None) -> dict:
    ruleset = rules_from_dict(rules)
    seats = [FunctionSeat(seeking(seed, seat, ruleset.target)) for seat in range(4)]
    return referee_match(ruleset, seats, seed=seed, match_id=match_id, players=players).replay


def recorded(user, preset: str, wanted: Callable[[dict], bool]) -> tuple[Match, dict]:
    """A finished match of a new round-robin on ``preset`` (random's and greedy's versions on its
    seats) whose replay, played by the seeking bots, has what ``wanted`` looks for. Rows are
    written directly, as a worker would record them; no task runs."""
    rules = {"preset": preset}
    for seed in range(1, 2000):
        if wanted(play(rules, seed, "m-search")):
            break
    else:
        pytest.fail(f"no {preset} replay with what the test needs in 2,000 seeds")
    builtins = builtin_bots_ensure()
    with mock.patch("arena.tasks.play_match.delay"):
        tournament = tournament_create(
            created_by=user, name=f"{preset} replays", rules=rules, pairs=1, seed=seed,
            version_ids=[builtins["random"].pk, builtins["greedy"].pk],
        )
    match = tournament.matches.order_by("id").first()
    seats = match.seats.select_related("version__bot__owner").order_by("seat")
    players = [Player(s.version.bot.label, s.version.number) for s in seats]
    replay = play(match.rules, match.seed, match.match_id, players)
    result = replay["result"]
    Match.objects.filter(pk=match.pk).update(
        status="finished", winner=result["winner"], score=result["score"],
        reason=result["reason"], finished_at=timezone.now(),
    )
    raw = json.dumps(replay).encode()
    Replay.objects.create(match=match, data=zlib.compress(raw), size=len(raw))
    return match, replay


def says(replay: dict) -> list[str]:
    return [s["say"] for deal in replay["deals"] for s in deal["said"]]


@pytest.fixture
def viewer(live_server, browser):
    """``open(match)``: a page on the match's viewer, once the viewer has started; page errors
    fail the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    errors: list[str] = []

    def open_match(match: Match):
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{live_server.url}/matches/{match.pk}/")
        page.wait_for_selector("#viewer:not([hidden])")
        return page

    yield open_match
    context.close()
    assert errors == []


def api_result(live_server, match: Match) -> dict:
    body = requests.get(f"{live_server.url}/api/matches/{match.pk}/", timeout=10).json()
    return {"score": body["score"], "winner": body["winner"], "reason": body["reason"]}


def ends_with_the_result(page, live_server, match: Match, replay: dict) -> dict:
    """End: the last deal scored, the totals and the caption give the API's result."""
    result = api_result(live_server, match)
    assert result["score"] == replay["result"]["score"]
    page.keyboard.press("End")
    state = page.evaluate(READ_VIEWER)
    assert state["kind"] == "end"
    assert state["score"] == result["score"]
    assert state["taken"] == replay["deals"][-1]["thirds"]
    winner = "Draw" if result["winner"] is None else f"Team {result['winner']} wins"
    assert f"{winner} {result['score'][0]}–{result['score'][1]}" in state["caption"]
    rows = page.locator("#v-scores tr").all_inner_texts()
    assert len(rows) == len(replay["deals"])
    assert rows[-1].split()[-1] == f"{result['score'][0]}–{result['score'][1]}"
    return state


def test_politaine_signals_and_bonus(alice, live_server, viewer, screenshots):
    match, replay = recorded(alice, "politaine", lambda r: {"tap", "slide", "politaine"} <= {
        s.split()[0] for s in says(r)} and any(d["bonus"] != [0, 0] for d in r["deals"]))
    page = viewer(match)
    states = page.evaluate(READ_EVERY_STEP)
    # Every signal shows with the card it came with: in the caption, the seat's bubble and the
    # list of what was said, with the card.
    cards = [s for s in states if s["kind"] == "card"]
    plays = [(d, t, (trick["leader"] + p) % 4, card)
             for d, deal in enumerate(replay["deals"])
             for t, trick in enumerate(deal["tricks"]) for p, card in enumerate(trick["cards"])]
    assert len(cards) == len(plays)
    words = {"tap": "taps", "slide": "slides", "politaine": "announces a politaine"}
    signals = 0
    for state, (d, t, seat, card) in zip(cards, plays, strict=True):
        said = [s["say"] for s in replay["deals"][d]["said"]
                if s.get("card") == card and s["seat"] == seat and s["trick"] == t + 1]
        for say in said:
            assert words[say] in state["caption"], (say, state["caption"])
            assert say in state["bubbles"][seat].split(), (say, state["bubbles"])
            assert any(words[say] in item["text"] and item["cards"] == [card]
                       for item in state["saidItems"])
            signals += say in ("tap", "slide")
        if not said:
            assert not any(w in state["caption"] for w in words.values())
    assert signals == sum(say in ("tap", "slide") for say in says(replay)) > 0
    # A deal's politaine bonus shows in its scoring and in the table.
    deal = next(d for d in replay["deals"] if d["bonus"] != [0, 0])
    end = next(s for s in states if s["kind"] == "end" and f"Deal {deal['number']}:" in
               s["caption"])
    assert f"politaine bonus {deal['bonus'][0]}–{deal['bonus'][1]}" in end["caption"]
    team = 0 if deal["bonus"][0] else 1
    assert end["scoreRows"][deal["number"] - 1][1 + team] == (
        f"{deal['points'][team]} + {deal['bonus'][team] + deal['melds'][team]}")
    page.evaluate(f"window.arenaViewer.go({end['step']})")
    shot(page, screenshots, "viewer-politaine")
    ends_with_the_result(page, live_server, match, replay)


def test_a_deal_called_off_and_dealt_again(alice, live_server, viewer, screenshots):
    match, replay = recorded(alice, "politaine", lambda r: any(d["redeals"] for d in r["deals"]))
    page = viewer(match)
    index = next(i for i, d in enumerate(replay["deals"]) if d["redeals"])
    deal = replay["deals"][index]
    # Page Down to the deal, or pick it from the list: first the hands called off, each with who
    # asked and why.
    page.keyboard.press("Home")
    for _ in range(index):
        page.keyboard.press("PageDown")
    assert page.evaluate(READ_VIEWER)["kind"] == "redeal"
    page.keyboard.press("End")
    page.select_option("#v-deal", str(index))
    page.evaluate("document.activeElement.blur()")
    for number, redeal in enumerate(deal["redeals"]):
        state = page.evaluate(READ_VIEWER)
        assert state["kind"] == "redeal"
        assert state["hands"] == redeal["hands"]
        assert state["trick"] == [] and state["said"] == number + 1
        by = redeal["by"]
        assert f"seat {by}" in state["caption"] and "asks for a new deal" in state["caption"]
        assert not any(card[0] in "T9A" for card in redeal["hands"][by])
        assert page.inner_text(f"#say-{by}") == "redeal"
        assert "Called off" in page.inner_text("#trick-label")
        if number == 0:
            shot(page, screenshots, "viewer-redeal")
        page.keyboard.press("ArrowRight")
    # Then the deal as played, the redeals still listed.
    state = page.evaluate(READ_VIEWER)
    assert state["kind"] == "deal"
    assert state["hands"] == deal["hands"] != deal["redeals"][-1]["hands"]
    assert state["said"] == len(deal["redeals"])
    assert f"seat {deal['dealer']} deals again" in state["caption"]
    assert f"Deal {deal['number']}" in page.inner_text("#v-step")
    ends_with_the_result(page, live_server, match, replay)


def test_la_poule_announcements_and_long_match(alice, live_server, viewer, screenshots):
    match, replay = recorded(alice, "la-poule", lambda r: any(
        d["bonus"] != [0, 0] for d in r["deals"]) and any(
        s != "poules 0" for s in says(r)))
    page = viewer(match)
    states = page.evaluate(READ_EVERY_STEP)
    # Before the first card of every deal, each player's announcement, in play order.
    for number, deal in enumerate(replay["deals"]):
        shown = [s for s in states
                 if s["kind"] == "say" and s["caption"].startswith(f"Deal {deal['number']}:")]
        announced = [s for s in deal["said"] if s["say"].startswith("poules")]
        assert len(shown) == len(announced) == 4, number
        for state, said in zip(shown, announced, strict=True):
            count = int(said["say"].split()[1])
            assert f"seat {said['seat']}" in state["caption"]
            assert f"announces {count} poule{'' if count == 1 else 's'}" in state["caption"]
            assert state["trick"] == [] and state["bubbles"][said["seat"]] == said["say"]
            assert "before play" in state["saidItems"][-1]["text"]
    # A poule made: its bonus is named as La Poule names it.
    deal = next(d for d in replay["deals"] if d["bonus"] != [0, 0])
    end = next(s for s in states if s["kind"] == "end" and
               s["caption"].startswith(f"Deal {deal['number']}:"))
    assert f"poule bonus {deal['bonus'][0]}–{deal['bonus'][1]}" in end["caption"]
    assert "politaine" not in end["caption"]
    # Every deal's total as the replay has it.
    last = states[-1]
    assert [row[-1] for row in last["scoreRows"]] == [
        f"{d['score'][0]}–{d['score'][1]}" for d in replay["deals"]]
    ends_with_the_result(page, live_server, match, replay)
    # 30-odd deals: the table of deals scrolls, the current (last) deal in sight.
    box = page.locator("#v-scores-box").bounding_box()
    row = page.locator("#v-scores tr").last.bounding_box()
    assert box["height"] < 400 and box["y"] <= row["y"] and (
        row["y"] + row["height"] <= box["y"] + box["height"] + 1)
    shot(page, screenshots, "viewer-la-poule")


def test_pollack_german_faces_melds_and_claim(alice, live_server, viewer, screenshots):
    match, replay = recorded(alice, "pollack", lambda r: r["result"]["reason"] == "claim"
                             and len(r["deals"]) >= 2 and {"pollack", "three"} <= {
                                 s.split()[1] for s in says(r) if s.startswith("meld")})
    page = viewer(match)
    # German faces: the sprite's symbols and the cards' names.
    assert page.locator("symbol#de-TH").count() == 1 and page.locator("symbol#fr-TH").count() == 0
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    names = page.eval_on_selector_all("#hand-0 svg.card", "els => els.map(e => e.ariaLabel)")
    assert names and all(name.split()[0] in ("Eichel", "Grün", "Rot", "Schellen")
                         for name in names)
    states = page.evaluate(READ_EVERY_STEP)
    german = {"C": "Eichel", "S": "Grün", "H": "Rot", "D": "Schellen"}
    ranks = {"T": "Zehn", "9": "Neun", "A": "Daus"}
    melds = [s for s in states if s["kind"] == "say" and "melds" in s["caption"]]
    said = [(d["number"], s) for d in replay["deals"] for s in d["said"]
            if s["say"].startswith("meld")]
    assert len(melds) == len(said)
    for state, (number, s) in zip(melds, said, strict=True):
        parts = s["say"].split()
        assert state["caption"].startswith(f"Deal {number}: seat {s['seat']}")
        if parts[1] == "pollack":
            assert f"melds a pollack in {german[parts[2]]}" in state["caption"]
        elif parts[1] == "three":
            assert (f"melds three {ranks[parts[2]]} (no {german[parts[3]]})"
                    in state["caption"])
        else:
            assert f"melds four {ranks[parts[2]]}" in state["caption"]
        assert s["say"] in state["bubbles"][s["seat"]].split(" · ")
    deal = next(d for d in replay["deals"] if d["melds"] != [0, 0])
    end = next(s for s in states if s["kind"] == "end" and
               s["caption"].startswith(f"Deal {deal['number']}:"))
    assert f"melds {deal['melds'][0]}–{deal['melds'][1]}" in end["caption"]
    # The claim ends the match in the last deal: who claimed, and with how much.
    claim = next(s for s in replay["deals"][-1]["said"] if s["say"] == "claim")
    claimed = next(s for s in states if "claims the target" in s["caption"])
    assert f"seat {claim['seat']}" in claimed["caption"]
    assert claimed["bubbles"][claim["seat"]] == "claim"
    state = ends_with_the_result(page, live_server, match, replay)
    team = claim["seat"] % 2
    assert f"The match ends: claim by seat {claim['seat']}" in state["caption"]
    enough = "enough" if replay["result"]["winner"] == team else "short of the target"
    assert (f"team {team} claimed with {replay['result']['score'][team]} of "
            f"{replay['rules']['target']}, {enough}") in state["caption"]
    shot(page, screenshots, "viewer-pollack-claim")
