"""Engine states for sampled deals: the public record replayed on hidden hands.

``replay_world`` starts the deal with ``deal_state`` from the hands as dealt (the sampled hidden
hands plus each seat's plays) and re-applies everything public in order (redeal ``keep``s,
``poules``, melds, plays with their flags), so every field the engine keeps (politaine runs, the
low lead, bonuses, melds) is exactly what it would be in that deal. Where those fields do not
depend on hidden cards, ``Worlds`` replays once and moves the other samples in with
``with_hands``. Invariant: a world's ``to_move`` is the viewing seat, at the message's decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.actions import DONE, KEEP, PLAY_LIMIT, POLITAINE
from engine.cards import SUIT_MASKS, TNA_MASKS
from engine.rules import RuleSet
from engine.state import MELD_PHASE, POULES_PHASE, REDEAL_PHASE, State, deal_state

from .carding import carded
from .model import MELD_WEIGHTS, CardWeights, card_chances, legal_cards
from .policy import policy_action
from .preference import message_cards, reading_factor
from .prune import distinct_cards, tna_apart
from .view import View

#: The least weight the card model gives a card (a player it does not fit stays possible).
MODEL_FLOOR = 0.02


class ReplayError(Exception):
    """The public record did not replay on these hands (it should never happen)."""


@dataclass(frozen=True)
class Evidence:
    """Likelihood factors of soft evidence (1.0 ignores that kind of evidence).

    ``miss``: an opponent's card that the policy would not have played there; ``partner_miss``:
    the same for the partner; ``quiet``: a seat kept silent where, in this deal, a player who
    says everything would have spoken (kept a hand it could have had redealt, announced fewer
    poules than it held, did not meld a meld it held, played T, 9 or A of a complete T-9-A
    without announcing the politaine). (The partner's signals are hard facts: ``view.py``.)
    """

    miss: float = 1.0
    partner_miss: float = 1.0
    quiet: float = 1.0
    #: Judge the partner's cards by the shrewd policy with the public voids (the partner is the
    #: same bot, whose searches follow its own rollout policy more often than ``greedy``'s).
    partner_shrewd: bool = False
    #: A partner's card that breaks the carding convention in this deal (``carding.py``).
    carding: float = 1.0
    #: The suit-preference convention (``preference.py``): a partner's losing follow played
    #: above a weaker one where this deal gives it no master of the named suit (``pref_high``),
    #: or under a stronger one where it does (``pref_low``).
    pref_high: float = 1.0
    pref_low: float = 1.0
    #: Where else the convention speaks (``preference.DISCARDS``, ``FEEDS``).
    pref_scope: int = 0
    #: Judge leads too (the first card of a trick); off, only the cards that follow are read
    #: (a searching player leads unlike the policy, which leads its masters first).
    leads: bool = True
    #: Judge the partner's leads by a small search of its own over this many deals it imagines
    #: (``native.SearchJudge``; 0: by the policy). The partner searches; the policy leads unlike
    #: it (round 15), and a lead says most about the leader's hand.
    partner_search: int = 0
    #: What else that search judges, bits: the opponents' leads (1), the cards that follow (2).
    search_scope: int = 0
    #: An opponent's card played while it held a weaker card of the same class (one it could
    #: have played instead to the same effect): most players play the weakest (``prune.py``).
    twin_miss: float = 1.0
    #: Read cards by the model of the expert's play (``model.py``), bits: the partner's (1),
    #: the opponents' (2); a card read so is weighed by the model's chance of it (at least
    #: ``MODEL_FLOOR``) instead of by ``partner_miss`` / ``miss``.
    model: int = 0
    #: The model's chance is raised to this power (below 1: read less sharply).
    model_power: float = 1.0
    #: The model's weights: fitted where melds count, or where they do not (``weights_for``).
    model_weights: CardWeights = MELD_WEIGHTS

    @property
    def any(self) -> bool:
        low = min(
            self.miss, self.partner_miss, self.quiet, self.carding, self.twin_miss,
            self.pref_high, self.pref_low,
        )  # fmt: skip
        return low < 1.0 or bool(self.model)


NO_EVIDENCE = Evidence()


def replay_world(
    rules: RuleSet,
    view: View,
    hands: tuple[int, int, int, int],
    decision: str,
    judge: Callable[[State], int] | None = None,
    miss: float = 1.0,
    evidence: Evidence | None = None,
    shrewd_judge: bool = False,
    search_judge: Callable[[State, list[int]], int | None] | None = None,
    memo: dict[tuple[int, int], float] | None = None,
) -> tuple[State, float]:
    """The state of the deal in progress, had the hidden hands been ``hands`` (held now).

    Also a likelihood weight from ``evidence`` (``miss`` alone is ``Evidence(miss=miss)``):
    with ``judge`` (a policy), each card another seat played that differs from ``judge``'s
    choice in its place multiplies the weight by ``miss`` (opponent) or ``partner_miss``; each
    silence (see ``Evidence``) by ``quiet``. ``shrewd_judge``: the judge is the shrewd policy,
    told the voids public at each play (``judge`` is then ignored but must be given).
    ``search_judge``: judges the partner's leads instead (``Evidence.partner_search``).
    ``memo``: the model's factors already read in this deal (``ModelMemo``), reused and added to.
    """
    me = view.seat
    ev = evidence or Evidence(miss=miss)
    state, weight, melds = _replay_plays(
        rules, view, hands, ev, judge, shrewd_judge, search_judge=search_judge, memo=memo
    )
    state, silent = _melds_before(state, melds, me, finish=decision == "play", me=me)
    weight *= ev.quiet**silent
    if state.to_move != me:
        raise ReplayError("the replay did not reach the viewing seat")
    return state, weight


def agreement(
    rules: RuleSet,
    view: View,
    hands: tuple[int, int, int, int],
    judge: Callable[[State], int],
) -> list[tuple[int, int, float]]:
    """How each seat's plays of a deal compare with ``judge``'s, the hands known.

    ``hands``: what each seat held when the record ends (none of it played). Per seat:
    (plays with a choice of at least two cards, those where it played ``judge``'s card, the
    agreement expected of a player choosing among its cards at random: the sum of 1/choices).
    """
    tally: list[list[float]] = [[0, 0, 0.0] for _ in range(4)]
    _replay_plays(rules, view, hands, NO_EVIDENCE, judge, False, tally)
    return [(int(c), int(m), k) for c, m, k in tally]


def _replay_plays(
    rules: RuleSet,
    view: View,
    hands: tuple[int, int, int, int],
    ev: Evidence,
    judge: Callable[[State], int] | None,
    shrewd_judge: bool,
    tally: list[list[float]] | None = None,
    search_judge: Callable[[State, list[int]], int | None] | None = None,
    memo: dict[tuple[int, int], float] | None = None,
) -> tuple[State, float, list]:
    """The deal replayed from its start through every public play (see ``replay_world``);
    returns the state, the evidence weight and the melds not yet applied. With ``tally``
    (and ``judge``), counts each seat's plays against the judge's (see ``agreement``)."""
    me = view.seat
    weight = 1.0
    dealt = tuple(hands[s] | view.by_seat[s] for s in range(4))
    state = deal_state(
        rules, dealt, dealer=view.dealer, deal=view.deal, score=view.score,
        redeal=view.redeals,
    )  # fmt: skip
    while state.phase == REDEAL_PHASE:
        if state.to_move != me:
            weight *= ev.quiet  # it could have asked for a redeal and did not
        state = state.apply(KEEP)
    calls = iter(view.poule_calls)
    while state.phase == POULES_PHASE:
        _, action = next(calls, (None, None))
        if action is None:
            break
        if state.to_move != me and action != state.legal()[-1]:
            weight *= ev.quiet  # it held more complete suits than it announced
        state = state.apply(action)
    melds = list(view.melds)
    quiet_runs = rules.politaine == "first-card" and ev.quiet < 1.0
    carding = ev.carding < 1.0 and rules.low_lead == "off"
    tna = tna_apart(rules)
    twins_read = ev.twin_miss < 1.0 and rules.low_lead == "off"
    preference = min(ev.pref_high, ev.pref_low) < 1.0
    voids = [0, 0, 0, 0]
    memo = {} if memo is None else memo
    for index, (seat, action) in enumerate(view.plays):
        state, silent = _melds_before(state, melds, seat, me=me)
        weight *= ev.quiet**silent
        if state.to_move != seat:
            raise ReplayError(f"seat {seat} played out of turn in the replay")
        if tally is not None and judge is not None:
            _count(tally[seat], state, action, judge)
        elif seat != me:
            opponent = (seat ^ me) & 1
            modelled = ev.model & (2 if opponent else 1) and action < PLAY_LIMIT
            if modelled:
                key = (index, state.hand(seat))
                factor = memo.get(key)
                if factor is None:
                    factor = memo[key] = _model_factor(state, voids, action, ev)
                weight *= factor
            elif judge is not None and (ev.leads or state[3]):
                searched = None
                scope = ev.search_scope
                if (
                    search_judge is not None
                    and (not opponent or scope & 1)
                    and (not state[3] or scope & 2)
                ):
                    searched = search_judge(state, voids)
                if searched is not None:
                    guess = _class_card(state, seat, searched & 31, action & 31, rules, tna)
                elif shrewd_judge or (ev.partner_shrewd and not opponent):
                    guess = policy_action(state, voids, True)
                else:
                    guess = judge(state)
                if carding and not opponent and guess < PLAY_LIMIT:
                    guess = _carded_card(state, seat, guess & 31, tna)  # its card of the class
                if (guess ^ action) & 31:
                    weight *= ev.miss if opponent else ev.partner_miss
            if twins_read and opponent and action < PLAY_LIMIT:
                weight *= ev.twin_miss if _above_a_twin(state, seat, action & 31, tna) else 1.0
            if quiet_runs and not action & POLITAINE and _could_announce(state, seat, action):
                weight *= ev.quiet
            if carding and not opponent and action < PLAY_LIMIT:
                card = action & 31
                weight *= ev.carding if _carded_card(state, seat, card, tna) != card else 1.0
            if preference and not opponent and action < PLAY_LIMIT and state[3]:
                weight *= _preference_factor(state, seat, action & 31, ev)
        trick = state[3]
        if trick and action < PLAY_LIMIT and (action ^ trick[0]) & 24:
            voids[seat] |= SUIT_MASKS[trick[0] >> 3]
        state = state.apply(action)
    return state, weight, melds


def _model_factor(state: State, voids: list[int], action: int, ev: Evidence) -> float:
    """The weight the model gives ``action`` of the seat to move (1.0 where it had no choice).

    It reads only that seat's hand and the public record (the play's index in the deal fixes
    the record, ``voids`` included), which is what lets ``ModelMemo`` key it by the two."""
    cards = legal_cards(state)
    if len(cards) < 2:
        return 1.0
    chance = card_chances(state, voids, cards, ev.model_weights)[cards.index(action & 31)]
    return max(chance, MODEL_FLOOR) ** ev.model_power


def _class_card(state: State, seat: int, guess: int, card: int, rules: RuleSet, tna: bool) -> int:
    """``card`` if it is equivalent to ``guess`` in ``seat``'s hand (the search tries one card of
    each class and may name the other), else ``guess``."""
    if guess == card or guess >> 3 != card >> 3:
        return guess
    _, gone = table_and_gone(state)
    low = rules.low_lead != "off"
    same = len(distinct_cards([guess, card], state.hand(seat), gone, low, tna)) == 1
    return card if same else guess


def _above_a_twin(state: State, seat: int, card: int, tna: bool) -> bool:
    """``seat`` holds a weaker card equivalent to ``card`` (no low lead): it could have played
    that one to the same effect."""
    hand = state.hand(seat)
    suit = [c for c in range(card + 1, (card | 7) + 1) if hand >> c & 1]
    if not suit:
        return False
    _, gone = table_and_gone(state)
    return card not in distinct_cards([card, *suit], hand, gone, False, tna)


def _preference_factor(state: State, seat: int, card: int, ev: Evidence) -> float:
    """The weight of the deal given ``seat``'s card under the suit-preference convention."""
    hand = state.hand(seat)
    losing = message_cards(state[3], hand, card, ev.pref_scope)
    if len(losing) < 2:
        return 1.0
    table, gone = table_and_gone(state)
    return reading_factor(card, losing, hand, gone, table, ev.pref_high, ev.pref_low)


