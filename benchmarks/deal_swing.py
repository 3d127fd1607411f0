"""Where two bots' points part: the swing of each deal between the two matches of a duplicate pair.

    nice -n 19 python benchmarks/deal_swing.py --rules pollack --pairs 24 expert expert-v1

A duplicate pair plays one seed twice with the bots' seats swapped, so deal N of both matches
deals the same cards to the same seats (the dealer moves one seat a deal in both). For each deal
both matches played, the first bot's margin (its team's points less the other team's) in the
first match plus its margin in the second is the **swing**: 0 where both bots did the same with
the same cards, positive where the first bot made more of them. Split by what scored: card
points, melds and politaine bonuses. A deal cut short by a claim counts what it had scored.

Where melds count, also per bot: how often its team took the deal's first trick (as the first
leader's team and as the other), and the meld points it made of those dealt to its players other
than the first leader (the one player who may meld before any trick is won; every other player
loses a meld whose card he must play before his team has taken a trick).

Prints the swing per component summed over every deal, the pairs won, split and lost, and the
``--worst`` deals (seed, deal number, swing by component): the positions to read in the replays
(``--replays FILE`` writes both replays of every pair, one JSON line per pair).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot_strength import bot_class, parse_bot

from engine.actions import meld_name, meld_points
from engine.bots import BotSeat
from engine.cards import mask_from_codes
from engine.duel import DuelTally, duplicate_pairs
from engine.optional.melds import available_melds
from engine.referee import MatchOutcome, Player
from engine.rules import rules_for

#: The deal record's fields that add to a team's total, as named in replay format 1.
COMPONENTS = ("points", "melds", "bonus")


def deal_swings(first: dict[str, Any], second: dict[str, Any]) -> Iterator[tuple[int, dict]]:
    """(deal number, swing per component) for every deal both replays played; the first bot is
    team 0 in ``first`` and team 1 in ``second``."""
    later = {deal["number"]: deal for deal in second["deals"]}
    for deal in first["deals"]:
        other = later.get(deal["number"])
        if other is None:
            continue
        yield (
            deal["number"],
            {
                part: (deal[part][0] - deal[part][1]) + (other[part][1] - other[part][0])
                for part in COMPONENTS
            },
        )


def dealt_melds(hand: list[str]) -> dict[str, int]:
    """The melds a hand was dealt, as said in protocol 1 (``meld three A D``), with their points."""
    return {
        "meld " + meld_name(meld): meld_points(meld)
        for meld in available_melds(mask_from_codes(hand), 0)
    }


def opening_tally(replay: dict[str, Any], team_bots: tuple[str, str], tally: dict) -> None:
    """Adds ``replay``'s first tricks and melds to ``tally[bot]``: first tricks taken as the first
    leader's team (``lead_won`` of ``lead``) and as the other (``other_won`` of ``other``), and
    the meld points made (``made``) of those dealt (``dealt``) to players other than the first
    leader."""
    for deal in replay["deals"]:
        if not deal["tricks"]:
            continue
        leader = deal["tricks"][0]["leader"]
        first_winner = deal["tricks"][0]["winner"]
        for team, bot in enumerate(team_bots):
            role = "lead" if team == leader % 2 else "other"
            tally[bot][role] += 1
            tally[bot][f"{role}_won"] += first_winner % 2 == team
        for seat, hand in enumerate(deal["hands"]):
            if seat == leader:
                continue
            said = {line["say"] for line in deal["said"] if line["seat"] == seat}
            for meld, points in dealt_melds(hand).items():
                tally[team_bots[seat % 2]]["dealt"] += points
                tally[team_bots[seat % 2]]["made"] += points * (meld in said)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bot_a")
    parser.add_argument("bot_b")
    parser.add_argument("--rules", default="pollack")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=24)
    parser.add_argument("--worst", type=int, default=8)
    parser.add_argument("--replays", type=Path, help="write both replays of each pair here")
    args = parser.parse_args(argv)
    (name_a, opts_a), (name_b, opts_b) = parse_bot(args.bot_a), parse_bot(args.bot_b)
    cls_a, cls_b = bot_class(name_a), bot_class(name_b)
    tally = DuelTally()
    deals: list[tuple[int, int, dict]] = []
    pending: dict[int, MatchOutcome] = {}
    out = args.replays.open("w") if args.replays else None
    openings: dict[str, Counter] = {args.bot_a: Counter(), args.bot_b: Counter()}
    for seed, team_a, outcome in duplicate_pairs(
        rules_for(args.rules),
        lambda: BotSeat(cls_a(**opts_a)),
        lambda: BotSeat(cls_b(**opts_b)),
        seed=args.seed,
        pairs=args.pairs,
        players=(Player(args.bot_a), Player(args.bot_b)),
    ):
        pending[team_a] = outcome
        if team_a == 0:
            continue
        tally.add_pair(pending[0], pending[1])
        first, second = pending[0].replay, pending[1].replay
        if out is not None:
            out.write(json.dumps({"seed": seed, "replays": [first, second]}) + "\n")
        opening_tally(first, (args.bot_a, args.bot_b), openings)
        opening_tally(second, (args.bot_b, args.bot_a), openings)
        for number, swing in deal_swings(first, second):
            deals.append((seed, number, swing))
    if out is not None:
        out.close()
    totals = {part: sum(swing[part] for _, _, swing in deals) for part in COMPONENTS}
    scores = tally.pair_scores
    won, lost = scores.count(1.0), scores.count(0.0)
    print(
        f"{args.rules}: {args.bot_a} against {args.bot_b}, seeds {args.seed}–"
        f"{args.seed + args.pairs - 1}: {won} pairs won, {len(scores) - won - lost} split, "
        f"{lost} lost ({100 * tally.win_rate()[0]:.1f}%); {len(deals)} deals played in both matches"
    )
    print("swing in points, summed over those deals: " + ", ".join(
        f"{part} {totals[part]:+d}" for part in COMPONENTS
    ))  # fmt: skip
    if rules_for(args.rules).melds:
        for bot, counts in openings.items():
            print(
                f"{bot}: first trick taken {counts['lead_won']} of {counts['lead']} as the first "
                f"leader's team, {counts['other_won']} of {counts['other']} as the other; meld "
                f"points made {counts['made']} of {counts['dealt']} dealt to the other players"
            )
    worst = sorted(deals, key=lambda row: sum(row[2].values()))[: args.worst]
    for seed, number, swing in worst:
        parts = ", ".join(f"{part} {swing[part]:+d}" for part in COMPONENTS)
        print(f"  seed {seed} deal {number}: {sum(swing.values()):+d} ({parts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
