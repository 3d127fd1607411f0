"""Covert channels between two sandboxed seats of a team that the sandbox leaves open: bits/s.

    python benchmarks/covert_channels.py [--bits 48] [--channels locks,cpu,...]
                                         [--confinement both|full|light]

Two seats run the same package, as partners do on the platform, under the full bwrap confinement
(syscall filter, seat cgroups) and, as the reference in the same run, without those two. A sender
seat encodes a random bit string, a receiver seat decodes it; the decoder puts its threshold at
the median of what it measured (the string has as many ones as zeros), and the error rate p gives
the capacity (1 - H(p)) x bits / seconds, printed for each symbol time tried. Channels:

- ``locks``: POSIX record locks on the package's own file, one bit per byte offset (the channel
  the syscall filter closes).
- ``cpu``: the sender burns both cores for a 1, sleeps for a 0; the receiver counts its own loop
  iterations per slot.
- ``sysinfo-mem``: the sender holds 128 MB for a 1; the receiver reads the host's free memory
  with ``sysinfo(2)`` (closed when the filter denies ``sysinfo``).
- ``sysinfo-procs``: the sender holds 24 extra processes for a 1; the receiver reads the host's
  process count with ``sysinfo(2)`` (likewise).
- ``page-cache``: one bit per page of a file of the package, evicted by the host beforehand: the
  sender reads the pages of its ones, the receiver times a read of every page (a one-shot
  channel: its capacity is the number of cold pages the two seats share). The runner warms the
  package's pages before a seat starts, which closes it for the package's own files.
- ``page-cache-stdlib``: the same through a standard-library file (``pydoc_data/topics.py``),
  evicted by the host after the runner's last warm-up of the runtime (it asks the runtime's files
  into the page cache at its first start and then at most once a minute).
- ``page-cache-stdlib-rewarmed``: the same, evicted before the runner's warm-up.
- ``turn-gap``: through the platform itself: the sender delays its reply by one step for a 1,
  the receiver times the gap between its own turns (the referee asks the seats in turn).
- ``turn-gap-fixed``: the same under fixed-time turns (``ARENA_FIXED_TURNS``): each reply is held
  by the referee's own ``AnnouncedClock.hold_reply`` until a move clock of twice the step plus
  5 ms after the turn was written.

Figures only; nothing asserts. Run with ``nice -n 5``; the host's own load is noise the channels
must beat, as it would be on a worker.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import zipfile
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import AnnouncedClock
from sandbox import BotSession, Clock, InstalledBot, install_package, open_session
from sandbox.runners.bwrap import BwrapRunner
from sandbox.runners.runtimes import host_runtime

PAGE = 4096
#: A standard-library file both seats can read (the host evicts it for the page-cache trial).
STDLIB_FILE = Path(host_runtime("python3").dirs[0]) / "pydoc_data" / "topics.py"
DATA_PAGES = 1024  # a 4 MiB data file in the package (uploads are at most 5 MB): 1,024 bits

BOT = r'''
import ctypes, fcntl, json, mmap, os, statistics, struct, sys, time

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

class SysInfo(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3),
                ("totalram", ctypes.c_ulong), ("freeram", ctypes.c_ulong),
                ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
                ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong),
                ("procs", ctypes.c_ushort), ("pad", ctypes.c_ushort),
                ("totalhigh", ctypes.c_ulong), ("freehigh", ctypes.c_ulong),
                ("mem_unit", ctypes.c_uint), ("_f", ctypes.c_char * 8)]

libc = ctypes.CDLL(None, use_errno=True)

def sysinfo():
    info = SysInfo()
    return info if libc.sysinfo(ctypes.byref(info)) == 0 else None

def until(moment):
    delay = moment - time.monotonic()
    if delay > 0:
        time.sleep(delay)

def in_child(work, copies=1):
    for _ in range(copies):
        if os.fork() == 0:
            try:
                work()
            finally:
                os._exit(0)

def send_bits(m):
    bits, start, period = m["bits"], m["start"], m["period"]
    channel = m["channel"]
    if channel == "cpu":
        def burn():
            for i, bit in enumerate(bits):
                end = start + (i + 1) * period
                if bit:
                    until(start + i * period)
                    while time.monotonic() < end:
                        pass
                else:
                    until(end)
        in_child(burn, copies=2)
    elif channel == "sysinfo-mem":
        def hold():
            for i, bit in enumerate(bits):
                until(start + i * period)
                if bit:
                    block = b"\x01" * 128_000_000
                    until(start + (i + 1) * period - period / 10)
                    del block
        in_child(hold)
    elif channel == "sysinfo-procs":
        def spawn():
            for i, bit in enumerate(bits):
                until(start + i * period)
                if bit:
                    pids = []
                    for _ in range(24):
                        pid = os.fork()
                        if pid == 0:
                            until(start + (i + 1) * period - period / 10)
                            os._exit(0)
                        pids.append(pid)
                    for pid in pids:
                        os.waitpid(pid, 0)
        in_child(spawn)
    elif channel == "locks":
        global held
        held = os.open("/bot/main.py", os.O_RDONLY)  # kept open: the locks stay
        for i, bit in enumerate(bits):
            if bit:
                try:
                    lock = struct.pack("hhqqi", fcntl.F_RDLCK, 0, i, 1, 0)
                    fcntl.fcntl(held, fcntl.F_SETLK, lock)
                except OSError:
                    return
    elif channel.startswith("page-cache"):
        with open(m["path"], "rb") as data:
            view = mmap.mmap(data.fileno(), 0, prot=mmap.PROT_READ)
        view.madvise(mmap.MADV_RANDOM)  # no read-ahead: one page per bit
        for i, bit in enumerate(bits):
            if bit:
                view[i * 4096]

def receive(m):
    n, start, period, channel = len(m["bits"]), m["start"], m["period"], m["channel"]
    values = []
    if channel.startswith("page-cache"):
        with open(m["path"], "rb") as data:
            view = mmap.mmap(data.fileno(), 0, prot=mmap.PROT_READ)
        view.madvise(mmap.MADV_RANDOM)
        for i in range(n):
            begin = time.perf_counter_ns()
            view[i * 4096]
            values.append(begin - time.perf_counter_ns())  # fast (resident) reads as a one
        return values
    if channel == "locks":
        fd = os.open("/bot/main.py", os.O_RDONLY)
        for i in range(n):
            try:
                probe = struct.pack("hhqqi", fcntl.F_WRLCK, 0, i, 1, 0)
                kind = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, probe))[0]
            except OSError:
                return None  # denied
            values.append(int(kind != fcntl.F_UNLCK))
        return values
    if channel.startswith("sysinfo") and sysinfo() is None:
        return None  # denied
    for i in range(n):
        slot = start + i * period
        if channel == "cpu":
            until(slot + period / 10)
            count, end = 0, slot + period * 0.9
            while time.monotonic() < end:
                count += 1
            values.append(-count)
        else:
            samples = []
            for fraction in (0.5, 0.65, 0.8):
                until(slot + period * fraction)
                info = sysinfo()
                samples.append(-info.freeram * info.mem_unit if channel == "sysinfo-mem"
                               else info.procs)
            values.append(statistics.median(samples))
    return values

last_turn = None
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        if m["role"] == "sender":
            send({"type": "ready", "name": "sender"})
            send_bits(m)
        else:
            values = receive(m) if m["channel"] != "turn-gap" else None
            send({"type": "ready", "name": "receiver", "values": values})
    elif m["type"] == "turn":
        now = time.monotonic()
        if m["state"].get("delay"):
            time.sleep(m["state"]["delay"])
        if m["state"].get("receiver"):
            if last_turn is not None:
                print("gap", now - last_turn, file=sys.stderr, flush=True)
            last_turn = now
        send({"id": m["id"], "action": m["legal"][0]})
'''

CLOCK = Clock(hello_ms=120_000, move_ms=5_000, bank_ms=600_000)
SYMBOL_TIMES = {
    "cpu": (0.01, 0.03, 0.1),
    "sysinfo-mem": (0.1, 0.25),
    "sysinfo-procs": (0.01, 0.03, 0.1),
    "turn-gap": (0.0005, 0.002, 0.01),
    "turn-gap-fixed": (0.0005, 0.002, 0.01),
}


def entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def decode(values: list[float], bits: list[int]) -> float:
    """Error rate with the threshold at the median (bits balanced): above it reads as 1."""
    threshold = statistics.median(values)
    guessed = [1 if value > threshold else 0 for value in values]
    return sum(g != b for g, b in zip(guessed, bits, strict=True)) / len(bits)


def balanced_bits(n: int, rng: random.Random) -> list[int]:
    bits = [1] * (n // 2) + [0] * (n - n // 2)
    rng.shuffle(bits)
    return bits


def package(root: Path) -> InstalledBot:
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("bot.json", '{"command": "python3 main.py"}')
        archive.writestr("main.py", BOT)
        archive.writestr("data.bin", os.urandom(DATA_PAGES * PAGE))
    return install_package(buffer.getvalue(), "pair.zip", root / "pair")


def slotted(runner: BwrapRunner, bot: InstalledBot, channel: str, period: float,
            bits: list[int]) -> tuple[float, float] | None:
    """(error rate, seconds) for one trial of a time-slotted channel; None when closed."""
    start = time.monotonic() + 1.0
    message = {"type": "hello", "protocol": 1, "channel": channel, "bits": bits,
               "start": start, "period": period}
    with open_session(runner, bot, CLOCK) as sender, open_session(runner, bot, CLOCK) as receiver:
        sender.hello({**message, "role": "sender"})
        values = receiver.hello({**message, "role": "receiver"})["values"]
    if values is None:
        return None
    return decode(values, bits), len(bits) * period


def page_cache(runner: BwrapRunner, bot: InstalledBot, host_path: Path, sandbox_path: str,
               rng: random.Random) -> tuple[int, float, float]:
    """(bits, error rate, seconds) for the one-shot page-cache channel over the pages of a file
    both seats can read, which the host evicts from the page cache beforehand."""
    pages = min(DATA_PAGES, host_path.stat().st_size // PAGE)
    bits = balanced_bits(pages, rng)
    with open(host_path, "rb") as data:
        os.fsync(data.fileno())  # written back first: dirty pages cannot be dropped
        os.posix_fadvise(data.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    message = {"type": "hello", "protocol": 1, "channel": "page-cache", "bits": bits,
               "start": 0, "period": 0, "path": sandbox_path}
    time.sleep(0.3)  # the eviction is done before the seats start
    begin = time.monotonic()
    with open_session(runner, bot, CLOCK) as sender, open_session(runner, bot, CLOCK) as receiver:
        sender.hello({**message, "role": "sender"})
        time.sleep(0.2)  # the sender's reads are done well within this
        values = receiver.hello({**message, "role": "receiver"})["values"]
    return pages, decode(values, bits), time.monotonic() - begin


def locks(runner: BwrapRunner, bot: InstalledBot,
          bits: list[int]) -> tuple[float, float] | None:
    """(error rate, seconds) for POSIX record locks on the package's own file; None if closed."""
    message = {"type": "hello", "protocol": 1, "channel": "locks", "bits": bits, "start": 0,
               "period": 0}
    begin = time.monotonic()
    with open_session(runner, bot, CLOCK) as sender, open_session(runner, bot, CLOCK) as receiver:
        sender.hello({**message, "role": "sender"})
        time.sleep(0.05)
        values = receiver.hello({**message, "role": "receiver"})["values"]
    if values is None:
        return None
    return decode(values, bits), time.monotonic() - begin


