"""The continuous ladder on the platform: queue depth, user round-robins first, pause and hourly
cap (settings, service, staff API), placement of a new version, retiring and uploading, the fault
bench, and no lost or doubled pairings when a tick dies or tasks are lost."""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.db import connection

from arena.models import (
    Bot,
    BotVersion,
    Ladder,
    LadderBench,
    LadderPairing,
    Match,
    MatchSeat,
    MatchStatus,
    RatingBoard,
    RefitState,
    Tournament,
    TournamentStatus,
    VersionStatus,
)
from arena.selectors.ladder import ladder_board_summary, version_ladder_status
from arena.services import ladder as service
from arena.services.bots import bot_retire
from arena.services.ladder import ladder_configure, ladder_create, ladder_tick
from arena.services.matches import matches_resend_queued
from arena.services.ratings import ratings_refit, ratings_request_refit

pytestmark = pytest.mark.django_db

KEY = "quatre-sept"


@pytest.fixture(autouse=True)
def _quiet_queue(monkeypatch, settings):
    """The ladder's matches are not played here (results are written by ``finish``): no task."""
    monkeypatch.setattr(service, "queue_matches", lambda *, match_ids: None)
    settings.ARENA_LADDER_DEPTH = 6
    settings.ARENA_LADDER_MAX_PER_HOUR = 0
    settings.ARENA_LADDER_MAX_WAIT = 1800


def version(owner: User, name: str, number: int = 1) -> BotVersion:
    bot, _ = Bot.objects.get_or_create(owner=owner, name=name)
    return BotVersion.objects.create(
        bot=bot, number=number, builtin="random", runtime="python3", status=VersionStatus.READY
    )


@pytest.fixture
def owners(db) -> list[User]:
    return [User.objects.create_user(f"owner{k}") for k in range(4)]


@pytest.fixture
def board(owners) -> list[BotVersion]:
    """Eight versions of four owners."""
    return [version(owners[k % 4], f"bot{k}") for k in range(8)]


@pytest.fixture
def ladder(board) -> Ladder:
    return ladder_create(rules={"preset": KEY})


def finish(strength: dict[int, float], rng: np.random.Generator, fault: set[int] = frozenset()):
    """Play every queued ladder match on paper: team 0 wins with the Elo probability of its
    version's ``strength``; a version in ``fault`` faults on its seat (and loses)."""
    for match in Match.objects.filter(status=MatchStatus.QUEUED).order_by("pk"):
        seats = {s.seat: s.version_id for s in match.seats.all()}
        a, b = seats[0], seats[1]
        if a in fault or b in fault:
            bad = 0 if a in fault else 1
            MatchSeat.objects.filter(match=match, seat=bad).update(
                fault_kind="crash", fault_detail="exit 3"
            )
            winner = 1 - bad
        else:
            p = 1 / (1 + 10 ** (-(strength.get(a, 1500) - strength.get(b, 1500)) / 400))
            winner = 0 if rng.uniform() < p else 1
        Match.objects.filter(pk=match.pk).update(
            status=MatchStatus.FINISHED, winner=winner, score=[0, 0], reason="target"
        )


def refit() -> None:
    ratings_request_refit(preset=KEY, rules_key=KEY)
    from arena.models import RatingBoard

    ratings_refit(board_id=RatingBoard.objects.get(key=KEY).pk)


def test_a_tick_tops_the_queue_up_to_its_depth_and_no_further(ladder):
    made = ladder_tick(ladder_id=ladder.pk)
    assert len(made) == 3  # 6 matches: 3 duplicate pairs
    assert Match.objects.filter(status=MatchStatus.QUEUED).count() == 6
    assert ladder_tick(ladder_id=ladder.pk) == []  # full: nothing doubled
    Match.objects.filter(pk=Match.objects.first().pk).update(status=MatchStatus.RUNNING)
    Match.objects.filter(pk=Match.objects.order_by("pk")[1].pk).update(status=MatchStatus.FINISHED)
    assert len(ladder_tick(ladder_id=ladder.pk)) == 1  # two left the queue: one more pair
    assert sorted(LadderPairing.objects.values_list("pair", flat=True)) == [0, 1, 2, 3]


def test_the_ladder_goes_on_when_every_match_it_queued_has_been_played(ladder):
    """Between two ticks every ladder match can be over: its round-robin is idle, not done (the
    finish check once closed it there, and every later tick then stopped)."""
    from arena.services.matches import matches_sweep_stuck
    from arena.services.tournaments import tournament_finish_if_done

    rng = np.random.default_rng(5)
    made = ladder_tick(ladder_id=ladder.pk)
    finish({}, rng)
    assert not tournament_finish_if_done(tournament_id=ladder.tournament_id)
    matches_sweep_stuck()  # the sweep's own finish check too
    assert Tournament.objects.get(pk=ladder.tournament_id).status == TournamentStatus.RUNNING
    assert len(ladder_tick(ladder_id=ladder.pk)) == len(made)


