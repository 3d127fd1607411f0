"""Local duels for ``manage.py play``: resolve ``builtin:NAME`` or a bot file into a spec and play
K duplicate pairs (seed s with BOT_A on seats 0 and 2, then seed s with the teams swapped).

No database. Must not import Django models, services or selectors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from arena.runtime.cache import cached_install
from arena.runtime.play import PlayedMatch, play_seats
from arena.runtime.specs import BotSpec
from engine import Player, RuleSet


def resolve_bot(text: str, cache_dir: Path) -> BotSpec:
    """``builtin:NAME`` → a built-in (trusted); a path → the package, unpacked into ``cache_dir``
    and run confined. ``ValueError``/``PackageError`` with a message for anything else."""
    if text.startswith("builtin:"):
        return BotSpec.for_builtin(text.removeprefix("builtin:"), text)
    path = Path(text)
    if not path.is_file():
        raise ValueError(f"{text!r} is neither builtin:NAME nor a bot file or zip that exists")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    installed = cached_install(cache_dir, digest, path.name, lambda: data)
    return BotSpec.for_upload(installed, text)


@dataclass(frozen=True)
class DuelMatch:
    """One match of a duel: its number, seed, whether B sat on 0 and 2, and what happened."""

    index: int
    seed: int
    swapped: bool
    played: PlayedMatch

    @property
    def winner(self) -> str | None:
        """``"A"``, ``"B"`` or ``None`` (draw)."""
        team = self.played.outcome.result["winner"]
        if team is None:
            return None
        return "AB"[team ^ int(self.swapped)]

    @property
    def faulted(self) -> str | None:
        """``"A"`` or ``"B"`` whose seat faulted, if one did."""
        fault = self.played.outcome.result["fault"]
        if fault is None:
            return None
        return "AB"[(fault["seat"] % 2) ^ int(self.swapped)]


def play_duel(
    rules: RuleSet,
    bot_a: BotSpec,
    bot_b: BotSpec,
    *,
    seed: int,
    pairs: int,
    backend: str,
    replay_dir: Path | None = None,
    on_stderr: Callable[[int, str], None] | None = None,
) -> Iterator[DuelMatch]:
    """Play ``pairs`` duplicate pairs, seeds ``seed``, ``seed + 1``, ...; yield each match as it
    ends, after writing its replay to ``replay_dir`` (if given). ``on_stderr(seat, text)``: each
    seat's stderr as it plays."""
    if replay_dir is not None:
        replay_dir.mkdir(parents=True, exist_ok=True)
    index = 0
    for k in range(pairs):
        for swapped in (False, True):
            index += 1
            first, second = (bot_b, bot_a) if swapped else (bot_a, bot_b)
            players = [Player(first.label), Player(second.label)] * 2
            match_seed = seed + k
            match_id = f"local-{index}"
            played = play_seats(
                rules, [first, second, first, second], seed=match_seed, match_id=match_id,
                players=players, backend=backend, on_stderr=on_stderr,
            )
            if replay_dir is not None:
                name = f"{match_id}-seed{match_seed}{'-swapped' if swapped else ''}.json"
                (replay_dir / name).write_text(json.dumps(played.outcome.replay))
            yield DuelMatch(index=index, seed=match_seed, swapped=swapped, played=played)
