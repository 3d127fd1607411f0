"""Three players whose ratings and intervals have closed forms.

Derivation. A played B n₁ = 20 games and won w₁ = 15; A played C n₂ = 10 games and won 5; B and C
never met. The comparison graph is a tree, so the log-likelihood splits into two independent
binomial log-likelihoods, one in d₁ = θ_A − θ_B, one in d₂ = θ_C − θ_A (θ in natural-log odds):

    ℓ(d₁) = w₁·log σ(d₁) + (n₁ − w₁)·log(1 − σ(d₁))   ⇒   σ(d̂₁) = w₁/n₁,  d̂₁ = log(w₁/(n₁ − w₁)),

and the observed information is n₁·p̂₁(1 − p̂₁), so Var(d̂₁) = n₁ / (w₁(n₁ − w₁)). Here d̂₁ = log 3,
Var(d̂₁) = 20/75 = 4/15; d̂₂ = 0, Var(d̂₂) = 10/25 = 2/5; d̂₁ and d̂₂ are independent.

Anchored at B: R_A = d₁, R_C = d₁ + d₂, so Var(R_C) = 4/15 + 2/5 = 2/3 (logits²).
Anchored at the mean (R_A + R_B + R_C = 0): R_A = (d₁ − d₂)/3, R_B = −(2d₁ + d₂)/3,
R_C = (d₁ + 2d₂)/3, so Var(R_A) = (v₁ + v₂)/9, Var(R_B) = (4v₁ + v₂)/9, Var(R_C) = (v₁ + 4v₂)/9.
On the Elo scale multiply logits by 400/ln 10; the 95% half-width is 1.959964 standard errors.

The prior adds prior/k_i + prior/k_j virtual draws to a pair (k = number of opponents): with the
default 1, A–B gets 1/2 + 1/1 = 1.5 draws, A–C likewise, so d̂₁ = log((15 + 0.75)/(5 + 0.75)).

Cluster-robust (CV3), each game its own cluster: at the optimum Σ(s − p)² = n·p(1 − p) over a pair's
win/loss games, and a game's leverage is h = p(1 − p)·Var(d̂) = 1/n, so the meat of pair A–B is
n₁p̂₁(1 − p̂₁)/(1 − 1/n₁)² and Var_robust(d̂₁) = v₁·(n₁/(n₁ − 1))² = v₁·(20/19)²; likewise
Var_robust(d̂₂) = v₂·(10/9)².
"""

from __future__ import annotations

import math

import pytest

from arena.rating import ELO_PER_LOGIT, fit_ratings

Z95 = 1.959963984540054


def star() -> list[tuple[str, str, float, int]]:
    games = [("A", "B", 1.0)] * 15 + [("A", "B", 0.0)] * 5
    games += [("A", "C", 1.0)] * 5 + [("A", "C", 0.0)] * 5
    return [(a, b, s, k) for k, (a, b, s) in enumerate(games)]


V1, V2 = 20 / 75, 10 / 25


def test_anchored_ratings_and_exact_interval() -> None:
    fit = fit_ratings(star(), prior=0, anchor=("B", 1000.0))
    a, b, c = (fit.index(x) for x in "ABC")
    assert fit.elo[b] == 1000.0
    assert fit.elo[a] == pytest.approx(1000.0 + ELO_PER_LOGIT * math.log(3))
    assert fit.elo[c] == pytest.approx(fit.elo[a])
    assert fit.model_cov[b, b] == pytest.approx(0.0, abs=1e-12)
    assert fit.model_cov[a, a] == pytest.approx(V1 * ELO_PER_LOGIT**2)
    assert fit.model_cov[c, c] == pytest.approx((V1 + V2) * ELO_PER_LOGIT**2)
    # 95% interval of C around B: ±1.96 · sqrt(2/3) · 173.7 ≈ ±278.0 Elo.
    half = Z95 * math.sqrt(fit.model_cov[c, c])
    assert half == pytest.approx(Z95 * math.sqrt(2 / 3) * ELO_PER_LOGIT)
    assert half == pytest.approx(278.00, abs=0.01)


def test_mean_anchored_covariance() -> None:
    fit = fit_ratings(star(), prior=0)
    a, b, c = (fit.index(x) for x in "ABC")
    assert fit.elo.sum() == pytest.approx(4500.0)
    d1 = ELO_PER_LOGIT * math.log(3)
    assert fit.elo[a] == pytest.approx(1500.0 + d1 / 3)
    assert fit.elo[b] == pytest.approx(1500.0 - 2 * d1 / 3)
    scale = ELO_PER_LOGIT**2
    assert fit.model_cov[a, a] == pytest.approx((V1 + V2) / 9 * scale)
    assert fit.model_cov[b, b] == pytest.approx((4 * V1 + V2) / 9 * scale)
    assert fit.model_cov[c, c] == pytest.approx((V1 + 4 * V2) / 9 * scale)


def test_cluster_robust_with_one_game_per_cluster() -> None:
    fit = fit_ratings(star(), prior=0, anchor=("B", 0.0))
    a, c = fit.index("A"), fit.index("C")
    r1, r2 = V1 * (20 / 19) ** 2, V2 * (10 / 9) ** 2
    assert fit.cov[a, a] == pytest.approx(r1 * ELO_PER_LOGIT**2)
    assert fit.cov[c, c] == pytest.approx((r1 + r2) * ELO_PER_LOGIT**2)
    assert fit.ci95[c] == pytest.approx(Z95 * math.sqrt(r1 + r2) * ELO_PER_LOGIT)


def test_prior_as_virtual_draws() -> None:
    fit = fit_ratings(star(), anchor=("B", 0.0))
    a, c = fit.index("A"), fit.index("C")
    assert fit.elo[a] == pytest.approx(ELO_PER_LOGIT * math.log(15.75 / 5.75))
    assert fit.elo[c] == pytest.approx(fit.elo[a])
    # The information now counts the virtual games too: n = 21.5 with p = 15.75/21.5.
    p = 15.75 / 21.5
    assert fit.model_cov[a, a] == pytest.approx(ELO_PER_LOGIT**2 / (21.5 * p * (1 - p)))


def test_two_players_closed_form() -> None:
    """One pair, n = 40 games, 26 points with 4 draws: p̂ = 26/40 whatever the draws."""
    games = [("X", "Y", 1.0)] * 24 + [("X", "Y", 0.5)] * 4 + [("X", "Y", 0.0)] * 12
    fit = fit_ratings([(a, b, s, None) for a, b, s in games], prior=0, anchor=("Y", 0.0))
    p = 26 / 40
    assert fit.elo[fit.index("X")] == pytest.approx(400 * math.log10(p / (1 - p)))
    se = math.sqrt(fit.model_cov[0, 0] + fit.model_cov[1, 1])
    assert se == pytest.approx(ELO_PER_LOGIT / math.sqrt(40 * p * (1 - p)))
