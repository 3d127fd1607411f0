"""Ratings on the platform, real database: refits append generations of rating rows, debounced;
boards keyed by the exact rule set; the leaderboard, a version's history and a tournament's own
ranking through the API."""

from __future__ import annotations

import itertools
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from arena.models import (
    Bot,
    BotVersion,
    Entry,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    Rating,
    RatingBoard,
    RefitState,
    Tournament,
    VersionStatus,
)
from arena.rating import fit_ratings
from arena.rulesets import rules_key
from arena.selectors.ratings import rated_results
from arena.services import ratings as ratings_service
from arena.services.ratings import ratings_refit, ratings_request_refit
from engine import rules_from_dict

pytestmark = pytest.mark.django_db

PRESET = "quatre-sept"


@pytest.fixture
def versions(alice, bob) -> list[BotVersion]:
    """Four ready versions (built-in code under alice's and bob's names)."""
    out = []
    for k, owner in enumerate([alice, alice, bob, bob]):
        bot = Bot.objects.create(owner=owner, name=f"bot{k}")
        out.append(
            BotVersion.objects.create(
                bot=bot, number=1, builtin="random", runtime="python3", status=VersionStatus.READY
            )
        )
    return out


def tournament_of(user, versions, rules=None) -> Tournament:
    rules = rules or {"preset": PRESET}
    parsed = rules_from_dict(rules)
    t = Tournament.objects.create(
        name="cup",
        created_by=user,
        preset=parsed.preset,
        rules=rules,
        rules_key=rules_key(parsed),
        pairs=1,
        seed=7,
    )
    Entry.objects.bulk_create(Entry(tournament=t, version=v) for v in versions)
    return t


def duplicate_pair(t: Tournament, pair: int, a: BotVersion, b: BotVersion, wins: int) -> None:
    """Both matches of one duplicate pair of A against B, finished; A won ``wins`` of them (the
    first ``wins``; with ``wins`` 0.5 the first match is a draw, the second lost)."""
    outcomes = {2: (1.0, 1.0), 1: (1.0, 0.0), 0: (0.0, 0.0), 0.5: (0.5, 0.0)}[wins]
    for swapped, score in zip((False, True), outcomes, strict=True):
        first, second = (b, a) if swapped else (a, b)
        a_team = 1 if swapped else 0
        winner = None if score == 0.5 else a_team if score == 1.0 else 1 - a_team
        match = Match.objects.create(
            kind=MatchKind.TOURNAMENT,
            tournament=t,
            pair=pair,
            swapped=swapped,
            seed=t.seed + pair,
            rules=t.rules,
            rules_key=t.rules_key,
            status=MatchStatus.FINISHED,
            winner=winner,
            finished_at=timezone.now(),
        )
        MatchSeat.objects.bulk_create(
            MatchSeat(match=match, seat=seat, version=(first, second)[seat % 2])
            for seat in range(4)
        )


def play_round_robin(t: Tournament, versions, strength: dict[int, int], pairs: int = 3) -> None:
    """Each pairing plays ``pairs`` duplicate pairs; the stronger version (``strength``) wins 2,
    1 or 0.5 of them in turn, so ratings follow strength."""
    for k in range(pairs):
        for a, b in itertools.combinations(versions, 2):
            if strength[a.pk] < strength[b.pk]:
                a, b = b, a
            duplicate_pair(t, k, a, b, wins=(2, 1, 0.5)[k % 3])


def refit(run_tasks, key: str = PRESET) -> None:
    with run_tasks():
        ratings_request_refit(preset=key.split("{")[0], rules_key=key)


def test_refit_serves_the_leaderboard(alice, versions, run_tasks, client_for):
    t = tournament_of(alice, versions)
    strength = {v.pk: k for k, v in enumerate(versions)}
    play_round_robin(t, versions, strength)
    refit(run_tasks)
    board = RatingBoard.objects.get(key=PRESET)
    assert board.generation == 1 and board.state == RefitState.IDLE and board.matches == 36
    response = client_for(None).get(f"/api/leaderboard/?preset={PRESET}")
    assert response.status_code == 200
    rows = response.json()["results"]
    assert [r["version"] for r in rows] == [v.pk for v in reversed(versions)]
    required = {
        "version",
        "bot",
        "owner",
        "elo",
        "ci95",
        "matches",
        "wins",
        "losses",
        "draws",
        "provisional",
        "los_next",
        "rank",
    }
    assert required <= set(rows[0])
    assert rows[0]["bot"] == "bob/bot3" and rows[0]["owner"] == "bob"
    assert sum(r["elo"] for r in rows) == pytest.approx(1500 * 4, abs=0.5)
    for row, nxt in itertools.pairwise(rows):
        assert row["elo"] >= nxt["elo"] and 0.5 <= row["los_next"] <= 1
    assert rows[-1]["los_next"] is None
    for row in rows:
        assert row["matches"] == 18 and row["provisional"]  # fewer than 30 matches
        assert row["wins"] + row["losses"] + row["draws"] == 18 and row["ci95"] > 0
    # The same numbers as the pure fit of the board's results (duplicate pairs as clusters).
    fit = fit_ratings(rated_results(rules_key=PRESET))
    for row in rows:
        k = fit.index(row["version"])
        assert row["elo"] == pytest.approx(fit.elo[k], abs=0.05)
        assert row["ci95"] == pytest.approx(fit.ci95[k], abs=0.05)


