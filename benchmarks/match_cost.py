#!/usr/bin/env python3
"""Match cost account: where one whole match's time goes, bare and sandboxed, in the same run.

    python benchmarks/match_cost.py [--matches 12] [--runners bare,bwrap,bwrap-light]
                                    [--ballast-mb 0] [--workers 1] [--json]

Plays ``--matches`` quatre-sept matches of four copies of the Python starter bot per runner
(runners alternate match by match, so load drifts touch them alike), each seat a fresh process
as the platform starts it, and accounts for every match with measures that do not depend on the
machine's load:

- the worker's CPU time (user/sys) per phase: starting the four seats (``runner.start``: staging,
  uid lease, cgroup, fork+exec of bwrap), ``hello``, the decisions and notices (``turn``/``notify``
  in the session: encoding, pipe writes and reads, reply parsing), the engine (the referee's own
  work: everything in ``play_match`` outside the seats), closing (close stdin, wait for the exit,
  kill, uid sweep, cgroup removal); JSON encoding of the messages is counted apart too;
- the CPU time of each seat's processes before closing (bwrap's monitor, the namespace's pid 1,
  the bot: ``/proc/PID/schedstat``) and the time they waited for a core; then what the seat
  processes used after (exit and namespace teardown: ``RUSAGE_CHILDREN`` minus those);
- the kernel threads' CPU (namespace clean-up runs in kworkers; shared with everything else on
  the host, so only the difference between runners means something);
- context switches of the worker and of the seats.

Wall times are printed too, but mean something only on a quiet machine. ``--ballast-mb`` gives
the worker a resident size like a Celery worker's (fork of a large process costs more);
``--workers 2`` runs two such workers at once and sums them (two workers' matches together).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sandbox.cgroups as seat_cgroups  # noqa: E402
import sandbox.session as session_module  # noqa: E402
from arena.runtime.seats import SessionSeat  # noqa: E402
from engine import rules_for  # noqa: E402

try:
    from engine import referee_match as play_match
except ImportError:  # an older tree (before/after comparisons)
    from engine import play_match  # type: ignore[attr-defined,no-redef]
from sandbox import (  # noqa: E402
    Clock,
    InstalledBot,
    Runner,
    TrustedProgram,
    TrustedRunner,
    install_package,
    open_session,
)
from sandbox.runners.bwrap import BwrapRunner  # noqa: E402
from sandbox.runners.runtimes import host_runtime  # noqa: E402

CLOCK = Clock(hello_ms=10_000, move_ms=5_000, bank_ms=10**9)
VARIANTS: dict[str, dict[str, Any]] = {
    "bwrap": {}, "bwrap-light": {"seccomp": False, "cgroups": False},
    "bwrap-own-netns": {"share_netns": False},
}
PHASES = ("start", "hello", "decisions", "engine", "close")


class Account:
    """Sums of measures (nanoseconds, counts) per key, for one runner."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = defaultdict(float)
        self.walls: list[float] = []
        self.matches = 0

    def add(self, key: str, value: float) -> None:
        self.sums[key] += value


def _cpu() -> int:
    return time.thread_time_ns()


def _rusage(who: int) -> tuple[float, float, int, int]:
    r = resource.getrusage(who)
    return r.ru_utime, r.ru_stime, r.ru_nvcsw, r.ru_nivcsw


def _schedstat(pid: int | str) -> tuple[int, int]:
    """(CPU ns, ns waiting for a core) of one process (all its threads)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            run, wait, _ = f.read().split()
        return int(run), int(wait)
    except (OSError, ValueError):
        return 0, 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _seat_tree(pid: int) -> list[int]:
    """The seat's processes, parents first (bwrap monitor, pid 1, bot; or just the bot)."""
    tree, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        tree.append(p)
        todo += _children(p)
    return tree