def test_a_ladder_round_robin_finished_by_an_earlier_release_is_reopened(ladder):
    Tournament.objects.filter(pk=ladder.tournament_id).update(status=TournamentStatus.FINISHED)
    assert len(ladder_tick(ladder_id=ladder.pk)) == 3
    assert Tournament.objects.get(pk=ladder.tournament_id).status == TournamentStatus.RUNNING


def test_each_pairing_is_a_duplicate_pair_with_seats_swapped(ladder):
    for pairing in ladder_tick(ladder_id=ladder.pk):
        first, second = Match.objects.filter(
            tournament=ladder.tournament, pair=pairing.pair
        ).order_by("swapped")
        assert first.seed == second.seed and first.rules_key == KEY
        # not the tournament's public seed + the public next pair: a bot built with them would
        # know every hand of its ladder matches
        assert first.seed != (ladder.tournament.seed + pairing.pair) % 2**31
        s1 = [s.version_id for s in first.seats.order_by("seat")]
        s2 = [s.version_id for s in second.seats.order_by("seat")]
        a, b = pairing.version_a_id, pairing.version_b_id
        assert s1 == [a, b, a, b] and s2 == [b, a, b, a]


def test_user_round_robins_go_first(ladder, board, owners):
    from arena.services.tournaments import tournament_create

    tournament_create(created_by=owners[0], name="mine", rules={"preset": KEY},
                      version_ids=[board[0].pk, board[1].pk, board[2].pk], pairs=1)
    assert Match.objects.filter(status=MatchStatus.QUEUED).count() == 6
    assert ladder_tick(ladder_id=ladder.pk) == []
    Match.objects.filter(status=MatchStatus.QUEUED).update(status=MatchStatus.FINISHED, winner=0)
    assert len(ladder_tick(ladder_id=ladder.pk)) == 3


def test_pause_and_the_hourly_cap(ladder, settings):
    ladder_configure(ladder=ladder, paused=True)
    assert ladder_tick(ladder_id=ladder.pk) == []
    ladder_configure(ladder=ladder, paused=False, max_per_hour=4)
    assert len(ladder_tick(ladder_id=ladder.pk)) == 2
    Match.objects.update(status=MatchStatus.FINISHED, winner=0)
    assert ladder_tick(ladder_id=ladder.pk) == []  # 4 this hour already
    ladder_configure(ladder=ladder, max_per_hour=0)
    settings.ARENA_LADDER = False
    assert ladder_tick(ladder_id=ladder.pk) == []
    settings.ARENA_LADDER = True
    assert len(ladder_tick(ladder_id=ladder.pk)) == 3


def test_cancelling_the_ladders_round_robin_stops_the_ladder_until_resumed(ladder, client_for):
    """Staff cancel the ladder's round-robin (its page's or the API's cancel): the ladder is
    paused with it, so the next tick does not queue new matches into a cancelled round-robin;
    resuming the ladder reopens it."""
    assert len(ladder_tick(ladder_id=ladder.pk)) > 0
    staff = User.objects.create_user("op", is_staff=True)
    response = client_for(staff).post(f"/api/tournaments/{ladder.tournament_id}/cancel/")
    assert response.status_code in (200, 202), response.content
    ladder.refresh_from_db()
    assert ladder.paused is True
    assert not Match.objects.filter(status=MatchStatus.QUEUED).exists()
    assert ladder_tick(ladder_id=ladder.pk) == []
    assert not Match.objects.filter(status=MatchStatus.QUEUED).exists()
    ladder_configure(ladder=ladder, paused=False)
    ladder.tournament.refresh_from_db()
    assert ladder.tournament.status == TournamentStatus.RUNNING
    assert len(ladder_tick(ladder_id=ladder.pk)) > 0


