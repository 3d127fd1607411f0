"""Results as arrays: version and cluster ids encoded as indices, games aggregated per pair of
versions, the prior's virtual draws, and the connected groups of the comparison graph.

Imports neither Django nor anything of ``arena`` outside ``arena.rating``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class Result(NamedTuple):
    """One game: ``score`` is A's score (1 win, 0.5 draw, 0 loss) against B; ``cluster`` names the
    unit of independent sampling (a duplicate pair's two matches share one), ``None`` for a game
    that is its own cluster."""

    a: Hashable
    b: Hashable
    score: float
    cluster: Hashable = None


@dataclass(frozen=True)
class Games:
    """Games as parallel arrays. Invariants: ``a[k] != b[k]``; indices ``< len(ids)``;
    ``score`` in {0, 0.5, 1}; ``cluster`` indices ``0 .. clusters - 1``."""

    ids: tuple[Hashable, ...]
    a: np.ndarray
    b: np.ndarray
    score: np.ndarray
    cluster: np.ndarray
    clusters: int

    @property
    def size(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class Pairs:
    """Games aggregated per unordered pair ``i < j``: ``n`` games (real plus virtual) in which
    ``i`` scored ``w`` points."""

    i: np.ndarray
    j: np.ndarray
    n: np.ndarray
    w: np.ndarray


def encode(results: Iterable[Result | tuple]) -> Games:
    """Index versions and clusters (sorted when they are all numbers or all strings, so the
    encoding does not depend on the order of ``results``).

    Games of a version against itself carry no information and are dropped; a score outside
    {0, 0.5, 1} is a ``ValueError``.
    """
    rows = [row for row in results if row[0] != row[1]]
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return Games((), empty, empty, np.zeros(0), empty, 0)
    cols = list(zip(*rows, strict=True))
    ids, index = _index(cols[0] + cols[1])
    scores = np.asarray(cols[2], dtype=float)
    if not np.isin(scores, (0.0, 0.5, 1.0)).all():
        raise ValueError("a score must be 0, 0.5 or 1")
    named = cols[3] if len(cols) > 3 else (None,) * len(rows)
    if None in named:
        named = tuple(("game", k) if c is None else c for k, c in enumerate(named))
    clusters, cluster = _index(named)
    return Games(
        ids=ids,
        a=index[: len(rows)],
        b=index[len(rows) :],
        score=scores,
        cluster=cluster,
        clusters=len(clusters),
    )


def _index(values: tuple) -> tuple[tuple[Hashable, ...], np.ndarray]:
    """Distinct values and each value's position among them."""
    kinds = set(map(type, values))
    if kinds == {int} or kinds == {str}:
        distinct, inverse = np.unique(np.asarray(values), return_inverse=True)
        return tuple(distinct.tolist()), inverse.astype(np.int64)
    positions: dict[Hashable, int] = {}
    inverse = np.fromiter(
        (positions.setdefault(v, len(positions)) for v in values), np.int64, len(values)
    )
    return tuple(positions), inverse


def aggregate(games: Games) -> Pairs:
    """Sum games and points per unordered pair (the sufficient statistics of the fit)."""
    n = games.size
    lo = np.minimum(games.a, games.b)
    hi = np.maximum(games.a, games.b)
    points_lo = np.where(games.a == lo, games.score, 1.0 - games.score)
    key, inverse = np.unique(lo * n + hi, return_inverse=True)
    return Pairs(
        i=key // n,
        j=key % n,
        n=np.bincount(inverse, minlength=len(key)).astype(float),
        w=np.bincount(inverse, weights=points_lo, minlength=len(key)),
    )


def with_virtual_draws(pairs: Pairs, size: int, prior: float) -> Pairs:
    """Add the prior: each version brings ``prior`` virtual draws, shared equally among the
    distinct opponents it played, so pair (i, j) gains ``prior/k_i + prior/k_j`` draws.

    The prior only pulls opponents who met towards each other: it is translation invariant, so
    it keeps a perfect record finite without pulling the pool towards any value.
    """
    if prior <= 0:
        return pairs
    k = np.bincount(pairs.i, minlength=size) + np.bincount(pairs.j, minlength=size)
    extra = prior / k[pairs.i] + prior / k[pairs.j]
    return Pairs(i=pairs.i, j=pairs.j, n=pairs.n + extra, w=pairs.w + extra / 2)


def groups(size: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Connected groups of the comparison graph: the smallest member index of each version's
    group (hooking and pointer jumping; ratings of different groups are not comparable)."""
    label = np.arange(size)
    while True:
        li, lj = label[i], label[j]
        if (li == lj).all():
            return label
        low = np.minimum(li, lj)
        np.minimum.at(label, li, low)
        np.minimum.at(label, lj, low)
        while True:
            jumped = label[label]
            if (jumped == label).all():
                break
            label = jumped