class CpuGroup:
    """A cgroup of this benchmark's own that its seats inherit (v1 ``cpuacct`` or v2): its CPU
    counts every process of the seats until it ends, exit and namespace teardown included, even
    those no one reaps with rusage (bwrap's monitor does not wait for its pid 1). Falls back to
    ``RUSAGE_CHILDREN`` when the benchmark cannot make one."""

    def __init__(self) -> None:
        self.folder: Path | None = None
        for root, files in ((Path("/sys/fs/cgroup/cpuacct"), ("cpuacct.usage_user",
                                                              "cpuacct.usage_sys")),
                            (Path("/sys/fs/cgroup/unified"), ("cpu.stat",)),
                            (Path("/sys/fs/cgroup"), ("cpu.stat",))):
            folder = root / f"qs-match-cost-{os.getpid()}"
            try:
                folder.mkdir()
                (folder / "cgroup.procs").write_text(str(os.getpid()))
                self.folder, self.files = folder, files
                break
            except OSError:
                with contextlib.suppress(OSError):
                    folder.rmdir()
        self.source = str(self.folder) if self.folder else "RUSAGE_CHILDREN (no cgroup)"
        self.nests: list[Path] = []
        if self.folder is not None and self.folder.parent.name == "cpuacct":
            self._nest_seat_groups(self.folder.name)

    def _nest_seat_groups(self, name: str) -> None:
        """On cgroup v1 every seat joins a ``cpuacct`` group of its own (``sandbox.cgroups``),
        and would leave this one: the seats' parent groups are made inside a group of this name
        in each hierarchy, so this group's count includes theirs."""
        for hierarchy in ("memory", "pids", "cpu"):
            folder = Path("/sys/fs/cgroup") / hierarchy / name
            with contextlib.suppress(OSError):
                folder.mkdir()
                self.nests.append(folder)
        seat_cgroups.GROUP_NAME = f"{name}/{seat_cgroups.GROUP_NAME}"

    def close(self) -> None:
        """Move back to the parent group and remove this one (and the seats' groups in it)."""
        if self.folder is not None:
            with contextlib.suppress(OSError):
                (self.folder.parent / "cgroup.procs").write_text(str(os.getpid()))
                time.sleep(0.1)
            for folder in [*self.nests, self.folder]:
                for inner in sorted(folder.glob("*/"), reverse=True):
                    with contextlib.suppress(OSError):
                        inner.rmdir()
                with contextlib.suppress(OSError):
                    folder.rmdir()

    def sample(self) -> tuple[float, float, float]:
        """(exact CPU ns, user ns, system ns) of every process in the group so far (this one
        included); user and system are tick samples, to split a difference of exact totals."""
        if self.folder is None:
            r = resource.getrusage(resource.RUSAGE_CHILDREN)
            s = resource.getrusage(resource.RUSAGE_SELF)
            user, system = (r.ru_utime + s.ru_utime) * 1e9, (r.ru_stime + s.ru_stime) * 1e9
            return user + system, user, system
        if self.files[0] == "cpu.stat":
            stat = dict(line.split() for line in (self.folder / "cpu.stat").read_text()
                        .splitlines())
            return (int(stat["usage_usec"]) * 1e3, int(stat["user_usec"]) * 1e3,
                    int(stat["system_usec"]) * 1e3)
        user, system = (float((self.folder / name).read_text()) for name in self.files)
        return float((self.folder / "cpuacct.usage").read_text()), user, system


def split(before: tuple[float, float, float], after: tuple[float, float, float],
          less: float = 0.0) -> tuple[float, float]:
    """The exact CPU between two samples, minus ``less``, as (user, system) in the samples'
    proportion."""
    total = after[0] - before[0] - less
    user, system = after[1] - before[1], after[2] - before[2]
    share = user / (user + system) if user + system > 0 else 0.5
    return total * share, total * (1 - share)


def _kernel_threads_ns() -> int:
    """CPU of every kernel thread (children of kthreadd), for namespace clean-up."""
    return sum(_schedstat(p)[0] for p in _children(2))


class TimedSeat(SessionSeat):
    """A referee seat that charges its calls' worker CPU to the account, and reads the seat's
    processes' CPU just before it closes."""

    def __init__(self, session: Any, account: Account) -> None:
        super().__init__(session)
        self.account = account
        self.seen: dict[int, tuple[str, int, int]] = {}

    def _timed(self, key: str, call: Callable[[], Any]) -> Any:
        start = _cpu()
        try:
            return call()
        finally:
            spent = _cpu() - start
            self.account.add(key, spent)
            self.account.add("seat_calls", spent)

    def hello(self, message: dict[str, Any]) -> None:
        self._timed("hello", lambda: SessionSeat.hello(self, message))

    def turn(self, message: dict[str, Any]) -> str:
        self.account.add("turns", 1)
        return self._timed("decisions", lambda: SessionSeat.turn(self, message))  # type: ignore[no-any-return]

    def notify(self, message: dict[str, Any]) -> None:
        if message.get("type") == "match_end":  # a bot may exit as soon as it reads this
            self._snapshot()
        self._timed("decisions", lambda: SessionSeat.notify(self, message))

    def _snapshot(self) -> None:
        """Read the CPU of the seat's processes (monitor, pid 1, bot), keeping each one's
        latest figure; they are charged when the seat closes."""
        tree = _seat_tree(self.session.process.pid)
        names = ("seat_monitor", "seat_pid1", "seat_bot") if len(tree) == 3 else (
            "seat_bot", "seat_other", "seat_other")
        for name, pid in zip(names, tree, strict=False):
            run, wait = _schedstat(pid)
            if run:
                self.seen[pid] = (name, run, wait)

    def close(self) -> None:
        self._snapshot()
        for name, run, wait in self.seen.values():
            self.account.add(name, run)
            self.account.add("seat_wait", wait)
            self.account.add("seat_before_close", run)
        self._timed("close", lambda: SessionSeat.close(self))


