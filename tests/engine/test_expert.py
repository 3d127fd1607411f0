"""The ``expert`` bot: legal and quick in every preset, replayable, and a sampler that never
contradicts what is public (and whose inferences the true deal always satisfies)."""

from __future__ import annotations

import hashlib
import json
import random
import time

import pytest

from engine.actions import CLAIM, SLIDE, TAP
from engine.bots import BUILTIN_BOTS, BotSeat, make_bot
from engine.bots.expert import (
    DEFAULT_WORLDS,
    MELD_EXACT,
    MELD_WORLDS,
    NATIVE_EXACT,
    NATIVE_MELD_WORLDS,
    NATIVE_WORLDS,
    ExpertBot,
    pooled,
)
from engine.bots.expert.carding import carded, twin_class
from engine.bots.expert.ending import deal_end, ends_deal, last_trick_end, last_trick_forced
from engine.bots.expert.fit import HIGH_LIFT, LOW_LIFT, OpponentFit, deal_agreement, lift, miss_for
from engine.bots.expert.native import library
from engine.bots.expert.policy import RACE_CLAIMS, RACE_FIRST, RACE_LEAD, RACE_MELDS, policy_action
from engine.bots.expert.prune import distinct_cards
from engine.bots.expert.sampler import Sampler
from engine.bots.expert.search import EXACT_CARDS
from engine.bots.expert.signals import master, named_suit
from engine.bots.expert.view import _weaker_twin, read_view
from engine.bots.expert.world import Evidence, ReplayError, replay_world
from engine.cards import SUIT_MASKS, TNA_MASKS, codes, mask_from_codes, parse_card
from engine.deck import seeded_hands
from engine.observe import observe
from engine.position import evolve
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for
from engine.state import State, new_match
from tests.engine.helpers import deal, run

PRESETS = ["quatre-sept", "politaine", "la-poule", "pollack"]
VARIANTS = [rules_for(p) for p in PRESETS] + [
    rules_for("quatre-sept", claim_out="any-turn", melds=True, signals=True),
    rules_for("la-poule", low_lead="first-trick", redeal=True),
    rules_for("pollack", politaine="before-play", claim_out="any-turn"),
]


def small_expert() -> ExpertBot:
    return ExpertBot(worlds=2, move_ms=50)


def test_registered():
    assert BUILTIN_BOTS["expert"] is ExpertBot
    assert make_bot("expert").name == "expert"


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.preset}-{r.changed_options()}")
def test_only_legal_actions_and_no_fallbacks(rules, capsys):
    for seed in range(2):
        seats = [
            BotSeat(small_expert() if s % 2 == seed % 2 else make_bot("random")) for s in range(4)
        ]
        if rules.target > 100:
            rules = rules.with_options(target=40)
        outcome = referee_match(rules, seats, seed=seed, match_id=f"x{seed}")
        assert outcome.replay["result"]["fault"] is None, outcome.replay["result"]
    # The bot prints to stderr only when a decision fell back to the first legal action.
    assert "expert:" not in capsys.readouterr().err


def test_full_budget_by_rule_set(monkeypatch):
    monkeypatch.delenv("EXPERT_WORLDS", raising=False)

    def budget(preset: str, **options) -> int:
        bot = ExpertBot(**options)
        bot.hello({"seat": 0, "rules": rules_for(preset).to_dict(), "match": "m"})
        return bot.max_worlds

    assert budget("quatre-sept", native=False) == DEFAULT_WORLDS == 88
    assert budget("pollack", native=False) == MELD_WORLDS == 64
    # The search in C spends the time of the Python search's 64 deals on 256 where melds count.
    assert budget("pollack") == (NATIVE_MELD_WORLDS if library() else MELD_WORLDS)
    # The search in C (rules without melds or claims) spends the same time on more deals.
    assert budget("quatre-sept") == (NATIVE_WORLDS if library() else DEFAULT_WORLDS)
    assert budget("quatre-sept", worlds=16) == 16
    assert budget("pollack", worlds=16) == 16  # a budget asked for is kept
    assert make_bot("expert-4").max_worlds == DEFAULT_WORLDS


