"""The pages through Django's test client: every page renders from the same selectors as the API,
owner-only parts stay with the owner, forms call the services."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from arena.models import Bot, Match, Tournament, VersionStatus
from arena.services.bots import bot_create, builtin_bots_ensure
from arena.services.tournaments import tournament_create
from tests.arena.conftest import ILLEGAL_BOT, RANDOM_BOT

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(eager, alice, bob, run_tasks):
    """alice's good bot and bob's cheating one (validated), and a finished round-robin of alice's
    bot against the built-in random bot, rated."""
    builtins = builtin_bots_ensure()
    with run_tasks():
        good = bot_create(owner=alice, name="dice", filename="dice.py", data=RANDOM_BOT)
    with run_tasks():
        bad = bot_create(owner=bob, name="cheat", filename="cheat.py", data=ILLEGAL_BOT)
    version = good.versions.get()
    assert version.status == VersionStatus.READY
    assert bad.versions.get().status == VersionStatus.FAILED
    with run_tasks():
        tournament = tournament_create(
            created_by=alice, name="Cup", rules={"preset": "quatre-sept"},
            version_ids=[version.pk, builtins["random"].pk], pairs=1, seed=7,
        )
    return {"good": good, "bad": bad, "tournament": tournament}


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_every_page_renders(world, alice):
    tournament = world["tournament"]
    assert Tournament.objects.get(pk=tournament.pk).status == "finished"
    match = Match.objects.filter(tournament=tournament).first()
    client = Client()
    for url in ["/", "/?preset=pollack", "/bots/", f"/bots/{world['good'].pk}/",
                "/tournaments/", f"/tournaments/{tournament.pk}/",
                f"/tournaments/{tournament.pk}/live/", f"/matches/{match.pk}/", "/signup/",
                "/login/"]:
        response = client.get(url)
        assert response.status_code == 200, url
    assert client.get("/api/docs/").status_code == 200


def test_pages_forbid_inline_script_and_carry_none(world, alice):
    """Every page of the site's own sends the Content-Security-Policy (no inline script runs,
    whatever reached the HTML), and none needs an inline script or handler to work: each
    <script> is a file of this site or JSON data."""
    tournament = world["tournament"]
    match = Match.objects.filter(tournament=tournament).first()
    pages = [(Client(), url) for url in [
        "/", "/bots/", f"/bots/{world['good'].pk}/", "/tournaments/",
        f"/tournaments/{tournament.pk}/", f"/tournaments/{tournament.pk}/live/",
        f"/matches/{match.pk}/", "/signup/", "/login/"]]
    pages += [(logged_in(alice), url) for url in ["/account/token/", "/bots/new/",
                                                  "/tournaments/new/"]]
    for client, url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        policy = response["Content-Security-Policy"]
        assert "script-src 'self';" in policy and "unsafe-inline" not in policy.split(
            "script-src")[1].split(";")[0], url
        html = response.content.decode()
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag or 'type="application/json"' in tag, (url, tag)
        assert not re.search(r"\son[a-z]+=\"", html), url  # no onclick=, onsubmit=, ...

def test_leaderboard_shows_the_rated_versions(world):
    body = Client().get("/").content.decode()
    assert "alice/dice" in body and "arena/random" in body
    assert "provisional" in body and "±" in body
    assert "No rated matches on <strong>pollack</strong>" in Client().get(
        "/?preset=pollack").content.decode()
    # a board that does not exist is a 404, not its name as the page's heading
    forged = Client().get("/?board=has moved: sign in at evil.example")
    assert forged.status_code == 404 and b"evil.example" not in forged.content
    assert Client().get("/?board=pollack").status_code == 200  # a preset's, even unrated


def test_bot_page_shows_history_matches_and_owner_only_faults(world, alice, bob):
    good, bad = world["good"], world["bad"]
    page = Client().get(f"/bots/{good.pk}/").content.decode()
    svg = re.search(r"<svg[^>]*class=\"chart\".*?</svg>", page, re.S).group(0)
    ET.fromstring(svg)  # well-formed
    assert "Recent matches" in page and "Upload a new version" not in page
    # bob's failed validation: the fault and stderr tail only for bob
    public = Client().get(f"/bots/{bad.pk}/").content.decode()
    assert "about to cheat" not in public and "Faults" not in public
    own = logged_in(bob).get(f"/bots/{bad.pk}/").content.decode()
    assert "about to cheat" in own and "illegal" in own and "Upload a new version" in own


def test_owner_uploads_a_version_from_the_bot_page(world, alice, bob, run_tasks):
    good = world["good"]
    upload = SimpleUploadedFile("dice2.py", RANDOM_BOT)
    assert logged_in(bob).post(f"/bots/{good.pk}/versions/", {"file": upload}).status_code == 403
    with run_tasks():
        response = logged_in(alice).post(
            f"/bots/{good.pk}/versions/", {"file": SimpleUploadedFile("d.py", RANDOM_BOT)}
        )
    assert response.status_code == 302
    assert good.versions.count() == 2


def test_upload_form_shows_the_services_message(eager, alice):
    client = logged_in(alice)
    response = client.post(
        "/bots/new/", {"name": "x", "file": SimpleUploadedFile("x.exe", b"MZ")}
    )
    assert response.status_code == 200
    assert "unsupported file type" in response.content.decode()
    assert not Bot.objects.filter(owner=alice).exists()


def test_round_robin_form_creates_one_with_changed_options(eager, alice, run_tasks):
    builtins = builtin_bots_ensure()
    client = logged_in(alice)
    assert client.get("/tournaments/new/").status_code == 200
    with run_tasks():
        response = client.post("/tournaments/new/", {
            "name": "Long cup", "preset": "quatre-sept", "pairs": 1, "target": 41,
            "versions": [builtins["random"].pk, builtins["greedy"].pk], "signals": "",
        })
    assert response.status_code == 302, response.content.decode()[:2000]
    tournament = Tournament.objects.get(name="Long cup")
    assert tournament.rules_key == "quatre-sept{target=41}"
    page = client.get(response["Location"]).content.decode()
    assert 'id="progress"' in page and "Cross-table" in page


def test_round_robin_form_refuses_one_version(eager, alice):
    builtins = builtin_bots_ensure()
    response = logged_in(alice).post("/tournaments/new/", {
        "name": "Solo", "preset": "quatre-sept", "pairs": 1, "versions": [builtins["random"].pk],
    })
    assert response.status_code == 200
    assert "2 to 64 versions" in response.content.decode()


def test_live_part_stops_polling_when_finished(world):
    tournament = world["tournament"]
    live = Client().get(f"/tournaments/{tournament.pk}/live/").content.decode()
    assert 'data-status="finished"' in live and "hx-trigger" not in live


def test_viewer_page_embeds_the_replay_and_the_deck(world):
    match = Match.objects.filter(tournament=world["tournament"]).first()
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    assert 'id="replay-data"' in page and f"/api/matches/{match.pk}/replay/" in page
    assert 'id="fr-TH"' in page and "viewer.js" in page
    assert "Clock: 1000 ms a decision" in page and "replies released as they came" in page


def test_the_match_page_says_its_turns_were_fixed_time(eager, alice, run_tasks, settings):
    settings.ARENA_FIXED_TURNS, settings.ARENA_MOVE_MS = True, 40
    builtins = builtin_bots_ensure()
    with run_tasks():
        tournament = tournament_create(
            created_by=alice, name="Fixed", rules={"preset": "pollack"},
            version_ids=[builtins["random"].pk, builtins["greedy"].pk], pairs=1, seed=3,
        )
    match = Match.objects.filter(tournament=tournament).first()
    page = Client().get(f"/matches/{match.pk}/").content.decode()
    assert "Clock: 40 ms a decision" in page and "fixed-time turns" in page


def test_signup_logs_in_and_the_token_renews(db):
    client = Client()
    response = client.post("/signup/", {
        "username": "carol", "password1": "carol-password-1", "password2": "carol-password-1",
    })
    assert response.status_code == 302
    page = client.get("/account/token/").content.decode()
    first = Token.objects.get(user__username="carol").key
    assert first in page
    client.post("/account/token/")
    second = Token.objects.get(user__username="carol").key
    assert second != first and second in client.get("/account/token/").content.decode()
    client.post("/logout/")
    assert client.get("/account/token/").status_code == 302


def test_signup_refuses_a_taken_name(db, alice):
    response = Client().post("/signup/", {
        "username": "alice", "password1": "x-password-123", "password2": "x-password-123",
    })
    assert response.status_code == 200 and "already exists" in response.content.decode()


def test_pages_read_in_a_bounded_number_of_queries(world, alice, django_assert_max_num_queries):
    """Selectors prefetch: the count does not grow with rows (a handful per section)."""
    tournament = world["tournament"]
    match = Match.objects.filter(tournament=tournament).first()
    client = logged_in(alice)
    for url, most in [("/", 6), (f"/bots/{world['good'].pk}/", 14),
                      (f"/tournaments/{tournament.pk}/", 16), (f"/matches/{match.pk}/", 8),
                      ("/bots/", 8), ("/tournaments/", 8)]:
        with django_assert_max_num_queries(most, info=url):
            assert client.get(url).status_code == 200


@pytest.fixture
def running(eager, alice, bob):
    """A round-robin of alice's with every match still queued (no task has run)."""
    builtins = builtin_bots_ensure()
    return tournament_create(
        created_by=alice, name="Slow cup", rules={"preset": "quatre-sept"},
        version_ids=[builtins["random"].pk, builtins["greedy"].pk], pairs=1, seed=3,
    )


