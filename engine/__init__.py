"""The Quatre Sept game engine: rules, states, the referee, replays and built-in bots.

Pure Python; imports neither Django nor ``sandbox``.
"""

from engine.actions import action_to_str, parse_action
from engine.faults import FAULT_KINDS, SeatFault
from engine.observe import observe
from engine.referee import AnnouncedClock, FunctionSeat, MatchOutcome, Player, Seat, referee_match
from engine.replay import REPLAY_FORMAT, build_replay
from engine.rules import (
    OPTIONS,
    PRESETS,
    ClaimOut,
    Deck,
    LowLead,
    Option,
    Politaine,
    RulesError,
    RuleSet,
    parse_option,
    rules_for,
    rules_from_dict,
)
from engine.state import FaultRecord, Result, State, deal_state, new_match

__all__ = [
    "FAULT_KINDS",
    "OPTIONS",
    "PRESETS",
    "REPLAY_FORMAT",
    "AnnouncedClock",
    "ClaimOut",
    "Deck",
    "FaultRecord",
    "FunctionSeat",
    "LowLead",
    "MatchOutcome",
    "Option",
    "Player",
    "Politaine",
    "Result",
    "RuleSet",
    "RulesError",
    "Seat",
    "SeatFault",
    "State",
    "action_to_str",
    "build_replay",
    "deal_state",
    "new_match",
    "observe",
    "parse_action",
    "parse_option",
    "referee_match",
    "rules_for",
    "rules_from_dict",
]
