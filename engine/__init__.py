"""The Quatre Sept game engine: rules, states, the referee, replays and built-in bots.

Pure Python; imports neither Django nor ``sandbox``. The names below load on first use (PEP 562):
importing a light submodule (``engine.bots.random_bot``, the protocol-1 bot runner) does not pay
for the rules, the state machine and numpy, which a built-in ``random`` seat, started afresh for
every match, never needs.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # ``typing`` itself is not imported at run time (see engine.bots)
if TYPE_CHECKING:
    from typing import Any

#: Each public name and the submodule that defines it.
_EXPORTS = {
    "action_to_str": "engine.actions",
    "parse_action": "engine.actions",
    "FAULT_KINDS": "engine.faults",
    "SeatFault": "engine.faults",
    "observe": "engine.observe",
    "AnnouncedClock": "engine.referee",
    "FunctionSeat": "engine.referee",
    "MatchOutcome": "engine.referee",
    "Player": "engine.referee",
    "Seat": "engine.referee",
    "referee_match": "engine.referee",
    "REPLAY_FORMAT": "engine.replay",
    "build_replay": "engine.replay",
    "OPTIONS": "engine.rules",
    "PRESETS": "engine.rules",
    "ClaimOut": "engine.rules",
    "Deck": "engine.rules",
    "LowLead": "engine.rules",
    "Option": "engine.rules",
    "Politaine": "engine.rules",
    "RulesError": "engine.rules",
    "RuleSet": "engine.rules",
    "parse_option": "engine.rules",
    "rules_for": "engine.rules",
    "rules_from_dict": "engine.rules",
    "FaultRecord": "engine.state",
    "Result": "engine.state",
    "State": "engine.state",
    "deal_state": "engine.state",
    "new_match": "engine.state",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:  # for type checkers and editors: the same names, eagerly
    from engine.actions import action_to_str, parse_action
    from engine.faults import FAULT_KINDS, SeatFault
    from engine.observe import observe
    from engine.referee import (
        AnnouncedClock,
        FunctionSeat,
        MatchOutcome,
        Player,
        Seat,
        referee_match,
    )
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
