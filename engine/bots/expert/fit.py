"""How far the opponents' card play follows the rollout policy, learned during the match.

The soft evidence of card play (``world.Evidence.miss``) weighs a sampled deal down for each
opponent card the policy would not have played there. That models rule-based players well and
search bots badly. After each deal the ``deal_end`` message shows every hand as dealt, so the
deal can be replayed with nothing hidden and each opponent play compared with the policy's
(``world.agreement``). From the agreement rate ``m`` over plays with a choice of ``k`` cards on
average, a card off the policy is ``(1 - m) / (k - 1)`` as likely as the policy's card ``m``:
their ratio is the likelihood factor of a miss. Plays are not independent evidence (a search
bot's departures from the policy come in runs), so the factor used is that ratio tempered, raised
to the power ``temper`` (< 1). A prior worth ``PRIOR_PLAYS`` plays at the default factor holds
it until the match has shown enough.
"""

from __future__ import annotations

from typing import Any

from engine.cards import mask_from_codes
from engine.rules import RuleSet

from .policy import policy_action
from .view import read_view
from .world import ReplayError, agreement

#: Weight of the prior in plays (a quatre-sept match gives about 50 opponent plays with a choice).
PRIOR_PLAYS = 20
#: Mean number of cards to choose from that the prior assumes.
PRIOR_CHOICE = 3.0


def miss_factor(matches: float, plays: float, choice_sum: float) -> float:
    """The likelihood ratio of a card off the policy to the policy's card, from the agreement
    tallied so far (1.0 when nothing is known)."""
    if plays <= 0:
        return 1.0
    rate = min(max(matches / plays, 1e-3), 1 - 1e-3)
    choice = max(choice_sum / plays, 2.0)
    return min(1.0, (1 - rate) / (rate * (choice - 1)))


class OpponentFit:
    """The opponents' agreement with the policy, pooled over both opponent seats, and the miss
    factor it implies. Starts at ``miss`` (no deal seen yet) and moves with every ``deal_end``."""

    def __init__(self, miss: float, temper: float) -> None:
        self.temper = temper
        # The prior: PRIOR_PLAYS plays whose rate gives exactly ``miss`` at PRIOR_CHOICE cards.
        raw = miss ** (1 / temper)
        rate = 1 / (1 + raw * (PRIOR_CHOICE - 1))
        self.plays = float(PRIOR_PLAYS)
        self.matches = PRIOR_PLAYS * rate
        self.choice_sum = PRIOR_PLAYS * PRIOR_CHOICE
        self.miss = miss

    def add(self, plays: int, matches: int, choice_sum: int) -> None:
        self.plays += plays
        self.matches += matches
        self.choice_sum += choice_sum
        self.miss = miss_factor(self.matches, self.plays, self.choice_sum) ** self.temper

    def learn(
        self, rules: RuleSet, seat: int, deal: dict[str, Any], score: tuple[int, int]
    ) -> None:
        """Tally the opponents' plays of a finished deal (a ``deal_end`` message)."""
        view = deal_view(deal, seat, score, rules.low_lead)
        dealt = [mask_from_codes(h) for h in deal["hands"]]
        hands = tuple(dealt[s] & ~view.by_seat[s] for s in range(4))
        try:
            tallies = agreement(rules, view, hands, policy_action)  # type: ignore[arg-type]
        except (ReplayError, ValueError, KeyError, IndexError):
            return
        for s in ((seat + 1) & 3, (seat + 3) & 3):
            self.add(*tallies[s])


def deal_view(deal: dict[str, Any], seat: int, score: tuple[int, int], low_lead: str):
    """The ``View`` of a finished deal (a ``deal_end`` body) from ``seat``: every play public."""
    dealt = deal["hands"][seat]
    tricks = list(deal["tricks"])
    trick = deal.get("trick") or {"leader": 0, "cards": []}
    played = {c for t in tricks for c in t["cards"]} | set(trick["cards"])
    return read_view(
        {
            "seat": seat,
            "deal": deal["number"],
            "dealer": deal["dealer"],
            "score": list(score),
            "redeals": len(deal.get("redeals", [])),
            "hand": [c for c in dealt if c not in played],
            "tricks": tricks,
            "trick": trick,
            "said": deal["said"],
        },
        low_lead,
    )
