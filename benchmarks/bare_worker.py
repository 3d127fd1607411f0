#!/usr/bin/env python3
"""A Celery worker for benchmarks only: uploaded bots run bare, unconfined, as the reference of
``platform_speed.py`` (the same bots, the same interpreter, flags and environment as in bwrap,
without the sandbox). Never for real matches: this is the one place an upload runs trusted.

    python benchmarks/bare_worker.py -A config worker ...   # the arguments of ``celery``
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.runtime import specs
from sandbox import InstalledBot, TrustedProgram, TrustedRunner
from sandbox.runners.base import BotProcess, Limits
from sandbox.runners.bwrap import BOT_ENV
from sandbox.runners.runtimes import host_runtime


class BareRunner:
    """Runs an ``InstalledBot`` as a plain process, in its folder, with the sandbox's
    interpreter flags and environment."""

    name = "bare"

    def start(self, bot: object, limits: Limits | None = None) -> BotProcess:
        assert isinstance(bot, InstalledBot)
        runtime = host_runtime(bot.runtime)
        argv = runtime.argv(str(bot.folder / bot.package.entry), bot.package.args)
        program = TrustedProgram(argv, cwd=bot.folder, env=dict(BOT_ENV))
        return TrustedRunner().start(program)


def main() -> None:
    specs._confined_runner = lambda backend: BareRunner()  # type: ignore[assignment]
    from celery.__main__ import main as celery_main

    sys.argv = ["celery", *sys.argv[1:]]
    celery_main()


if __name__ == "__main__":
    main()
