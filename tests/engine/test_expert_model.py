"""The model of the expert's card play (``engine/bots/expert/model.py``) and its reading."""

from __future__ import annotations

import math
import random

from engine.actions import CLAIM
from engine.bots import BotSeat, make_bot
from engine.bots.expert import MELD_MODEL, MELD_MODEL_POWER, ExpertBot
from engine.bots.expert.model import (
    FEATURES,
    MELD_WEIGHTS,
    PLAIN_WEIGHTS,
    card_chances,
    card_features,
    card_scores,
    legal_cards,
    weights_for,
)
from engine.bots.expert.sampler import Sampler
from engine.bots.expert.view import read_view
from engine.bots.expert.world import MODEL_FLOOR, Evidence, ModelMemo, replay_world
from engine.observe import observe
from engine.referee import AnnouncedClock, referee_match
from engine.rules import rules_for
from engine.state import new_match
from tests.engine.test_expert import _public_voids, _random_positions

POLLACK = rules_for("pollack")


def test_chances_are_a_distribution_over_the_legal_cards():
    for state in _random_positions(POLLACK, 40, 3):
        cards = legal_cards(state)
        chances = card_chances(state, _public_voids(state), cards)
        assert len(chances) == len(cards)
        assert math.isclose(sum(chances), 1.0)
        assert all(0.0 < c <= 1.0 for c in chances)
        rows = card_features(state, _public_voids(state), cards)
        assert all(len(row) == len(FEATURES) for row in rows)


def test_the_scores_are_the_weighted_feature_rows_bit_for_bit():
    """``card_scores`` (the hot path) adds what summing each ``card_features`` row times the
    weights adds, in the same order, so the deals' weights and the expert's play are unchanged;
    random weights too, so that no feature's weight of 0 hides a feature read wrong."""
    rng = random.Random(5)
    weight_sets = [*MELD_WEIGHTS, *PLAIN_WEIGHTS]
    weight_sets += [tuple(rng.uniform(-3, 3) for _ in FEATURES) for _ in range(4)]
    compared = 0
    for preset in ("pollack", "quatre-sept", "la-poule"):
        for state in _random_positions(rules_for(preset), 40, 11):
            voids, cards = _public_voids(state), legal_cards(state)
            rows = card_features(state, voids, cards)
            for w in weight_sets:
                want = [sum(a * b for a, b in zip(row, w, strict=True)) for row in rows]
                assert card_scores(state, voids, cards, w) == want
                compared += len(cards)
    assert compared > 1000


def test_each_kind_of_rule_set_has_weights_of_its_own_and_the_expert_reads_by_its_rules():
    """Weights fitted where melds count and where they do not; the two sets give other chances
    in some positions, and a greeted expert keeps the set of the rules it was greeted with."""
    assert weights_for(True) is MELD_WEIGHTS and weights_for(False) is PLAIN_WEIGHTS
    for weights in (MELD_WEIGHTS, PLAIN_WEIGHTS):
        assert [len(w) for w in weights] == [len(FEATURES), len(FEATURES)]
    quatre_sept = rules_for("quatre-sept")
    differ = 0
    for state in _random_positions(quatre_sept, 20, 7):
        voids, cards = _public_voids(state), legal_cards(state)
        plain = card_chances(state, voids, cards, PLAIN_WEIGHTS)
        assert math.isclose(sum(plain), 1.0)
        differ += plain != card_chances(state, voids, cards, MELD_WEIGHTS)
    assert differ
    bot = ExpertBot()
    for preset, weights in (("pollack", MELD_WEIGHTS), ("quatre-sept", PLAIN_WEIGHTS)):
        bot.hello({"seat": 0, "rules": rules_for(preset).to_dict(), "match": "m"})
        assert bot.evidence.model_weights is weights


def test_the_features_read_only_the_players_own_hand_and_the_public_record():
    """Deal the cards the seat to move cannot see among the others in any way: the chances of
    its cards stay the same, so a sampled deal's hidden hands leak nothing into the reading."""
    rng = random.Random(11)
    for state in _random_positions(POLLACK, 30, 5):
        seat = state.to_move
        voids = _public_voids(state)
        before = card_chances(state, voids, legal_cards(state))
        hands = list(state.hands)
        others = [s for s in range(4) if s != seat]
        hidden = [c for s in others for c in range(32) if hands[s] >> c & 1]
        rng.shuffle(hidden)
        for s in others:
            size = hands[s].bit_count()
            hands[s] = sum(1 << c for c in hidden[:size])
            hidden = hidden[size:]
        moved = state.with_hands(tuple(hands))
        assert card_chances(moved, voids, legal_cards(moved)) == before


