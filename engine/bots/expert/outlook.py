"""Match outlook: the chance that a team wins the match from a pair of totals between deals.

Search scores a finished deal by ``win_chance(mine, theirs)`` rather than by its points, so it
plays to win the match (a point that reaches the target is worth more than one that does not).
The table comes from a random-walk model of deals: card points split 11 ways with a fixed,
symmetric distribution (measured from ``greedy`` self-play), plus an 11-point politaine bonus and
Pollack's melds with fixed chances. Invariant: values lie in [0, 1] and
``win_chance(a, b) + win_chance(b, a) == 1`` up to rounding.

Where a claim ends the match (``claim_out``), the lead of the coming deal decides most races to
the target: the team on lead can claim first. With ``lead`` on, the table a decision uses is the
one for who leads the next deal (``next_lead``), its deals' outcomes learned from the expert's
own games where melds count (``LEARNED_*``); a deal in which both totals would pass the
target goes to its leader with chance ``sigmoid(RACE_LEAD + RACE_MARGIN * margin)``, the margin
being the leader's total less the other's after the deal. Invariant of the two tables:
``leads[a, b] + follows[b, a] == 1``.
"""

from __future__ import annotations

from collections.abc import Iterator
from copy import copy
from functools import lru_cache

import numpy as np

from engine.rules import ClaimOut, RuleSet

#: P(a team takes k card points in a deal), k = 0..11, symmetric (greedy self-play, 3,000 deals).
CARD_POINTS = (0.03, 0.036, 0.057, 0.089, 0.142, 0.146, 0.146, 0.142, 0.089, 0.057, 0.036, 0.03)
#: Per team and deal: P(an 11-point politaine bonus) where politaines count.
POLITAINE_CHANCE = 0.035
#: Per team and deal: Pollack meld points and their chances.
MELD_POINTS = {0: 0.70, 3: 0.22, 4: 0.03, 6: 0.05}
#: Where melds count, the deal's outcomes as the expert plays them, by who leads it (the first
#: deals of 5,267 ``expert-2`` self-play matches of ``pollack``, at 6 deals a decision): the
#: leading team's card points (k = 0..11; the other team takes 11 - k), and each team's meld
#: points.
LEARNED_CARD_POINTS = (
    0.0325, 0.0556, 0.0771, 0.0991, 0.1069, 0.1232, 0.1301, 0.1107, 0.1029, 0.0761, 0.0503, 0.0355,
)  # fmt: skip
LEARNED_MELDS_LEADING = {0: 0.76, 3: 0.2062, 4: 0.0074, 6: 0.0243, 7: 0.0009, 9: 0.0011}
LEARNED_MELDS_OTHER = {0: 0.8194, 3: 0.161, 4: 0.0046, 6: 0.0146, 7: 0.0002, 9: 0.0002}
#: Race to the target where claims end the match: the deal's leader wins a race with chance
#: sigmoid(RACE_LEAD + RACE_MARGIN * margin) (fitted to the deal starts of the same matches).
RACE_LEAD = 1.2
RACE_MARGIN = 1.6


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


def _diagonals(target: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The cells of both totals under ``target``, one anti-diagonal (a + b fixed) at a time from
    the highest sum down: every deal adds points, so each cell's successors come first."""
    for s in range(2 * target - 2, -1, -1):
        lo, hi = max(0, s - target + 1), min(s, target - 1)
        rows = np.arange(lo, hi + 1)
        yield rows, s - rows


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
    for rows, cols in _diagonals(target):
        acc = np.zeros(len(rows))
        for x, y, p in gains:
            acc += p * value[rows + x, cols + y]
        value[rows, cols] = acc
    return value


@lru_cache(maxsize=16)
def _lead_tables(target: int, politaine: bool, melds: bool) -> tuple[np.ndarray, np.ndarray]:
    """(``leads``, ``follows``): team A's chance with totals a, b before a deal that A leads, and
    before one that B leads, the leads alternating deal by deal and races decided by the lead."""
    shape = _Shape(politaine, melds)
    learned = melds and not politaine
    gains = _learned_gains() if learned else deal_gains(shape)  # type: ignore[arg-type]
    leads = _table(target, politaine, melds).copy()  # past the target: only the order matters
    follows = leads.copy()

    def race(margin: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(RACE_LEAD + RACE_MARGIN * margin, -50.0, 50.0)))

    for rows, cols in _diagonals(target):
        lead_acc = np.zeros(len(rows))
        follow_acc = np.zeros(len(rows))
        for x, y, p in gains:  # x to the deal's leader, y to the other team
            a, b = rows + x, cols + y  # A leads: next deal B leads
            lead_acc += p * _after(a, b, target, race(a - b), follows)
            a, b = rows + y, cols + x  # B leads: next deal A leads
            follow_acc += p * _after(a, b, target, 1.0 - race(b - a), leads)
        leads[rows, cols] = lead_acc
        follows[rows, cols] = follow_acc
    return leads, follows


def _learned_gains() -> list[tuple[int, int, float]]:
    """(leading team's points, other team's points, chance) of a deal, as learned (above)."""
    total = sum(LEARNED_CARD_POINTS)
    lead_total, other_total = sum(LEARNED_MELDS_LEADING.values()), sum(LEARNED_MELDS_OTHER.values())
    return [
        (k + m, 11 - k + n, p / total * q / lead_total * r / other_total)
        for k, p in enumerate(LEARNED_CARD_POINTS)
        for m, q in LEARNED_MELDS_LEADING.items()
        for n, r in LEARNED_MELDS_OTHER.items()
    ]


def _after(
    a: np.ndarray, b: np.ndarray, target: int, raced: np.ndarray, next_deal: np.ndarray
) -> np.ndarray:
    """Team A's chance after a deal ending at totals a, b: won, lost, raced, or the next deal."""
    over_a, over_b = a >= target, b >= target
    going = next_deal[np.minimum(a, target - 1), np.minimum(b, target - 1)]
    return np.where(over_a & over_b, raced, np.where(over_a, 1.0, np.where(over_b, 0.0, going)))


class _Shape:
    """The two options the model depends on, standing in for a rule set."""

    def __init__(self, politaine: bool, melds: bool) -> None:
        self.politaine = "first-card" if politaine else "off"
        self.melds = melds


class Outlook:
    """``win_chance`` for one rule set; the table is built once per process and shape."""

    def __init__(self, rules: RuleSet, lead: bool = False) -> None:
        self.target = rules.target
        shape = (rules.target, rules.politaine != "off", rules.melds)
        self._value = _table(*shape)
        self._limit = self._value.shape[0] - 1
        #: Where claims race to the target and ``lead`` is on: the tables by the next leader.
        races = lead and rules.claim_out is not ClaimOut.OFF
        self._by_lead = _lead_tables(*shape) if races else None

    def next_lead(self, mine: bool) -> Outlook:
        """This outlook for a deal after which ``mine`` tells whether our team leads the next
        one (itself where the lead is not modelled)."""
        if self._by_lead is None:
            return self
        chosen = copy(self)
        chosen._value = self._by_lead[0 if mine else 1]
        return chosen

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
