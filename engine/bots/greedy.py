"""``greedy``: a one-trick heuristic that plays from the protocol message alone.

Win cheap, feed points to a partner's winning trick, lead sure winners, run politaines from the
top, meld everything, claim when the count is sure, throw the cheapest card when beaten.

It starts a politaine run only while it holds the whole T-9-A, so once the run's first card is
played it may lead elsewhere and drop the run (44 of 162 runs over 300 seeds of its self-play).
Kept so on purpose: it is the fixed baseline the expert's levels and figures are measured
against (docs/expert.md); ``tracker`` is the careful player that goes on with its runs.
"""

from __future__ import annotations

from typing import Any

from engine.cards import CARD_THIRDS, TNA_MASKS, parse_card

_MELD_POINTS = {"pollack": 3, "three": 3, "four": 4}


class GreedyBot:
    name = "greedy"

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
            return "redeal"
        if decision == "poules":
            return legal[-1]
        if decision == "meld":
            return legal[0]
        return self._play(message["state"], legal)

    # -- play --------------------------------------------------------------------------------

    def _play(self, state: dict[str, Any], legal: list[str]) -> str:
        if "claim" in legal and self._claim_is_sure(state):
            return "claim"
        options: dict[int, list[str]] = {}
        for action in legal:
            if action.startswith("play "):
                options.setdefault(parse_card(action[5:7]), []).append(action)
        card = self._choose(state, sorted(options))
        choices = options[card]
        # Holding T, 9 and A, any of them wins its trick: an announcement is always worth making.
        announce = [a for a in choices if a.endswith("politaine")]
        return announce[0] if announce else choices[0]

    def _choose(self, state: dict[str, Any], cards: list[int]) -> int:
        hand = _mask(state["hand"])
        played = _played(state)
        trick = [parse_card(c) for c in state["trick"]["cards"]]
        if not trick:
            return self._lead(state, hand, played, cards)
        led = trick[0] >> 3
        best = min(c for c in trick if c >> 3 == led)
        winner_pos = trick.index(best)
        partner_wins = (state["trick"]["leader"] + winner_pos) % 2 == self.seat % 2
        last = len(trick) == 3
        beating = [c for c in cards if c >> 3 == led and c < best]
        on_table = sum(CARD_THIRDS[c] for c in trick)
        if partner_wins and (last or _is_master(best, played | hand)):
            return max(cards, key=lambda c: (CARD_THIRDS[c], -c & 7, -c))  # feed points
        if beating:
            run = self._politaine_card(hand, beating)
            if run is not None:
                return run
            if last or on_table >= 3:
                return max(beating)  # the cheapest card that wins
            masters = [c for c in beating if _is_master(c, played | hand)]
            if masters:
                return min(masters, key=lambda c: CARD_THIRDS[c])
        return _cheapest(cards)

    def _lead(self, state: dict[str, Any], hand: int, played: int, cards: list[int]) -> int:
        run = self._politaine_card(hand, cards)
        if run is not None:
            return run
        masters = [c for c in cards if _is_master(c, played | hand)]
        if masters:
            return max(masters, key=lambda c: (CARD_THIRDS[c], -c))
        return _cheapest(cards)

    @staticmethod
    def _politaine_card(hand: int, cards: list[int]) -> int | None:
        """Start or continue a run from the top: A first (a trick worth a point), then T, 9."""
        for suit in range(4):
            if hand & TNA_MASKS[suit] == TNA_MASKS[suit]:
                for card in (suit * 8 + 2, suit * 8, suit * 8 + 1):
                    if card in cards:
                        return card
        return None

    def _claim_is_sure(self, state: dict[str, Any]) -> bool:
        team = self.seat % 2
        melds = sum(
            _MELD_POINTS.get(s["say"].split(" ")[1], 0)
            for s in state["said"]
            if s["say"].startswith("meld ") and s["seat"] % 2 == team
        )
        total = state["score"][team] + state["taken"][team] // 3 + melds
        return total >= self.target


def _mask(card_codes: list[str]) -> int:
    mask = 0
    for code in card_codes:
        mask |= 1 << parse_card(code)
    return mask


def _played(state: dict[str, Any]) -> int:
    mask = 0
    for trick in state["tricks"]:
        mask |= _mask(trick["cards"])
    return mask | _mask(state["trick"]["cards"])


def _is_master(card: int, known: int) -> bool:
    """No stronger card of its suit can still be out against it."""
    suit_base = card & ~7
    stronger = ((1 << card) - 1) & ~((1 << suit_base) - 1)
    return stronger & ~known == 0


def _cheapest(cards: list[int]) -> int:
    """The card that gives away least: lowest value, then lowest rank."""
    return min(cards, key=lambda c: (CARD_THIRDS[c], -(c & 7)))
