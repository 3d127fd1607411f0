"""Sign up, log in and out (Django's views), and the API token page."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from arena.services.accounts import account_create, api_token_ensure, api_token_renew
from arena.services.quotas import QuotaExceeded, client_address, quota_login, quota_signup
from arena.web.forms import SignupForm


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("web:bots")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            quota_signup(address=client_address(request.META))
        except QuotaExceeded as refused:
            form.add_error(None, refused.message)
            response = render(request, "arena/accounts/signup.html", {"form": form}, status=429)
            response["Retry-After"] = str(refused.retry_after)
            return response
        user = account_create(
            username=form.cleaned_data["username"], password=form.cleaned_data["password1"]
        )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}. Upload your first bot.")
        return redirect("web:bot-new")
    return render(request, "arena/accounts/signup.html", {"form": form})


class QuotaAuthenticationForm(AuthenticationForm):
    """Django's sign-in form, each attempt first counted against the per-address quota it
    shares with ``POST /api/token/`` (``quota_login``): past it the form is invalid with the
    quota's message and the password is not checked (``refused`` holds the refusal)."""

    refused: QuotaExceeded | None = None

    def clean(self) -> dict[str, Any]:
        try:
            quota_login(address=client_address(self.request.META))
        except QuotaExceeded as refused:
            self.refused = refused
            raise ValidationError(refused.message, code="quota") from None
        return super().clean()


class LoginView(auth_views.LoginView):
    """Django's login page with ``QuotaAuthenticationForm``: an attempt past the quota is a 429
    with ``Retry-After``."""

    template_name = "arena/accounts/login.html"
    redirect_authenticated_user = True
    authentication_form = QuotaAuthenticationForm

    def form_invalid(self, form: QuotaAuthenticationForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.refused is not None:
            response.status_code = 429
            response["Retry-After"] = str(form.refused.retry_after)
        return response


@login_required
@require_http_methods(["GET", "POST"])
def api_token(request: HttpRequest) -> HttpResponse:
    """GET shows the user's token (made on first visit); POST replaces it."""
    if request.method == "POST":
        api_token_renew(user=request.user)
        messages.success(request, "A new token was made; the old one no longer works.")
        return redirect("web:token")
    token = api_token_ensure(user=request.user)
    return render(request, "arena/accounts/token.html", {"token": token})
