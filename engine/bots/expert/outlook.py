"""Match outlook: the chance that a team wins the match from a pair of totals between deals.

Search scores a finished deal by ``win_chance(mine, theirs)`` rather than by its points, so it
plays to win the match (a point that reaches the target is worth more than one that does not).
The table comes from a random-walk model of deals: card points split 11 ways with a fixed,
symmetric distribution (measured from ``greedy`` self-play), plus an 11-point politaine bonus and
Pollack's melds with fixed chances. Invariant: values lie in [0, 1] and
``win_chance(a, b) + win_chance(b, a) == 1`` up to rounding.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.rules import RuleSet

#: P(a team takes k card points in a deal), k = 0..11, symmetric (greedy self-play, 3,000 deals).
CARD_POINTS = (0.03, 0.036, 0.057, 0.089, 0.142, 0.146, 0.146, 0.142, 0.089, 0.057, 0.036, 0.03)
#: Per team and deal: P(an 11-point politaine bonus) where politaines count.
POLITAINE_CHANCE = 0.035
#: Per team and deal: Pollack meld points and their chances.
MELD_POINTS = {0: 0.70, 3: 0.22, 4: 0.03, 6: 0.05}


def _team_extras(rules: RuleSet) -> dict[int, float]:
    extras = {0: 1.0}
    if rules.politaine != "off":
        extras = {0: 1 - POLITAINE_CHANCE, 11: POLITAINE_CHANCE}
    if rules.melds:
        combined: dict[int, float] = {}
        for e, p in extras.items():
            for m, q in MELD_POINTS.items():
                combined[e + m] = combined.get(e + m, 0.0) + p * q
        extras = combined
    return extras


def deal_gains(rules: RuleSet) -> list[tuple[int, int, float]]:
    """The model's outcomes of one deal: (points of team A, points of team B, chance)."""
    total = sum(CARD_POINTS)
    extras = _team_extras(rules)
    gains = []
    for k, p in enumerate(CARD_POINTS):
        for ea, pa in extras.items():
            for eb, pb in extras.items():
                gains.append((k + ea, 11 - k + eb, p / total * pa * pb))
    return gains


@lru_cache(maxsize=16)
def _table(target: int, politaine: bool, melds: bool) -> np.ndarray:
    """``V[a, b]``: team A's chance to win with totals a, b before a deal (terminal cells too)."""
    rules_like = _Shape(politaine, melds)
    gains = deal_gains(rules_like)  # type: ignore[arg-type]
    top = max(max(x, y) for x, y, _ in gains)
    size = target + top + 1
    a = np.arange(size)[:, None]
    b = np.arange(size)[None, :]
    value = np.where(a > b, 1.0, np.where(a < b, 0.0, 0.5))  # decided once a total >= target
    for s in range(2 * target - 2, -1, -1):
        lo, hi = max(0, s - target + 1), min(s, target - 1)
        if lo > hi:
            continue
        rows = np.arange(lo, hi + 1)
        cols = s - rows
        acc = np.zeros(len(rows))
        for x, y, p in gains:
            acc += p * value[rows + x, cols + y]
        value[rows, cols] = acc
    return value


class _Shape:
    """The two options the model depends on, standing in for a rule set."""

    def __init__(self, politaine: bool, melds: bool) -> None:
        self.politaine = "first-card" if politaine else "off"
        self.melds = melds


class Outlook:
    """``win_chance`` for one rule set; the table is built once per process and shape."""

    def __init__(self, rules: RuleSet) -> None:
        self.target = rules.target
        self._value = _table(rules.target, rules.politaine != "off", rules.melds)
        self._limit = self._value.shape[0] - 1

    @property
    def table(self) -> np.ndarray:
        """``V[mine, theirs]`` for totals up to its size (past it only the order matters)."""
        return self._value

    def win_chance(self, mine: int, theirs: int) -> float:
        """Chance that the team with total ``mine`` wins against ``theirs`` (between deals)."""
        limit = self._limit
        if mine > limit or theirs > limit:  # far past the target: only the order matters
            return 1.0 if mine > theirs else 0.0 if mine < theirs else 0.5
        return float(self._value[mine, theirs])