def test_duplicate_pairs_are_the_clusters(alice, versions):
    t = tournament_of(alice, versions[:2])
    duplicate_pair(t, 0, versions[0], versions[1], wins=1)
    duplicate_pair(t, 1, versions[0], versions[1], wins=2)
    results = rated_results(rules_key=PRESET)
    assert len(results) == 4 and len({r.cluster for r in results}) == 2
    a, b = versions[0].pk, versions[1].pk
    assert sorted(r.score if r.a == a else 1 - r.score for r in results) == [0.0, 1.0, 1.0, 1.0]
    assert {r.cluster for r in results} == {(t.pk, 0, a, b), (t.pk, 1, a, b)}


def test_each_refit_appends_a_generation_and_history(alice, versions, run_tasks, client_for):
    t = tournament_of(alice, versions)
    strength = {v.pk: k for k, v in enumerate(versions)}
    play_round_robin(t, versions, strength, pairs=2)
    refit(run_tasks)
    first = {r.pk: (r.elo, r.ci95, r.matches) for r in Rating.objects.all()}
    assert len(first) == 4
    play_round_robin(t, versions, strength, pairs=3)
    refit(run_tasks)
    assert RatingBoard.objects.get(key=PRESET).generation == 2
    # Rows of the first refit are kept as they were.
    assert {r.pk: (r.elo, r.ci95, r.matches) for r in Rating.objects.filter(generation=1)} == first
    top = versions[-1]
    response = client_for(None).get(f"/api/versions/{top.pk}/ratings/")
    assert response.status_code == 200
    history = response.json()["results"]
    assert [h["generation"] for h in history] == [1, 2]
    assert [h["matches"] for h in history] == [12, 30]
    assert history[0]["provisional"] and not history[1]["provisional"]
    assert all(h["board"] == PRESET and h["rank"] == 1 for h in history)
    assert history[1]["ci95"] < history[0]["ci95"]
    leaderboard = client_for(None).get("/api/leaderboard/").json()["results"]
    assert leaderboard[0]["version"] == top.pk and leaderboard[0]["matches"] == 30


def test_changed_options_are_rated_on_their_own_board(alice, versions, run_tasks, client_for):
    plain = tournament_of(alice, versions[:2])
    changed = tournament_of(alice, versions[2:], rules={"preset": PRESET, "target": 41})
    assert changed.rules_key == "quatre-sept{target=41}"
    duplicate_pair(plain, 0, versions[0], versions[1], wins=2)
    duplicate_pair(changed, 0, versions[2], versions[3], wins=2)
    refit(run_tasks)
    refit(run_tasks, changed.rules_key)
    client = client_for(None)
    on_preset = client.get(f"/api/leaderboard/?preset={PRESET}").json()["results"]
    assert {r["version"] for r in on_preset} == {versions[0].pk, versions[1].pk}
    on_changed = client.get("/api/leaderboard/", {"board": changed.rules_key}).json()["results"]
    assert {r["version"] for r in on_changed} == {versions[2].pk, versions[3].pk}
    assert client.get("/api/leaderboard/?preset=la-poule").json()["results"] == []


