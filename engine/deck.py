"""Seeded, version-stable decks: the order of a deal's cards from ``(seed, deal, redeal)``.

The derivation, a public contract pinned by a golden test:

1. key = UTF-8 of ``"quatresept-deck/1:{seed}:{deal}:{redeal}"`` (decimal integers);
2. stream = SHAKE-256 of the key, read as big-endian 32-bit words, 64 words at a time
   (the stream is extended by asking SHAKE-256 for more bytes should rejection use them up);
3. Fisher-Yates from the top: for ``i`` from 31 down to 1, draw ``j`` uniform in ``0..i`` by
   rejection (discard words >= the largest multiple of ``i + 1`` not above 2^32; then
   ``j = word % (i + 1)``)
   and swap positions ``i`` and ``j`` of the list ``[0, 1, ..., 31]`` (card ints of ``cards.py``).
4. Dealing: clockwise from the dealer's left, 3 cards each, then 2 each, then 3 each, taken from
   the front of the shuffled list.

No Python RNG is involved, so no interpreter upgrade can change a deck.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

import hashlib
import struct

from engine.cards import DECK_SIZE

_WORDS = 64


def shuffled_deck(seed: int, deal: int, redeal: int = 0) -> list[int]:
    """The 32 cards in dealing order for this seed, deal number (1-based) and redeal number."""
    key = f"quatresept-deck/1:{seed}:{deal}:{redeal}".encode()
    words = _words(key, _WORDS)
    deck = list(range(DECK_SIZE))
    pos = 0
    for i in range(DECK_SIZE - 1, 0, -1):
        n = i + 1
        limit = (1 << 32) - (1 << 32) % n
        while True:
            if pos == len(words):
                words = _words(key, len(words) * 2)
            word = words[pos]
            pos += 1
            if word < limit:
                break
        j = word % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _words(key: bytes, count: int) -> list[int]:
    return list(struct.unpack(f">{count}I", hashlib.shake_256(key).digest(4 * count)))


DEAL_PACKETS = (3, 2, 3)


def deal_hands(deck: list[int], dealer: int) -> tuple[int, int, int, int]:
    """Hands (as masks) dealt 3-2-3 clockwise from the dealer's left."""
    hands = [0, 0, 0, 0]
    pos = 0
    for packet in DEAL_PACKETS:
        for k in range(1, 5):
            seat = (dealer + k) % 4
            for card in deck[pos : pos + packet]:
                hands[seat] |= 1 << card
            pos += packet
    return hands[0], hands[1], hands[2], hands[3]


def seeded_hands(seed: int, deal: int, redeal: int, dealer: int) -> tuple[int, int, int, int]:
    """The hands of one deal of a seeded match."""
    return deal_hands(shuffled_deck(seed, deal, redeal), dealer)
