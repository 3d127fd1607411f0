"""``python manage.py requeue_matches [--tournament ID] [MATCH_ID ...]``: put failed matches (for
example those the stuck-match sweep failed) back on the queue.

``--resend-queued MINUTES`` also sends again the task of every match queued for longer than that
(a task the filesystem broker lost with its worker); a task delivered twice writes once."""

from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from arena.models import Match, MatchStatus
from arena.services.matches import match_requeue, matches_resend_queued


class Command(BaseCommand):
    help = "Re-queue failed matches: the given ids, or every failed match (of one tournament)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("match_ids", nargs="*", type=int, metavar="MATCH_ID")
        parser.add_argument("--tournament", type=int, default=None)
        parser.add_argument("--resend-queued", type=float, default=None, metavar="MINUTES",
                            help="also resend the tasks of matches queued this long or longer")

    def handle(self, *args, **opts) -> None:
        failed = Match.objects.filter(status=MatchStatus.FAILED)
        if opts["tournament"] is not None:
            failed = failed.filter(tournament_id=opts["tournament"])
        if opts["match_ids"]:
            failed = failed.filter(pk__in=opts["match_ids"])
        ids = list(failed.values_list("pk", flat=True))
        done = [pk for pk in ids if match_requeue(match_id=pk)]
        self.stdout.write(f"re-queued {len(done)} match(es): {done}")
        if opts["resend_queued"] is not None:
            resent = matches_resend_queued(
                queued_before=timezone.now() - timedelta(minutes=opts["resend_queued"]),
                tournament_id=opts["tournament"],
            )
            self.stdout.write(f"resent {len(resent)} queued match(es)")