def test_staff_pause_the_ladder_through_the_api(ladder, owners, client_for):
    staff = User.objects.create_user("op", is_staff=True)
    url = f"/api/ladders/{ladder.pk}/"
    assert client_for(owners[0]).patch(url, {"paused": True}, format="json").status_code == 403
    assert client_for(None).patch(url, {"paused": True}, format="json").status_code in (401, 403)
    response = client_for(staff).patch(url, {"paused": True, "max_per_hour": 60}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["paused"] is True and response.json()["max_per_hour"] == 60
    assert client_for(staff).patch(url, {"queue_depth": -1}, format="json").status_code == 400
    assert client_for(None).get("/api/ladders/").json()[0]["paused"] is True
    created = client_for(staff).post(
        "/api/ladders/", {"rules": {"preset": KEY, "target": 41}}, format="json"
    )
    assert created.status_code == 201 and created.json()["rules_key"] == "quatre-sept{target=41}"
    bad = client_for(staff).post("/api/ladders/", {"rules": {"preset": "nope"}}, format="json")
    assert bad.status_code == 400


def test_a_new_version_is_placed_against_a_spread_of_opponents(ladder, board, owners):
    rng = np.random.default_rng(1)
    strength = {v.pk: 1300 + 50 * k for k, v in enumerate(board)}
    for _ in range(30):  # the board settles
        ladder_tick(ladder_id=ladder.pk)
        finish(strength, rng)
    newcomer = version(owners[1], "fresh")
    strength[newcomer.pk] = 1600
    first = ladder_tick(ladder_id=ladder.pk)
    assert any(newcomer.pk in (p.version_a_id, p.version_b_id) for p in first)
    assert {p.reason for p in first if newcomer.pk in (p.version_a_id, p.version_b_id)} == {
        "placement"}
    opponents = Counter()
    for _ in range(25):
        finish(strength, rng)
        refit()
        status = version_ladder_status(bot=newcomer.bot)[0]
        if status["state"] == "placed":
            break
        assert status["state"] == "placing"
        for p in ladder_tick(ladder_id=ladder.pk):
            if newcomer.pk in (p.version_a_id, p.version_b_id):
                opponents[p.version_b_id if p.version_a_id == newcomer.pk else p.version_a_id] += 1
    assert status["state"] == "placed", status
    assert status["rating"].matches >= 30
    assert len(opponents) >= 5  # a spread, not one sparring partner
    summary = ladder_board_summary(rules_key=KEY)
    assert newcomer.pk in summary["placed"] and summary["matches"]


def test_retiring_and_uploading_move_the_ladder_on(ladder, board, owners):
    made = ladder_tick(ladder_id=ladder.pk)
    playing = {v for p in made for v in (p.version_a_id, p.version_b_id)}
    gone = BotVersion.objects.get(pk=sorted(playing)[0])
    bot_retire(bot=gone.bot)
    ladder_tick(ladder_id=ladder.pk)
    queued = MatchSeat.objects.filter(match__status=MatchStatus.QUEUED)
    assert not queued.filter(version=gone).exists()
    failed = Match.objects.filter(status=MatchStatus.FAILED).first()
    assert failed is not None and "left the ladder" in failed.failure
    # a dropped match voids a finished twin (void_pairs): the board is refitted at once
    assert RatingBoard.objects.get(key=ladder.rules_key).state == RefitState.QUEUED
    # A new version of another bot replaces its predecessor at once.
    old = board[5]
    new = version(old.bot.owner, old.bot.name, number=2)
    ladder_tick(ladder_id=ladder.pk)
    assert not MatchSeat.objects.filter(match__status=MatchStatus.QUEUED, version=old).exists()
    for _ in range(3):
        Match.objects.filter(status=MatchStatus.QUEUED).update(status=MatchStatus.FINISHED,
                                                               winner=0)
        ladder_tick(ladder_id=ladder.pk)
    paired = set(LadderPairing.objects.values_list("version_a", flat=True)) | set(
        LadderPairing.objects.values_list("version_b", flat=True))
    assert new.pk in paired
    assert not LadderPairing.objects.filter(pair__gte=3, version_a=gone).exists()
    assert not LadderPairing.objects.filter(pair__gte=3, version_b=gone).exists()


def test_a_version_faulting_in_most_matches_is_benched_until_a_new_upload(ladder, board):
    rng = np.random.default_rng(2)
    bad = board[3]
    for _ in range(25):
        ladder_tick(ladder_id=ladder.pk)
        finish({}, rng, fault={bad.pk})
        if LadderBench.objects.filter(version=bad).exists():
            break
    bench = LadderBench.objects.get(version=bad)
    assert "faulted in" in bench.reason and "crash" in bench.reason
    status = version_ladder_status(bot=bad.bot)[0]
    assert status["state"] == "benched" and status["reason"] == bench.reason
    before = LadderPairing.objects.order_by("-pk").first().pk
    for _ in range(4):
        ladder_tick(ladder_id=ladder.pk)
        finish({}, rng)
    later = LadderPairing.objects.filter(pk__gt=before)
    assert later.exists() and not later.filter(version_a=bad).exists()
    assert not later.filter(version_b=bad).exists()
    again = version(bad.bot.owner, bad.bot.name, number=2)
    assert version_ladder_status(bot=bad.bot)[0]["version"] == again
    assert version_ladder_status(bot=bad.bot)[0]["state"] != "benched"


def test_a_version_benched_by_a_tick_loses_its_queued_matches_in_that_tick(
    ladder, board, monkeypatch, settings
):
    """The tick drops the queued matches of versions that left the ladder; one it benches
    itself goes with them at once, not a tick later (while workers could still play them)."""
    settings.ARENA_LADDER_DEPTH = 6
    ladder_tick(ladder_id=ladder.pk)
    settings.ARENA_LADDER_DEPTH = 40  # room for the next tick, which benches
    queued = Match.objects.filter(status=MatchStatus.QUEUED)
    bad = MatchSeat.objects.filter(match__in=queued).values_list("version_id", flat=True).first()
    assert bad is not None
    real = service._bench_faulting
    monkeypatch.setattr(service, "_bench_faulting", lambda ladder, entrants: [
        e for e in real(ladder, entrants) if e.version_id != bad])
    ladder_tick(ladder_id=ladder.pk)
    assert not MatchSeat.objects.filter(
        version_id=bad, match__status=MatchStatus.QUEUED).exists()

def test_a_tick_that_dies_writes_nothing(ladder, monkeypatch):
    def boom(**kwargs):
        raise RuntimeError("worker died")

    monkeypatch.setattr(service, "queue_matches", boom)
    with pytest.raises(RuntimeError):
        ladder_tick(ladder_id=ladder.pk)
    assert not LadderPairing.objects.exists() and not Match.objects.exists()
    ladder.refresh_from_db()
    assert ladder.next_pair == 0


def test_lost_tasks_are_resent_not_paired_again(ladder):
    made = ladder_tick(ladder_id=ladder.pk)  # the tasks are lost (Redis restarted)
    assert ladder_tick(ladder_id=ladder.pk) == []
    from django.utils import timezone

    resent = matches_resend_queued(queued_before=timezone.now())
    assert len(resent) == 2 * len(made)
    assert LadderPairing.objects.count() == len(made)


@pytest.mark.django_db(transaction=True)
def test_concurrent_ticks_never_double_a_pairing(board):
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    ladder = ladder_create(rules={"preset": KEY})
    errors = []

    def tick():
        try:
            ladder_tick(ladder_id=ladder.pk)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=tick) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert Match.objects.filter(status=MatchStatus.QUEUED).count() == 6
    assert LadderPairing.objects.count() == 3
    assert Tournament.objects.get(pk=ladder.tournament_id).matches.count() == 6


