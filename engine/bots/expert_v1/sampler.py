"""Uniform sampling of the hidden hands consistent with a ``View``.

Every unknown card may go to the hidden seats that are not forbidden it (a required card to its
one seat). Cards with the same set of allowed seats form a group; the number of deals for each
way of splitting the groups' counts is a product of multinomials, so counting the splits (a small
DP over the seats' remaining capacities) and drawing one in proportion, then shuffling inside
groups, samples *uniformly* among consistent deals without rejection (``_Split``).

``poules n`` (n complete T-9-A suits dealt) is a disjunction: ``Sampler`` enumerates which suits
each announcer holds, makes them required, and picks a choice in proportion to its number of
deals. The one fact left to rejection is that nobody was dealt an instant win (four 7s or 8s).
If the facts contradict each other (an inference read wrongly), they are relaxed: first to the
voids, then to the hand sizes alone.

Invariant of every sample: each hidden seat gets exactly ``view.size[s]`` cards, none of a suit it
failed to follow; the seat's own hand is its own.
"""

from __future__ import annotations

import itertools
import random
from functools import cache
from math import comb

from engine.cards import RANK_MASKS, SUIT_MASKS, TNA_MASKS, cards_of
from engine.rules import RuleSet

from .view import View

_SEVENS, _EIGHTS = RANK_MASKS[7], RANK_MASKS[6]
Hands = tuple[int, int, int, int]


class Inconsistent(Exception):
    """No deal satisfies the constraints."""


class _Split:
    """Exact uniform sampler for fixed forbidden and required cards per seat."""

    def __init__(self, view: View, forbidden: list[int], required: list[int]) -> None:
        self.view = view
        self.seats = [s for s in range(4) if s != view.seat]
        groups: dict[int, list[int]] = {}
        for card in cards_of(view.unknown):
            bit = 1 << card
            owners = [i for i, s in enumerate(self.seats) if required[s] & bit]
            if len(owners) > 1:
                raise Inconsistent
            if owners:
                allowed = 1 << owners[0] if not forbidden[self.seats[owners[0]]] & bit else 0
            else:
                allowed = sum(1 << i for i, s in enumerate(self.seats) if not forbidden[s] & bit)
            if not allowed:
                raise Inconsistent
            groups.setdefault(allowed, []).append(card)
        self.groups = sorted(groups.items())
        self._memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self._option_memo: dict[tuple[int, tuple[int, ...]], tuple[list, int]] = {}
        self.caps = tuple(view.size[s] for s in self.seats)
        self.deals = self._count(0, self.caps)
        if self.deals == 0:
            raise Inconsistent

    def _count(self, index: int, caps: tuple[int, ...]) -> int:
        """Deals of groups ``index..`` that fill ``caps`` exactly (memoised)."""
        if index == len(self.groups):
            return 0 if any(caps) else 1
        key = (index, caps)
        found = self._memo.get(key)
        if found is None:
            splits = self._splits(index, caps)
            found = sum(w * self._count(index + 1, rest) for w, rest, _ in splits)
            self._memo[key] = found
        return found

    def _splits(self, index: int, caps: tuple[int, ...]):
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

    def _options(self, index: int, caps: tuple[int, ...]) -> tuple[list, int]:
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

    def draw(self, rng: random.Random) -> Hands:
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


class Sampler:
    """Draws hidden hands for one decision; build once, call ``draw`` many times."""

    def __init__(self, view: View, rules: RuleSet, rng: random.Random) -> None:
        self.view = view
        self.rules = rules
        self.rng = rng
        self.relaxed = 0  # 0: every fact; 1: voids only; 2: sizes only
        for relaxed, (forbidden, required, poules) in enumerate(
            (
                (view.forbidden, view.required, view.poules),
                (_voids_only(view), [0, 0, 0, 0], [0, 0, 0, 0]),
                ([0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]),
            )
        ):
            self.splits = _poule_splits(view, forbidden, required, poules)
            if self.splits:
                self.relaxed = relaxed
                break
        self.total = sum(s.deals for s in self.splits)

    def _draw_once(self) -> Hands:
        pick = self.rng.randrange(self.total)
        for split in self.splits:
            if pick < split.deals:
                return split.draw(self.rng)
            pick -= split.deals
        return self.splits[-1].draw(self.rng)

    def draw(self, tries: int = 40) -> Hands:
        """Hands held now by the four seats; no instant win dealt, checked ``tries`` times."""
        hands = self._draw_once()
        for _ in range(tries):
            if self.plausible(hands):
                return hands
            hands = self._draw_once()
        return hands

    def plausible(self, hands: Hands) -> bool:
        """No seat was dealt four 7s (or 8s) where that wins at once: the deal would be over."""
        rules = self.rules
        if not (rules.four_sevens or rules.four_eights):
            return True
        for s in range(4):
            dealt = hands[s] | self.view.by_seat[s]
            if rules.four_sevens and dealt & _SEVENS == _SEVENS:
                return False
            if rules.four_eights and dealt & _EIGHTS == _EIGHTS:
                return False
        return True


def _poule_splits(
    view: View, forbidden: list[int], required: list[int], poules: list[int]
) -> list[_Split]:
    """One ``_Split`` per choice of the complete suits each poule announcer was dealt."""
    choices = []
    for s in range(4):
        if s == view.seat or not poules[s]:
            choices.append([0])
            continue
        feasible = [
            m
            for m in TNA_MASKS
            if not m & forbidden[s] and m & ~view.by_seat[s] & ~view.unknown == 0
        ]
        choices.append([sum(c) for c in itertools.combinations(feasible, poules[s])])
    splits = []
    for extra in itertools.product(*choices):
        need = [required[s] | (extra[s] & view.unknown) for s in range(4)]
        try:
            splits.append(_Split(view, forbidden, need))
        except Inconsistent:
            continue
    return splits


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
