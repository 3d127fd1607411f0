"""``python manage.py seed_demo``: demo users (alice, bob), the built-in bots, one uploaded bot
each (validated here, in this process), a demo round-robin queued for the workers, a nightly
round-robin schedule (celery beat starts it over the latest ready version of every bot), the
continuous ladder of the quatre-sept board (beat tops the queue up with its pairings once the demo
round-robin has left room), and one "Yardsticks" round-robin per preset between ``greedy`` and the
expert levels, so every preset's leaderboard starts with fixed yardsticks.

Idempotent: run it again and it adds nothing that is already there.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from arena.models import Bot, Schedule, Tournament, VersionStatus
from arena.services.bots import bot_create, builtin_bots_ensure
from arena.services.ladder import ladder_create
from arena.services.play import match_play
from arena.services.schedules import schedule_create
from arena.services.tournaments import tournament_create
from engine.rules import PRESETS

DEMO_PASSWORD = "demo-pass-1234"
DEMO_TOURNAMENT = "Demo round-robin"
NIGHTLY = "Nightly quatre-sept"

RANDOM_BOT = b'''"""Plays a random legal action: a complete protocol-1 bot."""
import json
import random
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "dice"}), flush=True)
    elif message["type"] == "turn":
        action = random.choice(message["legal"])
        print(json.dumps({"id": message["id"], "action": action}), flush=True)
'''

FIRST_BOT = b'''"""Plays the first legal action, always."""
import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "first"}), flush=True)
    elif message["type"] == "turn":
        print(json.dumps({"id": message["id"], "action": message["legal"][0]}), flush=True)
'''

DEMO_BOTS = {"alice": ("dice", RANDOM_BOT), "bob": ("first", FIRST_BOT)}
#: Built-in bots every preset's leaderboard starts with (weakest first).
YARDSTICKS = ("greedy", "expert-1", "expert-2", "expert-3", "expert-4")


class Command(BaseCommand):
    help = "Create demo users, the built-in bots, two uploaded bots and a demo round-robin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pairs", type=int, default=2, help="duplicate pairs per pairing")
        parser.add_argument("--builtins", default="all",
                            help="built-in bots in the demo round-robin: all, or NAME,NAME")
        parser.add_argument("--yardstick-pairs", type=int, default=1,
                            help="duplicate pairs per pairing of the yardstick round-robins "
                                 "(one per preset); 0 for none")

    def handle(self, *args, **opts) -> None:
        builtins = builtin_bots_ensure()
        user_model = get_user_model()
        names = sorted(builtins) if opts["builtins"] == "all" else opts["builtins"].split(",")
        versions = [builtins[name].pk for name in names if name in builtins]
        for username, (name, source) in DEMO_BOTS.items():
            user, created = user_model.objects.get_or_create(username=username)
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            bot = Bot.objects.filter(owner=user, name=name).first()
            if bot is None:
                bot = bot_create(owner=user, name=name, filename=f"{name}.py", data=source)
            version = bot.versions.order_by("-number").first()
            if version.status in (VersionStatus.PENDING, VersionStatus.VALIDATING):
                # Validate now, so the demo round-robin can include it; the queued task then
                # finds the match finished and does nothing.
                match_play(match_id=version.validation_match_id)
                version.refresh_from_db()
            self.stdout.write(f"{version.label}: {version.status}")
            if version.status == VersionStatus.READY:
                versions.append(version.pk)
        if not Tournament.objects.filter(name=DEMO_TOURNAMENT).exists():
            tournament = tournament_create(
                created_by=user_model.objects.get(username="alice"),
                name=DEMO_TOURNAMENT,
                rules={"preset": "quatre-sept"},
                version_ids=versions,
                pairs=opts["pairs"],
            )
            total = tournament.matches.count()
            self.stdout.write(f"{DEMO_TOURNAMENT}: {total} matches queued (id {tournament.pk})")
        if not Schedule.objects.filter(name=NIGHTLY).exists():
            midnight = (timezone.now() + timedelta(days=1)).replace(
                hour=0, minute=0, second=0, microsecond=0
            )
            schedule_create(
                name=NIGHTLY, rules={"preset": "quatre-sept"}, pairs=2, every_hours=24,
                first_run_at=midnight,
            )
            self.stdout.write(f"{NIGHTLY}: every 24 h from {midnight:%Y-%m-%d %H:%M} UTC")
        ladder = ladder_create(rules={"preset": "quatre-sept"})
        self.stdout.write(f"ladder {ladder.rules_key}: {'paused' if ladder.paused else 'running'}")
        if opts["yardstick_pairs"] > 0:
            self._yardsticks(builtins, opts["yardstick_pairs"])
        self.stdout.write(f"demo users: alice, bob (password {DEMO_PASSWORD})")

    def _yardsticks(self, builtins: dict, pairs: int) -> None:
        """One round-robin per preset between the yardsticks (rated onto its leaderboard)."""
        system = builtins[YARDSTICKS[0]].bot.owner
        versions = [builtins[name].pk for name in YARDSTICKS if name in builtins]
        for preset in sorted(PRESETS):
            name = f"Yardsticks {preset}"
            if Tournament.objects.filter(name=name).exists():
                continue
            tournament = tournament_create(
                created_by=system, name=name, rules={"preset": preset},
                version_ids=versions, pairs=pairs,
            )  # fmt: skip
            self.stdout.write(f"{name}: {tournament.matches.count()} matches queued")
