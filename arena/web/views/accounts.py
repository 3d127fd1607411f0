"""Sign up, log in and out (Django's views), and the API token page."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
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


class LoginView(auth_views.LoginView):
    """Django's login page, each attempt counted against the per-address quota it shares with
    ``POST /api/token/`` (``quota_login``): past it, 429 with ``Retry-After`` and the password
    is not checked."""

    template_name = "arena/accounts/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            quota_login(address=client_address(request.META))
        except QuotaExceeded as refused:
            form = self.get_form()
            form.errors.clear()
            form.add_error(None, refused.message)
            response = self.render_to_response(self.get_context_data(form=form), status=429)
            response["Retry-After"] = str(refused.retry_after)
            return response
        return super().post(request, *args, **kwargs)


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
