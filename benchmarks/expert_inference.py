"""How well the expert's sampled deals place the hidden cards: log loss per readings, same run.

    nice -n 19 python benchmarks/expert_inference.py --rules pollack --matches 12

Four experts play seeded matches; at each card the chosen seat plays (seat 0), every reading
below draws the same number of sampled deals from the same record and weighs them by its
evidence. For each card the seat cannot see, the weighted share of deals that put it in a given
hand is that reading's probability; the score is the mean log loss (in nats per card) of the true
hands under it: 0 for a reading that always knows, ln 2 = 0.693 for a coin. Reported for the
partner's hand and the opponents' separately, with ``none`` (hard facts only) as the reference.
``--opponent greedy`` puts that bot in seats 1 and 3; ``--carding`` has the experts play the
carding convention and reads it. The ``pool4`` readings pick each deal from four by its weight
(``expert:pool``), so they weigh four times the deals for the same number kept.
A finer instrument than duplicate pairs for the inference alone: the readings are compared on the
same positions, so differences of a hundredth of a nat show in a few hundred positions.

``--replica Q`` adds a measuring device, the ``replica`` reading (rules without low lead,
signals or politaine): today's `pollack` reading (``model_all_p0.5``), with each sampled deal's
weight also multiplied by Q for every card choice of the partner this deal that the partner's
own algorithm would not have made holding that deal's hand: the partner bot, as it stood at
that choice (its random state included), decides again on the partner's view with the sampled
hand. In the true deal it plays every card the partner played (the script counts it): no
model of the partner's play can read its cards closer than its own algorithm does, so this is
the ceiling of reading card play. ``--replica-fresh`` gives the replica random numbers of its
own, as a player knowing its partner's algorithm but not its random state would have.
"""

from __future__ import annotations

import argparse
import copy
import math
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot_strength import parse_bot

from engine.bots import BotSeat, make_bot
from engine.bots.expert import (
    CARDING_MISS,
    DEFAULT_MISS,
    DEFAULT_PARTNER_MISS,
    DEFAULT_QUIET,
    PREFERENCE_HIGH,
    PREFERENCE_LOW,
    ExpertBot,
    pooled,
)
from engine.bots.expert.prune import tna_apart
from engine.bots.expert.sampler import Sampler
from engine.bots.expert.view import read_view
from engine.bots.expert.world import Evidence, ModelMemo, ReplayError, Worlds
from engine.cards import CODES, parse_card
from engine.deck import seeded_hands
from engine.referee import AnnouncedClock, referee_match
from engine.rules import RuleSet, rules_for

_SHIPPED = Evidence(miss=DEFAULT_MISS, partner_miss=DEFAULT_PARTNER_MISS, quiet=DEFAULT_QUIET)
_SHARP = Evidence(miss=0.1, partner_miss=DEFAULT_PARTNER_MISS, quiet=DEFAULT_QUIET)


def _preference(scope: int) -> tuple[Evidence, bool, int]:
    """Today's `pollack` reading without ``twins``, with the suit-preference convention's
    message read where ``scope`` says (``preference.py``)."""
    evidence = replace(
        _SHIPPED, partner_shrewd=True, model=3, model_power=0.5, pref_high=PREFERENCE_HIGH,
        pref_low=PREFERENCE_LOW, pref_scope=scope,
    )  # fmt: skip
    return evidence, False, 1


