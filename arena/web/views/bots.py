"""Bots: the list, a bot's page (versions, rating history, matches; faults and uploads for its
owner), and uploading a new bot or version."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from arena.errors import ArenaError
from arena.models import VersionStatus
from arena.ownership import owns, viewer_id
from arena.selectors.activity import bot_faults, bot_rating_history, bot_recent_matches
from arena.selectors.bots import bot_latest_version, bot_list
from arena.selectors.ladder import version_ladder_status
from arena.services.bots import bot_create, bot_version_create
from arena.web.charts import Point, Series, legend, rating_chart
from arena.web.forms import BotUploadForm, VersionUploadForm
from arena.web.present import debug_command, match_row, percent
from sandbox.package import MAX_PACKAGE_BYTES


def bots_page(request: HttpRequest) -> HttpResponse:
    """Every bot (``?owner=`` filters), with its latest version's status."""
    bots = bot_list().order_by("owner__username", "name")
    owner = request.GET.get("owner") or ""
    if owner:
        bots = bots.filter(owner__username=owner)
    page = Paginator(bots, 50).get_page(request.GET.get("page"))
    rows = [{"bot": b, "latest": bot_latest_version(bot=b)} for b in page]
    return render(request, "arena/bots/list.html", {"rows": rows, "page": page, "owner": owner})


#: How often a bot's page asks for its versions while one is still to validate.
POLL_SECONDS = 2
_OPEN = (VersionStatus.PENDING, VersionStatus.VALIDATING)


def bot_page(request: HttpRequest, pk: int) -> HttpResponse:
    bot = get_object_or_404(bot_list(), pk=pk)
    context = _versions_context(request, bot)
    mine = context["mine"]
    history = list(bot_rating_history(bot=bot))
    charts, current = _charts(bot, history)
    rows = [match_row(m, bot_id=bot.pk) for m in bot_recent_matches(bot=bot)]
    if mine:
        rows = [replace(row, debug=debug_command(request, row))
                if row.match.status == "finished" else row for row in rows]
    context.update({
        "current": current,
        "charts": charts,
        "matches": rows,
        "faults": list(bot_faults(bot=bot)) if mine else [],
        "form": VersionUploadForm() if mine and not bot.builtin and not bot.retired else None,
        "ladder_status": version_ladder_status(bot=bot),
    })
    return render(request, "arena/bots/detail.html", context)


def bot_versions(request: HttpRequest, pk: int) -> HttpResponse:
    """The versions part alone, for htmx polling while a version validates."""
    bot = get_object_or_404(bot_list(), pk=pk)
    return render(request, "arena/bots/_versions.html", _versions_context(request, bot))


def _versions_context(request: HttpRequest, bot) -> dict:
    versions = sorted(bot.versions.all(), key=lambda v: -v.number)
    return {
        "bot": bot,
        "mine": owns(viewer_id(request), bot.owner_id),
        "versions": versions,
        "polling": any(v.status in _OPEN for v in versions),
        "poll_seconds": POLL_SECONDS,
    }


def _charts(bot, history) -> tuple[list[dict], list[dict]]:
    """One chart per board the bot is rated on, and each version's latest rating per board."""
    by_board: dict[str, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    latest: dict[tuple[str, int], object] = {}
    for rating in history:
        by_board[rating.board.key][rating.version.number].append(rating)
        latest[rating.board.key, rating.version.number] = rating
    charts = []
    for key, versions in sorted(by_board.items()):
        series = [
            Series(
                label=f"v{number}",
                points=[Point(r.fitted_at, r.elo, r.ci95) for r in rows],
            )
            for number, rows in sorted(versions.items())
        ]
        title = f"{bot.label}: Elo on {key} over time (95% interval shaded)"
        charts.append({"board": key, "svg": rating_chart(series, title=title),
                       "legend": legend(series)})
    current = [
        {"board": key, "number": number, "rating": r, "los": percent(r.los_next)}
        for (key, number), r in sorted(latest.items(), key=lambda kv: (kv[0][0], -kv[0][1]))
    ]
    return charts, current


@login_required
@require_http_methods(["GET", "POST"])
def bot_new(request: HttpRequest) -> HttpResponse:
    form = BotUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            bot = bot_create(
                owner=request.user, name=form.cleaned_data["name"], filename=upload.name or "",
                data=upload.read(MAX_PACKAGE_BYTES + 1),
            )
        except ArenaError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, f"{bot.label} v1 is uploaded and queued for validation.")
            return redirect("web:bot", pk=bot.pk)
    return render(request, "arena/bots/new.html", {"form": form})


@login_required
@require_POST
def version_new(request: HttpRequest, pk: int) -> HttpResponse:
    bot = get_object_or_404(bot_list(), pk=pk)
    if not owns(viewer_id(request), bot.owner_id):
        return HttpResponse("only the bot's owner can upload a version", status=403)
    form = VersionUploadForm(request.POST, request.FILES)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            version = bot_version_create(
                bot=bot, filename=upload.name or "", data=upload.read(MAX_PACKAGE_BYTES + 1)
            )
        except ArenaError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, f"v{version.number} is uploaded and queued for validation.")
    else:
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
    return redirect("web:bot", pk=bot.pk)