def test_a_burst_of_results_during_a_refit_triggers_exactly_one_more(
    alice, versions, django_capture_on_commit_callbacks, settings
):
    t = tournament_of(alice, versions[:2])
    duplicate_pair(t, 0, versions[0], versions[1], wins=1)
    with mock.patch("arena.tasks.refit_ratings.apply_async") as delay:
        with django_capture_on_commit_callbacks(execute=True):
            ratings_request_refit(preset=PRESET, rules_key=PRESET)
            ratings_request_refit(preset=PRESET, rules_key=PRESET)
        board = RatingBoard.objects.get(key=PRESET)
        assert board.state == RefitState.QUEUED and delay.call_count == 1
        # Never fitted: due now (no countdown); the task carries the board's ticket.
        delay.assert_called_with((board.pk, board.ticket), {})

        real_fit = ratings_service.fit_ratings

        def fit_during_a_burst(results):
            for _ in range(5):  # results finishing while the refit runs
                ratings_request_refit(preset=PRESET, rules_key=PRESET)
            assert RatingBoard.objects.get(pk=board.pk).state == RefitState.AGAIN
            return real_fit(results)

        with (
            mock.patch.object(ratings_service, "fit_ratings", fit_during_a_burst),
            django_capture_on_commit_callbacks(execute=True),
        ):
            assert ratings_refit(board_id=board.pk, ticket=board.ticket)
        first = board.ticket
        board.refresh_from_db()
        assert board.state == RefitState.QUEUED and board.generation == 1
        assert delay.call_count == 2 and board.ticket == first + 1
        # The one more refit is due ARENA_REFIT_EVERY seconds after this one.
        delay.assert_called_with(
            (board.pk, board.ticket), {}, countdown=settings.ARENA_REFIT_EVERY
        )
        # A second delivery of the first task does nothing: its ticket is done.
        assert not ratings_refit(board_id=board.pk, ticket=first)
        # The queued one runs; a second delivery of it finds nothing queued.
        with django_capture_on_commit_callbacks(execute=True):
            assert ratings_refit(board_id=board.pk, ticket=board.ticket)
            assert not ratings_refit(board_id=board.pk, ticket=board.ticket)
        board.refresh_from_db()
        assert board.state == RefitState.IDLE and board.generation == 2
        assert delay.call_count == 2


@pytest.mark.parametrize(("fitted_ago", "countdown"), [(10, 20), (45, None), (None, None)])
def test_a_refit_is_due_refit_every_seconds_after_the_last(
    alice, versions, django_capture_on_commit_callbacks, settings, fitted_ago, countdown
):
    settings.ARENA_REFIT_EVERY = 30
    now = timezone.now()
    RatingBoard.objects.create(
        key=PRESET, preset=PRESET, state=RefitState.IDLE, state_changed_at=now,
        fitted_at=None if fitted_ago is None else now - timedelta(seconds=fitted_ago),
    )
    with (
        mock.patch("arena.tasks.refit_ratings.apply_async") as delay,
        django_capture_on_commit_callbacks(execute=True),
    ):
        ratings_request_refit(preset=PRESET, rules_key=PRESET)
    (_, kwargs), = delay.call_args_list  # (args, {}), options
    if countdown is None:
        assert "countdown" not in kwargs
    else:
        assert countdown - 1 < kwargs["countdown"] <= countdown


def test_a_failed_refit_leaves_the_board_idle(alice, versions):
    board = RatingBoard.objects.create(
        key=PRESET, preset=PRESET, state=RefitState.QUEUED, state_changed_at=timezone.now()
    )
    with (
        mock.patch.object(ratings_service, "fit_ratings", side_effect=RuntimeError("boom")),
        pytest.raises(RuntimeError),
    ):
        ratings_refit(board_id=board.pk)
    board.refresh_from_db()
    assert board.state == RefitState.IDLE and board.generation == 0


def test_tournament_ranking_from_its_own_matches(alice, versions, client_for):
    first = tournament_of(alice, versions[:3])
    second = tournament_of(alice, versions[:3])
    strength = {v.pk: k for k, v in enumerate(versions)}
    play_round_robin(first, versions[:3], strength)
    play_round_robin(second, versions[:3], {pk: -s for pk, s in strength.items()})
    client = client_for(None)
    for t, best in ((first, versions[2]), (second, versions[0])):
        ranking = client.get(f"/api/tournaments/{t.pk}/").json()["ranking"]
        assert [r["rank"] for r in ranking] == [1, 2, 3]
        assert ranking[0]["version"] == best.pk
        assert {"version", "label", "elo", "ci95", "matches", "provisional", "los_next"} <= set(
            ranking[0]
        )
        assert all(r["matches"] == 12 and r["ci95"] > 0 for r in ranking)
        assert sum(r["elo"] for r in ranking) == pytest.approx(4500, abs=0.5)


def test_schema_lists_the_ratings_routes(client_for):
    paths = client_for(None).get("/api/schema/?format=json").json()["paths"]
    assert "/api/versions/{id}/ratings/" in paths and "/api/leaderboard/" in paths


def test_history_keeps_one_generation_an_hour_and_the_latest_two(
    alice, versions, run_tasks, settings
):
    settings.ARENA_RATING_HISTORY_EVERY = 3600
    t = tournament_of(alice, versions[:2])
    duplicate_pair(t, 0, versions[0], versions[1], wins=1)
    start = timezone.now()
    for minutes in (0, 10, 20, 70, 80, 130):
        with mock.patch("arena.services.ratings.timezone.now",
                        return_value=start + timedelta(minutes=minutes)):
            refit(run_tasks)
    assert RatingBoard.objects.get(key=PRESET).generation == 6
    kept = sorted(set(Rating.objects.values_list("generation", flat=True)))
    # 10 and 20 min are within the hour of the first; 70 min is the first an hour after it.
    assert kept == [1, 4, 5, 6]
    assert Rating.objects.filter(generation=4).count() == 2  # kept whole
