"""The owner-only rule, written once: validation faults and logs and seats' stderr tails are shown
to the bot's owner alone (the API's fields and the pages alike call ``owns``)."""

from __future__ import annotations


def viewer_id(request) -> int | None:
    """The signed-in user's id of the request, or None (anonymous, or no request)."""
    user = getattr(request, "user", None)
    return user.pk if user is not None and user.is_authenticated else None


def owns(viewer: int | None, owner_id: int | None) -> bool:
    """Whether the viewer (``viewer_id``) is signed in and is the bot's owner."""
    return viewer is not None and owner_id == viewer
