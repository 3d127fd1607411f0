"""``python manage.py requeue_matches [--tournament ID] [MATCH_ID ...]``: put failed matches (for
example those the stuck-match sweep failed) back on the queue."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from arena.models import Match, MatchStatus
from arena.services.matches import match_requeue


class Command(BaseCommand):
    help = "Re-queue failed matches: the given ids, or every failed match (of one tournament)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("match_ids", nargs="*", type=int, metavar="MATCH_ID")
        parser.add_argument("--tournament", type=int, default=None)

    def handle(self, *args, **opts) -> None:
        failed = Match.objects.filter(status=MatchStatus.FAILED)
        if opts["tournament"] is not None:
            failed = failed.filter(tournament_id=opts["tournament"])
        if opts["match_ids"]:
            failed = failed.filter(pk__in=opts["match_ids"])
        ids = list(failed.values_list("pk", flat=True))
        done = [pk for pk in ids if match_requeue(match_id=pk)]
        self.stdout.write(f"re-queued {len(done)} match(es): {done}")