def test_pages_show_the_ladder_placement_and_bench(ladder, board, client):
    ladder_tick(ladder_id=ladder.pk)
    finish({}, np.random.default_rng(3))
    refit()
    ladder_tick(ladder_id=ladder.pk)
    LadderBench.objects.create(ladder=ladder, version=board[2], reason="faulted in 7 of its last 8")
    page = client.get("/").content.decode()
    assert "Ladder" in page and "Being placed" in page and "Recent ladder matches" in page
    assert "faulted in 7 of its last 8" in page
    assert 'class="outcome won"' in page and "latest first" in page
    bot_page = client.get(f"/bots/{board[0].bot_id}/").content.decode()
    assert "being placed" in bot_page and "of 30 rated matches" in bot_page
    benched = client.get(f"/bots/{board[2].bot_id}/").content.decode()
    assert "faulted in 7 of its last 8" in benched


def test_a_placed_all_losing_version_stops_pulling_matches(ladder, board):
    rng = np.random.default_rng(4)
    hopeless = board[6]
    strength = {v.pk: 1500 + 30 * k for k, v in enumerate(board)}
    strength[hopeless.pk] = -5000  # loses every match
    placed_at = None
    for tick in range(60):
        made = ladder_tick(ladder_id=ladder.pk)
        finish(strength, rng)
        played = MatchSeat.objects.filter(
            version=hopeless, seat__lt=2, match__status=MatchStatus.FINISHED
        ).count()
        if placed_at is None and played >= 30:
            placed_at = tick
            later = []
        elif placed_at is not None:
            later += made
    assert placed_at is not None
    assert later  # the others play on
    theirs = [p for p in later if hopeless.pk in (p.version_a_id, p.version_b_id)]
    assert len(theirs) <= len(later) / 20, (len(theirs), len(later))


def test_operators_add_pause_and_cap_ladders_in_the_admin(client, board):
    admin = User.objects.create_superuser("root", password="root-password-1")
    client.force_login(admin)
    response = client.post("/admin/arena/ladder/add/", {
        "rules": '{"preset": "quatre-sept", "target": 41}', "max_per_hour": "120",
        "queue_depth": "0",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    ladder = Ladder.objects.get(rules_key="quatre-sept{target=41}")
    assert ladder.max_per_hour == 120 and ladder.tournament.rules_key == ladder.rules_key
    client.post("/admin/arena/ladder/", {"action": "pause", "_selected_action": [ladder.pk]})
    ladder.refresh_from_db()
    assert ladder.paused
    assert ladder_tick(ladder_id=ladder.pk) == []
    assert client.get("/admin/arena/ladder/").status_code == 200
    assert client.get(f"/admin/arena/ladder/{ladder.pk}/change/").status_code == 200