def test_exact_solver_size_by_rule_set(monkeypatch):
    monkeypatch.delenv("EXPERT_EXACT", raising=False)
    monkeypatch.delenv("EXPERT_WORLDS", raising=False)

    def greet(bot: ExpertBot, preset: str) -> ExpertBot:
        bot.hello({"seat": 1, "rules": rules_for(preset).to_dict(), "match": "m"})
        return bot

    assert greet(ExpertBot(native=False), "quatre-sept").exact_cards == EXACT_CARDS == 12
    native = library() is not None
    assert greet(ExpertBot(), "la-poule").exact_cards == (NATIVE_EXACT if native else 12)
    assert greet(ExpertBot(), "pollack").exact_cards == MELD_EXACT == 4  # the last trick only
    assert greet(ExpertBot(exact=8), "pollack").exact_cards == 8  # a size asked for is kept
    # One bot greeted for a meld match, then a plain one, takes each rule set's own settings.
    bot = greet(greet(ExpertBot(native=False), "pollack"), "politaine")
    assert (bot.exact_cards, bot.max_worlds) == (EXACT_CARDS, DEFAULT_WORLDS)
    bot = greet(greet(ExpertBot(), "pollack"), "politaine")
    assert bot.max_worlds == (NATIVE_WORLDS if native else DEFAULT_WORLDS)


def test_the_partner_read_as_this_bot_where_melds_count(monkeypatch):
    monkeypatch.delenv("EXPERT_TWINS", raising=False)
    monkeypatch.delenv("EXPERT_PARTNER_JUDGE", raising=False)

    def reading(preset: str, **options) -> tuple[bool, bool]:
        bot = ExpertBot(**options)
        bot.hello({"seat": 0, "rules": rules_for(preset).to_dict(), "match": "m"})
        return bot.twins, bot.evidence.partner_shrewd

    assert reading("pollack") == (True, True)
    assert reading("quatre-sept") == reading("politaine") == (False, False)
    assert reading("pollack", twins=False, partner_judge=False) == (False, False)  # kept as asked
    assert reading("quatre-sept", twins=True) == (True, False)
    assert reading("pollack", carding=True) == (False, True)  # carding replaces twins
    # One bot greeted for a meld match, then a plain one, reads each rule set's own way.
    bot = ExpertBot()
    for preset, expected in (("pollack", True), ("quatre-sept", False)):
        bot.hello({"seat": 0, "rules": rules_for(preset).to_dict(), "match": "m"})
        assert bot.twins is expected and bot.evidence.partner_shrewd is expected


def test_deterministic_given_the_seed():
    rules = rules_for("quatre-sept", target=15)

    def replay() -> list:
        seats = [BotSeat(ExpertBot(worlds=4, move_ms=10_000)) for _ in range(4)]
        # A move clock far away: the time cap (0.3 of it) never binds, even on a loaded machine.
        clock = AnnouncedClock(move_ms=600_000, bank_ms=6_000_000)
        return referee_match(rules, seats, seed=11, match_id="same", clock=clock).replay["deals"]

    assert replay() == replay()


def test_waiting_for_a_core_costs_the_expert_no_deals(monkeypatch):
    """The expert's time cap counts its own CPU time, as the referee charges a seat: a decision
    kept off the CPU (here: asleep 10 ms at each evaluation, one per candidate and deal) searches
    every deal of its budget, where a wall-clock cap of 120 ms would have cut it short."""
    import engine.bots.expert as expert
    import engine.bots.expert.search as search

    real_value, real_pimc = search.Evaluator.value, expert.pimc
    used = []

    def asleep(self, world, action):
        time.sleep(0.01)
        return real_value(self, world, action)

    def counted(*args, **kwargs):
        result = real_pimc(*args, **kwargs)
        used.append(result[2])
        return result

    monkeypatch.setattr(search.Evaluator, "value", asleep)
    monkeypatch.setattr(expert, "pimc", counted)
    # (The Python search: the C one evaluates a deal's candidates in one call, not patched here.)
    seats = [BotSeat(ExpertBot(worlds=12, move_ms=10_000, adaptive=False, native=False))] + [
        BotSeat(make_bot("greedy")) for _ in range(3)
    ]
    clock = AnnouncedClock(move_ms=400, bank_ms=600_000)  # the expert's cap: 120 ms a decision
    referee_match(rules_for("quatre-sept", target=4), seats, seed=3, match_id="asleep", clock=clock)
    assert len(used) >= 5 and set(used) == {12}


#: Digests of three matches per preset (seeds 5 and 6 at the full expert's settings, seed 7 at
#: the lower levels': careful rollouts, no stopping rule; 6 deals a decision, against
#: ``tracker``), taken before the search was made faster. Work on speed must leave them as
#: they are; a change meant to change play records them again (``_pinned_digest``).
PINNED_PLAY = {
    "quatre-sept": "b76c88826f8a87f4",
    "politaine": "29f27f1d11e53f58",
    "la-poule": "232bfa883e4395d6",
    # round 16: the partner read as this bot (twins and the shrewd judge) where melds count;
    # round 25: the others' cards read by the card model there (``model.py``)
    "pollack": "9f5563ac65d9bb06",
}