#: name: (evidence, read the partner's cards as the weakest of equivalent ones, sampled deals
#: weighed per deal kept: ``expert:pool``)
READINGS: dict[str, tuple[Evidence, bool, int]] = {
    "none": (Evidence(), False, 1),
    "shipped": (_SHIPPED, False, 1),
    "partner_judge": (Evidence(0.3, 0.3, DEFAULT_QUIET, partner_shrewd=True), False, 1),
    "twins": (_SHIPPED, True, 1),
    "both": (Evidence(0.3, 0.3, DEFAULT_QUIET, partner_shrewd=True), True, 1),
    "no_leads": (replace(_SHIPPED, leads=False), False, 1),
    "both_no_leads": (Evidence(0.3, 0.3, DEFAULT_QUIET, partner_shrewd=True, leads=False), True, 1),
    "pool4": (_SHIPPED, False, 4),
    "miss0.1": (_SHARP, False, 1),
    "pool4_miss0.1": (_SHARP, False, 4),
    "opp_twins0.3": (replace(_SHIPPED, twin_miss=0.3), False, 1),
    "opp_twins0.1": (replace(_SHIPPED, twin_miss=0.1), False, 1),
    # Where melds count the partner is read as this bot (the shipped default there) ...
    "meld": (replace(_SHIPPED, partner_shrewd=True), True, 1),
    # ... and these weigh its cards off the shrewd judge more or less.
    "meld_pm0.3": (replace(_SHIPPED, partner_shrewd=True, partner_miss=0.3), True, 1),
    "meld_pm0.45": (replace(_SHIPPED, partner_shrewd=True, partner_miss=0.45), True, 1),
    "meld_pm0.8": (replace(_SHIPPED, partner_shrewd=True, partner_miss=0.8), True, 1),
    "meld_m0.5": (replace(_SHIPPED, partner_shrewd=True, miss=0.5), True, 1),
    "meld_q0.03": (replace(_SHIPPED, partner_shrewd=True, quiet=0.03), True, 1),
    # Cards read by the model of the expert's play (``model.py``, round 25): the partner's,
    # then the opponents' too.
    "model": (replace(_SHIPPED, partner_shrewd=True, model=1), True, 1),
    "model_all": (replace(_SHIPPED, partner_shrewd=True, model=3), True, 1),
    "model_p0.5": (replace(_SHIPPED, partner_shrewd=True, model=1, model_power=0.5), True, 1),
    "model_p0.7": (replace(_SHIPPED, partner_shrewd=True, model=1, model_power=0.7), True, 1),
    "model_all_p0.3": (
        replace(_SHIPPED, partner_shrewd=True, model=3, model_power=0.3),
        True,
        1,
    ),
    "model_all_p0.5": (
        replace(_SHIPPED, partner_shrewd=True, model=3, model_power=0.5),
        True,
        1,
    ),
    # The partner read by the model, the opponents' card play not read at all (round 41: what
    # the reading of the opponents gives against a searcher of another family, ``ismcts``).
    "model_p0.5_blind": (
        replace(_SHIPPED, partner_shrewd=True, model=1, model_power=0.5, miss=1.0),
        True,
        1,
    ),
    # Players of the suit-preference convention (``--players preference=M``, round 36) break
    # the twins reading: today's reading without it, then with the convention's message (the
    # ``_d`` and ``_df`` readings for players with ``preference_scope`` 1 and 3).
    "model_all_p0.5_no_twins": (
        replace(_SHIPPED, partner_shrewd=True, model=3, model_power=0.5),
        False,
        1,
    ),
    "preference": _preference(0),
    "preference_d": _preference(1),
    "preference_df": _preference(3),
}
#: With ``--carding`` the players play the carding convention and this reading is added.
CARDING: tuple[str, tuple[Evidence, bool, int]] = (
    "carding",
    (Evidence(DEFAULT_MISS, DEFAULT_PARTNER_MISS, DEFAULT_QUIET, carding=CARDING_MISS), False, 1),
)


