"""The match outlook: the tables a finished deal is valued by, and who leads the next deal."""

from __future__ import annotations

import numpy as np
import pytest

from engine.bots import BotSeat
from engine.bots.expert import ExpertBot
from engine.bots.expert.outlook import Outlook, _lead_tables
from engine.referee import referee_match
from engine.rules import rules_for


def test_the_lead_tables_are_one_teams_chance_less_the_others():
    rules = rules_for("pollack")
    leads, follows = _lead_tables(rules.target, False, True)
    t = rules.target
    assert np.allclose(leads[:t, :t] + follows[:t, :t].T, 1.0)
    assert leads.min() >= 0.0 and leads.max() <= 1.0


def test_the_team_that_leads_the_next_deal_wins_most_races_to_the_target():
    """Level at 19 each, both teams pass 21 in most deals: the leader can claim first. Far from
    the target the lead is worth little, and a point more is never worth less."""
    rules = rules_for("pollack")
    outlook = Outlook(rules, lead=True)
    ours, theirs = outlook.next_lead(True), outlook.next_lead(False)
    assert ours.win_chance(19, 19) > 0.55 > 0.45 > theirs.win_chance(19, 19)
    assert abs(ours.win_chance(0, 0) - 0.5) < 0.05
    for table in (ours.table, theirs.table):
        assert (np.diff(table[: rules.target, : rules.target], axis=0) >= -1e-12).all()


@pytest.mark.parametrize("preset", ["quatre-sept", "politaine", "la-poule"])
def test_without_claims_or_with_the_option_off_the_lead_changes_nothing(preset):
    with_lead = Outlook(rules_for(preset), lead=True)
    assert with_lead.next_lead(True) is with_lead and with_lead.next_lead(False) is with_lead
    plain = Outlook(rules_for("pollack"))
    assert plain.next_lead(True) is plain


def test_the_expert_values_a_deal_by_the_team_that_truly_leads_the_next_one(monkeypatch):
    """Every searched decision asks for the table of the team that the referee then has lead
    the next deal (``lead=1``, ``pollack``)."""
    asked: list[tuple[int, int, bool]] = []  # (seat, deal, our team leads the next deal)

    class Recorded(ExpertBot):
        def act(self, message):
            self.deal_now = message["state"]["deal"]
            return super().act(message)

        def hello(self, message):
            super().hello(message)
            chosen = self.outlook.next_lead

            def record(mine):
                asked.append((self.seat, self.deal_now, mine))
                return chosen(mine)

            monkeypatch.setattr(self.outlook, "next_lead", record)

    seats = [BotSeat(Recorded(worlds=4, move_ms=10_000, lead=1)) for _ in range(4)]
    outcome = referee_match(rules_for("pollack"), seats, seed=5, match_id="lead")
    deals = outcome.replay["deals"]
    leader_team = {d["number"]: (d["dealer"] + 1) % 2 for d in deals}
    checked = [
        (seat, deal, mine) for seat, deal, mine in asked if deal + 1 in leader_team
    ]
    assert len(checked) > 20 and outcome.replay["result"]["fault"] is None
    for seat, deal, mine in checked:
        assert mine == (leader_team[deal + 1] == seat % 2)