def _pinned_digest(preset: str) -> str:
    rules = rules_for(preset)
    rules = rules.with_options(target=40) if rules.target > 100 else rules
    digest = hashlib.sha256()
    for seed, options in ((5, {}), (6, {}), (7, {"shrewd": False, "adaptive": False})):
        seats = [
            BotSeat(
                make_bot("tracker") if s % 2 else ExpertBot(worlds=6, move_ms=10_000, **options)
            )
            for s in range(4)
        ]
        clock = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)  # no time cap binds
        outcome = referee_match(rules, seats, seed=seed, match_id="pinned", clock=clock)
        digest.update(json.dumps(outcome.replay["deals"], sort_keys=True).encode())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("preset", PRESETS)
def test_play_is_pinned(preset):
    assert _pinned_digest(preset) == PINNED_PLAY[preset]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.preset}-{r.changed_options()}")
def test_the_deal_end_read_off_its_last_card_is_the_engines(rules):
    rules = rules.with_options(target=25) if rules.target > 100 else rules
    rng = random.Random(3)
    kinds = set()
    needed = {"next deal", "target"}  # and an instant win in the next deal's cards:
    if rules.four_sevens or rules.four_eights:
        needed.add("four-sevens" if rules.four_sevens else "four-eights")
    for seed in range(1000):
        state = new_match(rules, seed)
        while not state.is_over:
            legal = state.legal()
            if state.decision == "play":
                if last_trick_forced(state):  # the rest played out by the engine
                    after = state
                    while after.deal == state.deal and not after.is_over:
                        after = after.apply(after.legal()[0])
                    over, winner, score = last_trick_end(state)
                    assert over == after.is_over
                    if over:
                        assert (winner, score) == (after.result.winner, after.result.score)
                    else:
                        assert score == after.score
                for card in legal:
                    if ends_deal(state, card):
                        after = state.apply(card)
                        over, winner, score = deal_end(state, card)
                        assert over == after.is_over
                        if over:
                            assert (winner, score) == (after.result.winner, after.result.score)
                        else:
                            assert score == after.score and after.deal == state.deal + 1
                        kinds.add(after.result.reason if over else "next deal")
            moves = [a for a in legal if a != CLAIM] or legal  # a random claim ends it all
            state = state.apply(moves[rng.randrange(len(moves))])
        if needed <= kinds:
            break
    assert needed <= kinds


def _random_positions(rules, count: int, seed: int):
    """Positions reached by random play, each with the seat to move."""
    rng = random.Random(seed)
    found = 0
    match = 0
    while found < count:
        state = new_match(rules, seed * 1000 + match)
        match += 1
        while not state.is_over and found < count:
            if state.decision == "play" and rng.random() < 0.3:
                found += 1
                yield state
            legal = state.legal()
            state = state.apply(legal[rng.randrange(len(legal))])


def _public_voids(state: State) -> list[int]:
    """Suits each seat failed to follow, read straight from the tricks."""
    voids = [0, 0, 0, 0]
    tricks = [(t.leader, t.cards) for t in state.tricks] + [(state.leader, state.trick)]
    for leader, cards in tricks:
        for i, card in enumerate(cards):
            if card >> 3 != cards[0] >> 3:
                voids[(leader + i) & 3] |= SUIT_MASKS[cards[0] >> 3]
    return voids


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.preset}-{r.changed_options()}")
def test_sampler_respects_public_facts(rules):
    rng = random.Random(5)
    for state in _random_positions(rules, 25, 7):
        seat = state.to_move
        message = observe(state, seat)
        # Random play signals at random: the convention's facts are tested with honest players.
        message["said"] = [s for s in message["said"] if s["say"] not in ("tap", "slide")]
        view = read_view(message, rules.low_lead)
        truth = state.hands
        for s in range(4):  # every inference holds in the true deal
            assert truth[s] & view.forbidden[s] == 0
            assert truth[s] & view.required[s] == view.required[s]
        voids = _public_voids(state)
        sampler = Sampler(view, rules, rng)
        for _ in range(10):
            hands = sampler.draw()
            assert hands[seat] == truth[seat]
            assert hands[0] | hands[1] | hands[2] | hands[3] == view.hand | view.unknown
            for s in range(4):
                assert hands[s].bit_count() == truth[s].bit_count()
                assert hands[s] & voids[s] == 0
                assert hands[s] & view.required[s] == view.required[s]
                dealt = hands[s] | view.by_seat[s]
                assert sum(dealt & m == m for m in TNA_MASKS) >= view.poules[s]
        world, _ = replay_world(rules, view, truth, "play")
        assert world[:4] == state[:4]
        assert world.taken == state.taken and world.run == state.run and world.low == state.low
        assert world.bonus == state.bonus and world.melds == state.melds
        assert world.legal() == state.legal()


