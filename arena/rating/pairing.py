"""Ladder pairing by expected information: which duplicate pairs to play next so the ratings'
uncertainty shrinks most, with a floor of variety, a fair share per owner and the guards other
ladders learned the hard way.

The belief about the ratings is the Bradley-Terry fit's mean and covariance Σ (Elo²,
``arena.rating.fit``); a version the fit has not seen yet gets the board's mean and a wide prior
(``NEWCOMER_SD``), uncorrelated. A duplicate pair of A and B is two games whose Fisher information
about Ra − Rb is w = 2·p(1 − p)/c² (p the expected score, c = 400/ln 10), so playing it would turn
Σ into Σ − w·Σd dᵀΣ / (1 + w·dᵀΣd) with d = e_A − e_B. Its value is the weighted drop of the
variances, Σ_k u_k·w·(Σd)_k² / (1 + w·dᵀΣd), with u_k = 1 while version k is provisional or its
interval is wider than the target, ``SETTLED_WEIGHT`` once it is narrower, and 0 for a placed
version with an all-win or all-loss record (its wide interval never attracts matches: Halite's
runaway). Pairs are chosen greedily, each choice updating Σ, so a batch spreads over the board;
pairings already queued or running are applied first, as if played.

Invariants of ``choose_pairings``: every pairing is two distinct eligible versions; a version
whose wait passed ``max_wait`` is paired before any other choice; a repeat meeting is worth
``VARIETY`` times less per earlier recent meeting (``PLACEMENT_VARIETY`` for a provisional side);
an owner whose versions took more than their fair share of recent slots is worth
fair/share times less, and past ``OWNER_CAP`` times it, nothing while another pairing is
left. Pure: numpy only; imports nothing of ``arena`` outside ``arena.rating``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from arena.rating.fit import CENTER, ELO_PER_LOGIT, Fit

#: Prior standard deviation (Elo) of a version the fit has not rated yet.
NEWCOMER_SD = 350.0
#: Half-width (Elo) of the 95% interval a placed version should reach.
TARGET_CI95 = 50.0
#: Weight of a version's variance once its interval is within the target.
SETTLED_WEIGHT = 0.05
#: Factor per earlier recent meeting of the same two versions.
VARIETY = 0.5
#: The same for a provisional version: placement spreads over distinct opponents.
PLACEMENT_VARIETY = 0.2
#: An owner past this many times the fair share of recent slots plays only when nothing else
#: is left (its pairings' value times ``OVER_CAP``).
OWNER_CAP = 1.5
OVER_CAP = 1e-6
#: 95% interval half-width per standard deviation.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Belief:
    """Ratings as a normal distribution: ``mean`` (Elo) and ``cov`` (Elo²), indexed like
    ``ids``."""

    ids: tuple[Hashable, ...]
    mean: np.ndarray
    cov: np.ndarray

    def index(self, version: Hashable) -> int:
        return self.ids.index(version)


@dataclass(frozen=True)
class Entrant:
    """A version on the ladder. ``provisional``: being placed (fewer than its placement matches);
    ``runaway``: an all-win or all-loss record, which once placed pulls no matches of its own;
    ``waited``: seconds since its last pairing was created (None: never)."""

    version: Hashable
    owner: Hashable
    provisional: bool = True
    runaway: bool = False
    waited: float | None = None


@dataclass(frozen=True)
class Pairing:
    """Two versions to play one duplicate pair, and why: ``placement`` (a provisional side),
    ``waited`` (a version past the longest wait), or ``information``."""

    a: Hashable
    b: Hashable
    reason: str
    gain: float = 0.0


@dataclass
class History:
    """What fairness looks at: recent meetings per unordered pair and recent slots per owner
    (each pairing gives each side's owner one slot); queued and running pairings included."""

    meetings: Counter = field(default_factory=Counter)
    owner_slots: Counter = field(default_factory=Counter)

    def add(self, a: Hashable, b: Hashable, owner_a: Hashable, owner_b: Hashable) -> None:
        self.meetings[_key(a, b)] += 1
        self.owner_slots[owner_a] += 1
        self.owner_slots[owner_b] += 1


def belief_from_fit(
    fit: Fit | None, versions: Sequence[Hashable], *, newcomer_sd: float = NEWCOMER_SD
) -> Belief:
    """The belief over ``versions``: the fit's mean and covariance for those it rated (across
    unconnected groups the covariance is 0: a fresh group sits at ``CENTER``), the fit's mean
    rating and ``newcomer_sd`` for the others."""
    n = len(versions)
    mean = np.full(n, CENTER)
    cov = np.eye(n) * newcomer_sd**2
    if fit is not None and len(fit.ids):
        mean[:] = float(np.mean(fit.elo))
        known = {v: k for k, v in enumerate(fit.ids)}
        here = [i for i, v in enumerate(versions) if v in known]
        there = [known[versions[i]] for i in here]
        if here:
            mean[here] = fit.elo[there]
            block = fit.cov[np.ix_(there, there)].copy()
            # A robust variance can collapse on a tiny sample (one cluster: no residual left):
            # never below the model-based one.
            short = np.clip(np.diag(fit.model_cov)[there] - np.diag(block), 0.0, None)
            block[np.diag_indices(len(there))] += short
            # The fit centres each connected group on its own: every group but the largest has
            # an unknown offset against it, which a match across groups teaches.
            group = fit.group[there]
            largest = np.bincount(group).argmax()
            other = group != largest
            same = (group[:, None] == group[None, :]) & other[:, None]
            block += same * newcomer_sd**2
            cov[np.ix_(here, here)] = block
    return Belief(ids=tuple(versions), mean=mean, cov=cov)


def pair_weight(mean_a: float, mean_b: float) -> float:
    """Fisher information (1/Elo²) about Ra − Rb of one duplicate pair (two games)."""
    p = 1.0 / (1.0 + 10.0 ** (-(mean_a - mean_b) / 400.0))
    return 2.0 * p * (1.0 - p) / ELO_PER_LOGIT**2


def play(cov: np.ndarray, i: int, j: int, w: float) -> np.ndarray:
    """Σ after a duplicate pair of ``i`` and ``j`` with information ``w`` (rank-one update)."""
    s = cov[:, i] - cov[:, j]
    denom = 1.0 + w * (s[i] - s[j])
    return cov - np.outer(s, s) * (w / denom)


def choose_pairings(
    belief: Belief,
    entrants: Sequence[Entrant],
    count: int,
    *,
    in_flight: Iterable[tuple[Hashable, Hashable]] = (),
    history: History | None = None,
    max_wait: float | None = None,
    target_ci95: float = TARGET_CI95,
) -> list[Pairing]:
    """Up to ``count`` pairings of ``entrants`` (all in ``belief``), best first.

    ``in_flight``: pairings queued or running (applied to Σ as if played); ``history``: recent
    meetings and owner slots, in-flight ones included (not changed: a copy is updated)."""
    versions = [e.version for e in entrants]
    if len(versions) < 2 or count <= 0:
        return []
    index = {v: belief.index(v) for v in versions}
    mean = belief.mean
    cov = belief.cov.copy()
    for a, b in in_flight:
        if a in index and b in index:
            i, j = index[a], index[b]
            cov = play(cov, i, j, pair_weight(mean[i], mean[j]))
    hist = History()
    if history is not None:
        hist = History(Counter(history.meetings), Counter(history.owner_slots))
    rows = np.array([index[v] for v in versions])
    owners = [e.owner for e in entrants]
    provisional = np.array([e.provisional for e in entrants])
    runaway = np.array([e.runaway and not e.provisional for e in entrants])
    waited = [np.inf if e.waited is None else e.waited for e in entrants]
    m = len(entrants)
    sub_mean = mean[rows]
    diff = sub_mean[:, None] - sub_mean[None, :]
    p = 1.0 / (1.0 + 10.0 ** (-diff / 400.0))
    w = 2.0 * p * (1.0 - p) / ELO_PER_LOGIT**2
    upper = np.triu(np.ones((m, m), dtype=bool), 1)
    owner_count = len(set(owners))
    chosen: list[Pairing] = []
    for _ in range(count):
        sub = cov[np.ix_(rows, rows)]
        var = np.clip(np.diag(sub), 0.0, None)
        wide = Z95 * np.sqrt(var) > target_ci95
        u = np.where(provisional | wide, 1.0, SETTLED_WEIGHT)
        u[runaway] = 0.0
        # Σ_k u_k (Σd)_k² over every k of the belief (only entrants weigh): with S the
        # entrants' columns, A = Sᵀ diag(u) S and the value for (i, j) is A_ii + A_jj − 2A_ij.
        cols = cov[np.ix_(rows, rows)]
        a = cols.T @ (u[:, None] * cols)
        da = np.diag(a)
        spread = da[:, None] + da[None, :] - 2 * a
        dvar = var[:, None] + var[None, :] - 2 * sub
        gain = w * np.clip(spread, 0.0, None) / (1.0 + w * np.clip(dvar, 0.0, None))
        gain *= _variety(versions, provisional, hist)
        gain *= _owner_factor(owners, hist, owner_count)[:, None]
        gain *= _owner_factor(owners, hist, owner_count)[None, :]
        # Two placed runaway versions teach nothing worth a match: never paired together.
        gain[np.ix_(runaway, runaway)] = -np.inf
        starving = [
            k for k in range(m) if max_wait is not None and waited[k] > max_wait
        ]
        if starving:
            k = max(starving, key=lambda s: (waited[s], -s))
            row = np.where(np.arange(m) == k, -np.inf, np.maximum(gain[k], gain[:, k]))
            j = int(np.argmax(row))
            i, j = min(k, j), max(k, j)
            reason = "waited"
        else:
            masked = np.where(upper, gain, -np.inf)
            flat = int(np.argmax(masked))
            i, j = divmod(flat, m)
            reason = "placement" if provisional[i] or provisional[j] else "information"
        if gain[i, j] == -np.inf:  # only pairs of runaway versions are left
            break
        chosen.append(Pairing(versions[i], versions[j], reason, float(max(gain[i, j], 0.0))))
        cov = play(cov, int(rows[i]), int(rows[j]), float(w[i, j]))
        hist.add(versions[i], versions[j], owners[i], owners[j])
        waited[i] = waited[j] = 0.0
    return chosen


def _key(a: Hashable, b: Hashable) -> tuple:
    return (a, b) if str(a) <= str(b) else (b, a)


def _variety(versions: Sequence[Hashable], provisional: np.ndarray, hist: History) -> np.ndarray:
    """Per pair, ``VARIETY`` (``PLACEMENT_VARIETY`` with a provisional side) to the power of the
    pair's recent meetings."""
    m = len(versions)
    factor = np.ones((m, m))
    if not hist.meetings:
        return factor
    for i in range(m):
        for j in range(i + 1, m):
            met = hist.meetings.get(_key(versions[i], versions[j]), 0)
            if met:
                base = PLACEMENT_VARIETY if provisional[i] or provisional[j] else VARIETY
                factor[i, j] = factor[j, i] = base**met
    return factor


def _owner_factor(owners: Sequence[Hashable], hist: History, owner_count: int) -> np.ndarray:
    """Per entrant, fair/share of its owner's recent slots when over the fair share, else 1;
    ``OVER_CAP`` past ``OWNER_CAP`` times the fair share (once there are enough slots to
    judge), so such an owner plays only when no other pairing is left."""
    total = sum(hist.owner_slots.get(o, 0) for o in set(owners))
    if total == 0 or owner_count < 2:
        return np.ones(len(owners))
    fair = total / owner_count
    factor = []
    for o in owners:
        slots = hist.owner_slots.get(o, 0)
        if slots > OWNER_CAP * fair and total >= 2 * owner_count:
            factor.append(OVER_CAP)
        elif slots > fair:
            factor.append(fair / slots)
        else:
            factor.append(1.0)
    return np.array(factor)


def fair_counts(counts: Mapping[Hashable, int]) -> float:
    """Largest share / fair share of ``counts`` (1.0 is perfectly even): a fairness measure."""
    values = [v for v in counts.values()]
    if not values or sum(values) == 0:
        return 1.0
    return max(values) / (sum(values) / len(values))
