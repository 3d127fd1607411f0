"""``python manage.py prune [--replays-days N] [--logs-days N] [--bot-cache-days N] [--dry-run]``:
delete what the retention settings say is past keeping, and say how much it was.

By default it uses the settings (``ARENA_KEEP_REPLAYS_DAYS``, ``ARENA_KEEP_LOGS_DAYS``,
``ARENA_KEEP_BOT_CACHE_DAYS``); each option overrides one for this run, 0 keeping that part for
ever. Replays and stderr tails live in the database, so any host can prune them; the bot cache is
this host's folder, so run the command on each worker host (workers also prune their own cache
every hour as they play). Celery beat runs the database part every six hours."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.runtime.cache import prune_idle
from arena.services.retention import retention_prune


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def _days(text: str) -> int:
    try:
        days = int(text)
    except ValueError:
        raise CommandError(f"days must be a whole number, not {text!r}") from None
    if days < 0:
        raise CommandError("days must be 0 (keep for ever) or more")
    return days


class Command(BaseCommand):
    help = "Delete old replays, stderr tails and idle bot folders, by the retention settings."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--replays-days", type=_days, default=None, metavar="N",
                            help="delete replays of matches finished over N days ago (0: keep)")
        parser.add_argument("--logs-days", type=_days, default=None, metavar="N",
                            help="clear bots' stderr tails of matches finished over N days ago")
        parser.add_argument("--bot-cache-days", type=_days, default=None, metavar="N",
                            help="remove this host's bot folders unused for N days (at least 1)")
        parser.add_argument("--dry-run", action="store_true",
                            help="count what would go; delete nothing (database only)")

    def handle(self, *args, **opts) -> None:
        replay_days = _setting(opts["replays_days"], settings.ARENA_KEEP_REPLAYS_DAYS)
        log_days = _setting(opts["logs_days"], settings.ARENA_KEEP_LOGS_DAYS)
        cache_days = _setting(opts["bot_cache_days"], settings.ARENA_KEEP_BOT_CACHE_DAYS)
        dry = opts["dry_run"]
        pruned = retention_prune(replay_days=replay_days, log_days=log_days, dry_run=dry)
        verb = "would delete" if dry else "deleted"
        self.stdout.write(_line("replays", verb, pruned.replays, _mib(pruned.replay_bytes),
                                replay_days))
        self.stdout.write(_line("stderr tails", verb, pruned.logs,
                                f"{pruned.log_chars:,} characters", log_days))
        cache_dir = settings.ARENA_BOT_CACHE
        if not cache_dir.is_dir():
            self.stdout.write(f"bot cache {cache_dir}: none on this host")
        elif dry or not cache_days:
            why = "dry run" if dry else "kept for ever"
            self.stdout.write(f"bot cache {cache_dir}: not pruned ({why})")
        else:
            self.stdout.write(_cache_line(cache_dir, prune_idle(cache_dir, idle_days=cache_days),
                                          cache_days))


def _cache_line(cache_dir, cache, days: int) -> str:
    if cache.started:
        return (f"bot cache {cache_dir}: first prune, every folder counts as used today "
                f"(removed from {days} days on if no match uses it)")
    return (f"bot cache {cache_dir}: removed {cache.folders} folders ({_mib(cache.bytes)}) "
            f"unused for {days} days")


def _setting(option: int | None, configured: int) -> int:
    return configured if option is None else option


def _line(what: str, verb: str, count: int, size: str, days: int) -> str:
    if not days:
        return f"{what}: kept for ever (0 days)"
    return f"{what}: {verb} {count} ({size}) of matches finished over {days} days ago"
