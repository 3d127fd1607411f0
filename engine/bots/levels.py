"""``expert-1`` … ``expert-4``: the expert at fixed budgets, yardsticks from ``greedy``'s strength
up to the full expert (``docs/expert.md`` gives each level's measured strength).

A level's budget is counted in sampled deals per decision (``worlds``), so its play replays
exactly under a fixed seed; the time cap (``move_ms``) is a safety net that binds only on a
loaded machine. Levels 1-3 search exactly their budget (no stopping rule); levels 1-2 roll out
with the careful policy, 3-4 with the shrewd one (with the careful one ``expert-3`` stood too
close to ``expert-2``: ``docs/expert.md``, round 22); ``expert-4`` is the full ``expert``,
stopping rule and its budget by rule set and search included.
"""

from __future__ import annotations

from engine.bots.expert import DEFAULT_MS, DEFAULT_WORLDS, ExpertBot

#: Sampled deals per decision of each level.
LEVEL_WORLDS = {1: 1, 2: 6, 3: 24, 4: DEFAULT_WORLDS}
#: The lowest level that rolls out with the shrewd policy (the ones below, the careful one).
SHREWD_FROM = 3


def _level(number: int) -> type[ExpertBot]:
    worlds = LEVEL_WORLDS[number]

    class Level(ExpertBot):
        name = f"expert-{number}"

        def __init__(self, seed: int | str | None = None, **options) -> None:
            if number < len(LEVEL_WORLDS):  # expert-4 is the full expert's budget, as it is
                options.setdefault("worlds", worlds)
            options.setdefault("move_ms", DEFAULT_MS)
            options.setdefault("adaptive", number == len(LEVEL_WORLDS))
            options.setdefault("shrewd", number >= SHREWD_FROM)
            super().__init__(seed, **options)

    Level.__name__ = Level.__qualname__ = f"ExpertLevel{number}"
    Level.__doc__ = (
        f"The expert at {worlds} sampled deal(s) a decision."
        if number < len(LEVEL_WORLDS)
        else "The full expert's budget (more deals where its search runs in C)."
    )
    return Level


LEVELS: dict[str, type[ExpertBot]] = {f"expert-{n}": _level(n) for n in sorted(LEVEL_WORLDS)}

__all__ = ["LEVELS", "LEVEL_WORLDS", "SHREWD_FROM"]
