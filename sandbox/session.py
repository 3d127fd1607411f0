"""``BotSession``: protocol 1's conversation with one running bot, with its clocks.

The referee calls ``hello`` once, then ``turn`` and ``notify`` in game order, then ``close``. Every
breach of the protocol raises ``BotFault``; after the first, every call raises that same fault and
``close`` kills at once. The session reads only the protocol's envelope (``type``, ``id``,
``legal``, ``action``): it knows nothing of the game. This module must not import Django or
``engine``.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING, Any, NoReturn

from sandbox.channel import Channel, ChannelClosed, ChannelTimeout, LineTooLong
from sandbox.clocks import BACKSTOP_FACTOR, DecisionMeter, PlatformTimeout
from sandbox.faults import BotFault
from sandbox.protocol import MAX_LINE_BYTES, Clock, encode
from sandbox.replies import BadReply, decode_reply
from sandbox.runners.base import BotProcess, Limits, Runner

if TYPE_CHECKING:
    from sandbox.starvation import MatchSeats

#: Grace between closing stdin at the end and killing the tree.
CLOSE_GRACE_S = 1.0


class BotSession:
    """One running bot program. Not thread-safe; one referee drives it.

    ``bank_left_ms`` is what remains of ``clock.bank_ms``; ``moves_ms`` holds each decision's time
    (write to newline) in order. ``stderr_tail`` is the last 64 KiB of stderr, drained on every
    call so a stderr flood never blocks the referee.
    """

    def __init__(self, process: BotProcess, clock: Clock | None = None) -> None:
        self.process = process
        self.clock = clock or Clock()
        self.bank_left_ms: float = float(self.clock.bank_ms)
        self.moves_ms: list[int] = []
        fds = process.fds()
        try:
            self._channel = Channel(*fds)
        except BaseException:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            raise
        self._fault: BotFault | None = None
        self._platform_fault: PlatformTimeout | None = None
        cgroup = getattr(process, "cgroup", None)
        self._meter = DecisionMeter(
            process.pid,
            process.host_uid,
            cgroup.pids if cgroup is not None else None,
            cgroup.cpu_seconds if cgroup is not None else None,
        )
        self._closed = False
        self._greeted = False
        self._ready = False
        #: A decision of this seat was cut because another seat starved it: a late reply to it
        #: is dropped, not taken for an unsolicited line.
        self._cut = False
        #: The match's other seats and this one's number, when the session plays in a match
        #: (``MatchSeats.join``): a seat that starves this one past the backstop forfeits.
        self.match_seats: MatchSeats | None = None
        self.seat: int | None = None

    # --- protocol 1 -------------------------------------------------------------------------

    def hello(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``hello`` and return the ``ready`` reply, within ``hello_ms``."""
        self._check_open(message, "hello")
        if self._greeted:
            raise RuntimeError("hello was already sent")
        self._greeted = True
        self._meter.start()
        limit_s = self.clock.hello_ms / 1000
        self._send(message, self._meter.started + limit_s, "hello")
        detail = f"no ready reply within hello_ms={self.clock.hello_ms}"
        line = self._read_metered(limit_s, "hello", detail)
        self._meter.rescan = False  # the bot is up: its process tree is known
        reply = self._parse(line, "hello")
        if reply.get("type") != "ready":
            self._raise(
                "protocol",
                f'the reply to hello must be {{"type": "ready", ...}}; got {_show(line)}',
            )
        self._ready = True
        return reply

    def turn(self, message: dict[str, Any]) -> str:
        """Send a ``turn`` and return the action, one of ``message["legal"]``, within the clocks."""
        self._check_open(message, "turn")
        turn_id, legal = message.get("id"), message.get("legal")
        if not isinstance(turn_id, int) or not isinstance(legal, list) or not legal:
            raise ValueError('a turn needs an int "id" and a non-empty "legal" list')
        if not self._greeted:
            raise RuntimeError("hello must come first")
        self._check_unsolicited()
        move_ms = self.clock.move_ms
        limit_ms = min(move_ms, self.bank_left_ms)
        meter = self._meter
        meter.start()
        start = meter.started
        deadline = start + limit_ms / 1000
        what = f"turn {turn_id}"
        if limit_ms < move_ms:
            timeout_detail = (
                f"the bank ran out during {what}: bank_ms={self.clock.bank_ms} for all decisions "
                "of the match is used up"
            )
        else:
            timeout_detail = f"no reply to {what} within move_ms={move_ms}"
        try:
            self._send(message, deadline, what, timeout_detail)
            line = self._read_metered(limit_ms / 1000, what, timeout_detail)
        finally:
            elapsed_ms = (time.monotonic() - start) * 1000
            charged_ms = meter.charged_cheap() * 1000
            self.bank_left_ms = max(0.0, self.bank_left_ms - charged_ms)
            self.moves_ms.append(round(elapsed_ms))
        reply = self._parse(line, what)
        reply_id = reply.get("id")
        if type(reply_id) is not int or reply_id != turn_id:
            self._raise("illegal", f"the reply to {what} has id {_brief(reply_id)}, not {turn_id}")
        action = reply.get("action")
        if not isinstance(action, str) or action not in legal:
            shown = ", ".join(repr(a) for a in legal[:8]) + (", ..." if len(legal) > 8 else "")
            self._raise(
                "illegal",
                f"action {_brief(action)} for {what} is not one of the legal actions [{shown}]",
            )
        return action  # type: ignore[return-value]

    def notify(self, message: dict[str, Any]) -> None:
        """Send a message that takes no reply (``deal_end``, ``match_end``)."""
        self._check_open(message, str(message.get("type")))
        self._check_unsolicited()
        what = str(message.get("type"))
        deadline = time.monotonic() + self.clock.move_ms / 1000
        self._send(
            message, deadline, what,
            f"could not deliver {what} within move_ms={self.clock.move_ms}: the bot is not "
            "reading its stdin",
        )

    def end_input(self) -> None:
        """Close the bot's stdin (it reads end of file and should exit) without waiting: the
        first half of ``close``, so that the bots of a match wind down together. Idempotent;
        nothing is asked of the bot after it."""
        if not self._closed:
            self._channel.close_stdin()

    def close(self) -> None:
        """Close stdin, give the bot ``CLOSE_GRACE_S`` to exit (none after a fault), then kill the
        whole tree and free its resources. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._channel.close_stdin()
            if self._fault is None and self._platform_fault is None:
                deadline = time.monotonic() + CLOSE_GRACE_S
                while self.process.poll() is None and time.monotonic() < deadline:
                    left = max(0.0, deadline - time.monotonic())
                    if self._channel.stdout_closed and self._channel.stderr_closed:
                        self.process.wait_exit(left)
                        break
                    self._channel.discard_output()
                    self._channel.drain(min(0.05, left))
            self.process.kill()
            self._channel.discard_output()
            self._channel.drain(0)
        finally:
            self._channel.close()
            self.process.kill()

    @property
    def stderr_tail(self) -> str:
        """The last 64 KiB of the bot's stderr (UTF-8, invalid bytes replaced)."""
        if not self._channel.stderr_closed:
            self._channel.drain(0)
        return self._channel.stderr_tail()

    @property
    def between_turns(self) -> bool:
        """The bot answered ``hello`` and has neither faulted nor been closed: whatever CPU it
        uses now that it is not asked anything is burned between its turns."""
        return self._ready and self._fault is None and not self._closed

    def forfeit_for_starving(self, detail: str) -> BotFault:
        """This seat starved the seat on turn (``sandbox.starvation``): its ``timeout`` fault,
        carrying its seat, which the session on turn raises. Later calls raise it too."""
        self._channel.drain(0)
        self._fault = BotFault("timeout", detail, self._channel.stderr_tail(), self.seat)
        return self._fault

    @property
    def fault(self) -> BotFault | None:
        """The first fault this session raised, if any."""
        return self._fault

    def __enter__(self) -> BotSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------------

    def _check_open(self, message: dict[str, Any], expected: str) -> None:
        if self._fault is not None:
            raise self._fault
        if self._platform_fault is not None:
            raise self._platform_fault
        if self._closed:
            raise RuntimeError("the session is closed")
        if not isinstance(message, dict):
            raise TypeError("a message is a dict")
        if expected in ("hello", "turn") and message.get("type") != expected:
            raise ValueError(f"{expected}() sends a message of type {expected!r}")

    def _check_unsolicited(self) -> None:
        if self._cut:
            self._channel.discard_output()
        if self._channel.has_output():
            self._raise(
                "protocol",
                f"the bot wrote {_show(self._channel.peek_output())} when no reply was asked "
                "(one line per hello or turn, nothing else on stdout; log to stderr)",
            )
        if self._channel.stdout_closed:
            self._crashed("before its next message")

    def _send(
        self, message: dict[str, Any], deadline: float, what: str, timeout_detail: str = ""
    ) -> None:
        data = encode(message)
        try:
            self._channel.write(data, deadline)
        except ChannelClosed:
            self._crashed(f"while the referee sent {what}")
        except ChannelTimeout:
            self._raise("timeout", timeout_detail or f"{what}: the bot is not reading its stdin")

    def _read_metered(self, limit_s: float, what: str, timeout_detail: str) -> bytes:
        """The reply, while the decision's charged time (``sandbox.clocks``) is under ``limit_s``.
        The bot's ``timeout`` once it is not, or when the reply came after ``limit_s`` of CPU
        (between two checks). If the wall-clock backstop passes first (the bot
        was kept off the CPU): the ``timeout`` of another seat of the match that burned CPU
        between its turns meanwhile (``sandbox.starvation``), else ``PlatformTimeout``."""
        meter = self._meter
        backstop = meter.started + limit_s * BACKSTOP_FACTOR
        deadline = min(meter.lazy_deadline(limit_s), meter.started + limit_s)
        while True:
            try:
                line = self._read(deadline, what)
            except ChannelTimeout:
                pass
            else:
                # A reply that came between two checks, after the limit's worth of CPU.
                if meter.over_on_cpu(limit_s):
                    cpu_ms = meter.last["cpu_s"] * 1000
                    self._raise(
                        "timeout",
                        f"{timeout_detail}: its reply came after {cpu_ms:.0f} ms of CPU "
                        f"({meter.describe()})",
                    )
                return line
            if meter.begin_metering() and self.match_seats is not None and self.seat is not None:
                self.match_seats.begin(self.seat)  # the others' CPU, from now on
            charged = meter.charged()
            now = time.monotonic()
            due = charged >= limit_s or now >= backstop
            if due and meter.starved_now(limit_s) and meter.look_again():
                charged = meter.charged()  # processes forked since hello: the seat's own CPU
            if charged >= limit_s and not meter.starved_now(limit_s):
                self._raise("timeout", f"{timeout_detail} ({meter.describe()})")
            if now >= backstop:
                self._channel.drain(0)
                if meter.lowered_priority():
                    self._raise(
                        "timeout",
                        f"{timeout_detail}: the bot lowered its own scheduling priority (nice, "
                        f"policy or session group) and was kept off the CPU ({meter.describe()})",
                    )
                self._blame_starver(limit_s, what)
                self._platform_fault = PlatformTimeout(
                    f"{what}: the host kept the bot off the CPU: {charged * 1000:.0f} ms of its "
                    f"{limit_s * 1000:.0f} ms used after {BACKSTOP_FACTOR:g} times that on the "
                    f"wall clock ({meter.describe()})"
                )
                raise self._platform_fault
            deadline = min(backstop, now + max(limit_s - charged, 0.05))

    def _blame_starver(self, limit_s: float, what: str) -> None:
        """At the backstop: raise the fault of the seat that starved this one, if one did."""
        seats = self.match_seats
        if seats is None or self.seat is None:
            return
        blame = seats.blame(self.seat, limit_s)
        if blame is None:
            return
        self._cut = True
        cpu_ms, wall_ms = (self._meter.last.get(k, 0.0) * 1000 for k in ("cpu_s", "wall_s"))
        detail = (
            f"seat {blame.seat} used {blame.cpu_s * 1000:.0f} ms of CPU between its turns while "
            f"seat {self.seat} was on turn ({what}) and starved it: seat {self.seat} got "
            f"{cpu_ms:.0f} ms of CPU in {wall_ms:.0f} ms, "
            f"{BACKSTOP_FACTOR:g} times its limit of {limit_s * 1000:.0f} ms; CPU burned between "
            "turns that starves another seat forfeits "
            f"(CPU read from {blame.source}; {self._meter.describe()})"
        )
        raise seats.seat_session(blame.seat).forfeit_for_starving(detail)

    def _read(self, deadline: float, what: str) -> bytes:
        """One line by ``deadline``; ``ChannelTimeout`` passes through to the caller."""
        try:
            return self._channel.read_line(deadline)
        except ChannelClosed:
            self._crashed(f"before replying to {what}")
        except LineTooLong:
            self._raise(
                "protocol",
                f"the reply to {what} is over {MAX_LINE_BYTES} bytes without a newline",
            )

    def _parse(self, line: bytes, what: str) -> dict[str, Any]:
        """The reply as a dict; anything ``decode_reply`` refuses is the bot's protocol fault."""
        try:
            return decode_reply(line)
        except BadReply as error:
            self._raise("protocol", f"the reply to {what} is refused: {error}: {_show(line)}")

    def _crashed(self, when: str) -> NoReturn:
        code = self.process.wait_exit(self.process.exit_wait_s)
        self._channel.drain(0)
        how = "closed its stdout" if code is None else self.process.describe_exit()
        self._raise("crash", f"the bot {how} {when}; its stderr may say why")

    def _raise(self, kind: str, detail: str) -> NoReturn:
        self._channel.drain(0)
        self._fault = BotFault(kind, detail, self._channel.stderr_tail())
        raise self._fault


def _brief(value: object, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters (a reply's field may be 64 KiB)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _show(data: bytes, limit: int = 120) -> str:
    text = data[:limit].decode("utf-8", errors="replace")
    return repr(text) + ("..." if len(data) > limit else "")


def open_session(
    runner: Runner, bot: object, clock: Clock | None = None, limits: Limits | None = None
) -> BotSession:
    """Start ``bot`` with ``runner`` and wrap it in a session (close it, or use ``with``). If
    the wrapping fails (no descriptor left, say), the started process is killed and its
    reservations (uid, cgroup, container) freed before the error propagates."""
    process = runner.start(bot, limits)
    try:
        return BotSession(process, clock)
    except BaseException:
        process.kill()
        raise
