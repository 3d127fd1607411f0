"""Seeded, version-stable decks: the order of a deal's cards from ``(seed, deal, redeal)``.

The derivation, a public contract pinned by a golden test:

1. key = UTF-8 of ``"quatresept-deck/1:{seed}:{deal}:{redeal}"`` (decimal integers);
2. SHAKE-256 of the key gives 256 bytes, read as 32 big-endian unsigned 64-bit words;
   word ``i`` is the sort key of card ``i`` (card ints of ``cards.py``);
3. the deck is the 32 cards sorted by key, equal keys (chance below 1e-16) by card int;
4. dealing: clockwise from the dealer's left, 3 cards each, then 2 each, then 3 each, taken from
   the front of the sorted deck.

Sorting by independent uniform keys is a uniform shuffle. No Python RNG is involved, so no
interpreter upgrade can change a deck. Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

import hashlib
import struct
from functools import lru_cache

from engine.cards import DECK_SIZE

_KEYS = struct.Struct(f">{DECK_SIZE}Q")
_CARDS = range(DECK_SIZE)

DEAL_PACKETS = (3, 2, 3)


def _seat_offsets() -> tuple[int, ...]:
    """For each position of the deck, the receiving seat counted from the dealer (1..4)."""
    offsets = []
    for packet in DEAL_PACKETS:
        for k in range(1, 5):
            offsets.extend([k] * packet)
    return tuple(offsets)


_OFFSETS = _seat_offsets()


def shuffled_deck(seed: int, deal: int, redeal: int = 0) -> list[int]:
    """The 32 cards in dealing order for this seed, deal number (1-based) and redeal number."""
    key = f"quatresept-deck/1:{seed}:{deal}:{redeal}".encode()
    keys = _KEYS.unpack(hashlib.shake_256(key).digest(_KEYS.size))
    return sorted(_CARDS, key=keys.__getitem__)


def deal_hands(deck: list[int], dealer: int) -> tuple[int, int, int, int]:
    """Hands (as masks) dealt 3-2-3 clockwise from the dealer's left.

    Written out for speed (a deal starts every 32 decisions): the dealer's left receives deck
    positions 0-2, 12-13 and 20-22, the next seat 3-5, 14-15, 23-25, and so on (``_OFFSETS``).
    """
    d = deck
    # fmt: off
    by_offset = (
        (1 << d[0] | 1 << d[1] | 1 << d[2]) | (1 << d[12] | 1 << d[13])
        | (1 << d[20] | 1 << d[21] | 1 << d[22]),
        (1 << d[3] | 1 << d[4] | 1 << d[5]) | (1 << d[14] | 1 << d[15])
        | (1 << d[23] | 1 << d[24] | 1 << d[25]),
        (1 << d[6] | 1 << d[7] | 1 << d[8]) | (1 << d[16] | 1 << d[17])
        | (1 << d[26] | 1 << d[27] | 1 << d[28]),
        (1 << d[9] | 1 << d[10] | 1 << d[11]) | (1 << d[18] | 1 << d[19])
        | (1 << d[29] | 1 << d[30] | 1 << d[31]),
    )
    # fmt: on
    start = (-(dealer + 1)) & 3  # seat (dealer + 1 + k) % 4 receives by_offset[k]
    return by_offset[start:] + by_offset[:start]


@lru_cache(maxsize=256)
def seeded_hands(seed: int, deal: int, redeal: int, dealer: int) -> tuple[int, int, int, int]:
    """The hands of one deal of a seeded match (cached: search ends many deals on one seed)."""
    return deal_hands(shuffled_deck(seed, deal, redeal), dealer)
