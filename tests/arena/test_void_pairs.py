"""A duplicate pair is two matches of one deal with the seats swapped: when one of them fails
(void, cancelled, dropped from a ladder), the other counts for nobody either, in the standings,
the cross-table and the ratings. Alone, it would count the deal's luck for one side."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from arena.models import Match, MatchStatus
from arena.selectors.ratings import rated_results, tournament_ranking_rows
from arena.selectors.tournaments import tournament_crosstable, tournament_standings
from arena.services import tournaments as tournaments_service
from arena.services.bots import builtin_bots_ensure

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(monkeypatch):
    """A round-robin of two versions, one pair: its two matches, both queued (no task sent)."""
    monkeypatch.setattr(tournaments_service, "queue_matches", lambda match_ids: None)
    versions = builtin_bots_ensure()
    tournament = tournaments_service.tournament_create(
        created_by=User.objects.create_user("organiser", password="x"), name="cup",
        rules={"preset": "quatre-sept"},
        version_ids=[versions["random"].pk, versions["greedy"].pk], pairs=1,
    )
    first, second = Match.objects.filter(tournament=tournament).order_by("pk")
    return tournament, first, second


def played(tournament) -> dict[int, int]:
    return {row["version"]: row["played"] for row in tournament_standings(tournament=tournament)}


def test_a_finished_match_whose_twin_failed_counts_for_nobody(pair):
    tournament, first, second = pair
    Match.objects.filter(pk=first.pk).update(status=MatchStatus.FINISHED, winner=0)
    # its twin still to play: the finished half shows at once
    assert sorted(played(tournament).values()) == [1, 1]
    assert len(rated_results(tournament_id=tournament.pk)) == 1
    Match.objects.filter(pk=second.pk).update(status=MatchStatus.FAILED, failure="void")
    assert sorted(played(tournament).values()) == [0, 0]  # the kept tally is not reused
    assert rated_results(tournament_id=tournament.pk) == []
    assert rated_results(rules_key=tournament.rules_key) == []
    assert tournament_ranking_rows(tournament=tournament) == []
    assert all(
        cell is None or cell["played"] == 0
        for row in tournament_crosstable(tournament=tournament) for cell in row["results"]
    )


def test_a_whole_pair_counts_both_matches(pair):
    tournament, first, second = pair
    Match.objects.filter(pk__in=[first.pk, second.pk]).update(
        status=MatchStatus.FINISHED, winner=0
    )
    assert sorted(played(tournament).values()) == [2, 2]
    assert len(rated_results(rules_key=tournament.rules_key)) == 2
    assert {row["version"] for row in tournament_ranking_rows(tournament=tournament)} == set(
        played(tournament)
    )


def test_a_cancel_that_voids_a_finished_twin_asks_for_the_boards_refit(pair):
    """The finished half leaves the published ratings at once, not at the board's next result."""
    from arena.models import RatingBoard, RefitState
    from arena.services.tournaments import tournament_cancel

    tournament, first, _ = pair
    Match.objects.filter(pk=first.pk).update(status=MatchStatus.FINISHED, winner=0)
    assert tournament_cancel(tournament=tournament, by=tournament.created_by)
    board = RatingBoard.objects.get(key=tournament.rules_key)
    assert board.state == RefitState.QUEUED
