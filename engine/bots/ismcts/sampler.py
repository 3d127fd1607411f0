"""Determinizations: the unseen cards dealt to the other three seats, keeping every hard fact
of a ``View``.

Invariant: a sampled deal gives every other seat exactly its count of cards, none it is known
not to hold, all it is known to hold, and its announced number of complete T-9-A suits. Given
the poule suits, the deal is uniform among those that keep the facts: the cards fall into
classes by the set of seats that may hold them, and the split of each class between its seats
is drawn with its exact weight (a product of binomials and one multinomial). The poule suits
themselves are drawn uniformly among the suits each announcing seat could complete. A deal
in which a hand as dealt held an instant win (four 7s, four 8s, where they win) is drawn again:
the deal would not have been played.
"""

from __future__ import annotations

import random
from bisect import bisect
from functools import lru_cache
from itertools import accumulate
from math import comb, factorial

from engine.bots.ismcts.view import View
from engine.cards import RANK_7, RANK_8, RANK_MASKS, TNA_MASKS, cards_of, mask_of
from engine.rules import RuleSet

#: A split of the classes: for the pair classes {0,1}, {0,2}, {1,2} how many go to the first seat
#: of the pair, then how many of the class {0,1,2} go to each seat.
Split = tuple[int, int, int, int, int, int]


class Infeasible(Exception):
    """No deal keeps the facts with the poule suits drawn (draw again)."""


class Sampler:
    """Draws hidden hands for one ``View``; the classes are worked out once per view."""

    def __init__(self, view: View, rng: random.Random, rules: RuleSet) -> None:
        self.view = view
        self.rng = rng
        self.instant = tuple(
            RANK_MASKS[rank]
            for rank, on in ((RANK_7, rules.four_sevens), (RANK_8, rules.four_eights))
            if on
        )
        self.others = tuple(s for s in range(4) if s != view.seat)
        self.allowed = tuple(view.unknown & ~view.forbidden[s] for s in self.others)
        self.fixed = None if any(view.poules) else self._classes(self._must())

    def deal(self) -> tuple[int, int, int, int]:
        """The four hands now: the view's own hand and a draw for the others."""
        for _ in range(200):
            try:
                classes = self.fixed or self._classes(self._must())
                hands = self._draw(*classes)
            except Infeasible:
                continue
            if not self._instant_win(hands):
                return hands
        raise Infeasible("no deal keeps the facts of this view")

    def _instant_win(self, hands: tuple[int, int, int, int]) -> bool:
        """Whether a hand as dealt held four 7s or four 8s that would have won at the deal."""
        for rank_cards in self.instant:
            for seat in self.others:
                if (hands[seat] | self.view.played[seat]) & rank_cards == rank_cards:
                    return True
        return False

    # -- the facts as classes ------------------------------------------------------------------

    def _must(self) -> list[int]:
        """The cards each other seat must hold, poule suits drawn included."""
        view = self.view
        must = [view.must[s] for s in self.others]
        for i, seat in enumerate(self.others):
            if view.poules[seat]:
                must[i] |= self._poule_cards(i, seat, must)
        return must

    def _poule_cards(self, i: int, seat: int, must: list[int]) -> int:
        """The unseen cards of poule suits drawn for ``seat``, enough to reach its announcement."""
        view, held, candidates = self.view, 0, []
        taken = sum(m for j, m in enumerate(must) if j != i)
        for suit_cards in TNA_MASKS:
            mine = view.played[seat] | must[i]
            rest = suit_cards & ~mine
            if not rest:
                held += 1
            elif rest & view.unknown == rest and not rest & (taken | ~self.allowed[i]):
                candidates.append(rest)
        need = view.poules[seat] - held
        if need > len(candidates):
            raise Infeasible
        return sum(self.rng.sample(candidates, need)) if need > 0 else 0

    def _classes(self, must: list[int]) -> tuple[list[int], tuple[int, ...], list[list[int]]]:
        """``(must, room left per seat, the free cards of each class 1..7)``."""
        if must[0] & must[1] or must[0] & must[2] or must[1] & must[2]:
            raise Infeasible
        free = self.view.unknown & ~(must[0] | must[1] | must[2])
        room = []
        for i, seat in enumerate(self.others):
            left = self.view.counts[seat] - must[i].bit_count()
            if left < 0 or must[i] & ~self.allowed[i]:
                raise Infeasible
            room.append(left)
        a0, a1, a2 = self.allowed
        classes = [[] for _ in range(8)]
        for kind in range(8):
            mask = free
            mask &= a0 if kind & 1 else ~a0
            mask &= a1 if kind & 2 else ~a1
            mask &= a2 if kind & 4 else ~a2
            classes[kind] = list(cards_of(mask))
        if classes[0]:
            raise Infeasible
        return must, tuple(room), classes

    # -- one draw ------------------------------------------------------------------------------

    def _draw(
        self, must: list[int], room: tuple[int, ...], classes: list[list[int]]
    ) -> tuple[int, int, int, int]:
        sizes = tuple(len(c) for c in classes)
        splits, weights = split_table(sizes, room)
        if not splits:
            raise Infeasible
        x3, x5, x6, y0, y1, _ = splits[bisect(weights, self.rng.random() * weights[-1])]
        got = list(must)
        got[0] |= mask_of(classes[1])
        got[1] |= mask_of(classes[2])
        got[2] |= mask_of(classes[4])
        for kind, first, second, count in ((3, 0, 1, x3), (5, 0, 2, x5), (6, 1, 2, x6)):
            cards = self._shuffled(classes[kind])
            got[first] |= mask_of(cards[:count])
            got[second] |= mask_of(cards[count:])
        cards = self._shuffled(classes[7])
        got[0] |= mask_of(cards[:y0])
        got[1] |= mask_of(cards[y0 : y0 + y1])
        got[2] |= mask_of(cards[y0 + y1 :])
        hands = [0, 0, 0, 0]
        hands[self.view.seat] = self.view.hand
        for i, seat in enumerate(self.others):
            hands[seat] = got[i]
        return tuple(hands)  # type: ignore[return-value]

    def _shuffled(self, cards: list[int]) -> list[int]:
        if len(cards) < 2:
            return cards
        out = cards[:]
        self.rng.shuffle(out)
        return out


@lru_cache(maxsize=4096)
def split_table(sizes: tuple[int, ...], room: tuple[int, ...]) -> tuple[list[Split], list[int]]:
    """Every split of the classes that fills each seat's room exactly, with cumulative weights
    (the number of deals each split stands for)."""
    r0 = room[0] - sizes[1]
    r1 = room[1] - sizes[2]
    r2 = room[2] - sizes[4]
    n3, n5, n6, n7 = sizes[3], sizes[5], sizes[6], sizes[7]
    splits: list[Split] = []
    weights: list[int] = []
    for x3 in range(n3 + 1):
        for x5 in range(n5 + 1):
            for x6 in range(n6 + 1):
                y0 = r0 - x3 - x5
                y1 = r1 - (n3 - x3) - x6
                y2 = r2 - (n5 - x5) - (n6 - x6)
                if y0 < 0 or y1 < 0 or y2 < 0 or y0 + y1 + y2 != n7:
                    continue
                ways = comb(n3, x3) * comb(n5, x5) * comb(n6, x6)
                ways *= factorial(n7) // (factorial(y0) * factorial(y1) * factorial(y2))
                splits.append((x3, x5, x6, y0, y1, y2))
                weights.append(ways)
    return splits, list(accumulate(weights))
