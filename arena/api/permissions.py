"""Who may do what: everyone reads; signed-in users create; only a bot's owner changes it."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission


class IsOwnerOrReadOnly(BasePermission):
    """Writes to a bot (new version, retire) only by its owner."""

    message = "only the bot's owner can do this"

    def has_object_permission(self, request, view, obj) -> bool:
        if request.method in SAFE_METHODS:
            return True
        owner_id = getattr(obj, "owner_id", None)
        return owner_id is not None and owner_id == request.user.pk


class IsCreatorOrStaff(BasePermission):
    """Signed in; and for the object, its creator (``created_by``) or staff."""

    message = "only the round-robin's creator or staff can do this"

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request, view, obj) -> bool:
        return request.user.is_staff or obj.created_by_id == request.user.pk


def viewer_id(request) -> int | None:
    """The signed-in user's id of the request, or None (anonymous, or no request)."""
    user = getattr(request, "user", None)
    return user.pk if user is not None and user.is_authenticated else None


def owns(viewer: int | None, owner_id: int | None) -> bool:
    """The owner-only rule (validation faults and logs, seats' stderr): the viewer is signed in
    and is the bot's owner. Every owner-only field goes through here."""
    return viewer is not None and owner_id == viewer


def is_owner(request, owner_id: int | None) -> bool:
    """Whether the request's user owns the bot whose owner id is given (for owner-only fields)."""
    return owns(viewer_id(request), owner_id)
