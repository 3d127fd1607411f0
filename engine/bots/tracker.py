"""``tracker``: a careful rule-based player, written apart from the expert (a panel opponent).

It keeps what a careful human keeps: every card played, each seat's voids (a seat that did not
follow suit holds none of it), which cards are masters (no stronger card of the suit can still be
out against it), and what its partner signalled (``tap``: good cards in that suit; ``slide``: in
the other suit of the same colour). With that it

- leads a politaine run from the top, then masters (points first), then a suit its partner
  signalled or a suit both opponents are void in, else its cheapest card;
- when its side is *surely* winning the trick (no opponent still to play can hold a stronger card
  of the suit led, voids counted), feeds it points; when it can win surely, wins with the cheapest
  sure card; as the last player it wins whenever it can; otherwise it throws its cheapest card;
- melds everything, announces every poule and politaine it may, demands every redeal, claims only
  when its team's count reaches the target, and never signals (so it cannot mislead).

It works from protocol 1's ``turn`` message alone: no search, a fraction of a millisecond a move.
"""

from __future__ import annotations

from typing import Any

from engine.cards import CARD_THIRDS, FULL_DECK, SUIT_MASKS, TNA_MASKS, parse_card

_MELD_POINTS = {"pollack": 3, "three": 3, "four": 4}
#: For each card, the mask of the stronger cards of its suit (lower ints rank higher).
_STRONGER = tuple(((1 << c) - 1) & ~((1 << (c & ~7)) - 1) for c in range(32))
_OTHER_SUIT_SAME_COLOUR = (3, 2, 1, 0)  # C<->S, D<->H


class Knowledge:
    """What the seat to move knows: its hand, the cards out, each seat's voids, partner hints."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.seat: int = state["seat"]
        self.hand = _mask(state["hand"])
        self.played = 0
        self.voids = [0, 0, 0, 0]  # suit masks a seat is known to hold nothing of
        tricks = [(t["leader"], t["cards"]) for t in state["tricks"]]
        tricks.append((state["trick"]["leader"], state["trick"]["cards"]))
        for leader, codes in tricks:
            cards = [parse_card(c) for c in codes]
            for i, card in enumerate(cards):
                self.played |= 1 << card
                if card >> 3 != cards[0] >> 3:
                    self.voids[(leader + i) & 3] |= SUIT_MASKS[cards[0] >> 3]
        self.out = FULL_DECK & ~self.hand & ~self.played  # in the other three hands
        self.hinted = 0  # suits the partner signalled good cards in
        partner = (self.seat + 2) & 3
        for said in state["said"]:
            if said["seat"] != partner or "card" not in said:
                continue
            suit = parse_card(said["card"]) >> 3
            if said["say"] == "tap":
                self.hinted |= SUIT_MASKS[suit]
            elif said["say"] == "slide":
                self.hinted |= SUIT_MASKS[_OTHER_SUIT_SAME_COLOUR[suit]]

    def may_hold(self, seat: int, cards: int) -> int:
        """The cards of ``cards`` still out that ``seat`` may hold."""
        return cards & self.out & ~self.voids[seat]

    def is_master(self, card: int) -> bool:
        """No stronger card of its suit is out."""
        return not _STRONGER[card] & self.out

    def beatable_by(self, card: int, seats: list[int]) -> bool:
        """Some seat of ``seats`` may hold a card of ``card``'s suit stronger than it."""
        return any(self.may_hold(s, _STRONGER[card]) for s in seats)


