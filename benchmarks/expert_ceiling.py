"""The expert told the hidden hands it may not see: a ceiling for what inference could still win.

    python benchmarks/expert_ceiling.py --rules pollack --pairs 100 --procs 2 oracle expert-v1
    python benchmarks/expert_ceiling.py --rules pollack --pairs 100 --procs 2 oracle-partner greedy
    python benchmarks/expert_ceiling.py --rules pollack --pairs 100 --procs 2 oracle-masters greedy

``oracle`` is the expert whose sampler is given every hidden hand (so each sampled deal is the
true one: its search is the same, only its inference is perfect); ``oracle-partner`` is given
its partner's hand only (the opponents' cards are still sampled, uniformly among the deals the
record allows): what perfect signalling between partners could be worth; ``oracle-masters``
is told only, for each suit whose master (strongest card out) it does not hold, whether its
partner holds it: the four bits an honest signal could carry; ``oracle-masters-late`` is told
them only once its partner has played a card in the deal. All read the deal
from the match seed, which only an in-process duel names (``duplicate_pairs``' match ids
``s<seed>-ab``): they are measuring devices, never players. Takes ``bot_strength.py``'s
arguments and prints its lines.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bot_strength

from engine.bots.expert import ExpertBot
from engine.bots.expert.view import View
from engine.cards import FULL_DECK, SUIT_MASKS
from engine.deck import seeded_hands


class OracleExpert(ExpertBot):
    """The expert with every hidden hand made a hard fact of its sampler."""

    name = "oracle"

    def hello(self, message: dict[str, Any]) -> None:
        super().hello(message)
        found = re.match(r"s(\d+)-", str(message.get("match")))
        if not found:
            raise SystemExit("an oracle plays only in duplicate_pairs (match ids s<seed>-..)")
        self.match_seed = int(found.group(1))

    def told(self, view: View) -> list[int]:
        """The seats whose hands the oracle is given."""
        return [s for s in range(4) if s != view.seat]

    def known(self, view: View) -> View:
        dealt = seeded_hands(self.match_seed, view.deal, view.redeals, view.dealer)
        for seat in self.told(view):
            _place(view, seat, dealt[seat] & ~view.by_seat[seat])
        return view


class PartnerOracleExpert(OracleExpert):
    """The expert given its partner's hand only."""

    name = "oracle-partner"

    def told(self, view: View) -> list[int]:
        return [(view.seat + 2) % 4]


class MastersOracleExpert(OracleExpert):
    """The expert told, for each suit whose master (strongest card out) it does not hold,
    whether its partner holds it."""

    name = "oracle-masters"

    def known(self, view: View) -> View:
        dealt = seeded_hands(self.match_seed, view.deal, view.redeals, view.dealer)
        partner = (view.seat + 2) % 4
        held = dealt[partner] & ~view.by_seat[partner]
        out = FULL_DECK & ~view.played
        for suit in SUIT_MASKS:
            left = out & suit
            if not left or (left & -left) & view.hand:
                continue  # no card of the suit out, or the master is ours
            master = left & -left
            if held & master:
                _place(view, partner, master)
            else:
                view.forbidden[partner] |= master
        return view


class LateMastersOracleExpert(MastersOracleExpert):
    """``oracle-masters`` told nothing until its partner has played a card this deal: the most
    a convention in the card play could carry (a partner says nothing before its first card)."""

    name = "oracle-masters-late"

    def known(self, view: View) -> View:
        if not view.by_seat[(view.seat + 2) % 4]:
            return view
        return super().known(view)


def _place(view: View, seat: int, cards: int) -> None:
    """Make ``cards`` a hard fact of ``seat``'s hidden hand in ``view``: no other holds them."""
    view.required[seat] |= cards
    for other in range(4):
        if other not in (seat, view.seat):
            view.forbidden[other] |= cards


bot_strength.EXTRA_BOTS.update(
    {
        "oracle": OracleExpert,
        "oracle-partner": PartnerOracleExpert,
        "oracle-masters": MastersOracleExpert,
        "oracle-masters-late": LateMastersOracleExpert,
    }
)

if __name__ == "__main__":
    sys.exit(bot_strength.main())
