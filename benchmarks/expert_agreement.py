"""How often the rollout policy plays the card the expert's search chooses, per policy variant.

    nice -n 19 python benchmarks/expert_agreement.py --rules quatre-sept --matches 10
    nice -n 19 python benchmarks/expert_agreement.py --rules pollack --patience 0,8,7,6,5
    nice -n 19 python benchmarks/expert_agreement.py --rules quatre-sept --matches 90 --fit-leads

Two experts at their default budget (seats 0 and 2) play seeded matches against two
``expert-v1``. At every card decision they search, the shrewd policy's card in the decision's
first sampled deal (the card the search's prior favours) is computed for each ``--patience``
value (0: the shipped policy) and compared with the card the search chose. The rollouts model
every seat's later play with this policy, so where it rarely plays what the search would, the
rollouts model the players badly there. Prints the agreement per place in the trick (0 leads),
and for leads per cards in hand. A proxy only: a policy closer to the search is not by that
alone a better rollout policy; duplicate pairs decide.

``--fit-leads`` also asks whether *any* simple lead rule is closer to the search than the
policy: it fits a conditional-logit model (one linear score per card over 16 features of the
card, its suit and the voids, twice: with 6 or more cards in hand and with fewer) to the
search's leads of the odd seeds and reports, on the even seeds, how often the model's best card
and the policy's card are the search's, counting equivalent cards (``prune.py``) as one.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine.bots.expert as expert_module
from engine.bots import BotSeat, make_bot
from engine.bots.expert import ExpertBot
from engine.bots.expert.native import SearchJudge
from engine.bots.expert.policy import _reading as seat_reading
from engine.bots.expert.prune import distinct_cards, equivalent, tna_apart
from engine.bots.expert.world import table_and_gone
from engine.cards import CARD_THIRDS, SUIT_MASKS
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for

SLOW = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)


class Watched(ExpertBot):
    """The expert, noting for each searched decision the policy's cards and the search's."""

    variants: tuple[int, ...] = (0,)
    #: Deals imagined by the search judge compared too (``--search-judge``; 0: none).
    search_judge = 0
    #: (policy's card per variant, search's card, place in the trick, cards in hand)
    seen: list[tuple[dict[int, int], int, int, int]] = []
    #: Leads with a choice: (hand, cards out, voids, seat, policy's card, search's card).
    leads: list[tuple[int, int, list[int], int, int, int]] = []

    def act(self, message: dict[str, Any]) -> str:
        self._policy: dict[int, int] | None = None
        self._chosen: int | None = None
        self._lead: tuple[int, int, list[int], int] | None = None
        _current[:] = [self]
        action = super().act(message)
        if self._policy is not None and self._chosen is not None:
            state = message["state"]
            place, size = len(state["trick"]["cards"]), len(state["hand"])
            self.seen.append((self._policy, self._chosen, place, size))
            if self._lead is not None:
                hand, others, voids, seat = self._lead
                self.leads.append((hand, others, voids, seat, self._policy[0], self._chosen))
        return action


_policy_action = expert_module.policy_action
_pimc = expert_module.pimc
_current: list[Watched] = []


def _watch_policy(state, voids=None, shrewd=False, patience=0, race=0):
    bot = _current[0]
    bot._policy = {
        k: _policy_action(state, voids, shrewd, k, race) & 31 for k in Watched.variants
    }
    if Watched.search_judge and voids is not None and bot.rules is not None:
        judge = SearchJudge(bot.rules, bot.outlook.table, Watched.search_judge, 1)
        card = judge(state, list(voids))
        if card is not None:  # the class of equivalent cards counts as one card
            _, gone = table_and_gone(state)
            tna = tna_apart(bot.rules)
            cards = distinct_cards(
                [c for c in range(32) if state.hand(state.to_move) >> c & 1],
                state.hand(state.to_move),
                gone,
                False,
                tna,
            )
            bot._policy[JUDGED] = _kept(card & 31, cards, gone, tna)
            bot._classes = (cards, gone, tna)
    if not state.trick and voids is not None:
        hand, others = seat_reading(state)
        bot._lead = (hand, others, list(voids), state.to_move)
    return _policy_action(state, voids, shrewd, patience, race)


def _watch_search(*args, **kwargs):
    found = _pimc(*args, **kwargs)
    bot = _current[0]
    bot._chosen = found[0] & 31
    if bot._policy is not None and JUDGED in bot._policy:
        cards, gone, tna = bot._classes
        bot._chosen = _kept(bot._chosen, cards, gone, tna)
        for k in Watched.variants:
            bot._policy[k] = _kept(bot._policy[k], cards, gone, tna)
    return found


expert_module.policy_action = _watch_policy
expert_module.pimc = _watch_search


_FULL = (1 << 32) - 1
#: The key of the search judge's card among the policy variants' (``--search-judge``).
JUDGED = -1


def lead_features(card: int, hand: int, others: int, voids: list[int], seat: int) -> list[float]:
    """The model's features of leading ``card``: 16 facts, then the same again where the hand
    holds 6 or more cards (so early and late leads get their own weights)."""
    suit = SUIT_MASKS[card >> 3]
    mine, out = hand & suit, others & suit
    stronger_out = (((1 << card) - 1) & suit & others).bit_count()
    holds_master = any(not (((1 << c) - 1) & suit & others) for c in range(32) if mine >> c & 1)
    left, right, partner = (seat + 1) & 3, (seat + 3) & 3, (seat + 2) & 3
    lacking = (voids[left] >> card & 1) + (voids[right] >> card & 1)
    facts = [
        stronger_out == 0,  # a master
        stronger_out == 0 and out != 0,  # a master that draws cards
        holds_master and stronger_out > 0,  # from a suit whose master we keep
        not mine >> (card + 1) << (card + 1) & suit,  # our weakest card of the suit
        mine.bit_count() == 1,
        mine.bit_count(),
        CARD_THIRDS[card] == 3,
        CARD_THIRDS[card] > 0,
        out.bit_count(),
        lacking == 2 and not voids[partner] >> card & 1,
        lacking == 1,
        voids[partner] >> card & 1,
        stronger_out == 1,
        stronger_out >= 2,
        stronger_out == 0 and mine.bit_count() >= 3,
        card & 7 >= 6,  # an 8 or a 7
    ]
    early = hand.bit_count() >= 6
    return [float(f) for f in facts] + [float(f) * early for f in facts]


def _kept(card: int, cards: list[int], gone: int, tna: bool) -> int:
    """The card of ``cards`` equivalent to ``card`` (the one search tries)."""
    for c in cards:
        if c == card or (c >> 3 == card >> 3 and equivalent(card, c, gone, tna)):
            return c
    return card


def fit_leads(leads: list, tna: bool, odd: list[bool]) -> None:
    """Fit the lead model on the odd seeds' leads, print agreement on the even seeds'."""
    import numpy as np

    cases = []
    for (hand, others, voids, seat, policy, chosen), train in zip(leads, odd, strict=True):
        gone = _FULL & ~(hand | others)
        cards = distinct_cards([c for c in range(32) if hand >> c & 1], hand, gone, False, tna)
        chosen, policy = (_kept(c, cards, gone, tna) for c in (chosen, policy))
        if len(cards) > 1 and chosen in cards:
            features = np.array([lead_features(c, hand, others, voids, seat) for c in cards])
            target = cards.index(chosen)
            cases.append((features, target, policy == chosen, hand.bit_count(), train))
    weights = np.zeros(cases[0][0].shape[1])
    training = [c for c in cases if c[4]]
    for _ in range(600):  # gradient ascent on the mean log likelihood, a little L2
        gradient = np.zeros_like(weights)
        for features, target, *_ in training:
            score = features @ weights
            chance = np.exp(score - score.max())
            gradient += features[target] - (chance / chance.sum()) @ features
        weights += 0.5 * gradient / len(training) - 0.005 * weights
    tally: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for features, target, policy_agrees, size, train in cases:
        if train:
            continue
        model_agrees = int(np.argmax(features @ weights)) == target
        for key in ("all leads", f"lead, {size} cards"):
            row = tally[key]
            row[0] += 1
            row[1] += policy_agrees
            row[2] += model_agrees
    print(f"lead model: fitted on {len(training)} leads, tested on the others")
    print("where | leads | policy | model")
    for key in sorted(tally):
        n, policy_hits, model_hits = tally[key]
        print(f"{key:>15} | {n:4d} | {policy_hits / n:.2f} | {model_hits / n:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="quatre-sept")
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--seed", type=int, default=201)
    parser.add_argument("--patience", default="0,8,7,6", help="policy variants to compare")
    parser.add_argument("--fit-leads", action="store_true", help="fit and test a lead model")
    parser.add_argument(
        "--search-judge", type=int, default=0,
        help="also the card of a small search over this many imagined deals (SearchJudge)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    Watched.variants = tuple(int(v) for v in args.patience.split(","))
    Watched.search_judge = args.search_judge
    rules = rules_for(args.rules)
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    leads: list = []
    odd: list[bool] = []
    for seed in range(args.seed, args.seed + args.matches):
        Watched.seen = []
        Watched.leads = []
        seats = [
            BotSeat(Watched()),
            BotSeat(make_bot("expert-v1")),
            BotSeat(Watched()),
            BotSeat(make_bot("expert-v1")),
        ]
        referee_match(rules, seats, seed=seed, match_id=f"s{seed}-ab", clock=SLOW)
        for policy, chosen, place, size in Watched.seen:
            keys = [f"place {place}"] + ([f"lead, {size} cards"] if place == 0 else [])
            for key in keys:
                counts[key]["n"] += 1
                for k in Watched.variants:
                    counts[key][k] += policy[k] == chosen
                if JUDGED in policy:
                    counts[key]["judged"] += 1
                    counts[key][JUDGED] += policy[JUDGED] == chosen
        leads += Watched.leads
        odd += [bool(seed & 1)] * len(Watched.leads)
        print(f"seed {seed}: {len(Watched.seen)} decisions", flush=True)
    print("where | decisions | agreement per patience " + " ".join(map(str, Watched.variants)))
    for key in sorted(counts):
        row = counts[key]
        shares = " ".join(f"{row[k] / row['n']:.2f}" for k in Watched.variants)
        judged = f" | search judge {row[JUDGED] / row['judged']:.2f}" if row["judged"] else ""
        print(f"{key:>15} | {row['n']:4d} | {shares}{judged}")
    if args.fit_leads:
        fit_leads(leads, tna_apart(rules), odd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