def test_the_model_reading_weighs_deals_by_the_partners_card_and_never_below_the_floor():
    rng = random.Random(4)
    seen = differ = 0
    for state in _random_positions(POLLACK, 30, 9):
        seat = state.to_move
        message = observe(state, seat)
        view = read_view(message, POLLACK.low_lead)
        partner_played = any(s == (seat ^ 2) for s, _ in view.plays)
        sampler = Sampler(view, POLLACK, rng)
        weights = set()
        for _ in range(8):
            _, weight = replay_world(
                POLLACK, view, sampler.draw(), "play", evidence=Evidence(model=1)
            )
            assert weight >= MODEL_FLOOR ** len(view.plays)
            assert weight <= 1.0
            weights.add(weight)
        seen += partner_played
        differ += partner_played and len(weights) > 1
        if not partner_played:
            assert weights == {1.0}
    assert seen and differ


def test_the_memo_of_a_deal_gives_every_weight_the_reading_gives_afresh():
    """Over whole matches, one ``ModelMemo`` shared by every decision of seat 0 weighs each
    sampled deal exactly as reading it afresh does, reuses factors across decisions, and
    starts afresh with each deal."""
    rng = random.Random(8)
    evidence = Evidence(model=3, model_power=0.5)
    compared = reused = 0
    for seed in range(3):
        state, memo = new_match(POLLACK, 40 + seed), ModelMemo()
        while not state.is_over:
            if state.decision == "play" and state.to_move == 0:
                view = read_view(observe(state, 0), POLLACK.low_lead)
                factors = memo.for_view(view)
                assert all(index < len(view.plays) for index, _ in factors)
                known = len(factors)
                sampler = Sampler(view, POLLACK, rng)
                for _ in range(6):
                    hands = sampler.draw()
                    fresh = replay_world(POLLACK, view, hands, "play", evidence=evidence)
                    kept = replay_world(
                        POLLACK, view, hands, "play", evidence=evidence, memo=factors
                    )
                    assert kept[1] == fresh[1] and kept[0] == fresh[0]
                    compared += 1
                reused += known > 0 and len(view.plays) > 4
            moves = [a for a in state.legal() if a != CLAIM] or state.legal()
            state = state.apply(moves[rng.randrange(len(moves))])
    assert compared > 100 and reused > 10


def test_an_expert_reading_by_the_model_plays_legal_cards_and_replays_exactly(capsys):
    def play() -> list:
        seats = [BotSeat(ExpertBot(worlds=4, model=3, move_ms=10_000)) for _ in range(4)]
        clock = AnnouncedClock(move_ms=600_000, bank_ms=60_000_000)
        outcome = referee_match(POLLACK, seats, seed=21, match_id="model", clock=clock)
        assert outcome.replay["result"]["fault"] is None, outcome.replay["result"]
        return outcome.replay["deals"]

    assert play() == play()
    # The bot prints to stderr only when a decision fell back to the first legal action.
    assert "expert:" not in capsys.readouterr().err


def test_where_melds_count_the_expert_reads_cards_by_the_model_unless_told_otherwise(monkeypatch):
    monkeypatch.delenv("EXPERT_MODEL", raising=False)
    monkeypatch.delenv("EXPERT_MODEL_POWER", raising=False)

    def reading(bot, preset: str) -> tuple[int, float]:
        bot.hello({"seat": 0, "rules": rules_for(preset).to_dict(), "match": "m"})
        return bot.evidence.model, bot.evidence.model_power

    assert MELD_MODEL and MELD_MODEL_POWER < 1.0
    assert reading(ExpertBot(), "pollack") == (MELD_MODEL, MELD_MODEL_POWER)
    assert reading(ExpertBot(), "quatre-sept") == (0, 1.0)
    assert reading(ExpertBot(model=0), "pollack") == (0, MELD_MODEL_POWER)  # kept as asked
    assert reading(ExpertBot(model=1, model_power=0.7), "pollack") == (1, 0.7)
    bot = ExpertBot()  # greeted again, it reads each rule set its own way
    assert reading(bot, "pollack")[0] == MELD_MODEL and reading(bot, "quatre-sept")[0] == 0
    # The levels below the full expert read as they did when their steps were measured.
    assert reading(make_bot("expert-4"), "pollack")[0] == MELD_MODEL
    for name in ("expert-1", "expert-2", "expert-3"):
        assert reading(make_bot(name), "pollack")[0] == 0
