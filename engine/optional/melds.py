"""Melds (option ``melds``, Pollack): three Ts, 9s or As (3 points, said with the missing suit),
four of them (4 points), a pollack: T, 9 and A of one suit (3 points).

A player melds at his turn to play, before his card: the first leader before his first card,
anyone else once his team has won a trick of the deal. He must hold every card of the meld then.
[ruling] Each meld counts once a deal; once any meld of a rank is made, no other of that rank
(a player holding four melds the four, not a three).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.actions import MELD_FOUR, MELD_THREE, meld_name, meld_points
from engine.cards import RANK_MASKS, TNA_ALL, TNA_MASKS
from engine.position import HAND, MELD_PHASE, PLAY_PHASE, Said, add, evolve

if TYPE_CHECKING:
    from engine.state import State


def available_melds(hand: int, melded: int) -> tuple[int, ...]:
    """Meld ids ``hand`` could meld now, given the mask ``melded`` of meld ids made this deal."""
    found = []
    for suit in range(4):
        if hand & TNA_MASKS[suit] == TNA_MASKS[suit] and not melded >> suit & 1:
            found.append(suit)
    for rank in range(3):
        if melded & ((1 << (MELD_FOUR + rank)) | (0xF << (MELD_THREE + 4 * rank))):
            continue
        held = hand & RANK_MASKS[rank]
        count = held.bit_count()
        if count == 4:
            found.append(MELD_FOUR + rank)
        elif count == 3:
            missing = next(s for s in range(4) if not held >> (8 * s + rank) & 1)
            found.append(MELD_THREE + 4 * rank + missing)
    return tuple(found)


def meld_cards(hand: int, melded: int) -> int:
    """The mask of the cards of every meld ``hand`` could meld now (``available_melds``)."""
    cards = 0
    for meld in available_melds(hand, melded):
        if meld < MELD_FOUR:
            cards |= TNA_MASKS[meld]
        elif meld < MELD_THREE:
            cards |= RANK_MASKS[meld - MELD_FOUR]
        else:
            cards |= hand & RANK_MASKS[(meld - MELD_THREE) // 4]
    return cards


def turn_phase(state: State, seat: int, packed: int, won: tuple[int, int]) -> int:
    """MELD_PHASE if ``seat``, about to play, may meld now and has a meld; else PLAY_PHASE."""
    hand = packed >> (seat << 5) & HAND
    if (hand & TNA_ALL).bit_count() < 3:  # every meld is 3 or 4 T, 9 or A: most hands have none
        return PLAY_PHASE
    first_lead = not state.tricks and not state.trick and seat == state.leader
    if (first_lead or won[seat & 1]) and available_melds(hand, state.melded):
        return MELD_PHASE
    return PLAY_PHASE


def meld(state: State, meld_id: int) -> State:
    """``to_move`` melds ``meld_id``: points to his team, said in public; asked again if he has
    another meld, else on to his card."""
    seat = state.to_move
    melds = add(state.melds, seat & 1, meld_points(meld_id))
    melded = state.melded | (1 << meld_id)
    said = (*state.said, Said(seat, len(state.tricks) + 1, "meld " + meld_name(meld_id), -1))
    phase = MELD_PHASE if available_melds(state.hand(seat), melded) else PLAY_PHASE
    return evolve(state, melds=melds, melded=melded, said=said, phase=phase)