def test_claims_only_when_sure():
    rules = rules_for("pollack")
    claims = 0
    for seed in range(12):
        seats = [BotSeat(small_expert() if s % 2 == 0 else make_bot("greedy")) for s in range(4)]
        outcome = referee_match(rules, seats, seed=seed, match_id=f"c{seed}")
        result = outcome.replay["result"]
        said = [x for d in outcome.replay["deals"] for x in d["said"] if x["say"] == "claim"]
        for claim in said:
            if claim["seat"] % 2 == 0:
                claims += 1
                assert result["winner"] == 0
    assert claims > 0


def test_signals_follow_the_convention_and_read_true():
    """An expert pair signals (politaine preset) and every fact read from a partner's signal
    holds in the true deal."""
    rules = rules_for("politaine", target=20)
    bots = [ExpertBot(worlds=2, move_ms=10_000) for _ in range(4)]
    for seat, bot in enumerate(bots):
        bot.hello({"type": "hello", "seat": seat, "rules": rules.to_dict(), "match": "sig"})
    signals = checked = 0
    state = new_match(rules, 21)
    while not state.is_over:
        seat = state.to_move
        message = {
            "type": "turn", "id": 1, "decision": state.decision,
            "state": observe(state, seat), "legal": state.legal_strings(),
        }  # fmt: skip
        if state.decision == "play":
            view = read_view(message["state"], rules.low_lead)
            partner = (seat + 2) & 3
            truth = state.hands
            assert truth[partner] & view.required[partner] == view.required[partner]
            checked += bool(view.required[partner])
        action = bots[seat].act(message)
        assert action in message["legal"]
        if action.endswith((" tap", " slide")):
            signals += 1
            card = parse_card(action[5:7])
            flag = TAP if action.endswith("tap") else SLIDE
            left = state.hands[seat] & ~(1 << card)
            out = (truth[0] | truth[1] | truth[2] | truth[3]) & ~(1 << card)
            assert left >> master(named_suit(flag, card), out) & 1  # true when made
        state = state.step(action)
    assert signals > 0 and checked > 0


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.preset}-{r.changed_options()}")
def test_silences_never_count_against_the_true_deal_of_players_who_say_everything(rules):
    """``greedy`` melds, announces and asks for every redeal it may: the true deal is never
    down-weighted by the silence evidence, while deals it contradicts are."""
    rng = random.Random(3)
    bots = [make_bot("greedy") for _ in range(4)]
    evidence = Evidence(quiet=0.1)
    seen = penalised = 0
    for seed in range(4):
        for seat, bot in enumerate(bots):
            bot.hello({"type": "hello", "seat": seat, "rules": rules.to_dict(), "match": "q"})
        state = new_match(rules, seed)
        while not state.is_over and state.deal < 3:
            seat = state.to_move
            message = {
                "type": "turn", "id": 1, "decision": state.decision,
                "state": observe(state, seat), "legal": state.legal_strings(),
            }  # fmt: skip
            if state.decision == "play" and rng.random() < 0.2:
                view = read_view(message["state"], rules.low_lead)
                _, weight = replay_world(rules, view, state.hands, "play", evidence=evidence)
                assert weight == 1.0
                seen += 1
                sampler = Sampler(view, rules, rng)
                for _ in range(5):
                    try:
                        _, w = replay_world(rules, view, sampler.draw(), "play", evidence=evidence)
                    except ReplayError:
                        continue
                    penalised += w < 1.0
            state = state.step(bots[seat].act(message))
    assert seen > 0
    if rules.melds or rules.politaine != "off" or rules.redeal:
        assert penalised > 0


def test_t_9_a_stay_apart_from_the_k_where_politaines_count():
    cards = [parse_card(c) for c in ("TS", "9S", "KS")]
    hand = mask_from_codes(["TS", "9S", "KS", "7C"])
    gone = mask_from_codes(["AS"])  # the ace led first: T, 9 and K now touch
    assert distinct_cards(cards, hand, gone, False, False) == [parse_card("KS")]
    assert sorted(distinct_cards(cards, hand, gone, False, True)) == sorted(cards)


def test_shrewd_policy_goes_on_with_its_own_run():
    # Seat 1 holds T-9-A of hearts and diamonds and took trick 1 with TH, announced.
    hands = [
        "KH QH TC 9C AC KC QC JC",
        "TH 9H AH JH 8H TD 9D AD",
        "7H KD QD JD 8D 7D 8C 7C",
        "TS 9S AS KS QS JS 8S 7S",
    ]
    state = run(deal(rules_for("quatre-sept"), hands), "KH TH/politaine 7H 7S")
    assert state.to_move == 1 and state.run is not None
    assert policy_action(state, [0, 0, 0, 0], True) & 31 == parse_card("AH")


