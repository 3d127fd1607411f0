"""Cards as integers and hands as 32-bit masks; card codes ("TH") only at the edges.

A card is ``suit * 8 + rank`` where suit indexes ``C D H S`` and rank indexes ``T 9 A K Q J 8 7``
(strongest first), so within one suit the strongest card has the lowest index. A hand is an int
whose bit ``card`` is set for every card held. Pure data: imports nothing of the engine.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "CDHS"
RANKS = "T9AKQJ87"
DECK_SIZE = 32
FULL_DECK = (1 << DECK_SIZE) - 1

#: Value of each rank in thirds of a point: T 9 A K Q J 8 7.
RANK_THIRDS = (1, 1, 3, 1, 1, 1, 0, 0)
CARD_THIRDS = tuple(RANK_THIRDS[c & 7] for c in range(DECK_SIZE))
LAST_TRICK_THIRDS = 3

RANK_T, RANK_9, RANK_A = 0, 1, 2
RANK_7, RANK_8 = 7, 6

CODES = tuple(RANKS[c & 7] + SUITS[c >> 3] for c in range(DECK_SIZE))
_INDEX = {code: c for c, code in enumerate(CODES)}

SUIT_MASKS = tuple(0xFF << (8 * s) for s in range(4))
#: Cards of one rank in all four suits.
RANK_MASKS = tuple(sum(1 << (s * 8 + r) for s in range(4)) for r in range(8))
#: T, 9 and A of one suit: a politaine / pollack.
TNA_MASKS = tuple(0b111 << (8 * s) for s in range(4))
#: Every T, 9 and A.
TNA_ALL = TNA_MASKS[0] | TNA_MASKS[1] | TNA_MASKS[2] | TNA_MASKS[3]

#: Bit positions of every byte value, so a mask becomes a tuple of cards with four lookups.
BYTE_CARDS = tuple(
    tuple(tuple(base + i for i in range(8) if byte >> i & 1) for byte in range(256))
    for base in (0, 8, 16, 24)
)


def parse_card(code: str) -> int:
    """The card int (0-31) of a code such as ``"TH"``; ``ValueError`` for anything else."""
    try:
        return _INDEX[code]
    except KeyError:
        raise ValueError(
            f"not a card code: {code!r} (rank of {RANKS}, then suit of {SUITS})"
        ) from None


def cards_of(mask: int) -> tuple[int, ...]:
    """The cards of a mask in index order (suit C D H S, strongest first within a suit)."""
    b0, b1, b2, b3 = BYTE_CARDS
    return b0[mask & 255] + b1[mask >> 8 & 255] + b2[mask >> 16 & 255] + b3[mask >> 24 & 255]


def mask_of(cards: Iterable[int]) -> int:
    """The mask of card indices (``cards_of``'s inverse; a card given twice counts once)."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def codes(mask: int) -> list[str]:
    """Card codes of a mask, in the canonical order used in every message and replay."""
    return [CODES[c] for c in cards_of(mask)]


def mask_from_codes(card_codes: Iterable[str]) -> int:
    mask = 0
    for code in card_codes:
        bit = 1 << parse_card(code)
        if mask & bit:
            raise ValueError(f"card {code} given twice")
        mask |= bit
    return mask
