"""Hostile bots under each confined backend for real: bwrap, and Docker (``make test-docker``).
Each ends as the right fault within its clock plus one second, leaves no process behind (checked
by the ``run_boxed`` fixture: through /proc under bwrap, the container gone under Docker), and a
healthy bot plays after it. The expectations are the same under both backends, except where
noted: what the root of the sandbox holds (host libraries under bwrap, the runtime image under
Docker) and how many processes the sandbox keeps beside the bot. Probes that must fail report
back through the ``ready`` reply."""

from __future__ import annotations

import json
import os
import resource
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox import BotFault, BotSession, Clock, Limits, open_session
from sandbox.clocks import BACKSTOP_FACTOR
from sandbox.runners.bwrap import BwrapRunner
from sandbox.session import CLOSE_GRACE_S
from tests.sandbox.helpers import (
    FAST,
    STARVES_ITSELF,
    favour,
    hello,
    nothing_runs,
    python_bot,
    referee_keeps_up,
    seat_pids,
    seats_outweigh_the_host,
    turn,
)

MOVE_S = FAST.move_ms / 1000
#: A clock for faults that need the bot to burn CPU first (filling its memory, using up its CPU
#: seconds): a second of CPU took 5-6 s of wall time at a load of 13 on this 2-core machine,
#: under bwrap and Docker alike; on a quiet machine these end in about a second all the same.
CPU_BOUND = Clock(hello_ms=5000, move_ms=15_000, bank_ms=15_000)
#: The same for a bot writing 1 GiB before it replies (about 100 MiB/s through either backend on
#: that busy machine, 80 through Docker's attach stream).
FLOOD = Clock(hello_ms=30_000, move_ms=500, bank_ms=5000)


def fault_of(call: Callable[[], object], within: float) -> BotFault:
    """Run ``call``; it must raise BotFault within ``within`` seconds plus one."""
    start = time.monotonic()
    with pytest.raises(BotFault) as caught:
        call()
    elapsed = time.monotonic() - start
    assert elapsed < within + 1.0, f"fault after {elapsed:.2f} s, clock {within} s"
    return caught.value


def started(run_boxed, on_turn: str, **kw) -> BotSession:
    session = run_boxed(python_bot(on_turn=on_turn), **kw)
    session.hello(hello())
    return session


def test_fork_bomb_times_out_and_does_not_starve_another_seat(run_boxed):
    victim = run_boxed(
        python_bot(on_turn="""
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            send({"id": m["id"], "action": m["legal"][1]})
        """),
        clock=Clock(hello_ms=5000, move_ms=5000, bank_ms=20000),
    )
    victim.hello(hello())
    bomb = started(run_boxed, """
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """)
    favour(bomb)  # its CPU, not this busy machine's load, must run its clock out
    with seats_outweigh_the_host(bomb), referee_keeps_up():
        fault = fault_of(lambda: bomb.turn(turn(1)), MOVE_S)
    assert fault.kind == "timeout"
    assert "move_ms=500" in fault.detail
    # RLIMIT_NPROC of the seat's uid (bwrap), the container's pids cgroup (Docker)
    assert len(seat_pids(bomb)) <= Limits().processes + 2
    assert victim.turn(turn(1)) == "play 9H"  # its own uid, its own process budget


def test_busy_children_are_charged_to_a_seat_without_a_cgroup(bwrap, make_bot):
    """Under bwrap on a host with no seat cgroups the clock keeps the tree it found at the first
    slow decision; children forked later that keep the bot's first process off the CPU are
    found at the backstop and their CPU charged: the bot's timeout, not ``PlatformTimeout``
    (the match played again, then void)."""
    runner = BwrapRunner(cgroups=False, uid_pool=bwrap.uid_pool)
    with open_session(runner, make_bot(STARVES_ITSELF), FAST) as session:
        session.hello(hello())
        assert session.turn(turn(1)) == "play TH"
        fault = fault_of(lambda: session.turn(turn(2)), MOVE_S * BACKSTOP_FACTOR)
        assert fault.kind == "timeout"
    assert nothing_runs(session)


def test_memory_bomb_crashes(run_boxed):
    session = started(run_boxed, """
        hog = []
        while True:
            hog.append(bytearray(50_000_000))
    """, limits=Limits(memory_bytes=512 * 1024 * 1024), clock=CPU_BOUND)
    fault = fault_of(lambda: session.turn(turn(1)), CPU_BOUND.move_ms / 1000)
    assert fault.kind == "crash"
    assert "exited with code 1" in fault.detail
    assert "MemoryError" in fault.stderr_tail


def test_busy_loop_times_out(run_boxed):
    session = started(run_boxed, "while True:\n    pass")
    favour(session)  # its CPU, not this busy machine's load, must run its clock out
    with seats_outweigh_the_host(session), referee_keeps_up():
        fault = fault_of(lambda: session.turn(turn(1)), MOVE_S)
    assert fault.kind == "timeout"
    assert fault.detail.startswith("no reply to turn 1 within move_ms=500 (host: wall_s=")