def _carded_card(state: State, seat: int, card: int, tna: bool) -> int:
    """The card of ``card``'s class (in ``seat``'s hand now) that the carding convention plays
    (``carding.py``): ``card`` itself unless ``seat`` breaks the convention by playing it."""
    table, gone = table_and_gone(state)
    return carded(card, state.hand(seat), gone, table, tna)


def table_and_gone(state: State) -> tuple[int, int]:
    """Masks of the cards of the trick in progress and of the deal's finished tricks."""
    table = 0
    for played in state[3]:
        table |= 1 << played
    dealt = state.dealt
    hands = state.hands
    gone = (dealt[0] | dealt[1] | dealt[2] | dealt[3]) & ~(
        hands[0] | hands[1] | hands[2] | hands[3] | table
    )
    return table, gone


def _count(tally: list[float], state: State, action: int, judge: Callable[[State], int]) -> None:
    """Add one play to a seat's ``agreement`` tally (if it had a choice of cards)."""
    choice = len({a & 31 for a in state.legal() if a < PLAY_LIMIT})
    if choice < 2 or action >= PLAY_LIMIT:
        return
    tally[0] += 1
    tally[1] += not (judge(state) ^ action) & 31
    tally[2] += 1 / choice


def _could_announce(state: State, seat: int, action: int) -> bool:
    """``seat`` plays T, 9 or A of a suit whose T-9-A it holds, with no run of its own under
    way: a player who says everything would have announced the politaine."""
    card = action & 31
    if card & 7 > 2:
        return False
    suit = TNA_MASKS[card >> 3]
    if state.hand(seat) & suit != suit:
        return False
    run = state.run
    return run is None or run[0] != seat