class TrackerBot:
    name = "tracker"

    def __init__(self) -> None:
        self.seat = 0
        self.target = 31

    def hello(self, message: dict[str, Any]) -> None:
        self.seat = message["seat"]
        self.target = message["rules"]["target"]

    def notify(self, message: dict[str, Any]) -> None:
        pass

    def act(self, message: dict[str, Any]) -> str:
        legal: list[str] = message["legal"]
        decision = message["decision"]
        if decision == "redeal":
            return "redeal" if "redeal" in legal else legal[0]
        if decision == "poules":
            return legal[-1]
        if decision == "meld":
            return legal[0]
        state = message["state"]
        if "claim" in legal and self._claim_is_sure(state):
            return "claim"
        options: dict[int, list[str]] = {}
        for action in legal:
            if action.startswith("play "):
                options.setdefault(parse_card(action[5:7]), []).append(action)
        if not options:
            return legal[0]
        card = self._choose(state, Knowledge(state), sorted(options))
        choices = options[card]
        announce = [a for a in choices if a.endswith("politaine")]
        plain = [a for a in choices if a == f"play {action_code(card)}"]
        return announce[0] if announce else plain[0] if plain else choices[0]

    # -- choosing a card -------------------------------------------------------------------------

    def _choose(self, state: dict[str, Any], k: Knowledge, cards: list[int]) -> int:
        trick = [parse_card(c) for c in state["trick"]["cards"]]
        leader = state["trick"]["leader"]
        if not trick:
            run = self._run_card(state, cards)
            return run if run is not None else self._lead(k, cards)
        led = trick[0] >> 3
        best = min(c for c in trick if c >> 3 == led)
        winner = (leader + trick.index(best)) & 3
        partner_wins = winner & 1 == self.seat & 1
        after = [(self.seat + i) & 3 for i in range(1, 4 - len(trick))]
        opponents_after = [s for s in after if s & 1 != self.seat & 1]
        beating = [c for c in cards if c >> 3 == led and c < best]
        if partner_wins and not k.beatable_by(best, opponents_after):
            return _feed(k, cards)
        if beating:
            sure = [c for c in beating if not k.beatable_by(c, opponents_after)]
            if sure:
                return max(sure)  # the weakest card that surely wins
            on_table = sum(CARD_THIRDS[c] for c in trick)
            if on_table >= 3 and not partner_wins:
                return max(beating)  # contest a trick worth a point
        return _cheapest(k, cards)

    def _run_card(self, state: dict[str, Any], cards: list[int]) -> int | None:
        """The next card of this seat's own politaine run under way (announced with a card, every
        trick since won by this seat), from the top; None if no run is under way. A run breaks
        the complete T-9-A in hand at its first card, so ``_lead`` alone would leave it."""
        announced = [
            said for said in state["said"]
            if said["seat"] == self.seat and said["say"] == "politaine"
        ]
        if not announced:
            return None
        since = state["tricks"][announced[-1]["trick"] - 1:]  # ``trick`` counts from 1
        if not since or any(trick["winner"] != self.seat for trick in since):
            return None
        suit = parse_card(announced[-1]["card"]) >> 3
        for card in (suit * 8 + 2, suit * 8, suit * 8 + 1):
            if card in cards:
                return card
        return None

    def _lead(self, k: Knowledge, cards: list[int]) -> int:
        for suit in range(4):  # a politaine run, from the top: A, T, 9
            if k.hand & TNA_MASKS[suit] == TNA_MASKS[suit]:
                for card in (suit * 8 + 2, suit * 8, suit * 8 + 1):
                    if card in cards:
                        return card
        masters = [c for c in cards if k.is_master(c)]
        if masters:
            # Points first; among equals, a suit the opponents still hold (draw their cards).
            def key(c: int) -> tuple[int, int, int]:
                drawn = sum(bool(k.may_hold(s, SUIT_MASKS[c >> 3])) for s in self._opponents())
                return (CARD_THIRDS[c], drawn, -c)

            return max(masters, key=key)
        partner = (self.seat + 2) & 3
        # A suit where both opponents are void and the partner is not: our lowest card wins
        # unless the partner overtakes, so lead it low.
        free = [
            c for c in cards
            if all(k.voids[s] & (1 << c) for s in self._opponents())
            and not k.voids[partner] & (1 << c)
        ]  # fmt: skip
        if free:
            return _cheapest(k, free)
        hinted = [c for c in cards if k.hinted & (1 << c) and not k.voids[partner] & (1 << c)]
        if hinted:
            return _cheapest(k, hinted)
        return _cheapest(k, cards)

    def _opponents(self) -> tuple[int, int]:
        return ((self.seat + 1) & 3, (self.seat + 3) & 3)

    def _claim_is_sure(self, state: dict[str, Any]) -> bool:
        team = self.seat & 1
        melds = sum(
            _MELD_POINTS.get(s["say"].split(" ")[1], 0)
            for s in state["said"]
            if s["say"].startswith("meld ") and s["seat"] & 1 == team
        )
        return state["score"][team] + state["taken"][team] // 3 + melds >= self.target


def action_code(card: int) -> str:
    return "T9AKQJ87"[card & 7] + "CDHS"[card >> 3]


def _mask(codes: list[str]) -> int:
    mask = 0
    for code in codes:
        mask |= 1 << parse_card(code)
    return mask


def _feed(k: Knowledge, cards: list[int]) -> int:
    """The most points, keeping masters of other suits where an equal feed exists."""
    return max(cards, key=lambda c: (CARD_THIRDS[c], not k.is_master(c), c & 7))


def _cheapest(k: Knowledge, cards: list[int]) -> int:
    """The card that gives away least: no points, not a master, the weakest rank; among those,
    from the longest suit (short suits become voids to discard on)."""

    def key(c: int) -> tuple[int, bool, int, int]:
        length = (k.hand & SUIT_MASKS[c >> 3]).bit_count()
        return (CARD_THIRDS[c], k.is_master(c), -(c & 7), -length)

    return min(cards, key=key)