def test_cpu_limit_ends_a_busy_bot(run_boxed):
    session = started(run_boxed, "while True:\n    pass", limits=Limits(cpu_seconds=1),
                      clock=CPU_BOUND)
    favour(session)
    fault = fault_of(lambda: session.turn(turn(1)), CPU_BOUND.move_ms / 1000)
    assert fault.kind == "crash"
    assert "SIGXCPU" in fault.detail or "SIGKILL" in fault.detail


def test_sleeping_past_the_clock_times_out(run_boxed):
    session = started(run_boxed, "time.sleep(30)")
    fault = fault_of(lambda: session.turn(turn(1)), MOVE_S)
    assert fault.kind == "timeout"


def test_bank_runs_out(run_boxed):
    session = started(run_boxed, """
        time.sleep(0.3 if m["id"] < 3 else 0.45)
        send({"id": m["id"], "action": m["legal"][0]})
    """, clock=Clock(hello_ms=5000, move_ms=500, bank_ms=800))
    # turns 1 and 2 spend 0.6 s of the 0.8 s bank, with 0.2 s to spare for delivering them
    # (wall time under Docker); turn 3's 0.45 s can never fit in what is left
    session.turn(turn(1))
    session.turn(turn(2))
    fault = fault_of(lambda: session.turn(turn(3)), 0.2)
    assert fault.kind == "timeout"
    assert "bank" in fault.detail


PROBE = """
def attempt(action):
    try:
        return "ok: " + repr(action())[:200]
    except BaseException as exc:
        return "failed: " + type(exc).__name__

def write(path):
    with open(path, "w") as out:
        out.write("pwned")
    return path

def connect(port):
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return "connected"

import socket
probe = {
    "read_secret": attempt(lambda: open(m["secret"]).read()),
    "list_secret_dir": attempt(lambda: os.listdir(os.path.dirname(m["secret"]))),
    "read_platform": attempt(lambda: open(m["platform_file"]).read(100)),
    "write_own_folder": attempt(lambda: write("/bot/new.txt")),
    "write_root": attempt(lambda: write("/evil.txt")),
    "write_usr": attempt(lambda: write("/usr/lib/evil.txt")),
    "write_host_path": attempt(lambda: write(m["outside"])),
    "write_tmp": attempt(lambda: write("/tmp/scratch.txt")),
    "connect": attempt(lambda: connect(m["port"])),
    "root_entries": sorted(os.listdir("/")),
    "env": sorted(os.environ),
    "pid1_env": attempt(lambda: open("/proc/1/environ").read()),
    "uid": os.getuid(),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "ppid": os.getppid(),
    "hostname": socket.gethostname(),
}
send({"type": "ready", "name": "probe", "probe": probe})
"""


