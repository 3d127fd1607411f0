"""The leaderboard: one rating board (a preset as published, or a rule set with options changed)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from arena.models import RefitState
from arena.selectors.boards import board_list
from arena.selectors.ladder import ladder_board_summary
from arena.selectors.leaderboard import leaderboard
from arena.web.present import match_row, percent
from engine import PRESETS


def leaderboard_page(request: HttpRequest) -> HttpResponse:
    """``/?preset=pollack`` or ``/?board=quatre-sept{target=41}``."""
    preset = request.GET.get("preset") or "quatre-sept"
    if preset not in PRESETS:
        raise Http404(f"no preset {preset!r}; presets: {', '.join(PRESETS)}")
    board = request.GET.get("board") or None
    rows = leaderboard(preset=preset, board=board)
    for row in rows:
        row["los"] = percent(row["los_next"])
        row["elo_int"] = round(row["elo"])
        row["ci_int"] = round(row["ci95"])
    boards = list(board_list())
    current = board or preset
    board_row = next((b for b in boards if b.key == current), None)
    if board is not None and board_row is None and board not in PRESETS:
        raise Http404("no rating board of that name")  # not its text as the page's heading
    ladder = ladder_board_summary(rules_key=current)
    if ladder is not None:
        ladder["rows"] = [match_row(m) for m in ladder["matches"]]
        for row in rows:
            row["placed"] = row["version"] in ladder["placed"]
            row["form"] = ladder["form"].get(row["version"], [])
    return render(request, "arena/leaderboard.html", {
        "rows": rows,
        "presets": list(PRESETS),
        "preset": preset,
        "current": current,
        "other_boards": [b for b in boards if b.key not in PRESETS],
        "board_row": board_row,
        # Results wait for the board's next refit (debounced): say so rather than disagree with a
        # round-robin's standings in silence.
        "refit_pending": board_row is not None and board_row.state != RefitState.IDLE,
        "refit_every": settings.ARENA_REFIT_EVERY,
        "ladder": ladder,
    })
