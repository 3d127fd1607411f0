"""Synthetic results of fixed-strength versions played in duplicate pairs, for tests and
benchmarks.

A duplicate pair is two matches on one deal with the teams' seats swapped. The deal's luck goes
to the seats, so it helps A in one match and B in the other: A wins match one with probability
p + u and match two with p − u, where p = expected score from the true ratings and u, drawn per
pair, is ``luck`` · min(p, 1 − p) · Uniform(−1, 1). The pair's mean is exactly p, its two results
are negatively correlated. A fraction ``draw_rate`` of matches is drawn (scaled down where p is
extreme so every probability stays in [0, 1]); the expected score of each match stays p.

Imports neither Django nor anything of ``arena`` outside ``arena.rating``.
"""

from __future__ import annotations

import numpy as np

from arena.rating.data import Result


def duplicate_pairs(
    elo: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    rng: np.random.Generator,
    *,
    luck: float = 0.8,
    draw_rate: float = 0.1,
) -> list[Result]:
    """Two results per pairing ``(a[k], b[k])`` (versions are indices into ``elo``), cluster
    ``k``; scores are A's."""
    a = np.asarray(a)
    b = np.asarray(b)
    p = 1.0 / (1.0 + 10.0 ** (-(elo[a] - elo[b]) / 400.0))
    u = luck * np.minimum(p, 1.0 - p) * rng.uniform(-1.0, 1.0, len(p))
    scores = []
    for q in (p + u, p - u):
        # P(draw) = d, P(win) = q − d/2, P(loss) = 1 − q − d/2: expected score q.
        d = np.minimum(draw_rate, 2 * np.minimum(q, 1.0 - q))
        x = rng.uniform(size=len(q))
        scores.append(np.where(x < q - d / 2, 1.0, np.where(x < q + d / 2, 0.5, 0.0)))
    out: list[Result] = []
    for k, (va, vb, s1, s2) in enumerate(
        zip(a.tolist(), b.tolist(), scores[0].tolist(), scores[1].tolist(), strict=True)
    ):
        out.append(Result(va, vb, s1, k))
        out.append(Result(va, vb, s2, k))
    return out


def random_pairings(
    versions: int, pairs: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``pairs`` pairings of two distinct versions drawn uniformly."""
    a = rng.integers(0, versions, pairs)
    b = (a + rng.integers(1, versions, pairs)) % versions
    return a, b