def _hands(text: str) -> list[str]:
    """Four hands written on one line, seat by seat, split by `` / ``."""
    return text.split(" / ")


def _shrewd_card(state: State, race: int = 0) -> str:
    """The shrewd policy's card with no public voids, as its code (``"KS"``)."""
    return codes(1 << (policy_action(state, [0, 0, 0, 0], True, race=race) & 31))[0]


def _after_the_queen_of_spades(hands: list[str], preset: str = "pollack") -> State:
    """Seat 0 has led QS, worth a third; seat 1, to follow, holds KS and 7S."""
    state = run(deal(rules_for(preset), hands), "QS")
    assert state.to_move == 1
    return state


def test_racing_rollouts_contest_a_trick_that_lets_them_meld_but_keep_the_meld():
    # Seat 1 holds three aces, which it may meld only once its team has won a trick.
    hands = _hands("QS 7C 8C JC QC KC 8D 7D / AH AD AC KS 7S 8H 7H JH"
                   " / TS 9S AS JS 8S TC 9C 9D / TD KD QD JD TH 9H KH QH")
    state = _after_the_queen_of_spades(hands)
    assert _shrewd_card(state) == "7S"
    assert _shrewd_card(state, RACE_MELDS) == "KS"
    assert _shrewd_card(state, RACE_CLAIMS) == "7S"
    # With the fourth ace its only winner belongs to the meld: it keeps it.
    hands[1], hands[2] = "AH AD AC AS 7S 8H 7H JH", "TS 9S KS JS 8S TC 9C 9D"
    assert _shrewd_card(_after_the_queen_of_spades(hands), RACE_MELDS) == "7S"


def test_racing_rollouts_contest_an_opponents_trick_until_their_team_has_won_one():
    # Seat 1 holds no meld; its team has won no trick, so its partner could not meld yet.
    hands = _hands("QS 7C 8C JC QC AC 8D 7D / AH AD KC KS 7S 8H 7H JH"
                   " / TS 9S AS JS 8S TC 9C 9D / TD KD QD JD TH 9H KH QH")
    state = _after_the_queen_of_spades(hands)
    assert _shrewd_card(state) == "7S"
    assert _shrewd_card(state, RACE_MELDS) == "7S"
    assert _shrewd_card(state, RACE_FIRST) == "KS"
    # Once its team has won a trick, a trick worth a third is not worth the king.
    assert _shrewd_card(evolve(state, won=(False, True)), RACE_FIRST) == "7S"
    # Where melds do not count, the first trick opens nothing.
    assert _shrewd_card(_after_the_queen_of_spades(hands, "quatre-sept"), RACE_FIRST) == "7S"


def test_racing_rollouts_contest_a_trick_that_lets_them_claim():
    hands = _hands("KC 7S 8S JS QS KS 8D 7D / AC 7C 8H 7H JH QH KH 9H"
                   " / TC 9C QC JC 8C TS 9D AH / 9S AS TD AD KD QD JD TH")
    # Seat 1's team has 20 of 21: the ace's point on the king's third takes it to 21.
    state = run(deal(rules_for("pollack"), hands, score=(0, 20)), "KC")
    assert _shrewd_card(state) == "7C"
    assert _shrewd_card(state, RACE_CLAIMS) == "AC"
    assert _shrewd_card(state, RACE_MELDS) == "7C"
    # 19 of 21: winning would not claim, so the ace is not thrown in.
    state = run(deal(rules_for("pollack"), hands, score=(0, 19)), "KC")
    assert _shrewd_card(state, RACE_CLAIMS) == "7C"


