"""Seeded decks: pinned by golden values, the documented derivation, 3-2-3 dealing, uniformity."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from engine.cards import CODES, DECK_SIZE, FULL_DECK, cards_of, codes, mask_of
from engine.deck import deal_hands, seeded_hands, shuffled_deck
from engine.rules import rules_for
from engine.state import new_match

# Computed once from the engine; a change to any of them changes every seeded match ever played.
GOLDEN = {
    (0, 1, 0): "QH AS 7H KS QC JC KH 9S 7D 9C JS QS 8H KD AD KC "
    "TS TD 8C 7C 8D TC 8S JH 7S 9H QD AH TH 9D AC JD",
    (42, 1, 0): "7S 9H 9C 8D TC JS 9D KH QD QH JH JD AS 8H TD 7H "
    "JC KS AH AC 7C AD QC 8C 7D QS TH 9S TS KC 8S KD",
    (42, 2, 0): "8C 8H JD TH 9D 7C 9H JC AH KS 9S TD AC 8D 7S AS "
    "AD QS 9C QC JS JH KH 7D 8S 7H KC KD QD TS TC QH",
    (42, 1, 1): "QS 8D TH 9S JH QH TD 7C 8S AS 8H 9D AD JS KD JC "
    "TS JD 9H 7D 7H QC KC KS 7S AH 9C 8C TC AC KH QD",
    (2**63 - 1, 100, 3): "QD 8C AS 7D TH JS QS JD AH 9C KH 7H AC QC JC TD "
    "AD 8D 8S 7S 9H 9D 8H KC KD QH 9S 7C TC KS JH TS",
}

GOLDEN_HANDS = {
    (42, 1, 0, 3): [
        "9C QC 7C AD 9H 8H AS 7S",
        "TC 8C TD 8D 7D 7H QS JS",
        "JC 9D QD TH KH TS 9S KS",
        "AC KC KD JD AH QH JH 8S",
    ],
    (42, 2, 0, 0): [
        "TC 9C QC TD QH TS 9S KS",
        "AC 8C JD 8D KH JH 8H JS",
        "7C 9D 7D TH 7H AS 8S 7S",
        "KC JC AD KD QD 9H AH QS",
    ],
}


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_golden_decks(key):
    assert " ".join(CODES[c] for c in shuffled_deck(*key)) == GOLDEN[key]


@pytest.mark.parametrize("key", sorted(GOLDEN_HANDS))
def test_golden_hands(key):
    assert [" ".join(codes(h)) for h in seeded_hands(*key)] == GOLDEN_HANDS[key]


def _documented_deck(seed: int, deal: int, redeal: int) -> list[int]:
    """deck.py's docstring, step by step, written independently of its code."""
    key = f"quatresept-deck/1:{seed}:{deal}:{redeal}".encode()
    stream = hashlib.shake_256(key).digest(256)
    sort_keys = [int.from_bytes(stream[8 * i : 8 * i + 8], "big") for i in range(32)]
    return sorted(range(32), key=lambda card: (sort_keys[card], card))


@pytest.mark.parametrize("seed", [0, 1, 7, 42, 999, 123456789, 2**40 + 3])
@pytest.mark.parametrize("deal, redeal", [(1, 0), (2, 0), (1, 1), (17, 2)])
def test_derivation_is_the_documented_one(seed, deal, redeal):
    assert shuffled_deck(seed, deal, redeal) == _documented_deck(seed, deal, redeal)


def test_decks_are_deterministic_permutations():
    for seed in range(200):
        deck = shuffled_deck(seed, 1 + seed % 5, seed % 3)
        assert sorted(deck) == list(range(DECK_SIZE))
        assert deck == shuffled_deck(seed, 1 + seed % 5, seed % 3)


def test_seed_deal_and_redeal_each_change_the_deck():
    base = shuffled_deck(5, 1, 0)
    assert shuffled_deck(6, 1, 0) != base
    assert shuffled_deck(5, 2, 0) != base
    assert shuffled_deck(5, 1, 1) != base


def test_dealing_is_3_2_3_clockwise_from_the_dealers_left():
    deck = list(range(32))
    hands = deal_hands(deck, dealer=3)
    expected = {
        0: [0, 1, 2, 12, 13, 20, 21, 22],
        1: [3, 4, 5, 14, 15, 23, 24, 25],
        2: [6, 7, 8, 16, 17, 26, 27, 28],
        3: [9, 10, 11, 18, 19, 29, 30, 31],
    }
    for seat, cards in expected.items():
        assert hands[seat] == sum(1 << c for c in cards)
    # Dealer 1: seat 2 gets the first packet, then 3, 0 and the dealer last.
    hands = deal_hands(deck, dealer=1)
    assert hands[2] == sum(1 << c for c in expected[0])
    assert hands[3] == sum(1 << c for c in expected[1])
    assert hands[0] == sum(1 << c for c in expected[2])
    assert hands[1] == sum(1 << c for c in expected[3])


def test_hands_partition_the_deck():
    for seed in range(100):
        for dealer in range(4):
            hands = seeded_hands(seed, 1, 0, dealer)
            assert all(bin(h).count("1") == 8 for h in hands)
            assert hands[0] | hands[1] | hands[2] | hands[3] == FULL_DECK


def test_mask_of_inverts_cards_of():
    for hand in seeded_hands(7, 1, 0, 0):
        assert mask_of(cards_of(hand)) == hand
    assert mask_of([5, 5, 12]) == 1 << 5 | 1 << 12
    assert mask_of([]) == 0


def test_a_match_deals_from_the_seed():
    state = new_match(rules_for("quatre-sept", four_sevens=False), 42)
    assert state.deal == 1 and state.dealer == 3 and state.redeal == 0
    assert [" ".join(codes(h)) for h in state.hands] == GOLDEN_HANDS[(42, 1, 0, 3)]


CHI2_31_DF_P001 = 61.10  # chi-square critical value, 31 degrees of freedom, p = 0.001
CHI2_3_DF_P001 = 16.27


def test_where_a_card_lands_is_roughly_uniform():
    n = 3200
    for card in (0, 13, 31):  # TC, QD... any three cards
        positions = Counter(shuffled_deck(seed, 1, 0).index(card) for seed in range(n))
        expected = n / 32
        chi2 = sum((positions[p] - expected) ** 2 / expected for p in range(32))
        assert chi2 < CHI2_31_DF_P001, (card, chi2)


def test_which_seat_gets_a_card_is_roughly_uniform():
    n = 2000
    seats = Counter()
    for seed in range(n):
        hands = seeded_hands(seed, 3, 0, seed % 4)
        seats[next(s for s in range(4) if hands[s] & 1)] += 1
    chi2 = sum((seats[s] - n / 4) ** 2 / (n / 4) for s in range(4))
    assert chi2 < CHI2_3_DF_P001, chi2
