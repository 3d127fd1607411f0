"""Sandbox speed: start-up of a trivial bot bare (trusted), in bwrap and in Docker, and the round
trip of one decision to a persistent bot, printed side by side.

    python benchmarks/sandbox_speed.py [--starts 40] [--decisions 3000] [--matches 10]
                                       [--confinement both|full|light] [--docker auto|yes|no]

Goals: bwrap adds under 10 ms to a start; a decision round trip under 100 µs median; a whole
quatre-sept match of four Python random bots in bwrap within 1.5x of bare processes, in Docker
within 3x. ``--confinement both`` (the default) runs, in the same run, bwrap with the syscall
filter and the seat cgroups on ("bwrap") and with both off ("bwrap-light"), beside bare processes.
Docker runs when an engine answers (``DOCKER_HOST``) and has the bot-runtime image
(``.ci/docker.sh images`` builds it): "docker" is the worker's Docker backend (``confined_runner``:
pre-started containers, one per seat of one match, the pool's default size), "docker-cold" a
container created and started on the match's path; the cold start-up is also split into its
phases (create the container, start it and reach the bot's ready reply, kill and remove it).

CPU shares: the engine puts every container's cgroup under one parent (``docker``), which competes
for the CPU as a single task would. On a host that other work loads, bare processes (each a task
of its own at the root) then get many times the CPU of all the Docker seats together, and the
comparison measures the host's cgroup layout, not the sandbox. With ``--cpu-group beside-docker``
(the default when the Docker columns run and that parent exists) this benchmark moves itself, and
so its bare and bwrap bots, into a sibling group under that same parent: the layout of the compose
stack, whose worker is itself a container beside its seats. ``--cpu-group stay`` keeps it where it
was started (both are printed in docs/performance.md).

Figures only; nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox import (
    BotSession,
    Clock,
    InstalledBot,
    Runner,
    TrustedProgram,
    TrustedRunner,
    install_package,
    open_session,
)
from sandbox.runners import confined_runner
from sandbox.runners.bwrap import BwrapRunner
from sandbox.runners.docker import DockerRunner
from sandbox.runners.docker_warm import WarmDockerRunner
from sandbox.runners.runtimes import host_runtime

TRIVIAL_BOT = b"""\
import sys
for line in sys.stdin:
    if '"hello"' in line:
        sys.stdout.write('{"type":"ready","name":"trivial"}\\n')
    elif '"turn"' in line:
        i = line.index('"id":') + 5
        sys.stdout.write('{"id":%s,"action":"a"}\\n' % line[i:line.index(",", i)])
    sys.stdout.flush()
