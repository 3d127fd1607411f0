"""Who may do what: everyone reads; signed-in users create; only a bot's owner changes it."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

from arena.ownership import owns, viewer_id

__all__ = ["IsCreatorOrStaff", "IsOwnerOrReadOnly", "is_owner", "owns", "viewer_id"]


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


def is_owner(request, owner_id: int | None) -> bool:
    """Whether the request's user owns the bot whose owner id is given (for owner-only fields)."""
    return owns(viewer_id(request), owner_id)