def _melds_before(
    state: State, melds: list, seat: int, finish: bool = True, me: int = -1
) -> tuple[State, int]:
    """Apply ``seat``'s melds said at this point, then ``done`` if the play came next.

    Also returns how many times a seat other than ``me`` said ``done`` with a meld in hand.
    """
    silent = 0
    while state.phase == MELD_PHASE and state.to_move == seat:
        number = len(state.tricks) + 1
        if melds and melds[0][0] == seat and melds[0][1] == number:
            state = state.apply(melds.pop(0)[2])
        elif finish:
            silent += seat != me
            state = state.apply(DONE)
        else:
            break
    return state, silent


class ModelMemo:
    """The model's factors read so far in one deal, keyed by (play index, the player's hand).

    Invariant: a factor depends only on the public record up to its play and the player's hand
    then (``_model_factor``), and a deal's record only grows, so a factor stays right for the
    whole deal; ``for_view`` starts afresh when the deal changes (or the memo grows past
    ``limit`` entries)."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self.deal: tuple | None = None
        self.factors: dict[tuple[int, int], float] = {}

    def for_view(self, view: View) -> dict[tuple[int, int], float]:
        deal = (view.deal, view.dealer, view.score, view.redeals)
        if deal != self.deal or len(self.factors) > self.limit:
            self.deal, self.factors = deal, {}
        return self.factors


class Worlds:
    """Builds the state of each sampled deal for one decision, with its likelihood weight.

    ``evidence`` weighs deals by how well they explain what the others did and did not say or
    play (see ``Evidence``); ``NO_EVIDENCE`` treats all alike.
    """

    def __init__(
        self,
        rules: RuleSet,
        view: View,
        decision: str,
        evidence: Evidence = NO_EVIDENCE,
        shrewd_judge: bool = False,
        search_judge: Callable[[State, list[int]], int | None] | None = None,
        memo: ModelMemo | None = None,
    ) -> None:
        self.memo = memo.for_view(view) if memo is not None and evidence.model else None
        self.shrewd_judge = shrewd_judge
        self.search_judge = search_judge
        self.rules = rules
        self.view = view
        self.decision = decision
        self.evidence = evidence
        # Before-play poules start a run on whether the winner holds the rest of T-9-A.
        self.replay_each = rules.politaine == "before-play" or evidence.any
        self._template: State | None = None

    def build(self, hands: tuple[int, int, int, int]) -> tuple[State, float]:
        if self.replay_each or self._template is None:
            ev = self.evidence
            judge = policy_action if min(ev.miss, ev.partner_miss) < 1.0 else None
            state, weight = replay_world(
                self.rules,
                self.view,
                hands,
                self.decision,
                judge,
                evidence=ev,
                shrewd_judge=self.shrewd_judge,
                search_judge=self.search_judge,
                memo=self.memo,
            )
            self._template = state
            return state, weight
        return self._template.with_hands(hands), 1.0