"""
CLOCK = Clock(hello_ms=10_000, move_ms=5_000, bank_ms=10**9)
HELLO = {"type": "hello", "protocol": 1}


#: The confined runners beside bare: the bwrap variants chosen, Docker when ``main`` finds an
#: engine (the worker's backend, from pre-started containers, and cold).
RUNNERS: dict[str, Runner] = {}
#: The bwrap variants: full confinement (syscall filter and seat cgroups on) and light (both off).
VARIANTS: dict[str, dict[str, bool]] = {
    "bwrap": {}, "bwrap-light": {"seccomp": False, "cgroups": False},
}


def _starters(bot: InstalledBot) -> list[tuple[str, Runner, object]]:
    """(label, runner, program) for the same bot bare, in bwrap and in Docker (same flags; the
    image's interpreter under Docker)."""
    runtime = host_runtime("python3")
    bare = TrustedProgram(runtime.argv(str(bot.folder / bot.package.entry), ()), cwd=bot.folder)
    return [("bare", TrustedRunner(), bare), *((label, r, bot) for label, r in RUNNERS.items())]


def docker_runner(mode: str) -> DockerRunner | None:
    """A Docker runner if an engine answers with the bot-runtime image (``mode`` "auto"), always
    ("yes": fail otherwise), or none ("no")."""
    if mode == "no":
        return None
    try:
        runner = DockerRunner()
        runner.client.inspect_image(runner.image)
    except Exception as exc:
        if mode == "yes":
            raise
        print(f"(no Docker column: {exc})", file=sys.stderr)
        return None
    return runner


def bench_docker_phases(bot: InstalledBot, n: int) -> dict[str, list[float]]:
    """Where a Docker seat's start goes, seconds per phase: ``create`` (the API call),
    ``start+ready`` (``docker start -ai`` until the bot's ready reply), ``close`` (kill, remove)."""
    runner = RUNNERS["docker-cold"]
    assert isinstance(runner, DockerRunner)
    times: dict[str, list[float]] = {"create": [], "start+ready": [], "close": []}
    spec = runner.container_spec(bot)
    for _ in range(n):
        start = time.perf_counter()
        runner.client.remove_container(runner.client.create_container(**spec)["Id"], force=True)
        times["create"].append(time.perf_counter() - start)
        start = time.perf_counter()
        session = open_session(runner, bot, CLOCK)
        session.hello(HELLO)
        ready = time.perf_counter()
        session.close()
        times["start+ready"].append(ready - start - times["create"][-1])
        times["close"].append(time.perf_counter() - ready)
    return times


def bench_start(bot: InstalledBot, n: int) -> dict[str, list[float]]:
    """Seconds from start to the ready reply (spawn, interpreter start-up, hello), then close."""
    times: dict[str, list[float]] = {}
    for label, runner, program in _starters(bot):
        samples = times.setdefault(label, [])
        open_session(runner, program, CLOCK).close()  # warm-up: runtime discovery, page cache
        for _ in range(n):
            start = time.perf_counter()
            session = open_session(runner, program, CLOCK)
            session.hello(HELLO)
            samples.append(time.perf_counter() - start)
            session.close()
    return times


def bench_round_trip(bot: InstalledBot, n: int) -> dict[str, list[float]]:
    """Seconds per decision (write turn to reply parsed) to one persistent bot."""
    times: dict[str, list[float]] = {}
    legal = ["a", "b", "c"]
    for label, runner, program in _starters(bot):
        samples = times.setdefault(label, [])
        session: BotSession
        with open_session(runner, program, CLOCK) as session:
            session.hello(HELLO)
            for i in range(200):  # warm-up
                session.turn({"type": "turn", "id": i, "legal": legal})
            for i in range(200, 200 + n):
                start = time.perf_counter()
                session.turn({"type": "turn", "id": i, "legal": legal})
                samples.append(time.perf_counter() - start)
    return times


_STARTERS: dict[Path, InstalledBot] = {}


def _starter_bot(root: Path) -> InstalledBot:
    """The Python starter kit, installed once under ``root``."""
    if root in _STARTERS:
        return _STARTERS[root]
    source = (Path(__file__).resolve().parents[1] / "examples" / "python" / "bot.py").read_bytes()
    _STARTERS[root] = install_package(source, "bot.py", root / "starter")
    return _STARTERS[root]


def bench_warm_back_to_back(root: Path, matches: int) -> list[float]:
    """Seconds per match of ``matches`` whole matches in a row under the worker's Docker backend,
    as a busy worker plays them: the pool's refill (four container starts a match) and the
    removals run meanwhile, with no bare match in between."""
    from arena.runtime.play import referee_seats
    from arena.runtime.seats import SessionSeat
    from engine import rules_for

    bot = _starter_bot(root)
    runner = RUNNERS["docker"]
    rules = rules_for("quatre-sept")
    times = []
    for seed in range(matches):
        start = time.perf_counter()
        seats = [SessionSeat(open_session(runner, bot, CLOCK)) for _ in range(4)]
        referee_seats(rules, seats, seed=seed)
        times.append(time.perf_counter() - start)
    return times


def bench_whole_match(root: Path, matches: int) -> dict[str, list[float]]:
    """Whole quatre-sept matches of four copies of the Python starter bot (random over legal),
    started fresh for every match as the platform does, bare vs in bwrap; seconds per match.

    The engine's referee plays them as the worker does (``arena.runtime.play.referee_seats``,
    which closes the four seats together; ``arena.runtime.seats.SessionSeat`` adapts the
    sessions: a benchmark may use every layer, the sandbox package may not import ``engine``).
    """
    from arena.runtime.play import referee_seats
    from arena.runtime.seats import SessionSeat
    from engine import rules_for

    bot = _starter_bot(root)
    rules = rules_for("quatre-sept")
    times: dict[str, list[float]] = {"bare": [], **{label: [] for label in RUNNERS}}
    for seed in range(matches):
        for label, runner, target in _starters(bot):
            start = time.perf_counter()
            seats = [SessionSeat(open_session(runner, target, CLOCK)) for _ in range(4)]
            outcome = referee_seats(rules, seats, seed=seed)
            times[label].append(time.perf_counter() - start)
            if outcome.replay["result"]["fault"] is not None:
                raise RuntimeError(f"{label} match {seed} faulted: {outcome.replay['result']}")
    return times


#: The engine's parent cgroup of the containers' CPU controller (cgroup v1, then v2; cgroupfs).
DOCKER_CPU_PARENTS = (Path("/sys/fs/cgroup/cpu/docker"), Path("/sys/fs/cgroup/docker"))


def move_beside_docker() -> str:
    """Move this process into ``<the containers' parent>/sandbox-speed``; what was done."""
    for parent in DOCKER_CPU_PARENTS:
        if (parent / "cgroup.procs").exists():
            group = parent / "sandbox-speed"
            try:
                group.mkdir(exist_ok=True)
                (group / "cgroup.procs").write_text(str(os.getpid()))
            except OSError as exc:
                return f"stays where it started ({group}: {exc})"
            return f"moved beside the seat containers, into {group}"
    return "stays where it started (no Docker cpu cgroup parent found)"


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=40)
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--confinement", choices=("both", "full", "light"), default="both",
                        help="which bwrap variants to run beside bare processes")
    parser.add_argument("--docker", choices=("auto", "yes", "no"), default="auto")
    parser.add_argument("--cpu-group", choices=("beside-docker", "stay"), default="beside-docker",
                        help="where this process (and its bare and bwrap bots) takes its CPU "
                             "share: beside the Docker seats' containers, or where it started")
    args = parser.parse_args()
    chosen = {"both": ["bwrap", "bwrap-light"], "full": ["bwrap"], "light": ["bwrap-light"]}
    for label in chosen[args.confinement]:
        RUNNERS[label] = BwrapRunner(**VARIANTS[label])
    print(f"confinement of 'bwrap': {BwrapRunner().confinement}")
    docker = docker_runner(args.docker)
    if docker is not None:
        if args.cpu_group == "beside-docker":
            print(f"CPU share: this benchmark {move_beside_docker()}")
        RUNNERS["docker"] = confined_runner("docker")
        RUNNERS["docker-cold"] = docker
    root = Path(tempfile.mkdtemp(prefix="qs-bench-"))
    root.chmod(0o711)
    try:
        bot = install_package(TRIVIAL_BOT, "trivial.py", root / "trivial")
        starts = bench_start(bot, args.starts)
        phases = bench_docker_phases(bot, args.starts) if docker else {}
        trips = bench_round_trip(bot, args.decisions)
        match = bench_whole_match(root, args.matches)
        in_a_row = bench_warm_back_to_back(root, args.matches) if docker else []
    finally:
        warm = RUNNERS.get("docker")
        if isinstance(warm, WarmDockerRunner):
            warm.close()
        shutil.rmtree(root, ignore_errors=True)
    labels = ["bare", *RUNNERS]
    bare = statistics.median(starts["bare"]) * 1e3
    print(f"start-up to ready, median of {args.starts} (python3 trivial bot)")
    for label in labels:
        ms = statistics.median(starts[label]) * 1e3
        added = "" if label == "bare" else f"   added {ms - bare:7.2f} ms"
        goal = "   (goal < 10 ms)" if label.startswith("bwrap") else ""
        print(f"  {label:>11}: {ms:7.2f} ms{added}{goal}")
    for phase, samples in phases.items():
        print(f"    docker {phase:>11}: {statistics.median(samples) * 1e3:7.2f} ms")
    print(f"decision round trip over {args.decisions} decisions (persistent bot)")
    print(f"  {'':>8}  {'median':>9}  {'p99':>9}")
    for label in labels:
        samples = trips[label]
        print(f"  {label:>11}: {statistics.median(samples) * 1e6:6.1f} µs  "
              f"{_p(samples, 0.99) * 1e6:6.1f} µs   (goal median < 100 µs)")
    bare_match = statistics.median(match["bare"])
    print(f"whole quatre-sept match, four python starter bots, median of {args.matches}")
    for label in labels:
        seconds = statistics.median(match[label])
        ratio = "" if label == "bare" else f"   {seconds / bare_match:5.2f}x"
        goal = " (goal within 1.5x)" if label.startswith("bwrap") else " (goal within 3x)"
        print(f"  {label:>11}: {seconds * 1e3:7.1f} ms{ratio}{goal if ratio else ''}")
    if in_a_row:
        seconds = statistics.median(in_a_row)
        print(f"  {'docker, matches back to back':>11}: {seconds * 1e3:7.1f} ms   "
              f"{seconds / bare_match:5.2f}x")


if __name__ == "__main__":
    main()