def _runners(bot: InstalledBot, labels: list[str]) -> dict[str, tuple[Runner, object]]:
    runtime = host_runtime("python3")
    bare = TrustedProgram(runtime.argv(str(bot.folder / bot.package.entry), ()), cwd=bot.folder)
    out: dict[str, tuple[Runner, object]] = {}
    for label in labels:
        out[label] = (TrustedRunner(), bare) if label == "bare" else (
            BwrapRunner(**VARIANTS[label]), bot)
    return out


def play_one(runner: Runner, target: object, seed: int, account: Account,
             encode_account: list[Account], group: CpuGroup) -> None:
    """One match with four fresh seats, accounted."""
    rules = rules_for("quatre-sept")
    encode_account[0] = account
    self_before = _rusage(resource.RUSAGE_SELF)
    worker_before = time.thread_time_ns()
    group_before = group.sample()
    sched_before = _schedstat("self")
    kernel_before = _kernel_threads_ns()
    wall = time.perf_counter()
    cpu0 = _cpu()
    seats = []
    for _ in range(4):
        seats.append(TimedSeat(open_session(runner, target, CLOCK), account))
    cpu1 = _cpu()
    account.add("start", cpu1 - cpu0)
    calls_before = account.sums["seat_calls"]
    outcome = play_match(rules, seats, seed=seed)
    cpu2 = _cpu()
    account.walls.append(time.perf_counter() - wall)
    account.add("engine", (cpu2 - cpu1) - (account.sums["seat_calls"] - calls_before))
    if outcome.replay["result"]["fault"] is not None:
        raise RuntimeError(f"match {seed} faulted: {outcome.replay['result']}")
    self_after = _rusage(resource.RUSAGE_SELF)
    sched_after = _schedstat("self")
    time.sleep(0.05)  # let the last seats' processes finish exiting
    group_after = group.sample()
    worker_ns = time.thread_time_ns() - worker_before  # the group counts this process too
    seats_user, seats_sys = split(group_before, group_after, less=worker_ns)
    account.add("seats_user", seats_user)
    account.add("seats_sys", seats_sys)
    account.add("kernel_threads", _kernel_threads_ns() - kernel_before)
    account.add("worker_user", (self_after[0] - self_before[0]) * 1e9)
    account.add("worker_sys", (self_after[1] - self_before[1]) * 1e9)
    account.add("worker_csw", self_after[2] + self_after[3] - self_before[2] - self_before[3])
    account.add("worker_wait", sched_after[1] - sched_before[1])
    account.matches += 1


def run(labels: list[str], matches: int, ballast_mb: int) -> dict[str, dict[str, Any]]:
    """Play and account; returns per runner the sums and the match walls."""
    ballast = bytearray(os.urandom(1024)) * (ballast_mb * 1024)  # resident, like a worker
    root = Path(tempfile.mkdtemp(prefix="qs-cost-"))
    root.chmod(0o711)
    accounts = {label: Account() for label in labels}
    group = CpuGroup()
    holder = [accounts[labels[0]]]
    _patch_encode_into(holder)
    try:
        source = (ROOT / "examples" / "python" / "bot.py").read_bytes()
        bot = install_package(source, "bot.py", root / "starter")
        runners = _runners(bot, labels)
        for label in labels:  # warm-up: runtime discovery, staging, page cache
            runner, target = runners[label]
            play_one(runner, target, 10_000, Account(), holder, group)
        for seed in range(matches):
            order = labels if seed % 2 == 0 else labels[::-1]
            for label in order:
                runner, target = runners[label]
                play_one(runner, target, seed, accounts[label], holder, group)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        del ballast
        group.close()
    return {label: {"sums": dict(a.sums), "walls": a.walls, "matches": a.matches,
                    "source": group.source} for label, a in accounts.items()}


