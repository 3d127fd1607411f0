"""Input and output serializers. Outputs read what selectors prefetched; owner-only fields (logs,
validation faults) are null for everyone else."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from arena.api.filters import MAX_ID
from arena.api.permissions import is_owner
from arena.models import Bot, BotVersion, Match, MatchSeat, Tournament
from arena.selectors.bots import bot_latest_version
from arena.selectors.ratings import tournament_ranking_rows
from arena.selectors.tournaments import (
    tournament_crosstable,
    tournament_progress,
    tournament_standings,
)

# --- inputs ---------------------------------------------------------------------------------------


class BotCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=64, help_text="letters, digits, '_', '.', '-'")
    file = serializers.FileField(help_text="a .py or .js file, or a .zip with a bot.json manifest")


class VersionCreateInput(serializers.Serializer):
    file = serializers.FileField(help_text="a .py or .js file, or a .zip with a bot.json manifest")


class TournamentCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    rules = serializers.DictField(
        help_text='{"preset": "quatre-sept", ...options}: a preset and any options to change'
    )
    versions = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID), min_length=2
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


class SeatSerializer(serializers.ModelSerializer):
    """A seat; ``log`` (the bot's stderr tail) only for the bot's owner."""

    team = serializers.IntegerField(read_only=True)
    version = serializers.IntegerField(source="version_id", read_only=True)
    bot = serializers.CharField(source="version.bot.label", read_only=True)
    number = serializers.IntegerField(source="version.number", read_only=True)
    log = serializers.SerializerMethodField()

    class Meta:
        model = MatchSeat
        fields = ["seat", "team", "version", "bot", "number", "fault_kind", "fault_detail", "log"]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_log(self, seat: MatchSeat) -> str | None:
        owner = is_owner(self.context.get("request"), seat.version.bot.owner_id)
        return seat.log if owner else None

    def to_representation(self, seat: MatchSeat) -> dict[str, Any]:
        """The declared fields, built directly: a page of 50 matches has 200 seats, and DRF's
        field-by-field path was most of the match list's time."""
        version = seat.version
        return {
            "seat": seat.seat, "team": seat.seat % 2, "version": seat.version_id,
            "bot": version.bot.label, "number": version.number, "fault_kind": seat.fault_kind,
            "fault_detail": seat.fault_detail, "log": self.get_log(seat),
        }


_DATETIME = serializers.DateTimeField()


def _when(value):
    """A datetime as DRF's ``DateTimeField`` writes it (ISO 8601 in the current time zone, UTC as
    ``Z``), or None."""
    return None if value is None else _DATETIME.to_representation(value)


def _utc_text_when(text: str | None) -> str | None:
    """``_when`` of a time given as ``datetime.isoformat`` text in UTC, while the current time
    zone is UTC: the text with ``Z`` (DRF's path was most of a match row's time)."""
    return None if text is None else text[:-6] + "Z"


def _text_when(text: str | None) -> str | None:
    """``_when`` of a time given as ISO 8601 text."""
    return None if text is None else _DATETIME.to_representation(datetime.fromisoformat(text))


def match_list_rows(
    rows: list[tuple], seat_rows: dict[int, list[dict[str, Any]]], request
) -> list[dict[str, Any]]:
    """Rows of ``match_rows`` (times as ISO 8601 text in UTC) with their seats
    (``match_seat_rows``) as ``MatchSerializer`` writes the matches: a page of the match list,
    built without model instances."""
    base = request.build_absolute_uri("/")[:-1] if request else ""
    user = getattr(request, "user", None)
    viewer = user.pk if user is not None and user.is_authenticated else None
    when = _utc_text_when if timezone.get_current_timezone_name() == "UTC" else _text_when
    found = []
    for (pk, kind, tournament, pair, swapped, seed, rules, rules_key, status, winner, score,
         reason, failure, attempts, play_ms, created_at, started_at, finished_at) in rows:
        seats = [
            {
                "seat": seat["seat"], "team": seat["seat"] % 2, "version": seat["version"],
                "bot": seat["bot"], "number": seat["number"], "fault_kind": seat["fault_kind"],
                "fault_detail": seat["fault_detail"],
                "log": seat["log"] if viewer is not None and seat["owner_id"] == viewer else None,
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


class MatchSerializer(serializers.ModelSerializer):
    seats = SeatSerializer(many=True, read_only=True)
    replay = serializers.SerializerMethodField()

    class Meta:
        model = Match
        fields = [
            "id", "kind", "tournament", "pair", "swapped", "seed", "rules", "rules_key", "status",
            "winner", "score", "reason", "failure", "attempts", "play_ms", "created_at",
            "started_at", "finished_at", "seats", "replay",
        ]

    def to_representation(self, match: Match) -> dict[str, Any]:
        """The declared fields, built directly, the seats prefetched (the match list builds its
        rows without instances: ``match_list_rows``)."""
        seats = self.fields["seats"].child
        seats.bind("seats", self)
        seat_list = [seats.to_representation(seat) for seat in match.seats.all()]
        return {
            "id": match.pk, "kind": match.kind, "tournament": match.tournament_id,
            "pair": match.pair, "swapped": match.swapped, "seed": match.seed,
            "rules": match.rules, "rules_key": match.rules_key, "status": match.status,
            "winner": match.winner, "score": match.score, "reason": match.reason,
            "failure": match.failure, "attempts": match.attempts, "play_ms": match.play_ms,
            "created_at": _when(match.created_at), "started_at": _when(match.started_at),
            "finished_at": _when(match.finished_at),
            "seats": seat_list,
            "replay": self.get_replay(match),
        }

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_replay(self, match: Match) -> str | None:
        if match.status != "finished":
            return None
        request = self.context.get("request")
        path = f"/api/matches/{match.pk}/replay/"
        return request.build_absolute_uri(path) if request else path


class TournamentSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True)
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
    results = serializers.ListField(child=CrossCellSerializer(allow_null=True))


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
