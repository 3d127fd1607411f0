"""Properties of the fit: order independence, score equations at the optimum, the prior, groups,
and the board read from a fit."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from arena.rating import board, expected_score, fit_ratings, likelihood_of_superiority
from arena.rating import fit as fit_module
from arena.rating.data import aggregate, encode, with_virtual_draws
from arena.rating.simulate import duplicate_pairs, random_pairings


def league(seed: int = 3, versions: int = 12, pairs: int = 150) -> list:
    rng = np.random.default_rng(seed)
    elo = rng.normal(1500.0, 150.0, versions)
    a, b = random_pairings(versions, pairs, rng)
    return duplicate_pairs(elo, a, b, rng)


def test_shuffling_the_results_changes_nothing() -> None:
    results = league()
    shuffled = results[:]
    random.Random(5).shuffle(shuffled)
    # Swapping the sides of a result (B's view of the same game) changes nothing either.
    flipped = [(b, a, 1.0 - s, c) for a, b, s, c in shuffled]
    first = fit_ratings(results)
    for other in (fit_ratings(shuffled), fit_ratings(flipped)):
        order = [other.index(v) for v in first.ids]
        assert other.elo[order] == pytest.approx(first.elo, abs=1e-7)
        assert other.cov[np.ix_(order, order)] == pytest.approx(first.cov, abs=1e-7)
        assert [r.version for r in board(other)] == [r.version for r in board(first)]


def test_actual_equals_expected_without_prior() -> None:
    results = league()
    fit = fit_ratings(results, prior=0)
    actual = np.zeros(len(fit.ids))
    expected = np.zeros(len(fit.ids))
    for a, b, s, _ in results:
        i, j = fit.index(a), fit.index(b)
        p = expected_score(fit.elo[i], fit.elo[j])
        actual[i] += s
        actual[j] += 1 - s
        expected[i] += p
        expected[j] += 1 - p
    assert actual == pytest.approx(expected, abs=1e-6)
    assert actual == pytest.approx(fit.points)


def test_actual_equals_expected_with_the_virtual_draws() -> None:
    results = league()
    fit = fit_ratings(results)
    games = encode(results)
    pairs = with_virtual_draws(aggregate(games), games.size, fit_module.PRIOR_DRAWS)
    order = [fit.index(v) for v in games.ids]
    elo = fit.elo[order]
    p = 1 / (1 + 10 ** (-(elo[pairs.i] - elo[pairs.j]) / 400))
    size = games.size
    actual = np.bincount(pairs.i, pairs.w, size) + np.bincount(pairs.j, pairs.n - pairs.w, size)
    expected = np.bincount(pairs.i, pairs.n * p, size) + np.bincount(
        pairs.j, pairs.n * (1 - p), size
    )
    assert actual == pytest.approx(expected, abs=1e-6)
    # Real games alone do not balance: the prior pulls.
    real = aggregate(games)
    p_real = 1 / (1 + 10 ** (-(elo[real.i] - elo[real.j]) / 400))
    real_expected = np.bincount(real.i, real.n * p_real, size) + np.bincount(
        real.j, real.n * (1 - p_real), size
    )
    assert not np.allclose(fit.points[order], real_expected, atol=1e-3)


def test_a_perfect_record_stays_finite_and_provisional() -> None:
    results = [("champ", "x", 1.0, k // 2) for k in range(40)]
    results += [("x", "y", s, 100 + k // 2) for k, s in enumerate([1.0, 0.0, 0.5, 1.0] * 10)]
    with pytest.raises(ValueError):
        fit_ratings(results, prior=0)
    fit = fit_ratings(results)
    rows = {r.version: r for r in board(fit)}
    champ = rows["champ"]
    assert np.isfinite(champ.elo) and champ.elo > rows["x"].elo + 300
    assert champ.matches == 40 and champ.wins == 40 and champ.provisional
    assert not rows["x"].provisional and rows["y"].matches == 40
    # Its interval is the model-based one, not the collapsed sandwich.
    k = fit.index("champ")
    assert fit.cov[k, k] == pytest.approx(fit.model_cov[k, k])
    assert champ.ci95 > 100


def test_a_sandwich_that_collapses_without_a_perfect_record_is_floored() -> None:
    """The cluster-robust variance also collapses where a version's residuals all but vanish
    without a perfect record: one pair split 1-1, or a record one-sided against each opponent
    (a chain of 20-0 wins). Those versions get at least the model-based variance, so a version
    of two matches never shows a narrower interval than one of sixty."""
    rng = random.Random(7)
    results = [("a", "b", float(rng.random() < 0.6), k // 2) for k in range(60)]
    results += [("c", "b", 1.0, 1000), ("c", "b", 0.0, 1000)]  # one pair, split
    fit = fit_ratings(results)
    rows = {r.version: r for r in board(fit)}
    k = fit.index("c")
    assert fit.cov[k, k] >= fit.model_cov[k, k] * (1 - 1e-9)
    assert rows["c"].ci95 > rows["a"].ci95
    chain = [(f"v{i}", f"v{i + 1}", 1.0, (i, k // 2)) for i in range(4) for k in range(20)]
    fit = fit_ratings(chain)
    for version in ("v1", "v2", "v3"):  # one-sided against both neighbours, 40 matches each
        k = fit.index(version)
        assert fit.cov[k, k] >= fit.model_cov[k, k] * (1 - 1e-9), version

def test_provisional_until_30_matches() -> None:
    results = [("a", "b", float(k % 3 == 0), k // 2) for k in range(29)]
    results += [("a", "c", float(k % 2), 50 + k // 2) for k in range(40)]
    rows = {r.version: r for r in board(fit_ratings(results))}
    assert rows["b"].matches == 29 and rows["b"].provisional
    assert rows["c"].matches == 40 and not rows["c"].provisional
    assert rows["a"].matches == 69 and not rows["a"].provisional


def test_separate_groups_are_each_centred_and_not_compared() -> None:
    results = [("a", "b", 1.0, 0), ("a", "b", 0.5, 0), ("c", "d", 0.0, 1), ("c", "d", 1.0, 2)]
    fit = fit_ratings(results)
    a, b, c, d = (fit.index(x) for x in "abcd")
    assert fit.elo[a] + fit.elo[b] == pytest.approx(3000.0)
    assert fit.elo[c] + fit.elo[d] == pytest.approx(3000.0)
    assert fit.group[a] == fit.group[b] != fit.group[c] == fit.group[d]
    assert fit.cov[a, c] == pytest.approx(0.0, abs=1e-9)
    assert likelihood_of_superiority(fit, "a", "c") is None
    assert likelihood_of_superiority(fit, "a", "b") > 0.5


def test_the_board_keeps_each_group_together_largest_first() -> None:
    """Groups that never met are each centred on their own: the board ranks no row of one
    between rows of another (a separate pair's 9-1 winner once sat between A and B of the main
    group), the largest group first, and the likelihood of superiority stays within groups."""
    rng = random.Random(3)
    edge = {("A", "B"): 0.7, ("A", "C"): 0.85, ("B", "C"): 0.7}
    results = [(a, b, float(rng.random() < edge[a, b]), (a, b, k // 2))
               for a, b in itertools.combinations("ABC", 2) for k in range(80)]
    results += [("P", "Q", float(k != 0), ("P", "Q", k // 2)) for k in range(10)]
    fit = fit_ratings(results)
    assert fit.elo[fit.index("P")] > fit.elo[fit.index("B")]  # by rating alone it would sit
    rows = board(fit)                                         # between A and B or above
    assert [r.version for r in rows] == ["A", "B", "C", "P", "Q"]
    assert [r.los_next is None for r in rows] == [False, False, True, False, True]


def test_anchor_fixes_one_version() -> None:
    results = league()
    by_mean = fit_ratings(results)
    anchored = fit_ratings(results, anchor=(0, 1000.0))
    k = anchored.index(0)
    assert anchored.elo[k] == 1000.0 and anchored.ci95[k] == 0.0
    assert anchored.elo - by_mean.elo == pytest.approx(
        np.full(len(by_mean.ids), 1000.0 - by_mean.elo[by_mean.index(0)])
    )


def test_self_play_is_ignored_and_bad_scores_refused() -> None:
    fit = fit_ratings([("a", "a", 1.0, 0), ("a", "b", 1.0, 1), ("a", "b", 0.0, 1)])
    assert fit.ids == ("a", "b") and int(fit.games.sum()) == 4
    with pytest.raises(ValueError):
        fit_ratings([("a", "b", 0.7, 0)])
    assert fit_ratings([]).ids == ()


def test_conjugate_gradient_steps_agree_with_dense_steps(monkeypatch) -> None:
    """Large boards take sparse conjugate-gradient Newton steps: same optimum. A ladder (each
    version met only its neighbours) is the worst-conditioned case."""
    rng = np.random.default_rng(9)
    elo = np.cumsum(rng.normal(0, 40, 60))
    a = np.repeat(np.arange(59), 6)
    ladder = duplicate_pairs(elo, a, a + 1, rng)
    results = league(versions=40, pairs=400) + ladder
    dense = fit_ratings(results)
    monkeypatch.setattr(fit_module, "DENSE_LIMIT", 0)
    sparse = fit_ratings(results)
    assert sparse.elo == pytest.approx(dense.elo, abs=1e-6)
    assert sparse.cov == pytest.approx(dense.cov, abs=1e-6)


def test_board_is_sorted_with_los_to_the_next_row() -> None:
    fit = fit_ratings(league())
    rows = board(fit)
    assert [r.elo for r in rows] == sorted((r.elo for r in rows), reverse=True)
    for row, nxt in itertools.pairwise(rows):
        los = likelihood_of_superiority(fit, row.version, nxt.version)
        assert row.los_next == los and 0.5 <= los <= 1.0
        back = likelihood_of_superiority(fit, nxt.version, row.version)
        assert los + back == pytest.approx(1.0)
    assert rows[-1].los_next is None
    assert all(r.wins + r.losses + r.draws == r.matches for r in rows)
