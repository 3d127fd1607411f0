"""Whether the opponents' card play is worth reading as evidence, learned during the match.

The soft evidence of card play (``world.Evidence.miss``) weighs a sampled deal down for each
opponent card the rollout policy (the judge) would not have played there. It pays against
players the judge predicts (rule-based ones, and searchers whose rollouts follow like rules)
and may cost against players it does not (a flat Monte Carlo player with random playouts), whose
cards may differ from the judge's in the true deal about as often as in a wrong one: the weights
then only add noise. After each deal the ``deal_end`` message shows every hand as dealt, so the deal
is replayed with nothing hidden and each opponent play compared with the judge's
(``world.agreement``). The judge's *lift* over chance is (agreement − chance) / (1 − chance),
chance being what a player choosing its cards at random would agree. The miss factor is the
default where the lift is at least ``HIGH_LIFT``, 1.0 (no evidence) at ``LOW_LIFT`` or less, and
in between by linear interpolation. A prior worth ``PRIOR_PLAYS`` plays at ``PRIOR_LIFT`` holds
the default until the match has shown otherwise.
"""

from __future__ import annotations

from typing import Any

from engine.cards import mask_from_codes
from engine.rules import RuleSet

from .policy import policy_action
from .view import View, read_view
from .world import ReplayError, agreement

#: Lift at or above which card play is read with the full default miss factor.
HIGH_LIFT = 0.40
#: Lift at or below which card play is not read at all.
LOW_LIFT = 0.30
#: Weight of the prior in plays (a quatre-sept match shows about 50 opponent plays with a choice).
PRIOR_PLAYS = 20
#: The prior's lift: about that of the searchers measured (0.45-0.66), above ``HIGH_LIFT``.
PRIOR_LIFT = 0.5


def lift(plays: float, matches: float, chance: float) -> float:
    """How much better than chance the judge predicted the plays (1: always; 0: as chance)."""
    if plays <= chance:
        return 0.0
    return (matches - chance) / (plays - chance)


def miss_for(lifted: float, miss: float) -> float:
    """The miss factor for a judge of lift ``lifted``: ``miss`` down to 1.0 (see the module)."""
    if lifted >= HIGH_LIFT:
        return miss
    if lifted <= LOW_LIFT:
        return 1.0
    share = (HIGH_LIFT - lifted) / (HIGH_LIFT - LOW_LIFT)
    return miss + (1.0 - miss) * share


class OpponentFit:
    """The opponents' agreement with the judge, pooled over both opponent seats, and the miss
    factor it calls for. Starts at ``miss`` and moves with every ``deal_end``."""

    def __init__(self, miss: float) -> None:
        self.default = miss
        chance = PRIOR_PLAYS / 4  # about four cards to choose from
        self.plays = float(PRIOR_PLAYS)
        self.chance = chance
        self.matches = chance + PRIOR_LIFT * (PRIOR_PLAYS - chance)
        self.miss = miss

    def add(self, plays: int, matches: int, chance: float) -> None:
        self.plays += plays
        self.matches += matches
        self.chance += chance
        self.miss = miss_for(lift(self.plays, self.matches, self.chance), self.default)

    def learn(
        self, rules: RuleSet, seat: int, deal: dict[str, Any], score: tuple[int, int]
    ) -> None:
        """Tally the opponents' plays of a finished deal (a ``deal_end`` message)."""
        try:
            tallies = deal_agreement(rules, deal, score)
        except (ReplayError, ValueError, KeyError, IndexError):
            return
        for s in ((seat + 1) & 3, (seat + 3) & 3):
            self.add(*tallies[s])


def deal_agreement(
    rules: RuleSet, deal: dict[str, Any], score: tuple[int, int]
) -> list[tuple[int, int, float]]:
    """``world.agreement`` of each seat over a finished deal (a ``deal_end`` body), the match
    totals before it being ``score``."""
    view = deal_view(deal, score, rules.low_lead)
    dealt = [mask_from_codes(h) for h in deal["hands"]]
    hands = (
        dealt[0] & ~view.by_seat[0],
        dealt[1] & ~view.by_seat[1],
        dealt[2] & ~view.by_seat[2],
        dealt[3] & ~view.by_seat[3],
    )
    return agreement(rules, view, hands, policy_action)


def deal_view(deal: dict[str, Any], score: tuple[int, int], low_lead: str) -> View:
    """The ``View`` of a finished deal (a ``deal_end`` body), every play public (seat 0's, though
    whose view it is does not matter to ``agreement``, which counts every seat)."""
    tricks = list(deal["tricks"])
    trick = deal.get("trick") or {"leader": 0, "cards": []}
    played = {c for t in tricks for c in t["cards"]} | set(trick["cards"])
    return read_view(
        {
            "seat": 0,
            "deal": deal["number"],
            "dealer": deal["dealer"],
            "score": list(score),
            "redeals": len(deal.get("redeals", [])),
            "hand": [c for c in deal["hands"][0] if c not in played],
            "tricks": tricks,
            "trick": trick,
            "said": deal["said"],
        },
        low_lead,
    )
