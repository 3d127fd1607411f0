"""``expert``: determinized search over deals consistent with everything public.

One decision: read the message (``view``), build a sampler of hidden hands (``sampler``), and
run perfect-information Monte Carlo (``search``) over engine states rebuilt for each sample
(``world``), finishing deals with the rollout policy (``policy``) or an exact solver, valued by
the chance to win the match (``outlook``). Fixed choices skip search: meld everything, announce
every poule, demand every redeal offered, claim exactly when the count reaches the target.

Budget per decision: ``max_worlds`` samples, stopped early by a time cap of ``move_ms`` (150 ms
by default), and never more than a fortieth of what is left of the bank. With the cap unreached,
a match replays exactly (the RNG is seeded from match id and seat). Environment overrides for
measurements: ``EXPERT_WORLDS`` and ``EXPERT_MS``.
"""

from __future__ import annotations

import os
import random
import sys
import time
from dataclasses import replace
from typing import Any

from engine.actions import CLAIM, PLAY_LIMIT, SLIDE, TAP, action_to_str, parse_action
from engine.cards import mask_from_codes as _mask
from engine.cards import parse_card
from engine.rules import rules_from_dict
from engine.state import State

from .carding import carded, twin_class
from .fit import OpponentFit
from .model import weights_for
from .native import SearchJudge, library, native_for
from .outlook import Outlook
from .policy import claim_is_sure, policy_action, with_flags
from .preference import message_cards, preferred
from .prune import distinct_cards, tna_apart
from .sampler import Sampler
from .search import EXACT_CARDS, Evaluator, pimc
from .signals import choose_signal, named_suit
from .view import View, read_view
from .world import Evidence, ModelMemo, ReplayError, Worlds

DEFAULT_WORLDS = 88
#: The full budget where melds count (``pollack``) and the search runs in Python: round 4
#: measured 88 deals weaker than 64 there (``docs/expert-log.md``), so it stays at 64 unless a
#: budget is asked for.
MELD_WORLDS = 64
#: Where melds count the exact solver takes only the last trick (its four cards): there the
#: rollouts, which see one hand, finish the last three tricks better than a solver that lets every
#: seat see every card (``docs/expert-log.md``, round 11).
MELD_EXACT = 4
#: The full budget and solver size where the search runs in C (``native.py``: a C compiler on
#: the host) and melds do not count: what the Python search's budget costs buys this much
#: there (``docs/expert-log.md``, round 14).
NATIVE_WORLDS = 528
NATIVE_EXACT = 16
#: The full budget where the search runs in C and melds count: 256 deals cost a decision less
#: CPU than the Python search's 64 (median 17 ms against 22) and scored higher against
#: ``expert-v1`` (``docs/expert-log.md``, round 16); the solver stays at ``MELD_EXACT``.
NATIVE_MELD_WORLDS = 256
#: Where the search runs in C and melds count, the seats' own searches in the rollouts, kept to
#: the start of the deal (``own``, ``own_plies``, ``own_lead_plies``, ``own_early``): each seat's
#: reply and its leads within the first 8 moves are chosen by its own search over 4 deals it
#: imagines, in decisions taken while at most 8 cards of the deal are played. +1.75 ± 1.6 points
#: against ``expert-v1`` over 1,600 pairs, paired with the expert without them (a first look and
#: a confirmation: ``docs/expert-log.md``, rounds 37-38). A setting asked for replaces its
#: value here (``own=0``: none); a budget in deals asked for replaces them all (levels 1-3).
NATIVE_MELD_OWN = (4, 1, 8, 8)
DEFAULT_MS = 150.0
#: Where melds count, read the partner as this bot by default (``twins`` and the shrewd judge
#: of its cards): there it scored 3 points more against ``expert-v1`` (``docs/expert-log.md``,
#: round 16); elsewhere it measured within its noise (rounds 12, 13, 15), so it stays off.
MELD_PARTNER_READING = True
#: Where melds count, weigh the others' cards by the model of this bot's card play
#: (``model.py``: the partner's and the opponents', bits 1 and 2), its chance raised to
#: ``MELD_MODEL_POWER`` (``docs/expert-log.md``, round 25).
MELD_MODEL = 3
MELD_MODEL_POWER = 0.5
#: Likelihood factor of a play the rollout policy would not have made (soft inference).
DEFAULT_MISS = 0.3
#: The same for a card the partner played (it searches, so the policy explains it less well).
DEFAULT_PARTNER_MISS = 0.6
#: Likelihood factor of an opponent's card played above a weaker card of its class it held.
DEFAULT_TWIN_MISS = 1.0
#: Likelihood factor of a silence a player who says everything would not have kept.
DEFAULT_QUIET = 0.1
#: Chance that a rollout move is a random legal card rather than the policy's.
DEFAULT_EPS = 0.0
#: Shrewd rollouts: a leader holding at least this many cards keeps its masters (0: never).
DEFAULT_PATIENCE = "0"
#: Fit the miss factor to the opponents during the match (``fit.py``): "1" on, "0" off.
DEFAULT_FIT = "0"
#: Bonus (in win chance, times 1/sqrt(worlds)) of the rollout policy's own choice.
DEFAULT_PRIOR = 0.057
#: Likelihood factor of a partner's card that breaks the carding convention (``carding.py``),
#: where the convention is on.
CARDING_MISS = 0.05
#: Likelihood factors of a partner's losing follow that, in a sampled deal, says it holds the
#: named suit's master when it does not (high) or says it does not when it does (low), where
#: the suit-preference convention is on (``preference.py``).
PREFERENCE_HIGH = 0.2
PREFERENCE_LOW = 0.6