class Scorer:
    """Sums each reading's log loss over the positions it is shown."""

    def __init__(
        self,
        rules: RuleSet,
        deals: int,
        carding: bool = False,
        only: list[str] | None = None,
        reference: str = "shipped",
        replica: float = 0.0,
        fresh: bool = False,
    ) -> None:
        self.rules = rules
        #: ``--replica Q``: the ``replica`` reading, and the partner's recorded turns it replays
        self.replica = replica
        self.fresh = fresh
        #: this deal's partner card choices: (turn message, the bot as it stood, its action, the
        #: cards it had played before)
        self.partner_turns: list[tuple[dict[str, Any], Any, str, int]] = []
        self.deal_key: tuple[int, int, int] | None = None
        self.replica_memo = ModelMemo()
        self.true_agree = [0, 0]
        self.deals = deals
        self.reference = reference
        unknown = {reference, *(only or ())} - READINGS.keys()
        if unknown:  # caught now, not after the matches have been played
            raise SystemExit(f"unknown readings {sorted(unknown)}; known: {', '.join(READINGS)}")
        keep = {reference, "none", *(only or READINGS)}
        self.readings = {name: r for name, r in READINGS.items() if name in keep}
        if carding:  # the twins readings assume the weakest twin: not this self-play's
            if reference != "shipped":
                raise SystemExit("with --carding the reference is the shipped reading")
            self.readings = {"none": READINGS["none"], "shipped": READINGS["shipped"]}
            self.readings.update([CARDING])
        if replica:
            self.readings["replica"] = READINGS["model_all_p0.5"]
        #: per reading, per position: (partner's log loss, opponents')
        self.loss: dict[str, list[tuple[float, float]]] = {name: [] for name in self.readings}
        self.positions = 0

    def score(self, state: dict[str, Any], seed: int) -> None:
        rules = self.rules
        self.positions += 1
        tna = tna_apart(rules)
        public = read_view(state, rules.low_lead)
        dealt = seeded_hands(seed, public.deal, public.redeals, public.dealer)
        truth = [dealt[s] & ~public.by_seat[s] for s in range(4)]
        partner_seat = (public.seat + 2) % 4
        if self.replica:
            played = public.by_seat[partner_seat]
            self.true_agree[0] += self._replica_misses(truth[partner_seat], played) == 0
            self.true_agree[1] += 1
        for name, (evidence, twins, pool) in self.readings.items():
            view = read_view(state, rules.low_lead, twins, tna)
            worlds = Worlds(rules, view, "play", evidence)
            rng = random.Random(seed * 100 + self.positions)
            sampler = Sampler(view, rules, rng)
            held = [[0.0] * 32 for _ in range(4)]
            total = 0.0
            drawn = 0
            while drawn < self.deals:
                try:
                    world, weight = pooled(worlds, sampler, pool, rng)
                except ReplayError:  # a sample the record does not replay on: draw again
                    continue
                drawn += 1
                if name == "replica":
                    misses = self._replica_misses(world.hands[partner_seat], played)
                    weight *= self.replica**misses
                total += weight
                for s in range(4):
                    hand = world.hands[s]
                    for card in range(32):
                        if hand >> card & 1:
                            held[s][card] += weight
            partner, opponents = (
                _log_loss(view.unknown, truth, held, total, seats) for seats in _groups(view.seat)
            )
            self.loss[name].append((partner, opponents))

    def _replica_misses(self, partner_hand: int, played: int) -> int:
        """How many of the partner's card choices this deal its own algorithm, with its random
        state at each (or with ``fresh`` random numbers of its own), would have made otherwise
        if it held ``partner_hand`` now, having played ``played`` so far this deal. In the true
        deal, with its random state: none (the device's check, ``true_agree``). Measuring
        device: no player knows its partner's random state."""
        misses = 0
        for message, bot, chosen, before in self.partner_turns:
            state = message["state"]
            hand = partner_hand | (played & ~before)
            legal = _legal(hand, state, message["legal"])
            if len(legal) < 2:
                continue
            hand_codes = [CODES[c] for c in range(32) if hand >> c & 1]
            asked = {**message, "state": {**state, "hand": hand_codes}, "legal": legal}
            replica = copy.copy(bot)
            if self.fresh:  # what a player could replay: its partner's algorithm, not its RNG
                replica.rng = random.Random(hand * 31 + len(state["tricks"]))
            else:
                replica.rng = copy.deepcopy(bot.rng)
            replica.model_memo = self.replica_memo
            misses += replica._decide(asked, time.thread_time()) != chosen
        return misses

    def report(self) -> list[str]:
        """Per reading: mean loss for the partner and the opponents, each with its difference
        from the reference (``shipped`` unless asked) paired over the positions (mean ± 1.96
        standard errors)."""
        lines = []
        for name, rows in self.loss.items():
            cells = []
            for group in (0, 1):
                values = [row[group] for row in rows]
                diffs = [
                    row[group] - base[group]
                    for row, base in zip(rows, self.loss[self.reference], strict=True)
                ]
                half = (
                    1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0
                )
                cells.append(
                    f"{statistics.fmean(values):.4f} ({statistics.fmean(diffs):+.4f} ± {half:.4f})"
                )
            lines.append(f"  {name:14} {cells[0]}  {cells[1]}")
        return lines


def _legal(hand: int, state: dict[str, Any], original: list[str]) -> list[str]:
    """The engine's legal plays for ``hand`` at ``state`` (follow suit; no low lead, no
    politaine), in its order, with the original's other actions (a claim) after them."""
    cards = state["trick"]["cards"]
    playable = hand
    if cards:
        suit = parse_card(cards[0]) >> 3
        follow = hand & (0xFF << (suit * 8))
        playable = follow or hand
    plays = [f"play {CODES[c]}" for c in range(32) if playable >> c & 1]
    return plays + [a for a in original if not a.startswith("play ")]


