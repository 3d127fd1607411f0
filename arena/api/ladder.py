"""The ladders' API: everyone reads each ladder's state; staff create one for a board and pause,
resume or cap it (``PATCH /api/ladders/{id}/``). No row is written here: services do."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.errors import ArenaError
from arena.models import Ladder
from arena.selectors.ladder import ladder_list
from arena.services.ladder import ladder_configure, ladder_create


class StaffWrites(BasePermission):
    """Everyone reads; only staff write (after ``IsAuthenticatedOrReadOnly``, which also tells
    the schema that reading needs no sign-in)."""

    message = "only staff can change the ladders"

    def has_permission(self, request, view) -> bool:
        return request.method in SAFE_METHODS or bool(request.user and request.user.is_staff)


class LadderSerializer(serializers.ModelSerializer):
    """A ladder; ``pairings``: duplicate pairs scheduled so far, ``tournament``: the round-robin
    its matches belong to."""

    pairings = serializers.SerializerMethodField()

    class Meta:
        model = Ladder
        fields = ["id", "rules_key", "preset", "rules", "tournament", "paused", "max_per_hour",
                  "queue_depth", "next_pair", "ticked_at", "created_at", "pairings"]
        read_only_fields = fields

    def get_pairings(self, ladder: Ladder) -> int:
        return ladder.next_pair


class LadderChangeSerializer(serializers.Serializer):
    paused = serializers.BooleanField(required=False)
    max_per_hour = serializers.IntegerField(required=False, min_value=0)
    queue_depth = serializers.IntegerField(required=False, min_value=0)


class LadderCreateSerializer(serializers.Serializer):
    rules = serializers.JSONField()


def _bad(error: ArenaError) -> serializers.ValidationError:
    return serializers.ValidationError({error.field or "non_field_errors": [error.message]})


def _body(ladder: Ladder) -> dict:
    return LadderSerializer(ladder).data


class LadderListView(APIView):
    """Every ladder (GET); staff add the ladder of a board (POST ``{"rules": {...}}``)."""

    permission_classes = [IsAuthenticatedOrReadOnly, StaffWrites]

    @extend_schema(responses=LadderSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response([_body(row["ladder"]) for row in ladder_list()])

    @extend_schema(request=LadderCreateSerializer, responses={201: LadderSerializer})
    def post(self, request: Request) -> Response:
        given = LadderCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            ladder = ladder_create(rules=given.validated_data["rules"])
        except ArenaError as error:
            raise _bad(error) from None
        return Response(_body(ladder), status=status.HTTP_201_CREATED)


class LadderDetailView(APIView):
    """One ladder (GET); staff pause, resume, cap or deepen it (PATCH)."""

    permission_classes = [IsAuthenticatedOrReadOnly, StaffWrites]

    @extend_schema(responses=LadderSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(_body(get_object_or_404(Ladder, pk=pk)))

    @extend_schema(request=LadderChangeSerializer, responses=LadderSerializer)
    def patch(self, request: Request, pk: int) -> Response:
        ladder = get_object_or_404(Ladder, pk=pk)
        given = LadderChangeSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            ladder = ladder_configure(ladder=ladder, **given.validated_data)
        except ArenaError as error:
            raise _bad(error) from None
        return Response(_body(ladder))
