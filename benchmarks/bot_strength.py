"""Duplicate pairs between two built-in bots with options, over several processes.

    python benchmarks/bot_strength.py --rules quatre-sept --pairs 200 --procs 2 \\
        "expert:worlds=16" "expert-v1:worlds=16"

A bot is ``NAME`` or ``NAME:key=value,...`` (keyword arguments of the bot's class: e.g.
``expert:worlds=8,signals=0``; values are parsed as int, float or left as text).
``expert@REVISION`` is the expert of another git revision (``benchmarks/revision_bots.py``: its
own modules, today's engine), e.g. ``expert@main`` against today's tree. Seeds
``seed .. seed+pairs-1`` are split between ``procs`` processes (run it under ``nice``). Each pair
is printed as it finishes (pair score of the first bot: 0, ½ or 1) and the summary line gives
the first bot's match score rate with its 95% interval over pairs (the pair is the unit, as in
``python -m engine``), faults, wall time and the mean decision time of each bot.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path
from queue import Empty
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from revision_bots import expert_at

from engine.bots import LOCAL_BOTS, BotSeat
from engine.duel import DuelTally, duplicate_pairs
from engine.referee import Player
from engine.rules import RuleSet, parse_option, rules_for

#: Bots a measuring script adds by name (e.g. ``expert_ceiling.py``'s oracles); forked
#: processes inherit them.
EXTRA_BOTS: dict[str, type] = {}


def parse_bot(text: str) -> tuple[str, dict[str, Any]]:
    name, _, rest = text.partition(":")
    name, _, revision = name.partition("@")
    known = name in LOCAL_BOTS or name in EXTRA_BOTS
    if not known or (revision and name != "expert"):
        raise SystemExit(f"unknown bot {name!r} (only expert takes @REVISION)")
    if revision:
        name = f"expert@{revision}"
    options: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        for kind in (int, float):
            try:
                options[key] = kind(value)
                break
            except ValueError:
                continue
        else:
            options[key] = value
    return name, options


def bot_class(name: str) -> type:
    """The class of a parsed bot name: a built-in or panel bot, or ``expert@REVISION``."""
    if name.startswith("expert@"):
        return expert_at(name.partition("@")[2])
    return EXTRA_BOTS[name] if name in EXTRA_BOTS else LOCAL_BOTS[name]


class TimedSeat(BotSeat):
    """A seat that adds its decision time to a shared list."""

    def __init__(self, bot: Any, times: list[float]) -> None:
        super().__init__(bot)
        self.times = times

    def turn(self, message: dict[str, Any]) -> str:
        started = time.perf_counter()
        try:
            return super().turn(message)
        finally:
            self.times.append(time.perf_counter() - started)


def run_seeds(job: tuple[RuleSet, str, str, int, int, multiprocessing.Queue]) -> None:
    rules, text_a, text_b, first, count, out = job
    (name_a, opts_a), (name_b, opts_b) = parse_bot(text_a), parse_bot(text_b)
    cls_a, cls_b = bot_class(name_a), bot_class(name_b)
    times_a: list[float] = []
    times_b: list[float] = []
    pending = {}
    for seed, team_a, outcome in duplicate_pairs(
        rules,
        lambda: TimedSeat(cls_a(**opts_a), times_a),
        lambda: TimedSeat(cls_b(**opts_b), times_b),
        seed=first,
        pairs=count,
        players=(Player(text_a), Player(text_b)),
    ):
        pending[team_a] = outcome
        if team_a == 1:
            out.put(("pair", seed, pending[0].replay["result"], pending[1].replay["result"]))
    out.put(("times", sum(times_a), len(times_a), sum(times_b), len(times_b)))


class _Outcome:
    def __init__(self, result: dict[str, Any]) -> None:
        self.replay = {"result": result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="quatre-sept")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("bot_a")
    parser.add_argument("bot_b")
    args = parser.parse_args(argv)
    try:
        rules = rules_for(args.rules, **dict(parse_option(o) for o in args.set))
    except ValueError as error:  # a bad option, RulesError included
        parser.error(str(error))
    for text in (args.bot_a, args.bot_b):  # unknown names fail here; revisions extracted once
        bot_class(parse_bot(text)[0])
    started = time.perf_counter()
    queue: multiprocessing.Queue = multiprocessing.Queue()
    share, extra = divmod(args.pairs, args.procs)
    jobs, first = [], args.seed
    for i in range(args.procs):
        count = share + (i < extra)
        if count:
            jobs.append((rules, args.bot_a, args.bot_b, first, count, queue))
            first += count
    procs = [multiprocessing.Process(target=run_seeds, args=(job,)) for job in jobs]
    for p in procs:
        p.start()
    tally = DuelTally()
    time_a = time_b = 0.0
    n_a = n_b = 0
    finished = 0
    while finished < len(procs):
        try:
            item = queue.get(timeout=5)
        except Empty:
            failed = [p for p in procs if p.exitcode not in (None, 0)]
            if failed:  # a worker raised (its traceback is on stderr): stop, do not wait for it
                for p in procs:
                    p.terminate()
                print(f"a worker process failed (exit code {failed[0].exitcode})",
                      file=sys.stderr)
                return 1
            continue
        if item[0] == "pair":
            _, seed, r0, r1 = item
            tally.add_pair(_Outcome(r0), _Outcome(r1))
            print(f"seed {seed}: {tally.pair_scores[-1]}", flush=True)
        else:
            time_a, n_a = time_a + item[1], n_a + item[2]
            time_b, n_b = time_b + item[3], n_b + item[4]
            finished += 1
    for p in procs:
        p.join()
    rate, low, high = tally.win_rate()
    print(
        json.dumps(
            {
                "rules": args.rules,
                "set": args.set,
                "bots": [args.bot_a, args.bot_b],
                "seeds": [args.seed, args.seed + args.pairs - 1],
                "pairs": len(tally.pair_scores),
                "wins": [tally.wins_a, tally.wins_b],
                "draws": tally.draws,
                "faults": [tally.faults_a, tally.faults_b],
                "score_rate": round(rate, 4),
                "ci95": [round(low, 4), round(high, 4)],
                "ms_per_decision": [
                    round(1000 * time_a / max(1, n_a), 2),
                    round(1000 * time_b / max(1, n_b), 2),
                ],
                "elapsed_s": round(time.perf_counter() - started, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
