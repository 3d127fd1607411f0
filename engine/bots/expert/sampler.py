"""Uniform sampling of the hidden hands consistent with a ``View``.

Every unknown card may go to the hidden seats that are not forbidden it (a required card to its
one seat). Cards with the same set of allowed seats form a group; the number of deals for each
way of splitting the groups' counts is a product of multinomials, so counting the splits (a small
DP over the seats' remaining capacities) and drawing one in proportion, then shuffling inside
groups, samples *uniformly* among consistent deals without rejection. Facts a group split cannot
express (poules announced, no instant win dealt) are checked by rejection.

Invariant of every sample: each hidden seat gets exactly ``view.size[s]`` cards, all of its
required cards and none of its forbidden ones; the seat's own hand is its own.
"""

from __future__ import annotations

import random
from functools import cache
from math import comb

from engine.cards import RANK_MASKS, SUIT_MASKS, TNA_MASKS, cards_of
from engine.rules import RuleSet

from .view import View

_SEVENS, _EIGHTS = RANK_MASKS[7], RANK_MASKS[6]


class Inconsistent(Exception):
    """No deal satisfies the constraints (a fact read wrongly); the caller relaxes them."""


class Sampler:
    """Draws hidden hands for one decision; build once, call ``draw`` many times."""

    def __init__(self, view: View, rules: RuleSet, rng: random.Random) -> None:
        self.view = view
        self.rules = rules
        self.rng = rng
        self.seats = [s for s in range(4) if s != view.seat]
        try:
            self._prepare(view.forbidden, view.required)
        except Inconsistent:
            try:  # keep the voids, drop the inferences (melds, low lead, announcements)
                self._prepare(_voids_only(view), [0, 0, 0, 0])
            except Inconsistent:
                self._prepare([0, 0, 0, 0], [0, 0, 0, 0])

    def _prepare(self, forbidden: list[int], required: list[int]) -> None:
        groups: dict[int, list[int]] = {}
        for card in cards_of(self.view.unknown):
            bit = 1 << card
            owners = [i for i, s in enumerate(self.seats) if required[s] & bit]
            if owners:
                allowed = 1 << owners[0]
            else:
                allowed = sum(1 << i for i, s in enumerate(self.seats) if not forbidden[s] & bit)
            if not allowed:
                raise Inconsistent
            groups.setdefault(allowed, []).append(card)
        self.groups = sorted(groups.items())
        caps = tuple(self.view.size[s] for s in self.seats)
        self._memo: dict[tuple[int, tuple[int, int, int]], int] = {}
        self._option_memo: dict[tuple[int, tuple[int, int, int]], tuple[list, int]] = {}
        if self._count(0, caps) == 0:
            raise Inconsistent
        self.caps = caps

    def _count(self, index: int, caps: tuple[int, int, int]) -> int:
        """Deals of groups ``index..`` that fill ``caps`` exactly (memoised)."""
        if index == len(self.groups):
            return 0 if any(caps) else 1
        key = (index, caps)
        found = self._memo.get(key)
        if found is None:
            found = sum(
                w * self._count(index + 1, rest) for w, rest, _ in self._splits(index, caps)
            )
            self._memo[key] = found
        return found

    def _splits(self, index: int, caps: tuple[int, int, int]):
        allowed, cards = self.groups[index]
        n = len(cards)
        seats = [i for i in range(3) if allowed >> i & 1]
        for parts in _compositions(n, len(seats)):
            rest = list(caps)
            ways = 1
            left = n
            ok = True
            for seat, k in zip(seats, parts, strict=True):
                if k > rest[seat]:
                    ok = False
                    break
                rest[seat] -= k
                ways *= comb(left, k)
                left -= k
            if ok:
                yield ways, tuple(rest), dict(zip(seats, parts, strict=True))

    def _options(self, index: int, caps: tuple[int, int, int]) -> tuple[list, int]:
        """The splits of group ``index`` with their deal counts, and their total (memoised)."""
        key = (index, caps)
        found = self._option_memo.get(key)
        if found is None:
            options = [
                (w * self._count(index + 1, rest), rest, parts)
                for w, rest, parts in self._splits(index, caps)
            ]
            options = [o for o in options if o[0]]
            found = options, sum(o[0] for o in options)
            self._option_memo[key] = found
        return found

    def _draw_once(self) -> tuple[int, int, int, int]:
        rng = self.rng
        caps = self.caps
        hands = [0, 0, 0]
        for index, (_, cards) in enumerate(self.groups):
            options, total = self._options(index, caps)
            pick = rng.randrange(total)
            chosen = options[-1]
            for option in options:
                if pick < option[0]:
                    chosen = option
                    break
                pick -= option[0]
            _, caps, parts = chosen
            shuffled = list(cards)
            rng.shuffle(shuffled)
            at = 0
            for seat, k in parts.items():
                for card in shuffled[at : at + k]:
                    hands[seat] |= 1 << card
                at += k
        out = [0, 0, 0, 0]
        out[self.view.seat] = self.view.hand
        for i, s in enumerate(self.seats):
            out[s] = hands[i]
        return out[0], out[1], out[2], out[3]

    def draw(self, tries: int = 40) -> tuple[int, int, int, int]:
        """Hands held now by the four seats; soft facts checked by rejection, ``tries`` times."""
        hands = self._draw_once()
        for _ in range(tries):
            if self._plausible(hands):
                return hands
            hands = self._draw_once()
        return hands

    def _plausible(self, hands: tuple[int, int, int, int]) -> bool:
        view = self.view
        rules = self.rules
        for s in range(4):
            dealt = hands[s] | view.by_seat[s]
            if view.poules[s] and sum(1 for m in TNA_MASKS if dealt & m == m) < view.poules[s]:
                return False
            if rules.four_sevens and dealt & _SEVENS == _SEVENS:
                return False
            if rules.four_eights and dealt & _EIGHTS == _EIGHTS:
                return False
        return True


def _voids_only(view: View) -> list[int]:
    """The suits each seat is known to lack, without the other inferences."""
    return [
        sum(m for m in SUIT_MASKS if (view.forbidden[s] & m) == (m & ~view.played))
        for s in range(4)
    ]


@cache
def _compositions(n: int, parts: int) -> tuple[tuple[int, ...], ...]:
    """All ways to write ``n`` as an ordered sum of ``parts`` non-negative ints."""
    if parts == 1:
        return ((n,),)
    return tuple((k, *rest) for k in range(n + 1) for rest in _compositions(n - k, parts - 1))
