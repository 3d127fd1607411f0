"""Ratings maths: a Bradley-Terry maximum-likelihood fit on the Elo scale, with cluster-robust
intervals, likelihood of superiority and tournament rankings.

Pure functions over plain Python values and numpy arrays. Modules of this package import neither
Django nor Celery nor anything of ``arena`` outside ``arena.rating``; the platform turns rows into
``Result`` tuples and the fit back into rows (``arena.services.ratings``).

The model: P(A beats B) = 1 / (1 + 10^(−(Ra − Rb)/400)); a draw counts half a point to each side
(the "half points" likelihood of Ordo). See ``arena.rating.fit`` for the prior and the anchor and
``arena.rating.covariance`` for the intervals.
"""

from arena.rating.board import (
    Rating,
    board,
    likelihood_of_superiority,
    tournament_ranking,
)
from arena.rating.data import Result
from arena.rating.fit import (
    CENTER,
    ELO_PER_LOGIT,
    PRIOR_DRAWS,
    Fit,
    expected_score,
    fit_ratings,
)

__all__ = [
    "CENTER",
    "ELO_PER_LOGIT",
    "PRIOR_DRAWS",
    "Fit",
    "Rating",
    "Result",
    "board",
    "expected_score",
    "fit_ratings",
    "likelihood_of_superiority",
    "tournament_ranking",
]