def _patch_encode_into(holder: list[Account]) -> None:
    real = session_module.encode

    def encode(message: dict[str, Any]) -> bytes:
        start = _cpu()
        data = real(message)
        holder[0].add("encode", _cpu() - start)
        holder[0].add("bytes_out", len(data))
        return data

    session_module.encode = encode  # type: ignore[assignment]


def merge(results: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for result in results:
        for label, data in result.items():
            into = merged.setdefault(label, {"sums": defaultdict(float), "walls": [],
                                             "matches": 0, "source": data["source"]})
            for key, value in data["sums"].items():
                into["sums"][key] += value
            into["walls"] += data["walls"]
            into["matches"] += data["matches"]
    return merged


ROWS = [
    ("worker: start four seats", "start"),
    ("worker: hello", "hello"),
    ("worker: decisions+notices", "decisions"),
    ("  of which JSON encoding", "encode"),
    ("worker: engine (referee)", "engine"),
    ("worker: close four seats", "close"),
    ("worker total (user)", "worker_user"),
    ("worker total (sys)", "worker_sys"),
    ("seats: bwrap monitor", "seat_monitor"),
    ("seats: bwrap pid 1", "seat_pid1"),
    ("seats: bots", "seat_bot"),
    ("seats: after match_end (exit, teardown)", "seat_after"),
    ("seats total (user)", "seats_user"),
    ("seats total (sys)", "seats_sys"),
    ("kernel threads (host-wide)", "kernel_threads"),
    ("CPU total (worker + seats)", "cpu_total"),
    ("waits for a core: worker", "worker_wait"),
    ("waits for a core: seats", "seat_wait"),
]


def report(merged: dict[str, dict[str, Any]], workers: int) -> None:
    labels = list(merged)
    per = {}
    for label in labels:
        data = merged[label]
        s, n = data["sums"], max(1, data["matches"])
        s["seat_after"] = s["seats_user"] + s["seats_sys"] - s["seat_before_close"]
        s["cpu_total"] = s["worker_user"] + s["worker_sys"] + s["seats_user"] + s["seats_sys"]
        per[label] = {key: value / n for key, value in s.items()}
    print(f"cost of one match (4 fresh seats, python starter bot), ms of CPU per match, "
          f"{workers} worker(s), {merged[labels[0]]['matches']} matches per runner")
    print(f"  {'':38}" + "".join(f"{label:>13}" for label in labels))
    for title, key in ROWS:
        print(f"  {title:38}" + "".join(f"{per[label].get(key, 0) / 1e6:13.2f}"
                                         for label in labels))
    print(f"  {'decisions per match':38}" + "".join(f"{per[label].get('turns', 0):13.0f}"
                                                    for label in labels))
    print(f"  {'bytes sent per match':38}" + "".join(f"{per[label].get('bytes_out', 0):13.0f}"
                                                     for label in labels))
    print(f"  {'context switches: worker':38}" + "".join(
        f"{per[label].get('worker_csw', 0):13.0f}" for label in labels))
    print(f"  {'wall median, ms (quiet machine only)':38}" + "".join(
        f"{statistics.median(merged[label]['walls']) * 1e3:13.1f}" for label in labels))
    print(f"  seats' CPU from {merged[labels[0]]['source']}")
    base = per[labels[0]]["cpu_total"]
    print(f"  {'CPU total / ' + labels[0]:38}" + "".join(
        f"{per[label]['cpu_total'] / base:13.2f}" for label in labels))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=12)
    parser.add_argument("--runners", default="bare,bwrap,bwrap-light")
    parser.add_argument("--ballast-mb", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print raw sums as JSON (internal)")
    args = parser.parse_args()
    labels = args.runners.split(",")
    if args.json:
        print(json.dumps(run(labels, args.matches, args.ballast_mb)))
        return
    if args.workers == 1:
        merged = merge([run(labels, args.matches, args.ballast_mb)])
    else:
        command = [sys.executable, __file__, "--json", "--matches", str(args.matches),
                   "--runners", args.runners, "--ballast-mb", str(args.ballast_mb)]
        procs = [subprocess.Popen(command, stdout=subprocess.PIPE) for _ in range(args.workers)]
        merged = merge([json.loads(p.communicate()[0]) for p in procs])
    report(merged, args.workers)


if __name__ == "__main__":
    main()
