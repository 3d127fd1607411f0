"""What the seat to move knows, read from a protocol ``turn`` message.

``View`` holds the public record of the deal as ints (plays in order, with the flags said with
them; melds and poules said) and the hard facts it proves about hidden hands:

- ``size[s]``: cards seat ``s`` holds now (8 minus its plays this deal);
- ``forbidden[s]``: cards ``s`` cannot hold: suits it failed to follow, ranks below a card it led
  under the low-lead rule, the missing card of a ``three`` meld;
- ``required[s]``: cards ``s`` must hold: the unplayed rest of an announced politaine (T, 9, A)
  or of a meld;
- ``poules[s]``: complete T-9-A suits ``s`` was dealt at least (from ``poules n``).

Invariant: the seat's own hand, the played cards and the unknown cards partition the deck.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.actions import MELD, POLITAINE, SLIDE, TAP, parse_action
from engine.cards import CARD_THIRDS, FULL_DECK, RANK_MASKS, SUIT_MASKS, TNA_MASKS, parse_card
from engine.cards import mask_from_codes as hand_mask

_FLAGS = {"politaine": POLITAINE, "tap": TAP, "slide": SLIDE}


@dataclass
class View:
    """The public record of the deal in progress and what it proves (see the module doc)."""

    seat: int
    deal: int
    dealer: int
    score: tuple[int, int]
    redeals: int
    hand: int
    #: Every play of the deal in order: (seat, action int with its politaine/signal flags).
    plays: list[tuple[int, int]] = field(default_factory=list)
    #: Melds said, in order: (seat, 1-based trick number, action int).
    melds: list[tuple[int, int, int]] = field(default_factory=list)
    #: ``poules n`` said, in order: (seat, action int).
    poule_calls: list[tuple[int, int]] = field(default_factory=list)
    played: int = 0
    by_seat: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    size: list[int] = field(default_factory=lambda: [8, 8, 8, 8])
    forbidden: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    required: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    poules: list[int] = field(default_factory=lambda: [0, 0, 0, 0])

    @property
    def unknown(self) -> int:
        """Cards in the other three hands."""
        return FULL_DECK & ~self.hand & ~self.played


def read_view(state: dict[str, Any], low_lead: str) -> View:
    """Parse a turn message's ``state`` and derive the facts about hidden hands."""
    seat = state["seat"]
    view = View(
        seat=seat,
        deal=state["deal"],
        dealer=state["dealer"],
        score=(state["score"][0], state["score"][1]),
        redeals=state.get("redeals", 0),
        hand=hand_mask(state["hand"]),
    )
    flags: dict[tuple[int, int], int] = {}
    for said in state["said"]:
        say: str = said["say"]
        who = said["seat"]
        if say in _FLAGS and "card" in said:
            card = parse_card(said["card"])
            flags[(said["trick"], card)] = flags.get((said["trick"], card), 0) | _FLAGS[say]
            if say == "politaine":
                view.required[who] |= TNA_MASKS[card >> 3]
        elif say.startswith("meld "):
            action = parse_action(say)
            view.melds.append((who, said["trick"], action))
            _meld_facts(view, who, say)
        elif say.startswith("poules "):
            n = int(say.split(" ")[1])
            view.poule_calls.append((who, parse_action(say)))
            view.poules[who] = max(view.poules[who], n)
    tricks = [(t["leader"], t["cards"]) for t in state["tricks"]]
    tricks.append((state["trick"]["leader"], state["trick"]["cards"]))
    low = False
    for number, (leader, card_codes) in enumerate(tricks, start=1):
        cards = [parse_card(c) for c in card_codes]
        if not cards:
            break
        led = cards[0] >> 3
        if low and (low_lead == "every-trick" or (low_lead == "first-trick" and number == 2)):
            # Led under the low-lead rule: nothing of a lower rank was left in that hand.
            view.forbidden[leader] |= _ranks_below(cards[0] & 7)
        for i, card in enumerate(cards):
            who = (leader + i) & 3
            view.plays.append((who, card | flags.get((number, card), 0)))
            view.played |= 1 << card
            view.by_seat[who] |= 1 << card
            view.size[who] -= 1
            if card >> 3 != led:
                view.forbidden[who] |= SUIT_MASKS[led]
        low = len(cards) == 4 and sum(CARD_THIRDS[c] for c in cards) < 3
    for s in range(4):
        view.required[s] &= ~view.played
        view.forbidden[s] &= ~view.played & ~view.required[s]
    return view


def _ranks_below(rank: int) -> int:
    mask = 0
    for r in range(rank + 1, 8):
        mask |= RANK_MASKS[r]
    return mask


def _meld_facts(view: View, who: int, say: str) -> None:
    words = say.split(" ")
    if words[1] == "pollack":
        view.required[who] |= TNA_MASKS["CDHS".index(words[2])]
        return
    rank = "T9A".index(words[2])
    cards = RANK_MASKS[rank]
    if words[1] == "three":
        missing = 1 << ("CDHS".index(words[3]) * 8 + rank)
        view.forbidden[who] |= missing
        cards &= ~missing
    view.required[who] |= cards


__all__ = ["MELD", "View", "read_view"]