def test_racing_rollouts_lead_to_keep_the_lead_from_opponents_who_would_claim():
    hands = _hands("TC 9C JC 8C 7C TD KD QD / KC QC 8D 7D JH 8H 7S 8S"
                   " / AC AD 9D JD TH 9H KH QH / AH 7H TS 9S AS KS QS JS")
    state = deal(rules_for("pollack"), hands, dealer=0, score=(18, 0))
    assert state.to_move == 1
    # Seat 1 holds no master; the king of clubs has the fewest stronger cards out.
    assert _shrewd_card(state, RACE_LEAD) != "KC"
    state = evolve(state, melds=(3, 0))  # the opponents' count reaches 21: they would claim
    assert _shrewd_card(state) != "KC"
    assert _shrewd_card(state, RACE_LEAD) == "KC"


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: f"{r.preset}-{r.changed_options()}")
def test_every_finished_deal_replays_from_its_deal_end(rules):
    """``fit.py`` reads each ``deal_end`` back into the deal, every hand known: the replay
    reaches the deal's end in every rule set, and ``greedy`` (whose rules are the judge's)
    agrees with the judge far more often than ``random`` does."""
    rules = rules.with_options(target=40) if rules.target > 100 else rules
    if rules.claim_out.value == "any-turn":  # ``random`` would end most deals at once by a claim
        rules = rules.with_options(claim_out="off")
    tally = [[0.0, 0.0, 0.0] for _ in range(4)]
    for seed in range(4, 6):
        seats = [BotSeat(make_bot("greedy" if s % 2 else "random")) for s in range(4)]
        outcome = referee_match(rules, seats, seed=seed, match_id="fit")
        totals = (0, 0)
        for deal_body in outcome.replay["deals"]:
            for seat, counts in enumerate(deal_agreement(rules, deal_body, totals)):
                tally[seat] = [a + b for a, b in zip(tally[seat], counts, strict=True)]
            totals = (deal_body["score"][0], deal_body["score"][1])
    assert min(tally[s][0] for s in range(4)) > 10, tally
    greedy = lift(*[tally[1][i] + tally[3][i] for i in range(3)])
    random_ = lift(*[tally[0][i] + tally[2][i] for i in range(3)])
    assert greedy > 0.8 and random_ < 0.2, (greedy, random_)