def turn_gap(runner: BwrapRunner, bot: InstalledBot, step: float,
             bits: list[int], fixed: bool = False) -> tuple[float, float]:
    """(error rate, seconds): the referee alternates sender and receiver turns; with ``fixed``,
    each reply is held as the referee holds it under fixed-time turns."""
    held = AnnouncedClock(move_ms=round(step * 2000) + 5, fixed_turns=fixed)
    hello_message = {"type": "hello", "protocol": 1, "channel": "turn-gap", "bits": bits,
                     "start": 0, "period": 0}
    with open_session(runner, bot, CLOCK) as sender, open_session(runner, bot, CLOCK) as receiver:
        sender.hello({**hello_message, "role": "sender"})
        receiver.hello({**hello_message, "role": "receiver"})
        turn_id = 0

        def ask(session: BotSession, state: dict[str, object]) -> None:
            nonlocal turn_id
            turn_id += 1
            asked_at = time.perf_counter()
            session.turn({"type": "turn", "id": turn_id, "state": state, "legal": ["a"]})
            held.hold_reply(asked_at)

        begin = time.monotonic()
        ask(receiver, {"receiver": True})
        for bit in bits:
            ask(sender, {"delay": step * bit})
            ask(receiver, {"receiver": True})
        elapsed = time.monotonic() - begin
        tail = receiver.stderr_tail
    gaps = [float(line.split()[1]) for line in tail.splitlines() if line.startswith("gap ")]
    return decode(gaps[-len(bits):], bits), elapsed