def test_the_creator_cancels_a_round_robin_from_its_page(running, alice):
    client = logged_in(alice)
    page = client.get(f"/tournaments/{running.pk}/").content.decode()
    assert 'id="cancel"' in page and "csrfmiddlewaretoken" in page and "hx-trigger" in page
    response = client.post(f"/tournaments/{running.pk}/cancel/")
    assert response.status_code == 302 and response["Location"] == f"/tournaments/{running.pk}/"
    running.refresh_from_db()
    assert running.status == "cancelled" and running.finished_at is not None
    assert set(Match.objects.filter(tournament=running).values_list("status", flat=True)) == {
        "failed"}
    page = client.get(f"/tournaments/{running.pk}/").content.decode()
    assert "is cancelled" in page  # the message
    assert '<span class="status cancelled">cancelled</span>' in page
    assert 'id="cancelled"' in page and 'id="cancel"' not in page
    # No more polling; every failed match says why.
    live = client.get(f"/tournaments/{running.pk}/live/").content.decode()
    assert 'data-status="cancelled"' in live and "hx-trigger" not in live
    assert "every 2 s" not in live
    assert live.count('<span class="failure">cancelled by alice before it was played</span>') == 2
    listing = Client().get("/tournaments/").content.decode()
    assert '<span class="status cancelled">cancelled</span>' in listing
    # Twice: nothing more happens, and the page says why.
    again = client.post(f"/tournaments/{running.pk}/cancel/", follow=True).content.decode()
    assert "Only a running round-robin can be cancelled" in again


