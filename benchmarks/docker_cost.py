"""Docker match cost account: where a whole match's time and CPU go under the Docker backend,
beside bare processes, in the same run.

    python benchmarks/docker_cost.py [--matches 6] [--runners bare,docker,docker-cold]
                                     [--settle 2.5] [--cpu-group beside-docker|stay]

Plays quatre-sept matches of four Python starter bots as the worker does
(``arena.runtime.play.referee_seats``), runners alternating match by match, and
prints per runner the medians of: the wall time of opening the four seats, of the four hellos, of
the decisions and notices, of closing the four seats; and the CPU time of one match with its
after-work (the pool's refill of four containers, the removals): this process and its children
(the ``docker`` CLI, bare bots), the containers (the engine's cpuacct parent cgroup), and the
engine's own processes when they are in the cpuacct cgroup ``--engine-cgroup`` names (the engine
does not put itself in one: move dockerd's and containerd's pids there first; the shims and runc
they start follow). Before each confined match the script waits ``--settle`` seconds, and after
each match as long again, so that the after-work of one match is counted in its own account.
"docker" is the worker's backend (``confined_runner``: the pool), "docker-cold" a container
created and started on the match's path. Needs an engine with the bot-runtime image
(``.ci/docker.sh up`` and ``images``). Figures only.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.runtime.play import referee_seats  # noqa: E402
from arena.runtime.seats import SessionSeat  # noqa: E402
from benchmarks.sandbox_speed import move_beside_docker  # noqa: E402
from engine import rules_for  # noqa: E402
from sandbox import (  # noqa: E402
    Clock,
    TrustedProgram,
    TrustedRunner,
    install_package,
    open_session,
)
from sandbox.runners import confined_runner  # noqa: E402
from sandbox.runners.docker import DockerRunner  # noqa: E402
from sandbox.runners.runtimes import host_runtime  # noqa: E402

CLOCK = Clock(hello_ms=10_000, move_ms=5_000, bank_ms=10**9)
CPUACCT = Path("/sys/fs/cgroup/cpuacct")
PHASES = ("open", "hello", "play", "close")


class PhaseSeat(SessionSeat):
    """A seat that adds the wall time of its hello, decisions and close to ``phases``."""

    def __init__(self, session, phases: dict[str, float]) -> None:
        super().__init__(session)
        self.phases = phases

    def _timed(self, phase: str, call, *args):
        start = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.phases[phase] += time.perf_counter() - start

    def hello(self, *args):
        return self._timed("hello", super().hello, *args)

    def turn(self, *args):
        return self._timed("play", super().turn, *args)

    def notify(self, *args):
        return self._timed("play", super().notify, *args)

    def close(self):
        return self._timed("close", super().close)


def _cpuacct_s(group: str) -> float | None:
    try:
        return int((CPUACCT / group / "cpuacct.usage").read_text()) / 1e9
    except (OSError, ValueError):
        return None


def _own_cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=6)
    parser.add_argument("--runners", default="bare,docker,docker-cold")
    parser.add_argument("--settle", type=float, default=2.5)
    parser.add_argument("--engine-cgroup", default="",
                        help="the cpuacct cgroup holding dockerd and containerd, if any")
    parser.add_argument("--cpu-group", choices=("beside-docker", "stay"), default="beside-docker")
    args = parser.parse_args()
    if args.cpu_group == "beside-docker":
        print(f"CPU share: this benchmark {move_beside_docker()}")
    root = Path(tempfile.mkdtemp(prefix="qs-docker-cost-"))
    root.chmod(0o711)
    source = (ROOT / "examples" / "python" / "bot.py").read_bytes()
    bot = install_package(source, "bot.py", root / "starter")
    bare = TrustedProgram(host_runtime("python3").argv(str(bot.folder / bot.package.entry), ()),
                          cwd=bot.folder)
    made = {"bare": lambda: (TrustedRunner(), bare),
            "docker": lambda: (confined_runner("docker"), bot),
            "docker-cold": lambda: (DockerRunner(), bot)}
    runners = {label: made[label]() for label in args.runners.split(",")}
    rules = rules_for("quatre-sept")
    rows: dict[str, dict[str, list[float]]] = {label: {} for label in runners}
    time.sleep(args.settle)
    try:
        for seed in range(args.matches):
            for label, (runner, target) in runners.items():
                if label != "bare":
                    time.sleep(args.settle)
                phases = dict.fromkeys(PHASES, 0.0)
                cpu = (_own_cpu_s(), _cpuacct_s("docker"), _cpuacct_s(args.engine_cgroup))
                start = time.perf_counter()
                seats = [PhaseSeat(open_session(runner, target, CLOCK), phases) for _ in range(4)]
                phases["open"] = time.perf_counter() - start
                referee_seats(rules, seats, seed=seed)
                phases["match"] = time.perf_counter() - start
                if label != "bare":
                    time.sleep(args.settle)
                after = (_own_cpu_s(), _cpuacct_s("docker"), _cpuacct_s(args.engine_cgroup))
                names = ("cpu: worker+children", "cpu: containers", "cpu: engine")
                for name, before, now in zip(names, cpu, after, strict=True):
                    if before is not None and now is not None:
                        phases[name] = now - before
                for name, value in phases.items():
                    rows[label].setdefault(name, []).append(value)
    finally:
        for runner, _ in runners.values():
            close = getattr(runner, "close", None)
            if close is not None:
                close()
    print(f"one whole match, four python starter bots: medians of {args.matches} (ms)")
    names = list(next(iter(rows.values())))
    print(f"  {'':>11}  " + "  ".join(f"{name:>20}" for name in names))
    for label, row in rows.items():
        print(f"  {label:>11}  " + "  ".join(
            f"{statistics.median(row[name]) * 1e3:20.1f}" if name in row else f"{'-':>20}"
            for name in names))


if __name__ == "__main__":
    main()
