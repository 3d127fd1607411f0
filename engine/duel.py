"""Duplicate pairs between two bots, and the win rate with a 95% interval.

A duplicate pair is one seed played twice: bot A on seats 0 and 2, then bot A on seats 1 and 3,
so each side gets the cards the other had. The two matches of a pair are not independent, so
the pair (scored 0, ½ or 1 as the mean of its two matches) is the sampling unit of the interval.
Imports nothing of Django or the sandbox.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from engine.referee import MatchOutcome, Player, Seat, referee_match
from engine.rules import RuleSet

SeatFactory = Callable[[], Seat]


@dataclass
class DuelTally:
    """Running totals of a duel, from bot A's side."""

    matches: int = 0
    wins_a: int = 0
    wins_b: int = 0
    draws: int = 0
    faults_a: int = 0
    faults_b: int = 0
    pair_scores: list[float] = field(default_factory=list)

    def add_pair(self, first: MatchOutcome, second: MatchOutcome) -> None:
        """Count a pair: in ``first`` A held team 0, in ``second`` team 1."""
        score = 0.0
        for outcome, team_a in ((first, 0), (second, 1)):
            result = outcome.replay["result"]
            self.matches += 1
            if result["winner"] is None:
                self.draws += 1
                score += 0.5
            elif result["winner"] == team_a:
                self.wins_a += 1
                score += 1
            else:
                self.wins_b += 1
            fault = result["fault"]
            if fault is not None:
                if fault["seat"] % 2 == team_a:
                    self.faults_a += 1
                else:
                    self.faults_b += 1
        self.pair_scores.append(score / 2)

    def win_rate(self) -> tuple[float, float, float]:
        """A's match score rate (draws half) and its 95% interval over pairs (normal approx.)."""
        n = len(self.pair_scores)
        if n == 0:
            return math.nan, math.nan, math.nan
        mean = statistics.fmean(self.pair_scores)
        half = 1.96 * statistics.stdev(self.pair_scores) / math.sqrt(n) if n > 1 else math.nan
        return mean, max(0.0, mean - half), min(1.0, mean + half)


def duplicate_pairs(
    rules: RuleSet,
    make_a: SeatFactory,
    make_b: SeatFactory,
    *,
    seed: int,
    pairs: int,
    players: tuple[Player, Player] = (Player("A"), Player("B")),
) -> Iterator[tuple[int, int, MatchOutcome]]:
    """Play duplicate pairs on seeds ``seed, seed + 1, ...``; yield (seed, A's team, outcome)."""
    player_a, player_b = players
    for s in range(seed, seed + pairs):
        for team_a in (0, 1):
            seats = [make_a() if seat % 2 == team_a else make_b() for seat in range(4)]
            who = [player_a if seat % 2 == team_a else player_b for seat in range(4)]
            match_id = f"s{s}-{'ab' if team_a == 0 else 'ba'}"
            yield s, team_a, referee_match(rules, seats, seed=s, match_id=match_id, players=who)
