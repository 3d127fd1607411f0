"""``python -m engine``: duplicate pairs between two built-in bots, in-process, no sandbox.

Example: ``python -m engine --rules quatre-sept --pairs 400 greedy random``. Prints one line
per pair and ends with a JSON summary (the win rate of the first bot with a 95% interval).
For uploaded bots and sandboxes use ``python manage.py play``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from engine.bots import LOCAL_BOTS, BotSeat, make_bot
from engine.duel import DuelTally, duplicate_pairs
from engine.referee import Player
from engine.rules import PRESETS, RulesError, parse_option, rules_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="quatre-sept", choices=sorted(PRESETS))
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--quiet", action="store_true", help="only the summary line")
    parser.add_argument("bot_a", choices=sorted(LOCAL_BOTS))
    parser.add_argument("bot_b", choices=sorted(LOCAL_BOTS))
    args = parser.parse_args(argv)
    try:
        rules = rules_for(args.rules, **dict(parse_option(o) for o in args.set))
    except RulesError as error:
        parser.error(str(error))
    tally = DuelTally()
    started = time.perf_counter()
    pending = {}
    for seed, team_a, outcome in duplicate_pairs(
        rules,
        lambda: BotSeat(make_bot(args.bot_a)),
        lambda: BotSeat(make_bot(args.bot_b)),
        seed=args.seed,
        pairs=args.pairs,
        players=(Player(args.bot_a), Player(args.bot_b)),
    ):
        pending[team_a] = outcome
        if team_a == 1:
            tally.add_pair(pending[0], pending[1])
            if not args.quiet:
                r0, r1 = pending[0].replay["result"], pending[1].replay["result"]
                first = f"{r0['score']} {r0['reason']}"
                print(f"seed {seed}: {first}, swapped {r1['score']} {r1['reason']}")
    rate, low, high = tally.win_rate()
    summary = {
        "rules": rules.to_dict(),
        "bots": [args.bot_a, args.bot_b],
        "pairs": args.pairs,
        "matches": tally.matches,
        "wins": {args.bot_a: tally.wins_a, args.bot_b: tally.wins_b},
        "draws": tally.draws,
        "faults": {args.bot_a: tally.faults_a, args.bot_b: tally.faults_b},
        "score_rate": round(rate, 4),
        "ci95": [round(low, 4), round(high, 4)],
        "elapsed_s": round(time.perf_counter() - started, 2),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