def trials_of(channel: str, runner: BwrapRunner, bot: InstalledBot, args: argparse.Namespace,
              rng: random.Random) -> list[tuple[str, int, float, float]] | str:
    """(symbol, bits, error rate, seconds) per trial of ``channel``, or why it is closed."""
    if channel == "locks":
        bits = balanced_bits(DATA_PAGES, rng)
        result = locks(runner, bot, bits)
        return "closed: lock calls are denied" if result is None else [
            ("1 lock", len(bits), *result)]
    if channel.startswith("page-cache"):
        host_path, sandbox_path = ((bot.folder / "data.bin", "/bot/data.bin")
                                   if channel == "page-cache" else (STDLIB_FILE, str(STDLIB_FILE)))
        if channel == "page-cache-stdlib-rewarmed":  # a runner whose periodic warm-up came after
            runner = BwrapRunner(seccomp=runner.seccomp,  # the eviction (its first start warms)
                                 cgroups=runner.cgroup_support.mode != "none")
        pages, error, seconds = page_cache(runner, bot, host_path, sandbox_path, rng)
        return [(f"{seconds / pages * 1e6:.0f}µs", pages, error, seconds)]
    trials = []
    for step in SYMBOL_TIMES[channel]:
        bits = balanced_bits(args.bits, rng)
        result = (turn_gap(runner, bot, step, bits, fixed=channel == "turn-gap-fixed")
                  if channel.startswith("turn-gap") else slotted(runner, bot, channel, step, bits))
        if result is None:
            return "closed: sysinfo(2) is denied"
        trials.append((f"{step * 1e3:g}ms", len(bits), *result))
    return trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bits", type=int, default=48, help="bits per timed trial")
    parser.add_argument("--channels", default="locks,cpu,sysinfo-mem,sysinfo-procs,page-cache,"
                        "page-cache-stdlib,page-cache-stdlib-rewarmed,turn-gap,turn-gap-fixed")
    parser.add_argument("--confinement", choices=("both", "full", "light"), default="both",
                        help="full: syscall filter and seat cgroups on; light: both off")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    runners = {"full": BwrapRunner(), "light": BwrapRunner(seccomp=False, cgroups=False)}
    chosen = ["full", "light"] if args.confinement == "both" else [args.confinement]
    print(f"full confinement: {runners['full'].confinement}")
    root = Path(tempfile.mkdtemp(prefix="qs-covert-"))
    root.chmod(0o711)
    try:
        bot = package(root)
        print(f"{'confinement':>11} {'channel':>17} {'symbol':>9} {'bits':>5} {'errors':>7} "
              f"{'raw b/s':>9} {'capacity b/s':>13}")
        for channel in args.channels.split(","):
            for name in chosen:
                trials = trials_of(channel, runners[name], bot, args, rng)
                if isinstance(trials, str):
                    print(f"{name:>11} {channel:>17}  {trials}")
                    continue
                for label, n, error, seconds in trials:
                    raw = n / seconds
                    print(f"{name:>11} {channel:>17} {label:>9} {n:>5} {error:>7.1%} "
                          f"{raw:>9.1f} {raw * (1 - entropy(error)):>13.1f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
