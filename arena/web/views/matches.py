"""A match's page: its seats and result, and the replay viewer (``static/arena/viewer.js``) over the
replay, format 1, which the page embeds; the same JSON is at ``/api/matches/{id}/replay/``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.safestring import mark_safe

from arena.selectors.matches import match_list, match_replay
from arena.web.cards import CODES, card_index, card_name, card_sprite
from arena.web.present import REASONS


def match_page(request: HttpRequest, pk: int) -> HttpResponse:
    match = get_object_or_404(match_list().select_related("tournament"), pk=pk)
    replay = match_replay(match=match) if match.status == "finished" else None
    rules = (replay or {}).get("rules") or match.rules
    deck = "german" if rules.get("deck") == "german" else "french"
    user_id = request.user.pk if request.user.is_authenticated else None
    seats = [
        {
            "seat": s.seat,
            "team": s.team,
            "label": s.version.label,
            "bot_id": s.version.bot_id,
            "fault_kind": s.fault_kind,
            "fault_detail": s.fault_detail,
            "log": s.log if user_id is not None and s.version.bot.owner_id == user_id else None,
        }
        for s in match.seats.all()
    ]
    cards = {code: {"name": card_name(code, deck), "index": card_index(code, deck)}
             for code in CODES}
    viewer = {
        "deck": deck,
        "prefix": "fr" if deck == "french" else "de",
        "cards": cards,
        "seats": [{"seat": s["seat"], "team": s["team"], "label": s["label"]} for s in seats],
        "reasons": REASONS,
    }
    return render(request, "arena/matches/detail.html", {
        "match": match,
        "seats": seats,
        "replay": replay,
        "viewer": viewer,
        "sprite": mark_safe(card_sprite(deck)) if replay else "",  # noqa: S308 (generated here)
        "reason": REASONS.get(match.reason, match.reason),
        "options": rules,
    })
