"""Playing a deal: following suit, trick winners, thirds, card points, scores, dealer rotation."""

from __future__ import annotations

import random

import pytest

from engine.cards import CODES, FULL_DECK, SUIT_MASKS
from engine.rules import rules_for
from engine.state import deal_state, new_match
from tests.engine.helpers import cards_in, deal, finish_deal, first_play, hands_from, run

# A deal of quatre-sept (dealer 3, seat 0 leads) played out trick by trick below.
HANDS_P = [
    "TH 9H AH KH TC 9C AC 7D",
    "QH JH TD 9D AD KD QC JC",
    "8H 7H 8D KC 8C 7C QD JD",
    "TS 9S AS KS QS JS 8S 7S",
]
# (cards from the leader on, winner, thirds)
TRICKS_P = [
    ("KH QH 8H TS", 0, 3),  # an off-suit T does not win
    ("7D AD 8D 9S", 1, 4),  # a follower wins with a higher card of the suit led
    ("TD QD AS 9C", 1, 6),
    ("9D JD KS TH", 1, 4),
    ("KD 7C QS 9H", 1, 3),
    ("QC KC 8S AC", 0, 5),  # T 9 A K Q: the A beats the K
    ("TC JC 8C 7S", 0, 2),
    ("AH JH 7H JS", 0, 8),  # last trick: 5 thirds of cards + 3
]


def play_p(rules=None, **kwargs):
    state = deal(rules or rules_for("quatre-sept"), HANDS_P, **kwargs)
    for cards, _, _ in TRICKS_P:
        state = run(state, cards)
    return state


def test_a_whole_deal_trick_by_trick():
    state = deal("quatre-sept", HANDS_P)
    assert state.to_move == 0 and state.decision == "play"
    for number, (cards, winner, thirds) in enumerate(TRICKS_P, 1):
        leader = state.to_move
        state = run(state, cards)
        tricks = state.history[0].tricks if number == 8 else state.tricks
        trick = tricks[number - 1]
        assert trick.leader == leader
        assert [CODES[c] for c in trick.cards] == cards.split()
        assert trick.winner == winner, f"trick {number}"
        assert trick.thirds == thirds, f"trick {number}"
        if number < 8:
            assert state.to_move == winner, "the winner leads the next trick"
    record = state.history[0]
    assert record.thirds == (18, 17)
    assert sum(t.thirds for t in record.tricks) == 35
    assert record.points == (6, 5), "floor(18/3), floor(17/3): fractions dropped once a deal"
    assert sum(record.points) == 11
    assert record.score == (6, 5)
    assert record.end is None


def test_the_next_deal_starts_with_the_new_totals_and_the_next_dealer():
    state = play_p()
    assert not state.is_over
    assert state.deal == 2 and state.dealer == 0 and state.to_move == 1
    assert state.score == (6, 5)
    assert state.tricks == () and state.taken == (0, 0)


def test_follow_suit_if_you_can():
    state = run(deal("quatre-sept", HANDS_P), "KH")
    assert state.to_move == 1
    assert sorted(state.legal_strings()) == ["play JH", "play QH"]
    with pytest.raises(ValueError):
        state.step("play AD")
    state = run(state, "QH")
    assert sorted(state.legal_strings()) == ["play 7H", "play 8H"]
    state = run(state, "8H")
    # Seat 3 has no heart: any card.
    assert cards_in(state.legal_strings()) == set(HANDS_P[3].split())


def test_any_card_may_be_led():
    state = deal("quatre-sept", HANDS_P)
    assert cards_in(state.legal_strings()) == set(HANDS_P[0].split())


def test_a_card_not_held_is_refused():
    state = deal("quatre-sept", HANDS_P)
    with pytest.raises(ValueError):
        state.step("play QH")
    with pytest.raises(ValueError):
        state.step("play XX")
    with pytest.raises(ValueError):
        state.step("claim")


