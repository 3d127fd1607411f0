"""A fit read as a board: rows sorted by rating, with intervals, the provisional flag and the
likelihood of superiority over the next row; a tournament's ranking is the same on its matches.

Imports neither Django nor anything of ``arena`` outside ``arena.rating``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

from arena.rating.data import Result
from arena.rating.fit import PRIOR_DRAWS, Fit, fit_ratings

#: A version is provisional until it has played this many rated matches.
PROVISIONAL_MATCHES = 30


@dataclass(frozen=True)
class Rating:
    """One row of a board. ``ci95`` is the half-width of the 95% interval; ``provisional`` until
    ``PROVISIONAL_MATCHES`` matches, or while the record is all wins or all losses (the rating
    then rests on the prior); ``los_next`` is the likelihood that this version is stronger than
    the next row's (``None`` on the last row or when the next row is in another ``group``:
    versions that never met, directly or through opponents, are not comparable)."""

    version: Hashable
    elo: float
    ci95: float
    matches: int
    wins: int
    losses: int
    draws: int
    provisional: bool
    los_next: float | None
    group: int


def likelihood_of_superiority(fit: Fit, a: Hashable, b: Hashable) -> float | None:
    """P(Ra > Rb) under the fit's normal approximation: Φ((Ra − Rb) / sd(Ra − Rb)), with the
    covariance of the two estimates included; ``None`` across groups."""
    i, j = fit.index(a), fit.index(b)
    if fit.group[i] != fit.group[j]:
        return None
    diff = float(fit.elo[i] - fit.elo[j])
    var = float(fit.cov[i, i] + fit.cov[j, j] - 2 * fit.cov[i, j])
    if var <= 0:
        return 0.5 if diff == 0 else float(diff > 0)
    return 0.5 * math.erfc(-diff / math.sqrt(2 * var))


def board(fit: Fit) -> list[Rating]:
    """The fit's rows, best first (ties by order of first appearance), each group of versions
    that met (directly or through opponents) together, the largest group first: ratings of two
    groups are each centred on their own and say nothing of each other, so no row of one is
    ranked between rows of another."""
    group = np.asarray(fit.group, dtype=int)
    sizes = np.bincount(group) if len(group) else np.zeros(0, dtype=int)
    top = np.full(len(sizes), -np.inf)
    np.maximum.at(top, group, fit.elo)  # each group's best rating
    order = sorted(range(len(fit.ids)), key=lambda k: (
        -sizes[group[k]], -top[group[k]], group[k], -fit.elo[k], k))
    ci95 = fit.ci95
    rows = []
    for place, k in enumerate(order):
        nxt = order[place + 1] if place + 1 < len(order) else None
        matches = int(fit.games[k])
        rows.append(
            Rating(
                version=fit.ids[k],
                elo=float(fit.elo[k]),
                ci95=float(ci95[k]),
                matches=matches,
                wins=int(fit.wins[k]),
                losses=int(fit.losses[k]),
                draws=int(fit.draws[k]),
                provisional=matches < PROVISIONAL_MATCHES or bool(fit.perfect[k]),
                los_next=None
                if nxt is None
                else likelihood_of_superiority(fit, fit.ids[k], fit.ids[nxt]),
                group=int(fit.group[k]),
            )
        )
    return rows


def tournament_ranking(
    results: Iterable[Result | tuple], *, prior: float = PRIOR_DRAWS
) -> list[Rating]:
    """The ranking of one tournament from its own matches alone: the board of their fit."""
    return board(fit_ratings(results, prior=prior))
