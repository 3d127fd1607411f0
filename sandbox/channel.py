"""Synchronous pipes to one bot process: write a line, read a line by a deadline, drain stderr.

One ``poll()`` loop with its own line buffer, no threads and no asyncio. Memory is bounded: stdout
is buffered up to one line over the cap (``MAX_LINE_BYTES`` plus one read), stderr keeps only its
last ``STDERR_TAIL_BYTES``. stderr is drained whenever the channel waits, so a stderr flood never
blocks the referee and blocks the bot at most between calls. This module must not import Django
or ``engine``.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import select
import time

from sandbox.protocol import MAX_LINE_BYTES, STDERR_TAIL_BYTES

_READ_BYTES = 1 << 20
_STDERR_PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_IN = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR
_OUT = select.POLLOUT | select.POLLHUP | select.POLLERR


class ChannelClosed(Exception):
    """The bot closed its stdout (read) or stdin (write): it ended or broke the pipe."""


class ChannelTimeout(Exception):
    """The deadline passed before the line was complete (read) or written (write)."""


class LineTooLong(Exception):
    """The bot sent more than ``MAX_LINE_BYTES`` without a newline."""


class Channel:
    """Owns the parent's ends of a bot's stdin, stdout and stderr (as raw descriptors)."""

    def __init__(self, stdin_fd: int, stdout_fd: int, stderr_fd: int) -> None:
        self._stdin: int | None = stdin_fd
        self._stdout = stdout_fd
        self._stderr = stderr_fd
        for fd in (stdin_fd, stdout_fd, stderr_fd):
            os.set_blocking(fd, False)
        with contextlib.suppress(OSError):  # a smaller pipe only makes the bot wait sooner
            fcntl.fcntl(stderr_fd, _F_SETPIPE_SZ, _STDERR_PIPE_BYTES)
        self._poll = select.poll()
        self._out = bytearray()
        self._err = bytearray()
        self._registered: dict[int, int] = {}
        self.stdout_closed = False
        self.stderr_closed = False
        self._register(stderr_fd, _IN)

    # --- public -----------------------------------------------------------------------------

    def write(self, data: bytes, deadline: float) -> None:
        """Write all of ``data`` to stdin by ``deadline`` (monotonic seconds); drains meanwhile."""
        if self._stdin is None:
            raise ChannelClosed("stdin is closed")
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._stdin, view)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError):
                raise ChannelClosed("the bot no longer reads its stdin") from None
            view = view[written:]
            if view:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ChannelTimeout("stdin is full: the bot is not reading its input")
                self._pump(remaining, write=True)

    def read_line(self, deadline: float) -> bytes:
        """Return the next line from stdout without its newline, by ``deadline`` (monotonic)."""
        while True:
            line = self._take_line()
            if line is not None:
                return line
            if self.stdout_closed:
                raise ChannelClosed("stdout closed")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout("no complete line before the deadline")
            self._pump(remaining)

    def has_output(self) -> bool:
        """Whether stdout has bytes waiting (read without blocking); stderr is drained too."""
        self._pump(0)
        return bool(self._out)

    def peek_output(self, limit: int = 200) -> bytes:
        """The first bytes waiting on stdout, for error messages."""
        return bytes(self._out[:limit])

    def drain(self, timeout: float = 0.0) -> None:
        """Read whatever is ready (waiting up to ``timeout`` seconds); stdout is kept, bounded."""
        self._pump(timeout)

    def discard_output(self) -> None:
        """Forget buffered stdout (after a fault or at close), so reading can go on to EOF."""
        self._out.clear()
        if not self.stdout_closed:
            self._register(self._stdout, _IN)

    def close_stdin(self) -> None:
        """Close the bot's stdin (it reads end of file); idempotent."""
        if self._stdin is not None:
            self._unregister(self._stdin)
            os.close(self._stdin)
            self._stdin = None

    def close(self) -> None:
        """Close every descriptor the channel owns; idempotent."""
        self.close_stdin()
        for fd in (self._stdout, self._stderr):
            if fd in self._registered:
                self._unregister(fd)
        for attr in ("_stdout", "_stderr"):
            fd = getattr(self, attr)
            if fd >= 0:
                os.close(fd)
                setattr(self, attr, -1)
        self.stdout_closed = self.stderr_closed = True

    def stderr_tail(self) -> str:
        """The last ``STDERR_TAIL_BYTES`` of stderr as text (invalid UTF-8 replaced)."""
        return self._err.decode("utf-8", errors="replace")

    # --- internals --------------------------------------------------------------------------

    def _take_line(self) -> bytes | None:
        end = self._out.find(b"\n")
        if end < 0:
            if len(self._out) > MAX_LINE_BYTES:
                raise LineTooLong(f"over {MAX_LINE_BYTES} bytes without a newline")
            return None
        if end > MAX_LINE_BYTES:
            raise LineTooLong(f"a line of {end} bytes")
        line = bytes(self._out[:end])
        del self._out[: end + 1]
        if not self.stdout_closed and len(self._out) <= MAX_LINE_BYTES:
            self._register(self._stdout, _IN)
        return line

    def _pump(self, timeout: float, write: bool = False) -> None:
        """Wait up to ``timeout`` seconds for one of the pipes, then read all that is ready."""
        if not self.stdout_closed and len(self._out) <= MAX_LINE_BYTES:
            self._register(self._stdout, _IN)
        if write and self._stdin is not None:
            self._register(self._stdin, _OUT)
        try:
            if not self._registered:
                if timeout > 0:
                    time.sleep(min(timeout, 0.01))
                return
            events = self._poll.poll(math.ceil(timeout * 1000) if timeout > 0 else 0)
        finally:
            if write and self._stdin is not None:
                self._unregister(self._stdin)
        for fd, _event in events:
            if fd == self._stderr:
                self._read_stderr()
            elif fd == self._stdout:
                self._read_stdout()

    def _read_stdout(self) -> None:
        try:
            chunk = os.read(self._stdout, _READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.stdout_closed = True
            self._unregister(self._stdout)
            return
        self._out += chunk
        if len(self._out) > MAX_LINE_BYTES:
            self._unregister(self._stdout)  # stop reading: bounded memory until taken or faulted

    def _read_stderr(self) -> None:
        for _ in range(8):  # bounded work per wake-up; more is read at the next one
            try:
                chunk = os.read(self._stderr, _READ_BYTES)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.stderr_closed = True
                self._unregister(self._stderr)
                return
            self._err += chunk[-STDERR_TAIL_BYTES:]
            if len(self._err) > STDERR_TAIL_BYTES:
                del self._err[: len(self._err) - STDERR_TAIL_BYTES]

    def _register(self, fd: int, mask: int) -> None:
        if self._registered.get(fd) != mask:
            self._poll.register(fd, mask)
            self._registered[fd] = mask

    def _unregister(self, fd: int) -> None:
        if self._registered.pop(fd, None) is not None:
            self._poll.unregister(fd)
