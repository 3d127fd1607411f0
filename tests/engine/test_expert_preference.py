"""The expert pair's suit-preference convention (``engine.bots.expert.preference``): which losing
follow a player plays says whether it holds the master of the other suit of the same colour,
and the partner weighs its sampled deals by it."""

from __future__ import annotations

import pytest

from engine.bots import BotSeat
from engine.bots.expert import ExpertBot
from engine.bots.expert.preference import (
    DISCARDS,
    FEEDS,
    holds_named_master,
    message_cards,
    named_suit,
    preferred,
    reading_factor,
)
from engine.bots.expert.view import read_view
from engine.bots.expert.world import Evidence, replay_world
from engine.cards import mask_from_codes, parse_card
from engine.observe import observe
from engine.referee import referee_match
from engine.rules import rules_for
from tests.engine.helpers import deal, run

c = parse_card
HIGH, LOW = 0.5, 0.25
READ = Evidence(pref_high=HIGH, pref_low=LOW)


def test_a_losing_follow_names_the_other_suit_of_its_colour():
    assert [named_suit(s) for s in range(4)] == [3, 2, 1, 0]  # C-S, D-H


def test_losing_follows_are_the_cards_under_an_opponents_winning_card():
    """Seen by the seat to play next: the trick's cards are in play order, so the last one is
    an opponent's and the one before it the partner's."""
    hand = mask_from_codes(["QC", "7C", "TS"])
    assert message_cards((c("TC"),), hand, c("7C")) == [c("QC"), c("7C")]
    assert message_cards((c("TC"), c("8C")), hand, c("7C")) == []  # its partner's card wins
    assert message_cards((c("8C"), c("KC"), c("TC")), hand, c("7C")) == [c("QC"), c("7C")]
    assert message_cards((c("QC"),), hand | 1 << c("TC"), c("7C")) == [c("7C")]
    assert message_cards((), hand, c("7C")) == []  # a lead
    assert message_cards((c("TH"),), hand, c("7C")) == []  # void: a discard


def test_discards_and_feeds_speak_only_within_the_scope():
    """A discard speaks among the cards of its suit, a feed (under its own team's winning card)
    among the losing follows, each only where the scope says; a card that beats the trick
    never does."""
    hand = mask_from_codes(["QC", "7C", "KS", "8S"])
    opponent_wins, partner_wins = (c("TH"),), (c("TC"), c("8C"))
    assert message_cards(opponent_wins, hand, c("8S")) == []
    assert message_cards(opponent_wins, hand, c("8S"), DISCARDS) == [c("KS"), c("8S")]
    assert message_cards(partner_wins, hand, c("7C")) == []
    assert message_cards(partner_wins, hand, c("7C"), FEEDS) == [c("QC"), c("7C")]
    assert message_cards((c("KC"),), hand | 1 << c("TC"), c("TC"), FEEDS | DISCARDS) == []
    assert message_cards((c("TC"),), hand, c("QC")) == [c("QC"), c("7C")]


def test_the_strongest_goes_only_with_the_named_master():
    with_master = mask_from_codes(["QC", "7C", "TS"])
    without = mask_from_codes(["QC", "7C", "9S"])
    table = 1 << c("TC")
    assert holds_named_master(c("QC"), with_master, 0, table)
    assert not holds_named_master(c("QC"), without, 0, table)
    assert holds_named_master(c("QC"), without, 1 << c("TS"), table)  # the TS is gone
    assert preferred([c("QC"), c("7C")], c("7C"), with_master, 0, table) == c("QC")
    assert preferred([c("QC"), c("7C")], c("QC"), without, 0, table) == c("7C")
    assert preferred([c("7C")], c("7C"), with_master, 0, table) == c("7C")  # nothing to say


def test_the_reading_factor_of_each_message():
    losing = [c("QC"), c("7C")]
    table = 1 << c("TC")
    with_master = mask_from_codes(["QC", "7C", "TS"])
    without = mask_from_codes(["QC", "7C", "9S"])
    assert reading_factor(c("QC"), losing, with_master, 0, table, HIGH, LOW) == 1.0
    assert reading_factor(c("QC"), losing, without, 0, table, HIGH, LOW) == HIGH
    assert reading_factor(c("7C"), losing, with_master, 0, table, HIGH, LOW) == LOW
    assert reading_factor(c("7C"), losing, without, 0, table, HIGH, LOW) == 1.0
    assert reading_factor(c("7C"), [c("7C")], with_master, 0, table, HIGH, LOW) == 1.0


TRUE_HANDS = [
    "TC 9C AC KC TD 9D AD KD",
    "QC 7C TS 9S AS KS QS JS",  # seat 1 holds the TS: the master of the suit clubs name
    "JC 8C TH 9H AH KH QH JH",
    "8S 7S QD JD 8D 7D 8H 7H",
]
#: The same deal with seat 1's TS and seat 2's TH swapped: seat 1 holds no spade master.
NO_MASTER = [
    TRUE_HANDS[0],
    TRUE_HANDS[1].replace("TS", "TH"),
    TRUE_HANDS[2].replace("TH", "TS"),
    TRUE_HANDS[3],
]


@pytest.mark.parametrize(
    ("hands", "card", "weight"),
    [
        (TRUE_HANDS, "QC", 1.0),  # high with the master: as the convention says
        (NO_MASTER, "QC", HIGH),  # high without it: the deal is unlikely
        (TRUE_HANDS, "7C", LOW),  # low with the master and a stronger losing club
        (NO_MASTER, "7C", 1.0),
    ],
)
def test_the_partner_weighs_a_sampled_deal_by_the_message(hands, card, weight):
    """Seat 3 reads its partner's (seat 1's) club under seat 0's winning TC."""
    rules = rules_for("quatre-sept")
    state = run(deal(rules, hands), f"TC {card} JC")
    view = read_view(observe(state, 3), rules.low_lead)
    assert replay_world(rules, view, state.hands, "play", evidence=READ)[1] == weight
    # The opponents read nothing from it, and without the convention nobody does.
    seen_by_opponent = read_view(observe(run(deal(rules, hands), f"TC {card}"), 2), "off")
    held = run(deal(rules, hands), f"TC {card}").hands
    assert replay_world(rules, seen_by_opponent, held, "play", evidence=READ)[1] == 1.0
    assert replay_world(rules, view, state.hands, "play", evidence=Evidence())[1] == 1.0


def test_experts_playing_the_convention_finish_a_match_and_carry_messages():
    """Four experts with the convention play a whole `pollack` match legally, and some of
    their losing follows carry the message (the strongest of several near-equal ones played
    where the search chose another)."""
    rules = rules_for("pollack")
    changed: list[bool] = []

    class Counted(ExpertBot):
        def _preferred(self, action, *args):
            chosen = super()._preferred(action, *args)
            changed.append(chosen != action)
            return chosen

    for seed in (1, 2, 3):  # until a match carries the message
        seats = [BotSeat(Counted(worlds=8, move_ms=10_000, preference=0.05)) for _ in range(4)]
        outcome = referee_match(rules, seats, seed=seed, match_id="preference")
        assert outcome.state.is_over and not outcome.logs  # no seat faulted
        if any(changed):
            break
    assert any(changed)
    assert not ExpertBot(preference=0.02).twins  # it replaces the twins reading
