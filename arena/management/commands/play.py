"""``python manage.py play --rules PRESET [--set OPTION=VALUE]... [--seed N] [--pairs K]
[--replay-dir DIR] BOT_A BOT_B``: a local duel for bot authors and operators. Needs no database.

BOT_A sits on seats 0 and 2, BOT_B on 1 and 3; each pair replays the seed with the teams swapped.
A bot is ``builtin:NAME`` (trusted) or a path to a bot file or zip (run in the sandbox). Prints a
line per match and, last, one JSON line: matches, wins per bot, draws, faults per bot, elapsed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.runtime.local import play_duel, resolve_bot
from engine import RulesError, parse_option, rules_for
from sandbox import CONFINED_BACKENDS, PackageError


class Command(BaseCommand):
    help = "Play BOT_A (seats 0, 2) against BOT_B (seats 1, 3) locally, in duplicate pairs."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("bot_a", metavar="BOT_A", help="builtin:NAME or a bot file / zip")
        parser.add_argument("bot_b", metavar="BOT_B", help="builtin:NAME or a bot file / zip")
        parser.add_argument("--rules", required=True, metavar="PRESET",
                            help="quatre-sept, politaine, la-poule or pollack")
        parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                            dest="options", help="change a rule option (repeatable)")
        parser.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
        parser.add_argument("--pairs", type=int, default=1, help="duplicate pairs (default 1)")
        parser.add_argument("--replay-dir", type=Path, default=None,
                            help="write one replay-format-1 file per match here")
        parser.add_argument("--sandbox", choices=CONFINED_BACKENDS, default=None,
                            help="backend for uploaded bots (default: ARENA_SANDBOX)")
        # dest: Django keeps the option "stderr" for call_command's stream.
        parser.add_argument("--stderr", action="store_true", dest="show_stderr",
                            help="show each seat's stderr as it plays (on this command's stderr, "
                                 "each line prefixed with its seat)")

    def handle(self, *args, **opts) -> None:
        try:
            options = dict(parse_option(text) for text in opts["options"])
            rules = rules_for(opts["rules"], **options)
        except RulesError as error:
            raise CommandError(str(error)) from None
        if opts["pairs"] < 1:
            raise CommandError("--pairs must be at least 1")
        names = _names(opts["bot_a"], opts["bot_b"])
        try:
            bots = [
                resolve_bot(text, settings.ARENA_BOT_CACHE)
                for text in (opts["bot_a"], opts["bot_b"])
            ]
        except (ValueError, PackageError) as error:
            raise CommandError(str(error)) from None
        backend = opts["sandbox"] or settings.ARENA_SANDBOX
        wins = {"A": 0, "B": 0}
        faults = {"A": 0, "B": 0}
        draws = 0
        total = 2 * opts["pairs"]
        started = time.perf_counter()
        for match in play_duel(
            rules, bots[0], bots[1], seed=opts["seed"], pairs=opts["pairs"], backend=backend,
            replay_dir=opts["replay_dir"],
            on_stderr=self._echo_stderr if opts["show_stderr"] else None,
        ):
            result = match.played.outcome.result
            if match.winner is None:
                draws += 1
            else:
                wins[match.winner] += 1
            if match.faulted:
                faults[match.faulted] += 1
            seats = "B on 0,2" if match.swapped else "A on 0,2"
            winner = f"{match.winner} ({names[match.winner]})" if match.winner else "draw"
            fault = result["fault"]
            score = result["score"]
            fault_text = (
                f" fault: seat {fault['seat']} {fault['kind']}: {fault['detail']}" if fault else ""
            )
            self.stdout.write(
                f"match {match.index}/{total} seed {match.seed} {seats}: {winner} "
                f"score A {score[int(match.swapped)]} - B {score[1 - int(match.swapped)]} "
                f"({result['reason']}) "
                f"{match.played.play_ms} ms{fault_text}"
            )
        summary = {
            "matches": total,
            "bots": {"A": opts["bot_a"], "B": opts["bot_b"]},
            "wins": {names[k]: v for k, v in wins.items()},
            "draws": draws,
            "faults": {names[k]: v for k, v in faults.items()},
            "elapsed_s": round(time.perf_counter() - started, 3),
        }
        self.stdout.write(json.dumps(summary))

    def _echo_stderr(self, seat: int, text: str) -> None:
        self.stderr.write(_seat_lines(seat, text), ending="")
        self.stderr.flush()


def _seat_lines(seat: int, text: str) -> str:
    """A seat's stderr, each line prefixed ``[seat N]``."""
    return "".join(f"[seat {seat}] {line}\n" for line in text.rstrip("\n").split("\n"))


def _names(bot_a: str, bot_b: str) -> dict[str, str]:
    """The bots by side; the same bot on both sides is told apart as ``X (A)`` and ``X (B)``."""
    if bot_a == bot_b:
        return {"A": f"{bot_a} (A)", "B": f"{bot_b} (B)"}
    return {"A": bot_a, "B": bot_b}
