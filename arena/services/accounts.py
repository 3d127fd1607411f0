"""Services for people's accounts: sign up, and the API token (DRF ``Token``) a user reads and
renews. Renewing deletes the old token, so a leaked one stops working at once."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token


def account_create(*, username: str, password: str) -> AbstractBaseUser:
    """A new active user with this password (the caller has validated both)."""
    return get_user_model().objects.create_user(username=username, password=password)


def api_token_ensure(*, user: AbstractBaseUser) -> Token:
    """The user's API token, created on first use."""
    token, _ = Token.objects.get_or_create(user=user)
    return token


def api_token_renew(*, user: AbstractBaseUser) -> Token:
    """A fresh API token for the user; the previous one no longer authenticates."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)