class ExpertBot:
    """The ``expert`` built-in bot (protocol 1, in-process or through ``python -m engine.bots``)."""

    name = "expert"

    def __init__(
        self,
        seed: int | str | None = None,
        *,
        worlds: int | None = None,
        move_ms: float | None = None,
        miss: float | None = None,
        partner_miss: float | None = None,
        quiet: float | None = None,
        signals: bool | None = None,
        exact: int | None = None,
        prior: float | None = None,
        adaptive: bool | None = None,
        careful: bool | None = None,
        eps: float | None = None,
        shrewd: bool | None = None,
        smooth: bool | None = None,
        shrewd_judge: bool | None = None,
        fit: bool | None = None,
        partner_judge: bool | None = None,
        twins: bool | None = None,
        carding: bool | None = None,
        preference: float | None = None,
        preference_scope: int | None = None,
        pool: int | None = None,
        native: bool | None = None,
        own: int | None = None,
        own_plies: int | None = None,
        own_team: bool | None = None,
        own_leads: bool | None = None,
        own_lead_plies: int | None = None,
        own_early: int | None = None,
        own_worlds: int | None = None,
        patience: int | None = None,
        race: int | None = None,
        partner_search: int | None = None,
        search_scope: int | None = None,
        twin_miss: float | None = None,
        lead: bool | None = None,
        model: int | None = None,
        model_power: float | None = None,
    ) -> None:
        def option(value, name: str, default, kind):
            return value if value is not None else kind(os.environ.get(name, default))

        self.max_worlds = option(worlds, "EXPERT_WORLDS", DEFAULT_WORLDS, int)
        asked = worlds_asked = worlds is not None or "EXPERT_WORLDS" in os.environ
        #: The budget and solver size where melds count, where they do not, and where the
        #: search runs in C (``hello``).
        self.meld_worlds = self.max_worlds if asked else MELD_WORLDS
        self.plain_worlds = self.max_worlds
        self.native_worlds = self.max_worlds if asked else NATIVE_WORLDS
        self.native_meld_worlds = self.max_worlds if asked else NATIVE_MELD_WORLDS
        self.move_ms = option(move_ms, "EXPERT_MS", DEFAULT_MS, float)
        self.evidence = Evidence(
            miss=option(miss, "EXPERT_MISS", DEFAULT_MISS, float),
            partner_miss=option(partner_miss, "EXPERT_PARTNER_MISS", DEFAULT_PARTNER_MISS, float),
            quiet=option(quiet, "EXPERT_QUIET", DEFAULT_QUIET, float),
            partner_shrewd=option(
                partner_judge, "EXPERT_PARTNER_JUDGE", "0", lambda v: str(v) != "0"
            ),
            partner_search=option(partner_search, "EXPERT_PARTNER_SEARCH", "0", int),
            search_scope=option(search_scope, "EXPERT_SEARCH_SCOPE", "0", int),
            twin_miss=option(twin_miss, "EXPERT_TWIN_MISS", DEFAULT_TWIN_MISS, float),
            model=option(model, "EXPERT_MODEL", "0", int),
            model_power=option(model_power, "EXPERT_MODEL_POWER", "1", float),
        )
        #: How the others' cards are weighed by the card model (``model``, ``model_power``)
        #: where melds do not count and where they do (``hello``); an option asked for is kept.
        self.plain_model = (self.evidence.model, self.evidence.model_power)
        self.meld_model = (
            self.evidence.model
            if model is not None or "EXPERT_MODEL" in os.environ
            else MELD_MODEL,
            self.evidence.model_power
            if model_power is not None or "EXPERT_MODEL_POWER" in os.environ
            else MELD_MODEL_POWER,
        )
        self.signals = option(signals, "EXPERT_SIGNALS", "1", lambda v: str(v) != "0")
        self.exact_cards = option(exact, "EXPERT_EXACT", EXACT_CARDS, int)
        asked = exact is not None or "EXPERT_EXACT" in os.environ
        self.meld_exact = self.exact_cards if asked else MELD_EXACT
        self.plain_exact = self.exact_cards
        # The C search's solver size goes with its budget: a budget asked for keeps the size.
        self.native_exact = self.exact_cards if asked or worlds_asked else NATIVE_EXACT
        self.prior = option(prior, "EXPERT_PRIOR", DEFAULT_PRIOR, float)
        self.adaptive = option(adaptive, "EXPERT_ADAPTIVE", "1", lambda v: str(v) != "0")
        self.careful = option(careful, "EXPERT_CAREFUL", "1", lambda v: str(v) != "0")
        self.eps = option(eps, "EXPERT_EPS", DEFAULT_EPS, float)
        self.shrewd = option(shrewd, "EXPERT_SHREWD", "1", lambda v: str(v) != "0")
        self.smooth = option(smooth, "EXPERT_SMOOTH", "0", lambda v: str(v) != "0")
        self.shrewd_judge = option(shrewd_judge, "EXPERT_JUDGE", "0", lambda v: str(v) != "0")
        #: Read the opponents' card play only as far as the judge predicts it (``fit.py``).
        self.fit_on = option(fit, "EXPERT_FIT", DEFAULT_FIT, lambda v: str(v) != "0")
        self.fit: OpponentFit | None = None
        #: Read the partner's cards as this bot's: the weakest of equivalent cards (``view.py``).
        self.twins = option(twins, "EXPERT_TWINS", "0", lambda v: str(v) != "0")
        #: Sampled deals weighed per deal searched (``pooled``): 1 searches every deal drawn.
        self.pool = max(1, option(pool, "EXPERT_POOL", "1", int))
        #: Play and read the carding convention (``carding.py``); it replaces ``twins``.
        self.carding = option(carding, "EXPERT_CARDING", "0", lambda v: str(v) != "0")
        if self.carding:
            self.twins = False
            self.evidence = replace(self.evidence, carding=CARDING_MISS)
        #: Play and read the suit-preference convention (``preference.py``) among losing
        #: follows valued within this margin in win chance (0: off); it replaces ``twins``
        #: and ``carding`` (it plays the strongest of equivalent cards where it says so).
        self.preference = option(preference, "EXPERT_PREFERENCE", "0", float)
        if self.preference > 0:
            self.twins = self.carding = False
            self.evidence = replace(
                self.evidence,
                carding=1.0,
                pref_high=PREFERENCE_HIGH,
                pref_low=PREFERENCE_LOW,
                pref_scope=option(preference_scope, "EXPERT_PREFERENCE_SCOPE", "0", int),
            )
        #: How the partner's cards are read (``twins``, the shrewd judge) where melds do not
        #: count and where they do (``hello``); an option asked for is kept in both.
        self.plain_reading = (self.twins, self.evidence.partner_shrewd)
        twins_asked = (
            twins is not None or "EXPERT_TWINS" in os.environ or self.carding or self.preference > 0
        )
        judge_asked = partner_judge is not None or "EXPERT_PARTNER_JUDGE" in os.environ
        self.meld_reading = (
            self.twins if twins_asked else MELD_PARTNER_READING,
            self.evidence.partner_shrewd if judge_asked else MELD_PARTNER_READING,
        )
        #: Rollouts and the solver in C where the rules allow (``native.py``): the same values.
        self.native = option(native, "EXPERT_NATIVE", "1", lambda v: str(v) != "0")
        #: In the C rollouts, the first ``own_plies`` moves each chosen by the seat's own
        #: search over ``own`` deals imagined from its view (0: the policy; ``native.c``).
        self.own = option(own, "EXPERT_OWN", "0", int)
        self.own_plies = option(own_plies, "EXPERT_OWN_PLIES", "4", int)
        self.own_team = option(own_team, "EXPERT_OWN_TEAM", "0", lambda v: str(v) != "0")
        #: Only the leads among those moves are searched; followers play the policy.
        self.own_leads = option(own_leads, "EXPERT_OWN_LEADS", "0", lambda v: str(v) != "0")
        #: Leads within the first this many moves are searched too (beyond ``own_plies``).
        self.own_lead_plies = option(own_lead_plies, "EXPERT_OWN_LEAD_PLIES", "0", int)
        #: The seats' own searches only in decisions taken while at most this many cards of
        #: the deal have been played (0: in every decision).
        self.own_early = option(own_early, "EXPERT_OWN_EARLY", "0", int)
        #: The root's budget in deals in the decisions where the own searches run, whose cost
        #: is the root's deals times the seat's (0: the budget of every other decision).
        self.own_worlds = option(own_worlds, "EXPERT_OWN_WORLDS", "0", int)
        #: The own searches' settings where melds do not count and where they do (``hello``):
        #: a setting asked for is kept in both; one not asked for takes ``NATIVE_MELD_OWN``'s
        #: where melds count, unless a budget in deals is asked for (then none does).
        self.plain_own = (self.own, self.own_plies, self.own_lead_plies, self.own_early)
        asked_own = [
            value is not None or f"EXPERT_{name}" in os.environ
            for value, name in (
                (own, "OWN"), (own_plies, "OWN_PLIES"), (own_lead_plies, "OWN_LEAD_PLIES"),
                (own_early, "OWN_EARLY"),
            )
        ]  # fmt: skip
        settings = zip(self.plain_own, asked_own, NATIVE_MELD_OWN, strict=True)
        self.native_meld_own = (
            self.plain_own
            if worlds_asked
            else tuple(mine if asked else default for mine, asked, default in settings)
        )
        #: Shrewd rollouts and fallback: a leader holding at least this many cards keeps its
        #: masters (``policy._shrewd``; 0: never).
        self.patience = option(patience, "EXPERT_PATIENCE", DEFAULT_PATIENCE, int)
        #: Shrewd rollouts and fallback, bits: a follower contests a trick for a claim, its
        #: own or the opponents' (1), or for a meld (2); a leader the opponents would claim
        #: against leads to keep the lead (4); where melds count, a follower whose team has won
        #: no trick yet contests an opponent's trick (8) (``policy.race_cards``; 0: never).
        self.race = option(race, "EXPERT_RACE", "0", int)
        #: Value a deal's end by who leads the next deal where claims race to the target,
        #: with the deal outcomes learned from the expert's games (``outlook.py``).
        self.lead = option(lead, "EXPERT_LEAD", "0", lambda v: str(v) != "0")
        self.base_miss = self.evidence.miss
        self.totals = (0, 0)
        self.rng = random.Random(seed)
        self.model_memo = ModelMemo()
        self.seat = 0
        self.rules = None
        self.outlook: Outlook | None = None
        self.bank_left = 60.0
        self.move_cap = self.move_ms / 1000
        self.last_worlds = 0

    def hello(self, message: dict[str, Any]) -> None:
        self.seat = message["seat"]
        self.rules = rules_from_dict(message["rules"])
        melds = self.rules.melds
        self.max_worlds = self.meld_worlds if melds else self.plain_worlds
        self.exact_cards = self.meld_exact if melds else self.plain_exact
        # Built (once per host and source) while greeted: hello's clock is the long one.
        native = self.native and library() is not None
        own = self.plain_own
        if native and not melds:
            self.max_worlds, self.exact_cards = self.native_worlds, self.native_exact
        elif native:
            self.max_worlds = self.native_meld_worlds
            own = self.native_meld_own
        self.own, self.own_plies, self.own_lead_plies, self.own_early = own
        self.outlook = Outlook(self.rules, self.lead)
        clock = message.get("clock") or {}
        self.bank_left = clock.get("bank_ms", 60_000) / 1000
        self.move_cap = min(self.move_ms, 0.3 * clock.get("move_ms", 1000)) / 1000
        self.rng.seed(f"{message.get('match')}:{self.seat}")
        self.totals = (0, 0)
        self.model_memo = ModelMemo()
        self.twins, partner_shrewd = self.meld_reading if melds else self.plain_reading
        model, power = self.meld_model if melds else self.plain_model
        self.evidence = replace(
            self.evidence,
            miss=self.base_miss,
            partner_shrewd=partner_shrewd,
            model=model,
            model_power=power,
            model_weights=weights_for(melds),
        )
        if self.fit_on and self.base_miss < 1.0:
            self.fit = OpponentFit(self.base_miss)

    def notify(self, message: dict[str, Any]) -> None:
        if message.get("type") != "deal_end":
            return
        try:
            if self.fit is not None and self.rules is not None:
                self.fit.learn(self.rules, self.seat, message, self.totals)
                self.evidence = replace(self.evidence, miss=self.fit.miss)
            self.totals = (message["score"][0], message["score"][1])
        except Exception as error:  # a deal it cannot read teaches nothing; never fault
            print(f"expert: {type(error).__name__}: {error}", file=sys.stderr)

    def act(self, message: dict[str, Any]) -> str:
        started = time.thread_time()  # CPU time, as the referee charges: waiting costs nothing
        try:
            return self._decide(message, started)
        except Exception as error:  # never fault: fall back to the first legal action
            print(f"expert: {type(error).__name__}: {error}", file=sys.stderr)
            return message["legal"][0]
        finally:
            # The referee's clock also counts our reading and writing: add a margin.
            self.bank_left -= time.thread_time() - started + 0.002

    def _decide(self, message: dict[str, Any], started: float) -> str:
        legal: list[str] = message["legal"]
        if len(legal) == 1:
            return legal[0]
        decision = message["decision"]
        if decision == "redeal":
            return "redeal" if "redeal" in legal else legal[0]
        if decision in ("poules", "meld"):
            return legal[-1] if decision == "poules" else legal[0]
        rules = self.rules
        assert rules is not None and self.outlook is not None
        tna = tna_apart(rules)  # T, 9 and A never equivalent
        view = self.known(read_view(message["state"], rules.low_lead, self.twins, tna))
        # The next deal's leader sits two seats past this deal's dealer: on the dealer's team.
        outlook = self.outlook.next_lead(view.dealer % 2 == self.seat % 2)
        sampler = Sampler(view, rules, self.rng)
        samples = self.evidence.partner_search
        judge = None
        if samples and self.native and library() is not None and self.evidence.partner_miss < 1.0:
            judge = SearchJudge(rules, outlook.table, samples, self.rng.getrandbits(32))
        worlds = Worlds(
            rules, view, decision, self.evidence, self.shrewd_judge, judge, self.model_memo
        )
        first, first_weight = _build(worlds, sampler)
        codes = [parse_action(a) for a in legal]
        if CLAIM in codes and claim_is_sure(first, self.seat):
            return "claim"
        table = _mask(message["state"]["trick"]["cards"])
        gone = view.played & ~table
        cards = distinct_cards(
            [a for a in codes if a < 32],
            view.hand,
            gone,
            rules.low_lead != "off",
            tna,
        )
        candidates = [with_flags(first, c, tuple(codes)) for c in sorted(cards)]
        if not candidates:  # no card to play: only claims, melds or the like
            return legal[0]
        voids = list(view.voids) if self.shrewd else None
        patience = self.patience if self.shrewd else 0
        race = self.race if self.shrewd else 0
        fallback = _representative(
            policy_action(first, voids, self.shrewd, patience, race), candidates
        )
        prior = self.prior
        if fallback < 0:
            fallback, prior = candidates[0], 0.0
        if len(candidates) == 1:
            action = self._carded(candidates[0], view.hand, gone, table, tna)
            action = self._preferred(action, {action: 0.0}, first, view.hand, gone, table, tna)
            return self._signalled(action, first, message, legal)
        budget = min(self.move_cap, max(0.0, self.bank_left - 5.0) / 40)
        pending = [(first, first_weight)]

        pool = self.pool if self.evidence.any else 1

        def draw():
            if pending:
                return pending.pop()
            return pooled(worlds, sampler, pool, self.rng) if pool > 1 else _build(worlds, sampler)

        evaluator = Evaluator(
            outlook, self.seat & 1, view.deal, self.exact_cards,
            list(view.voids) if self.careful else None, self.eps, self.rng, self.shrewd,
            self.smooth, patience, race,
        )  # fmt: skip
        own = self.own
        if self.own_early and view.played.bit_count() > self.own_early:
            own = 0
        max_worlds = self.max_worlds
        if self.native and not self.eps and not self.smooth:
            if own and self.own_worlds:
                max_worlds = self.own_worlds
            policy = "shrewd" if self.shrewd else "careful"
            evaluator.native = native_for(
                first, rules, outlook.table, self.seat & 1, self.exact_cards,
                policy if self.careful else "greedy", evaluator.voids,
                (
                    own,
                    self.own_plies,
                    int(self.own_team) | 2 * int(self.own_leads) | 4 * self.own_lead_plies,
                ),
                self.rng.getrandbits(32) if own else 0, patience, race,
                view.public_facts() if own else None,
            )  # fmt: skip
        action, means, used = pimc(
            candidates, draw, evaluator, max_worlds=max_worlds,
            deadline=started + budget, fallback=fallback, prior=prior, adaptive=self.adaptive,
        )  # fmt: skip
        self.last_worlds = used
        action = self._carded(action, view.hand, gone, table, tna)
        action = self._preferred(action, means, first, view.hand, gone, table, tna)
        return self._signalled(action, first, message, legal)

    def _preferred(
        self,
        action: int,
        means: dict[int, float],
        world: State,
        hand: int,
        gone: int,
        table: int,
        tna: bool,
    ) -> int:
        """``action`` with its card swapped for the losing follow the suit-preference
        convention plays (``preference.py``), among those valued within ``preference`` of it
        (each candidate standing for its class of equivalent cards), where it is on."""
        if self.preference <= 0 or action >= PLAY_LIMIT:
            return action
        card = action & 31
        losing = message_cards(world[3], hand, card, self.evidence.pref_scope)
        if not losing:
            return action
        near: set[int] = set()
        for other, value in means.items():
            if (
                other < PLAY_LIMIT
                and other & 31 in losing
                and (value >= means[action] - self.preference)
            ):
                near.update(twin_class(other & 31, hand, gone, tna))
        chosen = preferred(sorted(near & set(losing)), card, hand, gone, table)
        return (action & ~31) | chosen

    def _carded(self, action: int, hand: int, gone: int, table: int, tna: bool) -> int:
        """``action`` with its card swapped for the equivalent one the carding convention
        plays (``carding.py``), where the convention is on."""
        if not self.carding or action >= PLAY_LIMIT or self.rules.low_lead != "off":
            return action
        return (action & ~31) | carded(action & 31, hand, gone, table, tna)

    def known(self, view: View) -> View:
        """The hard facts the search samples from: the public record's, nothing more. (A
        measuring device may add hidden cards here: ``benchmarks/expert_ceiling.py``.)"""
        return view

    def _signalled(
        self, action: int, world: State, message: dict[str, Any], legal: list[str]
    ) -> str:
        """``action`` with the signal the convention calls for (``signals.py``), if any."""
        rules = self.rules
        if not (rules and rules.signals and self.signals) or action >= PLAY_LIMIT:
            return _string(action, legal)
        told = 0
        for said in message["state"]["said"]:
            if said["seat"] == self.seat and said["say"] in ("tap", "slide") and "card" in said:
                flag = TAP if said["say"] == "tap" else SLIDE
                told |= 1 << named_suit(flag, parse_card(said["card"]))
        hands = world.hands
        out = hands[0] | hands[1] | hands[2] | hands[3]
        flag = choose_signal(action & 31, hands[self.seat], out, told)
        text = action_to_str(action | flag)
        return text if text in legal else _string(action, legal)