def test_card_play_is_read_only_from_opponents_the_judge_predicts():
    """With ``fit`` on, the miss factor starts at the default and keeps it against a player the
    judge predicts (``greedy``), and goes to 1.0 (no evidence) against ``random``."""

    def fitted(opponent: str) -> float:
        bots = [ExpertBot(worlds=2, move_ms=10_000, fit=True) for _ in range(2)]
        seats = [BotSeat(bots[s // 2] if s % 2 == 0 else make_bot(opponent)) for s in range(4)]
        referee_match(rules_for("quatre-sept"), seats, seed=2, match_id="fit")
        assert bots[0].fit is not None and bots[0].fit.plays > 40
        return bots[0].evidence.miss

    assert fitted("greedy") == 0.3 and fitted("random") == 1.0
    assert OpponentFit(0.3).miss == 0.3
    assert miss_for(HIGH_LIFT, 0.3) == 0.3 and miss_for(LOW_LIFT, 0.3) == 1.0
    assert 0.3 < miss_for((HIGH_LIFT + LOW_LIFT) / 2, 0.3) < 1.0
    assert lift(10, 10, 2.5) == 1.0 and lift(10, 2.5, 2.5) == 0.0


def test_the_partners_card_says_it_held_no_weaker_twin():
    """The expert plays the weakest of equivalent cards, so its partner reads the next weaker
    card of the same worth still out as not in its hand; T, 9 and A only where nothing keeps
    them apart (``tna`` off), and nothing under the low lead."""
    c = parse_card
    assert _weaker_twin(c("KC"), 0, False, False) == 1 << c("QC")
    assert _weaker_twin(c("KC"), 1 << c("QC"), False, False) == 1 << c(
        "JC"
    )  # Q gone: K and J touch
    assert _weaker_twin(c("KC"), mask_from_codes(["QC", "JC"]), False, False) == 0  # 8C worth less
    assert _weaker_twin(c("TC"), 0, False, False) == 1 << c("9C")
    assert (
        _weaker_twin(c("TC"), 0, False, True) == 0
    )  # T and 9 apart where melds or politaines count
    assert _weaker_twin(c("9C"), 0, False, False) == 0  # the ace is worth more
    assert _weaker_twin(c("7C"), 0, False, False) == 0
    hands = [
        "JS 7C 8D 9D AD KD QD 7D",
        "JC TH 9H AH KH QH JH 7H",
        "KC 8C TS 9S AS KS 8S 7S",
        "TC 9C AC QC TD JD 8H QS",
    ]
    state = run(deal("quatre-sept", hands), "7C JC KC 9C")  # seat 2's K: so no QC
    message = observe(state, 0)
    assert read_view(message, "off", twins=True, tna=True).forbidden[2] & mask_from_codes(["QC"])
    assert not read_view(message, "off", tna=True).forbidden[2] & mask_from_codes(["QC"])
    assert not read_view(message, "every-trick", twins=True, tna=True).forbidden[
        2
    ] & mask_from_codes(["QC"])


@pytest.mark.parametrize("preset", ["quatre-sept", "pollack"])
def test_the_true_deal_keeps_every_twin_fact_in_expert_play(preset):
    """Four experts reading their partners' cards as their own: the partner's true hand never
    holds a card read as not held."""
    checked = []

    class Checked(ExpertBot):
        def known(self, view):
            partner = (view.seat + 2) % 4
            dealt = seeded_hands(7, view.deal, view.redeals, view.dealer)
            checked.append(dealt[partner] & ~view.by_seat[partner] & view.forbidden[partner])
            return view

    seats = [BotSeat(Checked(worlds=2, move_ms=10_000, twins=True)) for _ in range(4)]
    rules = rules_for(preset)
    referee_match(rules, seats, seed=7, match_id="twins")
    assert len(checked) > 40 and not any(checked)


def test_an_opponents_card_above_a_twin_it_held_weighs_its_deal_down():
    """``twin_miss``: seat 1 (an opponent of seat 2) played the KC; a deal that gives it the QC
    (worth the same, nothing between) says it played above a twin, one that does not says
    nothing; the partner's cards are not read this way."""
    hands = [
        "7C JS 8D 9D AD KD QD 7D",
        "KC QC TH 9H AH KH QH JH",
        "JC 8C TS 9S AS KS 8S 7S",
        "TC 9C AC 7H TD JD 8H QS",
    ]
    ev = Evidence(twin_miss=0.25)
    for preset in ("quatre-sept", "pollack"):
        rules = rules_for(preset)
        state = run(deal(rules, hands), "7C KC")
        view = read_view(observe(state, 2), rules.low_lead)
        held = state.hands
        assert replay_world(rules, view, held, "play", evidence=ev)[1] == 0.25
        assert replay_world(rules, view, held, "play")[1] == 1.0  # off by default
        qc, js = 1 << parse_card("QC"), 1 << parse_card("JS")
        moved = (held[0] & ~js | qc, held[1] & ~qc | js, held[2], held[3])
        assert replay_world(rules, view, moved, "play", evidence=ev)[1] == 1.0
    partner = rules_for("quatre-sept")  # seen from seat 3, the KC is its partner's
    state = run(deal(partner, hands), "7C KC JC")
    view = read_view(observe(state, 3), partner.low_lead)
    assert replay_world(partner, view, state.hands, "play", evidence=ev)[1] == 1.0


def test_the_carding_convention_plays_the_strongest_twin_only_with_the_master():
    """K and Q of clubs are equivalent; with the T of clubs in hand (the master) the K goes,
    with the T out the Q goes; T, 9 and A stay apart where ``tna``; a gone card joins twins."""
    c = parse_card
    codes = mask_from_codes
    assert twin_class(c("QC"), codes(["TC", "KC", "QC"]), 0, True) == [c("KC"), c("QC")]
    assert carded(c("QC"), codes(["TC", "KC", "QC"]), 0, 0, True) == c("KC")
    assert carded(c("QC"), codes(["KC", "QC", "8H"]), 0, 0, True) == c("QC")
    assert carded(c("QC"), codes(["KC", "QC"]), codes(["TC", "9C", "AC"]), 0, True) == c("KC")
    assert twin_class(c("9C"), codes(["TC", "9C"]), 0, True) == [c("9C")]
    assert twin_class(c("JC"), codes(["KC", "JC"]), codes(["QC"]), True) == [c("KC"), c("JC")]
    assert twin_class(c("JC"), codes(["KC", "JC"]), 0, True) == [c("JC")]  # the QC is out


@pytest.mark.parametrize("preset", ["quatre-sept", "pollack"])
def test_the_true_deal_never_breaks_the_carding_convention_in_expert_play(preset):
    """Four experts playing the carding convention: at every decision, the true deal explains
    each of the partner's cards by the convention (no carding weight lost), and some plays
    carried the message (a strongest twin played)."""
    weights = []
    rules = rules_for(preset)

    class Checked(ExpertBot):
        def known(self, view):
            dealt = seeded_hands(seed, view.deal, view.redeals, view.dealer)
            hands = tuple(dealt[s] & ~view.by_seat[s] for s in range(4))
            ev = Evidence(carding=0.5)
            weights.append(replay_world(rules, view, hands, "play", None, evidence=ev)[1])
            return view

        def _carded(self, action, hand, gone, table, tna):
            carded_action = super()._carded(action, hand, gone, table, tna)
            strongest.append(carded_action != action)
            return carded_action

    strongest: list[bool] = []
    for seed in (7, 8, 9):  # until a match carries the message (``known`` reads this seed)
        seats = [BotSeat(Checked(worlds=2, move_ms=10_000, carding=True)) for _ in range(4)]
        referee_match(rules, seats, seed=seed, match_id="carding")
        if any(strongest):
            break
    assert len(weights) > 40 and set(weights) == {1.0}
    assert any(strongest)
    # The same weight check sees a broken convention: a deal where the partner held a twin it
    # did not card by.
    hands = [
        "KC QC TC 8D TD 9D AD KD",
        "7C TH 9H AH KH QH JH 8H",
        "7H 7S 8S JS QS KS QD JD",
        "JC 9C AC 8C 7D TS 9S AS",
    ]
    main = rules_for("quatre-sept")
    state = run(deal(main, hands), "QC 7C")  # seat 0 held the TC: the KC was its card
    view = read_view(observe(state, 2), main.low_lead)
    weight = replay_world(main, view, state.hands, "play", None, evidence=Evidence(carding=0.5))
    assert weight[1] == 0.5
    # Carded right (the KC), the card agrees with a judge that would play the weaker twin.
    state = run(deal(main, hands), "KC 7C")
    view = read_view(observe(state, 2), main.low_lead)

    def weaker_twin(_state: State) -> int:
        return parse_card("QC")

    for carding, weight in ((0.5, 1.0), (1.0, 0.5)):
        ev = Evidence(partner_miss=0.5, carding=carding)
        assert replay_world(main, view, state.hands, "play", weaker_twin, evidence=ev)[1] == weight


def test_a_pooled_draw_picks_by_weight_and_weighs_the_pools_mean():
    """Of K sampled deals one is searched, with chance proportional to its evidence weight, and
    it weighs the mean of the K weights (so the weighted mean over picks is the estimate the
    K deals would have given)."""

    class Counter:
        def __init__(self, weights):
            self.weights, self.next = weights, 0

        def draw(self):
            self.next += 1
            return (self.next - 1) % len(self.weights)

        def build(self, index):
            return f"deal {index}", self.weights[index]

    rng = random.Random(3)
    one = Counter([0.0, 0.0, 1.0, 0.0])
    assert [pooled(one, one, 4, rng) for _ in range(5)] == [("deal 2", 0.25)] * 5
    none = Counter([0.0, 0.0])
    assert pooled(none, none, 2, rng) == ("deal 0", 0.0)
    skew = Counter([1.0, 3.0])
    picks = [pooled(skew, skew, 2, rng)[0] for _ in range(4000)]
    assert 0.72 < picks.count("deal 1") / 4000 < 0.78


def _seat_0_sees(hands: list[str], plays: str):
    """The ``quatre-sept`` deal of ``hands`` after ``plays``: rules, state, seat 0's view."""
    rules = rules_for("quatre-sept")
    state = run(deal(rules, hands), plays)
    return rules, state, read_view(observe(state, 0), "off")


def test_the_partners_discard_is_judged_by_its_own_policy_with_partner_judge():
    """Seat 2, void in clubs, throws 7S from its longest suit (the shrewd policy's spare card)
    where ``greedy``'s rules throw 7H: judged by ``greedy`` the true deal loses weight, judged
    by the partner's own policy it keeps it."""
    hands = [
        "KC QC JC 8C TD 9D AD KD",
        "7C TH 9H AH KH QH JH 8H",
        "7H 7S 8S JS QS KS QD JD",
        "TC 9C AC 8D 7D TS 9S AS",
    ]
    rules, state, view = _seat_0_sees(hands, "KC 7C 7S TC TS")

    def weight(evidence: Evidence) -> float:
        return replay_world(rules, view, state.hands, "play", policy_action, evidence=evidence)[1]

    assert weight(Evidence(partner_miss=0.5)) == 0.5
    assert weight(Evidence(partner_miss=0.5, partner_shrewd=True)) == 1.0


def test_the_partners_lead_is_judged_by_its_search_up_to_equivalent_cards():
    """With ``partner_search`` the partner's lead is judged by a search of its own, which tries
    one card of each class of equivalent cards: naming the QS where the partner led the KS
    (nothing between them out) agrees; naming the AS does not and costs ``partner_miss``."""
    hands = [
        "7C 8C 7D 8D 7H 8H JS 8S",
        "9C QC JD QD JH QH TS 9S",
        "TC KC KS QS 7S AS 9D KD",
        "AC JC TD AD TH 9H AH KH",
    ]
    rules, state, view = _seat_0_sees(hands, "7C QC TC JC KS AC")
    asked = []

    def follows(st: State) -> int:
        return parse_card("TC") if st.to_move == 2 else parse_card("QC")

    def weight(named: str) -> float:
        def judge(st: State, voids: list[int]) -> int:
            asked.append(st.to_move)
            return parse_card(named)

        ev = Evidence(partner_miss=0.5, partner_search=8)
        return replay_world(
            rules, view, state.hands, "play", follows, evidence=ev, search_judge=judge
        )[1]

    assert weight("QS") == 1.0
    assert weight("AS") == 0.5
    assert asked == [2, 2]  # only the partner's lead
