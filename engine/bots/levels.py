"""``expert-1`` … ``expert-4``: the expert at fixed budgets, yardsticks from about ``greedy``'s
strength up to the full expert (``docs/expert.md`` gives each level's measured strength).

A level's budget is counted in sampled deals per decision (``worlds``), so its play replays
exactly under a fixed seed; the time cap (``move_ms``) is a safety net that binds only on a
loaded machine. Levels 1-3 search exactly their budget (no stopping rule); levels 1-2 roll out
with the careful policy, 3-4 with the shrewd one (with the careful one ``expert-3`` stood too
close to ``expert-2``: ``docs/expert-log.md``, round 22); ``expert-4`` is the full ``expert``,
stopping rule and its budget by rule set and search included.

A preset whose steps came out uneven or short with the default budgets has a ladder of its own
(``PRESET_LEVEL_BUDGETS``, round 24): in ``pollack`` the full expert stands closer to ``greedy``
than elsewhere, so ``expert-1`` makes a random move in 15% of its rollouts' moves and
``expert-2`` and ``expert-3`` search fewer deals; in ``politaine`` ``expert-3`` searches 16
deals, since at 24 it stood too close to ``expert-4`` (and at 12 too close to ``expert-2``:
round 25). A rule set takes its preset's ladder,
options changed or not. A setting given to a level by name is kept in every rule set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.bots.expert import DEFAULT_MS, ExpertBot


@dataclass(frozen=True)
class Budget:
    """One level's settings in one preset's ladder."""

    #: Sampled deals per decision; ``None``: the full expert's budget and stopping rule.
    worlds: int | None
    #: Roll out with the shrewd policy (else the careful one).
    shrewd: bool
    #: The chance that a rollout move is a random legal card (Python rollouts only).
    eps: float = 0.0


#: Each level, in a preset without a ladder of its own.
LEVEL_BUDGETS = {
    1: Budget(1, shrewd=False),
    2: Budget(6, shrewd=False),
    3: Budget(24, shrewd=True),
    4: Budget(None, shrewd=True),
}
#: The presets with a ladder of their own: the default one with the levels that differ.
PRESET_LEVEL_BUDGETS = {
    "pollack": {
        **LEVEL_BUDGETS,
        1: Budget(1, shrewd=False, eps=0.15),
        2: Budget(5, shrewd=False),
        3: Budget(14, shrewd=True),
    },
    "politaine": {**LEVEL_BUDGETS, 3: Budget(16, shrewd=True)},
}
#: The settings a level takes from its budget unless given them by name.
_SETTINGS = ("worlds", "shrewd", "eps")


def budgets_for(preset: str) -> dict[int, Budget]:
    """The levels' budgets in a rule set of ``preset``."""
    return PRESET_LEVEL_BUDGETS.get(preset, LEVEL_BUDGETS)


def _level(number: int) -> type[ExpertBot]:
    plain = LEVEL_BUDGETS[number]

    class Level(ExpertBot):
        name = f"expert-{number}"

        def __init__(self, seed: int | str | None = None, **options: Any) -> None:
            #: The settings given by name: the budgets do not override them (``hello``).
            self.asked = frozenset(options) & set(_SETTINGS)
            if plain.worlds is not None:
                options.setdefault("worlds", plain.worlds)
            options.setdefault("move_ms", DEFAULT_MS)
            options.setdefault("adaptive", plain.worlds is None)
            options.setdefault("shrewd", plain.shrewd)
            options.setdefault("eps", plain.eps)
            if plain.worlds is not None:  # levels 1-3 read cards as measured (round 24)
                options.setdefault("model", 0)
            super().__init__(seed, **options)

        def hello(self, message: dict[str, Any]) -> None:
            super().hello(message)
            budget = budgets_for(self.rules.preset)[number]
            if budget.worlds is not None and "worlds" not in self.asked:
                self.max_worlds = budget.worlds
            if "shrewd" not in self.asked:
                self.shrewd = budget.shrewd
            if "eps" not in self.asked:
                self.eps = budget.eps

    Level.__name__ = Level.__qualname__ = f"ExpertLevel{number}"
    Level.__doc__ = (
        f"The expert at {plain.worlds} sampled deal(s) a decision (some presets: fewer)."
        if plain.worlds is not None
        else "The full expert's budget (more deals where its search runs in C)."
    )
    return Level


LEVELS: dict[str, type[ExpertBot]] = {f"expert-{n}": _level(n) for n in sorted(LEVEL_BUDGETS)}

__all__ = ["LEVELS", "LEVEL_BUDGETS", "PRESET_LEVEL_BUDGETS", "Budget", "budgets_for"]
