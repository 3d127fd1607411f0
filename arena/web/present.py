"""Turning selector results into what templates show: labels, percentages, a match seen from one
bot's side. Pure functions over rows the selectors prefetched; no queries of their own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.models import Match, MatchSeat

REASONS = {
    "target": "reached the target",
    "four-sevens": "four sevens",
    "four-eights": "four eights",
    "capot": "capot",
    "eighteen-four": "18 à 4",
    "claim": "claim",
    "forfeit": "forfeit",
    "limit": "deal limit",
}


def percent(value: float | None) -> str:
    """``0.8731`` -> ``"87%"``; ``"—"`` for none."""
    if value is None:
        return "—"
    return f"{value * 100:.0f}%"


def points(value: float) -> str:
    """Round-robin points: ``3.0`` -> ``"3"``, ``2.5`` -> ``"2½"``."""
    whole = int(value)
    return f"{whole}½" if value - whole else str(whole)


@dataclass(frozen=True)
class MatchRow:
    """A match as a list shows it: who played on each team, the score, who won and why."""

    match: Match
    teams: tuple[str, str]
    score: str
    winner: str
    reason: str
    faults: list[MatchSeat]
    #: From one bot's side: "won", "lost", "draw", or "" (not over); a validation match is
    #: "passed" or "failed" (the bot's own fault), never won or lost.
    outcome: str = ""
    seat: int | None = None  # one bot's first seat, when a bot is given
    debug: str = ""  # the command line that debugs this seat at home (its owner's page)


def match_row(match: Match, *, bot_id: int | None = None) -> MatchRow:
    """The row of a match whose seats are prefetched; ``outcome`` is ``bot_id``'s when given."""
    seats = list(match.seats.all())
    teams = tuple(
        " & ".join(sorted({s.version.label for s in seats if s.seat % 2 == team})) or "?"
        for team in (0, 1)
    )
    over = match.status == "finished"
    score = f"{match.score[0]}–{match.score[1]}" if over and match.score else ""
    if not over:
        winner = ""
    elif match.winner is None:
        winner = "draw"
    else:
        winner = teams[match.winner]
    outcome = ""
    own = [s for s in seats if bot_id is not None and s.version.bot_id == bot_id]
    if over and own and match.kind == "validation":
        outcome = "failed" if any(s.fault_kind for s in own) else "passed"
    elif over and bot_id is not None:
        mine = {s.seat % 2 for s in own}
        if match.winner is None or len(mine) != 1:
            outcome = "draw" if match.winner is None else "both sides"
        else:
            outcome = "won" if match.winner in mine else "lost"
    return MatchRow(
        match=match, teams=teams, score=score, winner=winner,  # type: ignore[arg-type]
        reason=REASONS.get(match.reason, match.reason), outcome=outcome,
        faults=[s for s in seats if s.fault_kind], seat=own[0].seat if own else None,
    )


def debug_command(request, row: MatchRow) -> str:
    """The command line that replays ``row``'s match at home for the bot's first seat to a local
    bot file or folder (``python -m arena_cli debug``, README)."""
    server = request.build_absolute_uri("/").rstrip("/")
    return (f"python -m arena_cli --server {server} debug {row.match.pk} "
            f"--seat {row.seat if row.seat is not None else 0} path/to/your/bot.py")


def crosstable_cells(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cross-table rows with each cell's text (``"3/4"``: points of matches) and a tone."""
    out = []
    for row in rows:
        cells = []
        for cell in row["results"]:
            if cell is None:
                cells.append({"text": "—", "tone": "self"})
            elif not cell["played"]:
                cells.append({"text": "·", "tone": ""})
            else:
                share = cell["points"] / cell["played"]
                tone = "good" if share > 0.5 else "bad" if share < 0.5 else "even"
                cells.append(
                    {"text": f"{points(cell['points'])}/{cell['played']}", "tone": tone}
                )
        out.append({**row, "cells": cells})
    return out
