"""What the seat to move knows, read from a protocol ``turn`` message.

``View`` holds the public record of the deal as ints (plays in order, with the flags said with
them; melds and poules said) and the hard facts it proves about hidden hands:

- ``size[s]``: cards seat ``s`` holds now (8 minus its plays this deal);
- ``forbidden[s]``: cards ``s`` cannot hold: suits it failed to follow, ranks below a card it led
  under the low-lead rule, the missing card of a ``three`` meld;
- ``required[s]``: cards ``s`` must hold: the unplayed rest of an announced politaine (T, 9, A)
  or of a meld, the master the partner's signal named (``signals.py``);
- ``poules[s]``: complete T-9-A suits ``s`` was dealt at least (from ``poules n``).

Invariant: the seat's own hand, the played cards and the unknown cards partition the deck.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.actions import MELD, POLITAINE, SLIDE, TAP, parse_action
from engine.cards import CARD_THIRDS, FULL_DECK, RANK_MASKS, SUIT_MASKS, TNA_MASKS, parse_card
from engine.cards import mask_from_codes as hand_mask

from .prune import equivalent, next_in_play
from .signals import signalled_card

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
    #: Suits (card masks) each seat failed to follow: public, every player knows them.
    voids: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    #: The partner's cards in ``forbidden`` that only this bot reads (``twins``), not public.
    inferred: int = 0

    @property
    def unknown(self) -> int:
        """Cards in the other three hands."""
        return FULL_DECK & ~self.hand & ~self.played

    def public_facts(self) -> tuple[list[int], list[int]]:
        """What every seat may know of each hand: the cards said to be held (``required``) and
        those proved absent beyond the voids (``forbidden`` without this bot's own reading)."""
        partner = (self.seat + 2) & 3
        barred = [
            self.forbidden[s] & ~self.voids[s] & ~(self.inferred if s == partner else 0)
            for s in range(4)
        ]
        return list(self.required), barred


def read_view(state: dict[str, Any], low_lead: str, twins: bool = False, tna: bool = False) -> View:
    """Parse a turn message's ``state`` and derive the facts about hidden hands.

    ``twins``: the partner is this bot, which plays the weakest of equivalent cards
    (``prune.distinct_cards``; ``tna``: T, 9 and A never merge), so the next weaker card it
    could have played instead is not in its hand.
    """
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
    gone = 0  # cards of the finished tricks before this one
    partner = (seat + 2) & 3
    not_held = 0
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
                view.voids[who] |= SUIT_MASKS[led]
            if who == partner and twins:
                not_held |= _weaker_twin(card, gone, low_lead != "off", tna)
        low = len(cards) == 4 and sum(CARD_THIRDS[c] for c in cards) < 3
        for card in cards:
            gone |= 1 << card
    view.inferred = not_held & ~view.by_seat[partner]
    view.forbidden[partner] |= view.inferred
    _signal_facts(view, state["said"])
    for s in range(4):
        view.required[s] &= ~view.played
        view.forbidden[s] &= ~view.played & ~view.required[s]
    return view


def _signal_facts(view: View, said: list[dict[str, Any]]) -> None:
    """The partner's signals (``signals.py``): the master each named is in its hand.

    A signal that cannot be true (the card named is ours, or the partner played another card
    of the suit since, or it failed to follow suit) is ignored rather than believed.
    """
    partner = (view.seat + 2) & 3
    order: dict[tuple[int, int], int] = {}
    trick, count = 1, 0
    for i, (_, action) in enumerate(view.plays):
        order[(trick, action & 31)] = i
        count += 1
        if count == 4:
            trick, count = trick + 1, 0
    for entry in said:
        flag = _FLAGS.get(entry["say"], 0)
        if entry["seat"] != partner or flag not in (TAP, SLIDE) or "card" not in entry:
            continue
        card = parse_card(entry["card"])
        at = order.get((entry["trick"], card))
        if at is None:
            continue
        before = 0
        for _, action in view.plays[:at]:
            before |= 1 << (action & 31)
        named = signalled_card(flag, card, FULL_DECK & ~before)
        if named < 0 or view.hand >> named & 1 or view.forbidden[partner] >> named & 1:
            continue
        if view.played >> named & 1 and not view.by_seat[partner] >> named & 1:
            continue
        view.required[partner] |= 1 << named


def _weaker_twin(card: int, gone: int, low: bool, tna: bool) -> int:
    """The card this bot would have played instead of ``card`` had it held it: the next weaker
    card of the suit not in ``gone``, if ``distinct_cards`` merges the two (it keeps the
    weaker). A mask: 0 if none."""
    weaker = -1 if low else next_in_play(card, 1, gone)
    return 1 << weaker if weaker >= 0 and equivalent(card, weaker, gone, tna) else 0


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
