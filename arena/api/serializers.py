"""Input and output serializers. Outputs read what selectors prefetched; owner-only fields (logs,
validation faults) are null for everyone else."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from arena.api.filters import MAX_ID
from arena.api.permissions import is_owner, owns, viewer_id
from arena.api.shapes import PRESET_CHOICES, RulesField, RulesInputField, ScoreField
from arena.models import Bot, BotVersion, MatchKind, MatchStatus, Tournament
from arena.selectors.bots import bot_latest_version
from arena.selectors.matches import match_rows, match_seat_rows
from arena.selectors.ratings import tournament_ranking_rows
from arena.selectors.tournaments import (
    tournament_crosstable,
    tournament_progress,
    tournament_standings,
)
from arena.services.tournaments import MAX_VERSIONS

# --- inputs ---------------------------------------------------------------------------------------


class BotCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=64, help_text="letters, digits, '_', '.', '-'")
    file = serializers.FileField(help_text="a .py or .js file, or a .zip with a bot.json manifest")


class VersionCreateInput(serializers.Serializer):
    file = serializers.FileField(help_text="a .py or .js file, or a .zip with a bot.json manifest")


class TournamentCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    rules = RulesInputField(
        help_text='{"preset": "quatre-sept", ...options}: a preset and any options to change'
    )
    versions = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID), min_length=2,
        max_length=MAX_VERSIONS,
        error_messages={"min_length": "a round-robin needs at least two versions (their ids)"},
        help_text="the ids of the versions that play (at least two)",
    )
    pairs = serializers.IntegerField(
        min_value=1, help_text="duplicate pairs per pairing (2 matches each)"
    )


# --- outputs --------------------------------------------------------------------------------------


class VersionBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = BotVersion
        fields = ["id", "number", "status"]


class FaultSerializer(serializers.Serializer):
    kind = serializers.CharField()
    detail = serializers.CharField()


class VersionSerializer(serializers.ModelSerializer):
    """A version; ``fault`` and ``log`` (the validation's outcome) only for the bot's owner."""

    bot = serializers.IntegerField(source="bot_id", read_only=True)
    bot_name = serializers.CharField(source="bot.label", read_only=True)
    sha256 = serializers.CharField(source="blob_id", read_only=True, allow_null=True)
    fault = serializers.SerializerMethodField()
    log = serializers.SerializerMethodField()

    class Meta:
        model = BotVersion
        fields = [
            "id", "bot", "bot_name", "number", "status", "runtime", "filename", "sha256",
            "builtin", "validation_match", "created_at", "validated_at", "fault", "log",
        ]

    @extend_schema_field(FaultSerializer(allow_null=True))
    def get_fault(self, version: BotVersion) -> dict[str, str] | None:
        if not self._owner(version) or not (version.fault_kind or version.fault_detail):
            return None
        return {"kind": version.fault_kind, "detail": version.fault_detail}

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_log(self, version: BotVersion) -> str | None:
        return version.validation_log if self._owner(version) else None

    def _owner(self, version: BotVersion) -> bool:
        return is_owner(self.context.get("request"), version.bot.owner_id)


class BotSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    latest_version = serializers.SerializerMethodField()

    class Meta:
        model = Bot
        fields = ["id", "name", "owner", "builtin", "retired", "created_at", "latest_version"]

    @extend_schema_field(VersionBriefSerializer(allow_null=True))
    def get_latest_version(self, bot: Bot) -> dict[str, Any] | None:
        version = bot_latest_version(bot=bot)
        return VersionBriefSerializer(version).data if version else None


class BotDetailSerializer(BotSerializer):
    versions = VersionBriefSerializer(many=True, read_only=True)

    class Meta(BotSerializer.Meta):
        fields = [*BotSerializer.Meta.fields, "versions"]


class SeatSerializer(serializers.Serializer):
    """A seat of a match (schema only: ``match_dicts`` builds it); ``log`` (the bot's stderr
    tail) only for the bot's owner."""

    seat = serializers.IntegerField()
    team = serializers.IntegerField()
    version = serializers.IntegerField()
    bot = serializers.CharField(help_text="owner/name")
    number = serializers.IntegerField()
    fault_kind = serializers.CharField(help_text="empty unless this seat faulted")
    fault_detail = serializers.CharField()
    log = serializers.CharField(allow_null=True, help_text="stderr tail; the owner's alone")


class MatchSerializer(serializers.Serializer):
    """A match, the same in the list and alone (schema only: ``match_dicts`` builds it)."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=MatchKind.choices)
    tournament = serializers.IntegerField(allow_null=True)
    pair = serializers.IntegerField()
    swapped = serializers.BooleanField()
    seed = serializers.IntegerField()
    rules = RulesField()
    rules_key = serializers.CharField()
    status = serializers.ChoiceField(choices=MatchStatus.choices)
    winner = serializers.IntegerField(allow_null=True, help_text="a team; null for a draw")
    score = ScoreField(allow_null=True)
    reason = serializers.CharField()
    failure = serializers.CharField()
    attempts = serializers.IntegerField()
    play_ms = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    seats = SeatSerializer(many=True)
    replay = serializers.URLField(
        allow_null=True,
        help_text="set once the match has finished; it answers 410 once the arena's retention "
        "(ARENA_KEEP_REPLAYS_DAYS) deleted the replay",
    )


_DATETIME = serializers.DateTimeField()


def _utc_text_when(text: str | None) -> str | None:
    """A time given as ``datetime.isoformat`` text in UTC as DRF's ``DateTimeField`` writes it
    while the current time zone is UTC: the text with ``Z`` (DRF's path was most of a match
    row's time)."""
    return None if text is None else text[:-6] + "Z"


def _text_when(text: str | None) -> str | None:
    """A time given as ISO 8601 text as DRF's ``DateTimeField`` writes it (current time zone)."""
    return None if text is None else _DATETIME.to_representation(datetime.fromisoformat(text))


def match_dicts(*, match_ids: list[int], request) -> list[dict[str, Any]]:
    """The matches with these ids, in id order, as the API shows them (``MatchSerializer``):
    the one builder of a match's JSON for the list, the detail and the requeue answer. Plain
    rows, no model instances (``match_rows``, ``match_seat_rows``); logs for their owner only
    (``viewer_id``); times in the current time zone."""
    rows = match_rows(match_ids=match_ids)
    seat_rows = match_seat_rows(match_ids=match_ids)
    base = request.build_absolute_uri("/")[:-1] if request else ""
    viewer = viewer_id(request)
    when = _utc_text_when if timezone.get_current_timezone_name() == "UTC" else _text_when
    found = []
    for (pk, kind, tournament, pair, swapped, seed, rules, rules_key, status, winner, score,
         reason, failure, attempts, play_ms, created_at, started_at, finished_at) in rows:
        seats = [
            {
                "seat": seat["seat"], "team": seat["seat"] % 2, "version": seat["version"],
                "bot": seat["bot"], "number": seat["number"], "fault_kind": seat["fault_kind"],
                "fault_detail": seat["fault_detail"],
                "log": seat["log"] if owns(viewer, seat["owner_id"]) else None,
            }
            for seat in seat_rows.get(pk, ())
        ]
        found.append({
            "id": pk, "kind": kind, "tournament": tournament, "pair": pair, "swapped": swapped,
            "seed": seed, "rules": rules, "rules_key": rules_key, "status": status,
            "winner": winner, "score": score, "reason": reason, "failure": failure,
            "attempts": attempts, "play_ms": play_ms, "created_at": when(created_at),
            "started_at": when(started_at), "finished_at": when(finished_at), "seats": seats,
            "replay": f"{base}/api/matches/{pk}/replay/" if status == "finished" else None,
        })
    return found


class TournamentSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    preset = serializers.ChoiceField(choices=PRESET_CHOICES, read_only=True)
    rules = RulesField(read_only=True)
    total = serializers.SerializerMethodField()
    done = serializers.SerializerMethodField()

    class Meta:
        model = Tournament
        fields = [
            "id", "name", "status", "preset", "rules", "rules_key", "pairs", "seed", "created_by",
            "schedule", "created_at", "finished_at", "total", "done",
        ]

    def _progress(self, tournament: Tournament) -> dict[str, int]:
        cache = self.context.setdefault("_progress", {})
        if tournament.pk not in cache:
            cache[tournament.pk] = tournament_progress(tournament=tournament)
        return cache[tournament.pk]

    def get_total(self, tournament: Tournament) -> int:
        return self._progress(tournament)["total"]

    def get_done(self, tournament: Tournament) -> int:
        return self._progress(tournament)["done"]


class StandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    version = serializers.IntegerField()
    bot = serializers.IntegerField()
    label = serializers.CharField()
    played = serializers.IntegerField()
    points = serializers.FloatField(help_text="win 1, draw 0.5, loss 0 per match")
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    draws = serializers.IntegerField()
    faults = serializers.IntegerField(help_text="matches lost by this version's own fault")


class CrossCellSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    points = serializers.FloatField()
    played = serializers.IntegerField()


class CrossRowSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    label = serializers.CharField()
    results = serializers.ListField(
        child=CrossCellSerializer(allow_null=True),
        help_text="one cell per version in the rows' order; null on the diagonal",
    )


class RatedRowSerializer(serializers.Serializer):
    """A rated version on a board or in a tournament's ranking (Bradley-Terry on the Elo scale)."""

    rank = serializers.IntegerField()
    version = serializers.IntegerField()
    elo = serializers.FloatField(
        help_text="Elo scale; each connected group of versions averages 1500"
    )
    ci95 = serializers.FloatField(
        help_text="half-width of the 95% interval (duplicate pairs as clusters)"
    )
    matches = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    draws = serializers.IntegerField()
    provisional = serializers.BooleanField(
        help_text="fewer than 30 rated matches, or every match won (or lost)"
    )
    los_next = serializers.FloatField(
        allow_null=True,
        help_text="likelihood of superiority over the next row (null on the last row)",
    )


class LeaderboardRowSerializer(RatedRowSerializer):
    bot = serializers.CharField()
    owner = serializers.CharField()
    number = serializers.IntegerField()
    fitted_at = serializers.DateTimeField()


class RankingRowSerializer(RatedRowSerializer):
    label = serializers.CharField()


class RatingHistorySerializer(serializers.Serializer):
    """One refit's rating of a version on a board (``board``: the rule set's key)."""

    board = serializers.CharField(source="board.key")
    preset = serializers.CharField(source="board.preset")
    generation = serializers.IntegerField()
    fitted_at = serializers.DateTimeField()
    rank = serializers.IntegerField()
    elo = serializers.FloatField()
    ci95 = serializers.FloatField()
    matches = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    draws = serializers.IntegerField()
    provisional = serializers.BooleanField()
    los_next = serializers.FloatField(allow_null=True)


class TournamentDetailSerializer(TournamentSerializer):
    versions = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    standings = serializers.SerializerMethodField()
    crosstable = serializers.SerializerMethodField()
    ranking = serializers.SerializerMethodField()

    class Meta(TournamentSerializer.Meta):
        fields = [
            *TournamentSerializer.Meta.fields, "versions", "progress", "standings", "crosstable",
            "ranking",
        ]

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_versions(self, tournament: Tournament) -> list[int]:
        return list(tournament.entries.values_list("version_id", flat=True))

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_progress(self, tournament: Tournament) -> dict[str, int]:
        return self._progress(tournament)

    @extend_schema_field(StandingSerializer(many=True))
    def get_standings(self, tournament: Tournament) -> list[dict[str, Any]]:
        return tournament_standings(tournament=tournament)

    @extend_schema_field(CrossRowSerializer(many=True))
    def get_crosstable(self, tournament: Tournament) -> list[dict[str, Any]]:
        return tournament_crosstable(tournament=tournament)

    @extend_schema_field(RankingRowSerializer(many=True))
    def get_ranking(self, tournament: Tournament) -> list[dict[str, Any]]:
        """Ratings from this tournament's finished matches alone, with 95% intervals."""
        return tournament_ranking_rows(tournament=tournament)


# --- pages ----------------------------------------------------------------------------------------


def page_of(child: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """The schema of a page of ``child`` rows (``ArenaPagination``), for the actions and views
    drf-spectacular does not see as lists."""
    return type(name, (serializers.Serializer,), {
        "count": serializers.IntegerField(),
        "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True),
        "results": child(many=True),
        "__doc__": f"A page of {child.__name__.removesuffix('Serializer')} rows.",
    })


VersionPageSerializer = page_of(VersionSerializer, "VersionPage")
RatingHistoryPageSerializer = page_of(RatingHistorySerializer, "RatingHistoryPage")
LeaderboardPageSerializer = page_of(LeaderboardRowSerializer, "LeaderboardPage")
