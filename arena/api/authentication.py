"""API token authentication: ``Authorization: Token <key>``, and a plain answer to a client that
sends another scheme (``Bearer``, as many tools do by default) instead of silence."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header


class ArenaTokenAuthentication(TokenAuthentication):
    """DRF's token authentication; a ``Bearer`` header is refused with a message naming the
    scheme this API uses (without it the request would pass as anonymous and read "credentials
    were not provided")."""

    def authenticate(self, request):
        scheme = get_authorization_header(request).split(b" ", 1)[0].lower()
        if scheme == b"bearer":
            raise exceptions.AuthenticationFailed(
                "this API's scheme is Token, not Bearer: send 'Authorization: Token <key>' "
                "(the key from POST /api/token/)"
            )
        return super().authenticate(request)