def _groups(seat: int) -> tuple[list[int], list[int]]:
    return [(seat + 2) % 4], [(seat + 1) % 4, (seat + 3) % 4]


def _log_loss(unknown: int, truth: list[int], held: list, total: float, seats: list[int]) -> float:
    """Mean log loss over the unknown cards of whether each of ``seats`` holds each."""
    loss, count = 0.0, 0
    for s in seats:
        for card in range(32):
            if unknown >> card & 1:
                p = min(max(held[s][card] / total, 0.01), 0.99)
                loss -= math.log(p if truth[s] >> card & 1 else 1 - p)
                count += 1
    return loss / max(1, count)


class Measured(ExpertBot):
    """The expert, with the scorer looking over seat 0's shoulder at each card it plays."""

    scorer: Scorer
    match_seed = 0

    def act(self, message: dict[str, Any]) -> str:
        scorer = self.scorer
        if scorer.replica and message["decision"] == "play":
            deal = (self.match_seed, message["state"]["deal"], message["state"]["redeals"])
            if scorer.deal_key != deal:
                scorer.deal_key, scorer.partner_turns = deal, []
                scorer.replica_memo = ModelMemo()
        if self.seat == 0 and message["decision"] == "play" and len(message["legal"]) > 1:
            scorer.score(message["state"], self.match_seed)
        if (
            scorer.replica
            and self.seat == 2
            and message["decision"] == "play"
            and len(message["legal"]) > 1
        ):
            snapshot = copy.copy(self)
            snapshot.rng = copy.deepcopy(self.rng)
            before = read_view(message["state"], self.rules.low_lead).by_seat[self.seat]
            chosen = super().act(message)
            scorer.partner_turns.append((message, snapshot, chosen, before))
            return chosen
        return super().act(message)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="pollack")
    parser.add_argument("--matches", type=int, default=12)
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--deals", type=int, default=48, help="sampled deals per reading")
    parser.add_argument(
        "--worlds", type=int, default=16, help="the players' own budget (0: their default)"
    )
    parser.add_argument(
        "--carding", action="store_true", help="the players play the carding convention"
    )
    parser.add_argument(
        "--opponent", default="", help="a built-in bot in seats 1 and 3 (default: experts)"
    )
    parser.add_argument(
        "--readings", default="", help="only these readings, comma-separated (default: all)"
    )
    parser.add_argument("--reference", default="shipped", help="the reading others are paired with")
    parser.add_argument(
        "--replica",
        type=float,
        default=0.0,
        help="add the replica reading: a deal's weight times this per partner card its own "
        "algorithm, random state included, would not have played there (a measuring device)",
    )
    parser.add_argument(
        "--players", default="", help="the experts' options, e.g. prior=0.23 (bot_strength's form)"
    )
    parser.add_argument(
        "--replica-fresh",
        action="store_true",
        help="the replica draws its own random numbers instead of the partner's",
    )
    args = parser.parse_args(argv)
    rules = rules_for(args.rules)
    only = [name for name in args.readings.split(",") if name] or None
    if args.replica and (rules.low_lead != "off" or rules.signals or rules.politaine != "off"):
        raise SystemExit("--replica reads plain card play: no low lead, signals or politaine")
    scorer = Scorer(
        rules, args.deals, args.carding, only, args.reference, args.replica, args.replica_fresh
    )
    clock = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)  # no cap binds: replays exactly
    _, options = parse_bot(f"expert:{args.players}")
    if args.worlds:
        options.setdefault("worlds", args.worlds)
    for seed in range(args.seed, args.seed + args.matches):
        seats = []
        for seat in range(4):
            bot = Measured(move_ms=10_000, carding=args.carding, **options)
            bot.scorer, bot.match_seed = scorer, seed
            seats.append(BotSeat(make_bot(args.opponent) if seat % 2 and args.opponent else bot))
        referee_match(rules, seats, seed=seed, match_id=f"inference-{seed}", clock=clock)
    print(
        f"{args.rules}: {scorer.positions} positions; log loss in nats a card (difference from "
        f"{args.reference}) for the partner's hand, then the opponents'"
    )
    print("\n".join(scorer.report()))
    if args.replica:
        agree, asked = scorer.true_agree
        print(
            f"  the replica in the true deal played every partner card at {agree} of {asked} "
            "positions"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
