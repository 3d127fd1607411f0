"""``python -m arena_cli debug``: a played match's seat replayed to a local bot in the sandbox
(``arena.runtime.debug``), each differing decision shown with the local bot's stderr and time."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.runtime.cache import cached_install
from arena.runtime.debug import Decision, debug_match
from arena.runtime.specs import BotSpec
from arena_cli.api import package_bytes


def cache_dir() -> Path:
    """Where local bots are unpacked: ``$ARENA_CLI_CACHE``, else ``~/.cache/quatresept-arena``."""
    found = os.environ.get("ARENA_CLI_CACHE")
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(found) if found else base / "quatresept-arena" / "bots"


def local_bot(path: Path) -> BotSpec:
    """The local bot file, zip or folder, unpacked as the server unpacks uploads."""
    filename, data = package_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    installed = cached_install(cache_dir(), digest, filename, lambda: data)
    return BotSpec.for_upload(installed, str(path))


def run_debug(
    replay: dict[str, Any], *, seat: int, bot: Path, stop: tuple[int, int] | None,
    show_all: bool, as_json: bool, backend: str, out: Callable[[str], None],
) -> int:
    """Print each decision shown (differing ones, or all), then a summary; 0 when the local bot
    agreed with every decision, 1 otherwise."""
    player = replay["players"][seat]
    if not as_json:
        out(f"match {replay['match']}, seat {seat} ({player['bot']}"
            f"{' v' + str(player['version']) if player.get('version') else ''}), "
            f"{replay['rules']['preset']}, seed {replay['seed']}: replaying to {bot}")

    def shown(decision: Decision) -> None:
        if not (show_all or decision.differs):
            return
        if as_json:
            out(json.dumps(decision.to_dict()))
        else:
            out(describe(decision))

    report = debug_match(replay, seat, local_bot(bot), backend=backend, stop=stop,
                         on_decision=shown)
    differing = report.differences
    if as_json:
        out(json.dumps({"summary": True, "decisions": len(report.decisions),
                        "differ": len(differing), "stopped": report.stopped,
                        "hello_fault": report.hello_fault,
                        "hello_stderr": report.hello_stderr}))
    else:
        if report.hello_fault:
            out(f"the local bot failed at hello: {report.hello_fault}")
            for line in stderr_lines(report.hello_stderr):
                out(line)
        end = f" (stopped after deal {stop[0]} trick {stop[1]})" if report.stopped and stop else ""
        out(f"{len(report.decisions)} decisions{end}; the local bot answered differently at "
            f"{len(differing)}")
    return 1 if differing or report.hello_fault else 0


def describe(decision: Decision) -> str:
    """One decision as a few lines of text."""
    mark = "≠" if decision.differs else "="
    local = decision.local if decision.local is not None else f"(fault: {decision.fault})"
    played = decision.played if decision.played is not None else "(the seat faulted here)"
    lines = [f"{mark} deal {decision.deal} trick {decision.trick} turn {decision.turn} "
             f"({decision.decision}): played {played}; local bot {local} in {decision.ms} ms"]
    lines += stderr_lines(decision.stderr)
    return "\n".join(lines)


def stderr_lines(text: str) -> list[str]:
    """The last 20 lines of a bot's stderr, each marked as such."""
    return [f"    stderr | {line}" for line in text.rstrip("\n").splitlines()[-20:]]