def test_confinement_probe(run_boxed, bots_root: Path, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("QS_TEST_SECRET", "hunter2")
    secret = bots_root / "secret.txt"
    secret.write_text("the database password")
    secret.chmod(0o644)  # readable by any uid on the host: only the sandbox keeps it away
    outside = bots_root / "outside.txt"
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    try:
        session = run_boxed(python_bot(on_hello=PROBE))
        reply = session.hello(hello(
            secret=str(secret), outside=str(outside), port=listener.getsockname()[1],
            platform_file=str(Path(__file__).resolve()),
        ))
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    probe = reply["probe"]
    for key in ("read_secret", "list_secret_dir", "read_platform", "write_own_folder",
                "write_root", "write_usr", "write_host_path", "connect"):
        assert probe[key].startswith("failed"), (key, probe[key])
    assert probe["write_tmp"].startswith("ok")
    assert not outside.exists()
    assert set(probe["root_entries"]) <= ROOT_ENTRIES[session.process.backend]
    assert set(probe["env"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_CTYPE", "PWD"}
    assert "hunter2" not in json.dumps(probe)
    assert probe["uid"] == 1000
    # A pid namespace: the sandbox's init (bwrap's, docker-init) and the bot, its child.
    assert len(probe["pids"]) == 2 and probe["pids"][0] == 1 and probe["ppid"] == 1
    assert probe["hostname"] == "bot"


#: What the root of a sandbox may hold: the bot, its /tmp, and the runtime (the host's libraries,
#: read-only, under bwrap; the read-only runtime image under Docker).
ROOT_ENTRIES = {
    "bwrap": {"bot", "tmp", "proc", "dev", "usr", "lib", "lib64", "bin", "sbin", "lib32",
              "libx32"},
    "docker": {"bot", "tmp", "proc", "dev", "usr", "lib", "lib64", "bin", "sbin", "lib32",
               "libx32", "etc", "var", "run", "home", "root", "opt", "srv", "mnt", "media",
               "boot", "sys", ".dockerenv"},
}


def test_child_outliving_the_bot_is_killed(run_boxed):
    session = run_boxed(python_bot(on_hello="""
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                import signal
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                os.close(0); os.close(1); os.close(2)
                while True:
                    time.sleep(1)
            os._exit(0)
        send({"type": "ready", "name": "daemon"})
    """))
    session.hello(hello())
    assert len(seat_pids(session)) >= 3  # bwrap or docker-init, the bot, the daemon
    session.notify({"type": "match_end"})
    start = time.monotonic()
    session.close()
    assert time.monotonic() - start < CLOSE_GRACE_S + 1.5  # not held up by the daemon
    assert nothing_runs(session, within=0)


def test_stdout_flood_is_a_protocol_fault_in_bounded_memory(run_boxed):
    session = started(run_boxed, """
        chunk = "x" * (1 << 20)
        for _ in range(1024):
            sys.stdout.write(chunk)
        sys.stdout.flush()
    """)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fault = fault_of(lambda: session.turn(turn(1)), MOVE_S)
    assert fault.kind == "protocol"
    assert "65536 bytes without a newline" in fault.detail
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


def test_unasked_lines_flood_is_a_protocol_fault(run_boxed):
    session = run_boxed(python_bot(on_hello="""
        send({"type": "ready", "name": "chatty"})
        for _ in range(200_000):
            sys.stdout.write('{"id": 1, "action": "play TH"}\\n')
    """))
    session.hello(hello())
    time.sleep(0.2)  # the other seats play meanwhile; lines that arrive are unasked
    fault = fault_of(lambda: session.turn(turn(1)), MOVE_S)
    assert fault.kind == "protocol"
    assert "when no reply was asked" in fault.detail


def test_stderr_flood_is_drained_and_tail_kept(run_boxed):
    session = run_boxed(python_bot(on_hello="""
        chunk = "e" * (1 << 20)
        for _ in range(1024):
            sys.stderr.write(chunk)
        sys.stderr.write("THE END\\n")
        sys.stderr.flush()
        send({"type": "ready", "name": "noisy"})
    """), clock=FLOOD)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    assert session.hello(hello())["name"] == "noisy"
    assert time.monotonic() - start < FLOOD.hello_ms / 1000
    assert session.turn(turn(1)) == "play TH"
    tail = session.stderr_tail
    deadline = time.monotonic() + 5  # Docker hands stderr over on a stream of its own, which can
    while not tail.endswith("\n") and time.monotonic() < deadline:  # trail the reply on stdout
        time.sleep(0.05)
        tail = session.stderr_tail
    assert len(tail.encode()) <= 64 * 1024
    assert tail.endswith("eeeTHE END\n")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


@pytest.mark.parametrize(
    ("on_turn", "kind", "words"),
    [
        ('print("this is not json", flush=True)', "protocol", "not JSON"),
        ('print("{" + " " * 70000 + "}", flush=True)', "protocol", "over 65536 bytes"),
        ('send({"id": m["id"], "action": "play 7S"})', "illegal", "'play 7S'"),
        ('send({"id": m["id"] + 1, "action": m["legal"][0]})', "illegal", "has id 2, not 1"),
        ('sys.exit(3)', "crash", "exited with code 3"),
        ('os.kill(os.getpid(), 9)', "crash", "SIGKILL"),
    ],
    ids=["invalid-json", "long-line", "illegal-action", "wrong-id", "exit", "killed"],
)
def test_bad_replies(run_boxed, on_turn: str, kind: str, words: str):
    session = started(run_boxed, on_turn)
    fault = fault_of(lambda: session.turn(turn(1)), MOVE_S)
    assert fault.kind == kind
    assert words in fault.detail


def test_exit_mid_match_after_some_turns(run_boxed):
    session = started(run_boxed, """
        if m["id"] == 3:
            print("giving up", file=sys.stderr)
            sys.exit(0)
        send({"id": m["id"], "action": m["legal"][-1]})
    """)
    assert [session.turn(turn(i)) for i in (1, 2)] == ["play AH", "play AH"]
    fault = fault_of(lambda: session.turn(turn(3)), MOVE_S)
    assert fault.kind == "crash"
    assert "exited with code 0 before replying to turn 3" in fault.detail
    assert "giving up" in fault.stderr_tail


def test_node_bot_runs_confined(run_boxed):
    source = """
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.type === "hello") {
    let secret = "unreadable";
    try { require("fs").readFileSync(m.secret); secret = "read"; } catch (e) {}
    console.log(JSON.stringify({ type: "ready", name: "node", secret, ppid: process.ppid }));
  } else if (m.type === "turn") {
    console.log(JSON.stringify({ id: m.id, action: m.legal[m.legal.length - 1] }));
  }
});
"""
    session = run_boxed(source, filename="bot.js")
    reply = session.hello(hello(secret=os.path.abspath(__file__)))
    assert reply["secret"] == "unreadable"
    assert reply["ppid"] == 1  # the sandbox's init: a pid namespace of its own
    assert session.turn(turn(1)) == "play AH"