def test_per_trick_rounding_would_differ():
    # Team 0's tricks are worth 3, 5, 2 and 8 thirds: floored per trick that would be 4 points.
    assert sum(t // 3 for t in (3, 5, 2, 8)) == 4
    assert play_p().history[0].points[0] == 6


# Seat 0 wins the first seven tricks with hearts; seat 1 wins the last, worth K+Q+J and the
# last-trick 3: team 1 takes exactly 6 thirds, which make 2 points (six additions of 1/3 in
# floating point would floor to 1).
HANDS_SIX = [
    "TH 9H AH KH QH JH 8H 7C",
    "TC 9C AC KC QC JC 8C 7H",
    "TD 9D AD KD QD JD 8D 7D",
    "TS 9S AS KS QS JS 8S 7S",
]


def test_six_thirds_make_two_points():
    state = deal("quatre-sept", HANDS_SIX)
    state = run(state, "TH 7H TD TS")
    state = run(
        state,
        "9H TC 9D 9S   AH 9C AD AS   KH AC KD KS   QH QC JD QS   JH JC 8D 8S   8H 8C 7D 7S",
    )
    state = run(state, "7C KC QD JS")
    record = state.history[0]
    assert record.tricks[-1].winner == 1
    assert record.thirds == (29, 6)
    assert record.points == (9, 2)


def test_last_trick_is_worth_three_thirds_more():
    record = play_p().history[0]
    last = record.tricks[-1]
    assert last.thirds == 3 + 1 + 1 + 0 + 3  # AH(3) JH(1) 7H(0) JS(1) + 3
    assert sum(t.thirds for t in record.tricks[:-1]) == 35 - last.thirds


def test_dealer_moves_one_seat_left_every_deal():
    state = new_match(rules_for("quatre-sept", four_sevens=False, target=1000), 7)
    while len(state.history) < 6:
        state = state.step(first_play(state))
    dealers = [d.dealer for d in state.history]
    assert dealers == [3, 0, 1, 2, 3, 0]
    assert [d.number for d in state.history] == [1, 2, 3, 4, 5, 6]
    for record in state.history:
        assert record.tricks[0].leader == (record.dealer + 1) % 4, "left of the dealer leads"
        assert sum(t.thirds for t in record.tricks) == 35
        assert sum(record.points) == 11
    assert state.dealer == 1 and state.deal == 7 and state.to_move == 2


def test_scores_accumulate_over_deals():
    state = new_match(rules_for("quatre-sept", four_sevens=False, target=1000), 11)
    total = [0, 0]
    while len(state.history) < 4:
        state = finish_deal(state)
        record = state.history[-1]
        total = [total[t] + record.points[t] + record.bonus[t] + record.melds[t] for t in (0, 1)]
        assert list(record.score) == total
    assert list(state.score) == total


def test_deal_state_refuses_hands_that_are_not_a_deck():
    with pytest.raises(ValueError):
        deal("quatre-sept", [HANDS_P[0], HANDS_P[0], HANDS_P[2], HANDS_P[3]])
    short = [HANDS_P[0], HANDS_P[1], HANDS_P[2], "TS 9S AS KS QS JS 8S"]
    with pytest.raises(ValueError):
        deal("quatre-sept", short)


def test_states_are_immutable_values():
    state = deal("quatre-sept", HANDS_P)
    after = state.step("play KH")
    assert state.trick == () and state.to_move == 0
    assert after.trick != () and after.to_move == 1
    assert state.legal() == deal("quatre-sept", HANDS_P).legal()


def test_the_table_built_by_position_reads_right_by_name():
    """``state.py`` builds ``Table`` by position at a deal start and a trick end (for speed):
    every field must land under its own name."""
    rules = rules_for("la-poule")
    hands = hands_from(HANDS_P)
    start = deal(rules, HANDS_P, dealer=2, deal=3, score=(5, 7), seed=9)
    assert start.table._asdict() == {
        "rules": rules, "seed": 9, "deal": 3, "dealer": 2, "redeal": 0, "score": (5, 7),
        "dealt": hands, "leader": 3, "tricks": (), "taken": (0, 0), "won": (0, 0), "said": (),
        "low": False, "run": None, "announced": (), "poules": (0, 0, 0, 0), "bonus": (0, 0),
        "melds": (0, 0), "melded": 0, "redeals": (), "history": (), "result": None,
    }  # fmt: skip
    state = run(start, "poules_0 poules_1 poules_0 poules_0")
    said = state.said
    state = run(state, "TS 9H QH 8H")  # seat 3 wins 3 thirds with TS: a run of spades starts
    after = state.table._asdict()
    trick = after.pop("tricks")
    assert [(t.leader, t.winner, t.thirds) for t in trick] == [(3, 3, 3)]
    assert after == {
        "rules": rules, "seed": 9, "deal": 3, "dealer": 2, "redeal": 0, "score": (5, 7),
        "dealt": hands, "leader": 3, "taken": (0, 3), "won": (0, 1), "said": said,
        "low": False, "run": (3, 3, 1), "announced": (), "poules": (1, 0, 0, 0), "bonus": (0, 0),
        "melds": (0, 0), "melded": 0, "redeals": (), "history": (), "result": None,
    }  # fmt: skip


# Rule sets for ``with_hands``: before-play politaine (whose run depends on hidden cards) with
# the low lead, the redeal or melds, and the other modes.
WITH_HANDS_RULES = [
    rules_for("la-poule"),
    rules_for("quatre-sept", politaine="before-play"),
    rules_for("politaine", politaine="before-play"),
    rules_for("la-poule", melds=True, low_lead="off"),
    rules_for("quatre-sept"),
    rules_for("politaine"),
    rules_for("pollack"),
]


def _decisions(rules, seed, rng, deals=3):
    """Each decision of the first ``deals`` deals of a match of random legal actions, with the
    ``(seat, action)`` pairs taken since this deck was dealt."""
    state, actions = new_match(rules, seed), []
    while not state.is_over and state.deal <= deals:
        yield state, actions
        legal = state.legal()
        action = legal[rng.randrange(len(legal))]
        deck = (state.deal, state.redeal)
        seat, state = state.to_move, state.apply(action)
        actions = [*actions, (seat, action)] if (state.deal, state.redeal) == deck else []


def _played(state):
    """Each seat's cards played this deal, read from the tricks."""
    played = [0, 0, 0, 0]
    tricks = [(t.leader, t.cards) for t in state.tricks]
    for leader, cards in [*tricks, (state.leader, state.trick)]:
        for i, card in enumerate(cards):
            played[(leader + i) & 3] |= 1 << card
    return played


def _other_hands(state, rng):
    """The unplayed cards dealt again at random, each seat keeping its hand's size (and half the
    time its count of each suit, so that more of the deals replay)."""
    hands = list(state.hands)
    for mask in SUIT_MASKS if rng.random() < 0.5 else (FULL_DECK,):
        cards = [c for h in hands for c in range(32) if (h & mask) >> c & 1]
        rng.shuffle(cards)
        for seat, held in enumerate(hands):
            size = (held & mask).bit_count()
            hands[seat] = held & ~mask | sum(1 << c for c in cards[:size])
            cards = cards[size:]
    return tuple(hands)


def _replayed(state, actions, hands):
    """This deck's actions again from a deal of ``hands`` plus the cards played; None unless
    each is the same seat's and legal and they lead to the same decision."""
    played = _played(state)
    dealt = tuple(h | p for h, p in zip(hands, played, strict=True))
    replay = deal_state(
        state.rules, dealt, dealer=state.dealer, deal=state.deal, score=state.score,
        seed=state.seed, redeal=state.redeal, history=state.history, redeals=state.redeals,
    )  # fmt: skip
    for seat, action in actions:
        if replay.to_move != seat or action not in replay.legal():
            return None
        replay = replay.apply(action)
    if (replay.phase, replay.to_move) != (state.phase, state.to_move):
        return None
    return replay


def test_with_hands_is_the_deal_replayed_on_those_hands():
    """``with_hands`` gives what replaying the deck's actions from the other hands gives, field
    by field: ``dealt`` is each seat's new hand plus its plays, and a before-play politaine run
    under way is read again from the winner's new hand (it holds the rest of the suit or not)."""
    rng = random.Random(3)
    compared = dealt_moved = runs_started = runs_ended = 0
    for rules in WITH_HANDS_RULES:
        for seed in range(30):
            for state, actions in _decisions(rules, seed, rng):
                assert state.with_hands(state.hands) == state
                hands = _other_hands(state, rng)
                replay = _replayed(state, actions, hands)
                if replay is None:
                    continue
                moved = state.with_hands(hands)
                assert moved[:4] == replay[:4]
                assert moved.table._asdict() == replay.table._asdict()
                compared += 1
                dealt_moved += moved.dealt != state.dealt
                runs_started += state.run is None and moved.run is not None
                runs_ended += state.run is not None and moved.run is None
    assert compared > 8000 and dealt_moved > 5000 and runs_started > 20 and runs_ended > 5
