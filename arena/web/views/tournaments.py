"""Round-robins: the list, the form that starts one, its page, whose live part (progress,
standings, cross-table, ranking, matches) htmx polls while matches are still to play, and the
button that cancels it (its creator or staff)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from arena.errors import ArenaError
from arena.models import TournamentStatus
from arena.selectors.activity import tournaments_with_progress, versions_ready_to_play
from arena.selectors.matches import match_list
from arena.selectors.ratings import tournament_ranking_rows
from arena.selectors.tournaments import (
    tournament_crosstable,
    tournament_list,
    tournament_progress,
    tournament_standings,
)
from arena.services.quotas import QuotaExceeded, round_robin_create
from arena.services.tournaments import tournament_cancel
from arena.web.forms import TournamentForm
from arena.web.present import crosstable_cells, match_row, percent, points

#: How often a running round-robin's page refreshes its live part.
POLL_SECONDS = 2
MATCHES_PER_PAGE = 50


def tournaments_page(request: HttpRequest) -> HttpResponse:
    page = Paginator(tournaments_with_progress(), 25).get_page(request.GET.get("page"))
    return render(request, "arena/tournaments/list.html", {"page": page})


@login_required
@require_http_methods(["GET", "POST"])
def tournament_new(request: HttpRequest) -> HttpResponse:
    form = TournamentForm(request.POST or None, versions=versions_ready_to_play())
    if request.method == "POST" and form.is_valid():
        try:
            tournament = round_robin_create(
                created_by=request.user, name=form.cleaned_data["name"], rules=form.rules(),
                version_ids=[v.pk for v in form.cleaned_data["versions"]],
                pairs=form.cleaned_data["pairs"],
            )
        except QuotaExceeded as refused:
            form.add_error(None, refused.message)
            response = render(request, "arena/tournaments/new.html", {"form": form}, status=429)
            response["Retry-After"] = str(refused.retry_after)
            return response
        except ArenaError as error:
            form.add_service_error(error)
        else:
            messages.success(request, f"{tournament.name} is scheduled: its matches are queued.")
            return redirect("web:tournament", pk=tournament.pk)
    return render(request, "arena/tournaments/new.html", {"form": form})


def tournament_page(request: HttpRequest, pk: int) -> HttpResponse:
    tournament = get_object_or_404(tournament_list(), pk=pk)
    return render(request, "arena/tournaments/detail.html", _live_context(request, tournament))


@login_required
@require_POST
def tournament_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Its creator or staff cancels a running round-robin (``tournament_cancel``): queued matches
    fail, running ones finish and count. 403 for anyone else."""
    tournament = get_object_or_404(tournament_list(), pk=pk)
    if not _may_cancel(request, tournament):
        return HttpResponse("only the round-robin's creator or staff can cancel it", status=403)
    if tournament_cancel(tournament=tournament, by=request.user):
        messages.success(request, f"{tournament.name} is cancelled: its queued matches will not "
                                  "be played.")
    else:
        messages.error(request, f"Only a running round-robin can be cancelled; {tournament.name} "
                                f"is {tournament.status}.")
    return redirect("web:tournament", pk=tournament.pk)


def _may_cancel(request: HttpRequest, tournament) -> bool:
    user = request.user
    return user.is_authenticated and (user.is_staff or tournament.created_by_id == user.pk)


def tournament_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The live part alone, for htmx polling; it stops polling once nothing is left to play."""
    tournament = get_object_or_404(tournament_list(), pk=pk)
    return render(request, "arena/tournaments/_live.html", _live_context(request, tournament))


def _live_context(request: HttpRequest, tournament) -> dict:
    progress = tournament_progress(tournament=tournament)
    standings = tournament_standings(tournament=tournament)
    for row in standings:
        row["points_text"] = points(row["points"])
    ranking = tournament_ranking_rows(tournament=tournament)
    for row in ranking:
        row["los"] = percent(row["los_next"])
    matches = match_list().filter(tournament=tournament).order_by("id")
    page = Paginator(matches, MATCHES_PER_PAGE).get_page(request.GET.get("page"))
    open_matches = progress["queued"] + progress["running"]
    cancelled = tournament.status == TournamentStatus.CANCELLED
    return {
        "tournament": tournament,
        "progress": progress,
        "percent": round(100 * progress["done"] / progress["total"]) if progress["total"] else 0,
        # A cancelled round-robin's page stops updating (matches running when it was cancelled
        # still finish and count: a reload shows them).
        "polling": open_matches > 0 and not cancelled,
        "cancelled": cancelled,
        "poll_seconds": POLL_SECONDS,
        "standings": standings,
        "crosstable": crosstable_cells(tournament_crosstable(tournament=tournament)),
        "ranking": ranking,
        "page": page,
        "matches": [match_row(m) for m in page],
        "options": tournament.rules,
        "can_cancel": (
            tournament.status == TournamentStatus.RUNNING and _may_cancel(request, tournament)
        ),
    }