def test_only_the_creator_or_staff_may_cancel(running, alice, bob):
    for client in (logged_in(bob), Client()):
        assert 'id="cancel"' not in client.get(f"/tournaments/{running.pk}/").content.decode()
    assert logged_in(bob).post(f"/tournaments/{running.pk}/cancel/").status_code == 403
    anonymous = Client().post(f"/tournaments/{running.pk}/cancel/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")
    assert logged_in(alice).get(f"/tournaments/{running.pk}/cancel/").status_code == 405
    running.refresh_from_db()
    assert running.status == "running"
    bob.is_staff = True
    bob.save()
    staff = logged_in(bob)
    assert 'id="cancel"' in staff.get(f"/tournaments/{running.pk}/").content.decode()
    assert staff.post(f"/tournaments/{running.pk}/cancel/").status_code == 302
    running.refresh_from_db()
    assert running.status == "cancelled"
    failure = Match.objects.filter(tournament=running).values_list("failure", flat=True).first()
    assert failure == "cancelled by bob before it was played"


def test_cancelling_needs_the_csrf_token(running, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(f"/tournaments/{running.pk}/cancel/").status_code == 403
    page = client.get(f"/tournaments/{running.pk}/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = client.post(f"/tournaments/{running.pk}/cancel/", {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    running.refresh_from_db()
    assert running.status == "cancelled"


def test_matches_running_when_cancelled_still_count(running, alice):
    """The page stops polling but says the running match will finish and count."""
    Match.objects.filter(pk=Match.objects.filter(tournament=running).first().pk).update(
        status="running")
    client = logged_in(alice)
    client.post(f"/tournaments/{running.pk}/cancel/")
    live = client.get(f"/tournaments/{running.pk}/live/").content.decode()
    assert "hx-trigger" not in live
    assert "1 match already running then will finish and count" in live
    assert live.count('<span class="failure">') == 1


def test_a_finished_round_robin_offers_no_cancel(world, alice):
    page = logged_in(alice).get(f"/tournaments/{world['tournament'].pk}/").content.decode()
    assert 'id="cancel"' not in page and 'id="cancelled"' not in page


def test_the_bot_authors_documents_are_pages(alice, settings, tmp_path, monkeypatch):
    from arena.web.views import docs

    (tmp_path / "protocol.md").write_text(
        "# Bot protocol 1\n\nSee [the rules](rules.md#options).\n\n| a | b |\n|---|---|\n"
        "| 1 | 2 |\n\n<script>alert(1)</script>\n")
    monkeypatch.setattr(docs, "_DOCS", tmp_path)
    page = Client().get("/docs/protocol/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<h1>Bot protocol 1</h1>" in html and "<title>Bot protocol 1" in html
    assert 'href="/docs/rules/#options"' in html and "<table>" in html
    assert "<script>alert(1)</script>" not in html  # raw HTML is not passed through
    assert Client().get("/docs/rules/").status_code == 404  # not written here
    assert Client().get("/docs/settings/").status_code == 404  # not a bot author's document
    client = Client()
    client.force_login(alice)
    upload = client.get("/bots/new/").content.decode()
    assert 'href="/docs/protocol/" id="protocol-link"' in upload


def test_the_repositorys_bots_document_renders():
    page = Client().get("/docs/bots/")
    assert page.status_code == 200 and "bot.json" in page.content.decode()