def _representative(action: int, candidates: list[int]) -> int:
    """The candidate standing for ``action`` (itself, or the equivalent card kept); -1 if none."""
    if action >= PLAY_LIMIT:
        return -1
    if action in candidates:
        return action
    card = action & 31
    same = [a for a in candidates if (a & 31) >> 3 == card >> 3 and (a & 31) > card]
    return min(same, key=lambda a: a & 31) if same else -1


def pooled(worlds: Worlds, sampler: Sampler, pool: int, rng: random.Random) -> tuple[State, float]:
    """One of ``pool`` sampled deals, picked with chance proportional to its evidence weight,
    weighing the mean of their weights (sampling-importance resampling): the search spends its
    rollouts on deals that explain the record, and the weighted mean over picks stays the
    estimate it was."""
    batch = [_build(worlds, sampler) for _ in range(pool)]
    total = sum(weight for _, weight in batch)
    if total <= 0.0:
        return batch[0][0], 0.0
    point = rng.random() * total
    for world, weight in batch:
        point -= weight
        if point < 0.0:
            return world, total / pool
    return batch[-1][0], total / pool


def _build(worlds: Worlds, sampler: Sampler, tries: int = 20) -> tuple[State, float]:
    """A sampled world; a sample the public record does not replay on is drawn again."""
    for _ in range(tries - 1):
        try:
            return worlds.build(sampler.draw())
        except ReplayError:
            continue
    return worlds.build(sampler.draw())


def _string(action: int, legal: list[str]) -> str:
    text = action_to_str(action)
    return text if text in legal else legal[0]
