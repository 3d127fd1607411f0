"""API views: parse input, call one service or selector, serialize. No row is written here."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny, IsAdminUser, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.api import serializers as out
from arena.api.cached import cached_json
from arena.api.filters import BotFilter, MatchFilter, TournamentFilter, VersionFilter
from arena.api.pagination import ArenaPagination
from arena.api.parsers import NestingSafeJSONParser
from arena.api.permissions import IsCreatorOrStaff, IsOwnerOrReadOnly
from arena.api.shapes import PRESET_CHOICES, Replay
from arena.api.throttles import ApiRateThrottle, LoginThrottle, UploadThrottle
from arena.errors import ArenaError
from arena.models import Match, MatchStatus
from arena.selectors.bots import bot_list, version_list
from arena.selectors.leaderboard import (
    LEADERBOARD_CACHE_SECONDS,
    leaderboard,
    leaderboard_version,
)
from arena.selectors.matches import (
    match_replay_record,
    replay_decode,
)
from arena.selectors.ratings import version_rating_history
from arena.selectors.tournaments import tournament_list
from arena.services.bots import bot_create, bot_retire, bot_version_create
from arena.services.matches import match_requeue
from arena.services.quotas import QuotaExceeded, round_robin_create
from arena.services.tournaments import tournament_cancel
from sandbox.package import MAX_PACKAGE_BYTES

_NO_MATCH = "No Match matches the given query."


def _match_id(pk: str | None) -> int:
    """A match id from the URL (404 for anything that is not a positive integer in range)."""
    try:
        match_id = int(pk or "")
    except ValueError:
        raise Http404 from None  # not an id at all: DRF's plain "Not found."
    if not 0 < match_id < 2**63:
        raise Http404(_NO_MATCH)
    return match_id


class TokenView(ObtainAuthToken):
    """``POST {username, password}`` (JSON): the user's API token, for ``Authorization: Token
    <key>``. Open to anonymous callers (it is how one signs in)."""

    parser_classes = [NestingSafeJSONParser]
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [ApiRateThrottle, LoginThrottle]

    @extend_schema(auth=[])
    def post(self, request: Request, *args, **kwargs) -> Response:
        return super().post(request, *args, **kwargs)


class ConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()


def _bad_request(error: ArenaError) -> serializers.ValidationError:
    return serializers.ValidationError({error.field or "non_field_errors": [error.message]})


def _read_upload(upload) -> tuple[str, bytes]:
    """The uploaded file's name and bytes (one byte over the cap at most, so the package check
    reports the size); a request far over the cap was refused with a 413 before it was read
    (``config.middleware.RequestSizeLimitMiddleware``)."""
    return upload.name or "", upload.read(MAX_PACKAGE_BYTES + 1)


class BotViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Bots: everyone reads; a signed-in user uploads; the owner adds versions and retires."""

    queryset = bot_list()
    pagination_class = ArenaPagination
    filterset_class = BotFilter
    permission_classes = [IsAuthenticatedOrReadOnly, IsOwnerOrReadOnly]
    #: Uploads are multipart (a file and its fields); nothing else here takes a body.
    parser_classes = [MultiPartParser]

    def get_serializer_class(self):
        return out.BotDetailSerializer if self.action == "retrieve" else out.BotSerializer

    def get_throttles(self):
        if self.request.method == "POST" and self.action in ("create", "versions"):
            return [UploadThrottle()]
        return super().get_throttles()

    @extend_schema(request=out.BotCreateInput, responses={201: out.BotSerializer})
    def create(self, request: Request, *args, **kwargs) -> Response:
        """Upload a new bot (multipart ``name``, ``file``): version 1, queued for validation."""
        data = out.BotCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        filename, content = _read_upload(data.validated_data["file"])
        try:
            bot = bot_create(
                owner=request.user, name=data.validated_data["name"], filename=filename,
                data=content,
            )
        except ArenaError as error:
            raise _bad_request(error) from None
        bot = bot_list().get(pk=bot.pk)
        body = out.BotSerializer(bot, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        methods=["POST"], request=out.VersionCreateInput, responses={201: out.VersionSerializer}
    )
    @extend_schema(
        methods=["GET"], responses=out.VersionPageSerializer,
        parameters=[OpenApiParameter("page", int), OpenApiParameter("page_size", int)],
    )
    @action(detail=True, methods=["get", "post"])
    def versions(self, request: Request, pk: str | None = None) -> Response:
        """GET: the bot's versions. POST (owner, multipart ``file``): a new version."""
        bot = self.get_object()
        if request.method == "GET":
            versions = version_list().filter(bot=bot).order_by("number")
            page = self.paginate_queryset(versions)
            body = out.VersionSerializer(page, many=True, context=self.get_serializer_context())
            return self.get_paginated_response(body.data)
        data = out.VersionCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        filename, content = _read_upload(data.validated_data["file"])
        try:
            version = bot_version_create(bot=bot, filename=filename, data=content)
        except ArenaError as error:
            raise _bad_request(error) from None
        version = version_list().get(pk=version.pk)
        body = out.VersionSerializer(version, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=out.BotSerializer)
    @action(detail=True, methods=["post"])
    def retire(self, request: Request, pk: str | None = None) -> Response:
        """The owner retires the bot: it enters no new round-robin; results stay."""
        bot = bot_retire(bot=self.get_object())
        bot = bot_list().get(pk=bot.pk)
        return Response(out.BotSerializer(bot, context=self.get_serializer_context()).data)


