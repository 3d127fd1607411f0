"""Covariance of the fitted ratings, in logits², for the mean-anchored parametrisation.

``inverse_information`` is the plain (model-based) covariance H⁺, the pseudo-inverse of the
observed information H (prior included): right when games are independent, and what published
Bradley-Terry standard errors are. The reported covariance is cluster-robust, H⁺ B H⁺ with
B = Σ_c g̃_c g̃_cᵀ, g_c the score (gradient) contribution of cluster c. The cluster is the duplicate
pair: its two matches share a deal, so their outcomes are correlated (usually negatively: the luck
of the cards goes to the seats, and the seats swap), and treating the pair as the sampling unit is
honest whatever that correlation is.

Small samples: the plain sandwich (CV1) is too narrow with few clusters per version (a seeded
simulation of 8 versions × 14–70 matches covered the truth 88–93% of the time). Where every
cluster holds games of a single pair of versions (always so on the platform), g_c = R_c (e_i − e_j)
and the cluster's leverage is a scalar h_c = w_c (e_i − e_j)ᵀ H⁺ (e_i − e_j), w_c its information;
we use the cluster jackknife CV3, g̃_c = g_c / (1 − h_c) (MacKinnon, Nielsen & Webb, "Cluster-robust
inference: A guide to empirical practice", J. Econometrics 2023, recommend it), with 1 − h_c
floored at 0.01 (h_c → 1 when one cluster is the only link between two parts of the board). Other
clusterings get CV1: g̃_c = g_c · sqrt(C/(C − 1)).

Imports neither Django nor anything of ``arena`` outside ``arena.rating``.
"""

from __future__ import annotations

import numpy as np

from arena.rating.data import Games, Pairs

#: Floor of 1 − h_c in the CV3 adjustment.
MIN_ONE_MINUS_LEVERAGE = 0.01


def inverse_information(pairs: Pairs, theta: np.ndarray, group: np.ndarray) -> np.ndarray:
    """The pseudo-inverse H⁺ of the information at ``theta``: the model-based covariance and the
    sandwich's bread.

    H is a Laplacian whose null space is spanned by the groups' indicator vectors; with P the
    projector on that space, H⁺ = (H + P)⁻¹ − P, and every row of H⁺ sums to 0 within a group.
    """
    size = len(theta)
    p = 1.0 / (1.0 + np.exp(-(theta[pairs.i] - theta[pairs.j])))
    weight = pairs.n * p * (1.0 - p)
    hess = laplacian(pairs.i, pairs.j, weight, size)
    null = null_projector(group)
    hinv = np.linalg.inv(hess + null) - null
    return (hinv + hinv.T) / 2


def cluster_covariance(games: Games, theta: np.ndarray, bread: np.ndarray) -> np.ndarray:
    """The sandwich H⁺ B H⁺ with clusters of real games (virtual draws are not data)."""
    meat = _meat(games, theta, bread)
    robust = bread @ meat @ bread
    return (robust + robust.T) / 2


def _meat(games: Games, theta: np.ndarray, bread: np.ndarray) -> np.ndarray:
    """B = Σ_c g̃_c g̃_cᵀ, g_c the sum over cluster c's games of (s − p)(e_a − e_b), adjusted
    (CV3 for single-pair clusters, CV1 otherwise)."""
    size = games.size
    p = 1.0 / (1.0 + np.exp(-(theta[games.a] - theta[games.b])))
    r = games.score - p
    lo, hi = np.minimum(games.a, games.b), np.maximum(games.a, games.b)
    key = lo * size + hi
    first = np.full(games.clusters, -1, dtype=np.int64)
    first[games.cluster] = key
    if (first[games.cluster] == key).all():
        # Each cluster holds games of one pair: g_c = R_c (e_i − e_j), B a Laplacian.
        r_lo = np.bincount(games.cluster, np.where(games.a == lo, r, -r), games.clusters)
        info = np.bincount(games.cluster, p * (1.0 - p), games.clusters)
        i, j = first // size, first % size
        leverage = info * (bread[i, i] + bread[j, j] - 2.0 * bread[i, j])
        r_lo = r_lo / np.maximum(1.0 - leverage, MIN_ONE_MINUS_LEVERAGE)
        return laplacian(i, j, r_lo**2, size)
    # General clusters: entries (cluster, version, value), joined with each other per cluster.
    cluster = np.concatenate([games.cluster, games.cluster])
    version = np.concatenate([games.a, games.b])
    key, inverse = np.unique(cluster * size + version, return_inverse=True)
    value = np.bincount(inverse, np.concatenate([r, -r]), len(key))
    cluster, version = key // size, key % size
    count = np.bincount(cluster, minlength=games.clusters)
    start = np.cumsum(count) - count
    reps = count[cluster]
    left = np.repeat(np.arange(len(key)), reps)
    offset = np.arange(len(left)) - np.repeat(np.cumsum(reps) - reps, reps)
    right = start[cluster[left]] + offset
    flat = np.bincount(
        version[left] * size + version[right], value[left] * value[right], size * size
    )
    c = games.clusters
    return flat.reshape(size, size) * (c / (c - 1) if c > 1 else 1.0)


def reanchor(cov: np.ndarray, group: np.ndarray, k: int) -> np.ndarray:
    """The covariance of θ − θ_k on ``k``'s group (unchanged elsewhere): re-anchors from the group
    mean to version ``k``, which gets zero variance (T V Tᵀ with T = I − 1_g e_kᵀ)."""
    m = (group == group[k]).astype(float)
    col = cov[:, k].copy()
    out = cov - np.outer(m, col) - np.outer(col, m) + cov[k, k] * np.outer(m, m)
    return (out + out.T) / 2


def laplacian(i: np.ndarray, j: np.ndarray, weight: np.ndarray, size: int) -> np.ndarray:
    """The dense Laplacian Σ weight·(e_i − e_j)(e_i − e_j)ᵀ."""
    flat = np.bincount(i * size + j, weight, size * size) + np.bincount(
        j * size + i, weight, size * size
    )
    flat = flat.reshape(size, size)
    lap = -flat
    lap[np.diag_indices(size)] = flat.sum(axis=1)
    return lap


def null_projector(group: np.ndarray) -> np.ndarray:
    """P = Σ_g 1_g 1_gᵀ / |g|: the projector onto the Laplacian's null space."""
    same = group[:, None] == group[None, :]
    return same / np.bincount(group)[group][:, None]
