"""The fit against published numbers: Agresti's 1987 American League East example.

Agresti, *Categorical Data Analysis* (2nd ed., 2002), §10.6, Table 10.11: the Bradley-Terry
log-odds abilities with Baltimore = 0, and the statement that their standard errors are about 0.3;
the four-decimal estimates and standard errors are those printed by the R package BradleyTerry2's
reproduction of that analysis (``tests/baseball.Rout.save``: Milwaukee 1.5814 (0.3433), Detroit
1.4364 (0.3396), Toronto 1.2945 (0.3367), New York 1.2476 (0.3359), Boston 1.1077 (0.3339),
Cleveland 0.6839 (0.3319)). Those are plain maximum likelihood and model-based (inverse
information) standard errors: our fit with the prior off, ``model_cov``, anchored at Baltimore.
"""

from __future__ import annotations

import itertools
import math

import pytest

from arena.rating import ELO_PER_LOGIT, fit_ratings

TEAMS = ["Milwaukee", "Detroit", "Toronto", "New York", "Boston", "Cleveland", "Baltimore"]
#: Wins of each team against the others, in the order of TEAMS (itself skipped).
WINS = {
    "Milwaukee": [7, 9, 7, 7, 9, 11],
    "Detroit": [6, 7, 5, 11, 9, 9],
    "Toronto": [4, 6, 7, 7, 8, 12],
    "New York": [6, 8, 6, 6, 7, 10],
    "Boston": [6, 2, 6, 7, 7, 12],
    "Cleveland": [4, 4, 5, 6, 6, 6],
    "Baltimore": [2, 4, 1, 3, 1, 7],
}
PUBLISHED = {
    "Milwaukee": (1.5814, 0.3433),
    "Detroit": (1.4364, 0.3396),
    "Toronto": (1.2945, 0.3367),
    "New York": (1.2476, 0.3359),
    "Boston": (1.1077, 0.3339),
    "Cleveland": (0.6839, 0.3319),
    "Baltimore": (0.0, 0.0),
}


def wins(team: str, opponent: str) -> int:
    others = [t for t in TEAMS if t != team]
    return WINS[team][others.index(opponent)]


def results() -> list[tuple[str, str, float, None]]:
    out = []
    for team in TEAMS:
        for opponent in TEAMS:
            if team != opponent:
                out += [(team, opponent, 1.0, None)] * wins(team, opponent)
    return out


def test_every_pair_played_13_games() -> None:
    for a, b in itertools.combinations(TEAMS, 2):
        assert wins(a, b) + wins(b, a) == 13


def test_abilities_and_standard_errors_match_agresti() -> None:
    fit = fit_ratings(results(), prior=0, anchor=("Baltimore", 0.0))
    for team, (ability, se) in PUBLISHED.items():
        k = fit.index(team)
        assert fit.elo[k] / ELO_PER_LOGIT == pytest.approx(ability, abs=5e-5)
        assert math.sqrt(fit.model_cov[k, k]) / ELO_PER_LOGIT == pytest.approx(se, abs=5e-5)


def test_table_10_11_to_two_places() -> None:
    fit = fit_ratings(results(), prior=0, anchor=("Baltimore", 0.0))
    abilities = sorted(round(float(x) / ELO_PER_LOGIT, 2) for x in fit.elo)
    assert abilities == [0.0, 0.68, 1.11, 1.25, 1.29, 1.44, 1.58]


def test_mean_anchor_is_the_same_fit_shifted() -> None:
    """The anchor moves the scale, never the differences; the mean anchor centres it at 1500."""
    by_team = fit_ratings(results(), prior=0, anchor=("Baltimore", 0.0))
    by_mean = fit_ratings(results(), prior=0)
    assert by_mean.elo.mean() == pytest.approx(1500.0)
    shift = by_mean.elo - by_team.elo
    assert shift == pytest.approx([shift[0]] * 7, abs=1e-9)
    # Variances of differences do not depend on the anchor either.
    m, b = by_team.index("Milwaukee"), by_team.index("Baltimore")
    for fit in (by_team, by_mean):
        var = fit.model_cov[m, m] + fit.model_cov[b, b] - 2 * fit.model_cov[m, b]
        assert math.sqrt(var) / ELO_PER_LOGIT == pytest.approx(0.3433, abs=5e-5)