class VersionViewSet(viewsets.ReadOnlyModelViewSet):
    """Versions: status for everyone; the validation fault and log for the owner."""

    queryset = version_list().order_by("id")
    serializer_class = out.VersionSerializer
    pagination_class = ArenaPagination
    filterset_class = VersionFilter

    @extend_schema(
        responses=out.RatingHistoryPageSerializer,
        parameters=[OpenApiParameter("page", int), OpenApiParameter("page_size", int)],
    )
    @action(detail=True, methods=["get"], filterset_class=None)
    def ratings(self, request: Request, pk: str | None = None) -> Response:
        """The version's rating history: one row per refit of each board it is rated on."""
        history = version_rating_history(version=self.get_object())
        page = self.paginate_queryset(history)
        return self.get_paginated_response(out.RatingHistorySerializer(page, many=True).data)


class TournamentViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Round-robins: any signed-in user schedules one; everyone follows progress and standings."""

    queryset = tournament_list()
    pagination_class = ArenaPagination
    filterset_class = TournamentFilter
    parser_classes = [NestingSafeJSONParser]

    def get_serializer_class(self):
        if self.action == "retrieve":
            return out.TournamentDetailSerializer
        return out.TournamentSerializer

    @extend_schema(
        request=out.TournamentCreateInput,
        responses={201: out.TournamentDetailSerializer, 429: ConflictSerializer},
    )
    def create(self, request: Request, *args, **kwargs) -> Response:
        """Schedule a round-robin: ``{name, rules: {preset, ...}, versions: [ids], pairs}``."""
        data = out.TournamentCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            tournament = round_robin_create(
                created_by=request.user, name=values["name"], rules=values["rules"],
                version_ids=values["versions"], pairs=values["pairs"],
            )
        except QuotaExceeded as refused:
            raise Throttled(wait=refused.retry_after, detail=refused.message) from None
        except ArenaError as error:
            raise _bad_request(error) from None
        tournament = tournament_list().get(pk=tournament.pk)
        body = out.TournamentDetailSerializer(tournament, context=self.get_serializer_context())
        return Response(body.data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: out.TournamentSerializer, 409: ConflictSerializer})
    @action(detail=True, methods=["post"], permission_classes=[IsCreatorOrStaff])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """Its creator or staff cancels a running round-robin: queued matches fail ("cancelled
        by ..."), running ones finish and count. 409 unless it is running."""
        tournament = self.get_object()
        if not tournament_cancel(tournament=tournament, by=request.user):
            return Response(
                {"detail": f"only a running round-robin can be cancelled; this one is "
                           f"{tournament.status}"},
                status=status.HTTP_409_CONFLICT,
            )
        tournament = tournament_list().get(pk=tournament.pk)
        return Response(out.TournamentSerializer(tournament, context=self.get_serializer_context())
                        .data)


class MatchViewSet(viewsets.ReadOnlyModelViewSet):
    """Matches: filter with ``?tournament=&version=&status=``; the replay as JSON. A match's JSON
    is built by ``match_dicts`` alone, for the list, the detail and the requeue answer."""

    queryset = Match.objects.all()
    serializer_class = out.MatchSerializer
    pagination_class = ArenaPagination
    filterset_class = MatchFilter
    parser_classes = [NestingSafeJSONParser]

    def filter_queryset(self, queryset):
        """The list's filters apply to the list: one match is found by its id alone (building
        the filter set for it was a millisecond of each replay)."""
        return super().filter_queryset(queryset) if self.action == "list" else queryset

    def list(self, request: Request, *args, **kwargs) -> Response:
        """A page of matches: their ids a page at a time, then their rows and seats."""
        ids = self.paginate_queryset(
            self.filter_queryset(self.get_queryset()).values_list("pk", flat=True)
        )
        return self.get_paginated_response(out.match_dicts(match_ids=list(ids), request=request))

    def retrieve(self, request: Request, *args, **kwargs) -> Response:
        return Response(self._one(_match_id(kwargs.get("pk"))))

    def _one(self, match_id: int) -> dict:
        found = out.match_dicts(match_ids=[match_id], request=self.request)
        if not found:
            raise Http404(_NO_MATCH)
        return found[0]

    @extend_schema(request=None, responses={200: out.MatchSerializer, 409: ConflictSerializer})
    @action(detail=True, methods=["post"], permission_classes=[IsAdminUser])
    def requeue(self, request: Request, pk: str | None = None) -> Response:
        """Staff only: put a failed match back on the queue (409 unless it failed, or if its
        round-robin was cancelled)."""
        match = self.get_object()
        if not match_requeue(match_id=match.pk):
            match.refresh_from_db()
            reason = (
                f"only failed matches are re-queued; this one is {match.status}"
                if match.status != MatchStatus.FAILED
                else "its round-robin was cancelled: a cancelled round-robin plays nothing more"
            )
            return Response({"detail": reason}, status=status.HTTP_409_CONFLICT)
        return Response(self._one(match.pk))

    @extend_schema(responses={200: Replay, 404: ConflictSerializer, 410: ConflictSerializer})
    @action(detail=True, methods=["get"])
    def replay(self, request: Request, pk: str | None = None) -> Response:
        """The match's replay, format 1 (404 until the match has finished; 410 once the arena's
        retention deleted it, ``ARENA_KEEP_REPLAYS_DAYS`` after the match finished). A replay
        never changes once written: its rendered body is kept under the match, its attempts and
        the time it finished (a match re-queued and played again finishes at another time)."""
        match_id = _match_id(pk)
        found = match_replay_record(match_id=match_id)
        if found is None:
            raise Http404(_NO_MATCH)
        if found.pruned:
            return Response({"detail": _replay_deleted()}, status=status.HTTP_410_GONE)
        if found.data is None:
            raise Http404("this match has no replay (yet)")
        data = found.data
        return cached_json(
            request, self, key=f"replay:{match_id}:{found.version}",
            build=lambda: replay_decode(data),
        )


def _replay_deleted() -> str:
    days = settings.ARENA_KEEP_REPLAYS_DAYS
    kept = f"{days} days after a match finishes" if days else "for a while"
    return f"this match's replay was deleted: this arena keeps replays {kept}"


class LeaderboardView(APIView):
    """The leaderboard of one preset (``?preset=quatre-sept`` by default), or of a rule set with
    changed options (``?board=quatre-sept{target=41}``, a tournament's ``rules_key``)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("preset", str, default="quatre-sept", enum=PRESET_CHOICES),
            OpenApiParameter("board", str, description="a rules_key; overrides preset"),
            OpenApiParameter("page", int),
            OpenApiParameter("page_size", int),
        ],
        responses=out.LeaderboardPageSerializer,
    )
    def get(self, request: Request) -> Response:
        """A page of the board's latest refit. A refit's rows never change, so the rendered page
        is cached under the board's generation and the page's URL."""
        preset = request.query_params.get("preset", "quatre-sept")
        board = request.query_params.get("board") or None
        if preset not in PRESET_CHOICES:
            raise ValidationError({"preset": [
                f"no preset {preset!r}; presets: {', '.join(PRESET_CHOICES)}"
            ]})

        def build():
            rows = leaderboard(preset=preset, board=board)
            paginator = ArenaPagination()
            page = paginator.paginate_queryset(rows, request, view=self)
            body = out.LeaderboardRowSerializer(page, many=True).data
            return paginator.get_paginated_response(body).data

        version = leaderboard_version(preset=preset, board=board)
        if version is None:  # not fitted yet: an empty page
            return Response(build())
        return cached_json(
            request, self, key=f"leaderboard:{version}:{request.build_absolute_uri()}",
            build=build, shared_seconds=LEADERBOARD_CACHE_SECONDS,
        )
