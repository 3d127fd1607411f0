"""A namespace made once per worker process by a short-lived holder child, kept by descriptor.

The holder (``python -S -c CODE ARGS...``) moves into its new namespace, sets it up, writes
``ready`` and waits; the worker opens ``/proc/<holder>/ns/<kind>`` (the namespace lives as long
as that descriptor) and lets the holder go. This module must not import Django or ``engine``.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

log = logging.getLogger(__name__)


def hold_namespace(code: str, args: list[str], kind: str, fallback: str) -> int | None:
    """A close-on-exec descriptor of the ``kind`` namespace (``net``, ``mnt`` ...) that ``code``
    made, or None (logged with ``fallback``, what seats do instead) when it could not."""
    try:
        holder = subprocess.Popen(
            [sys.executable, "-S", "-c", code, *args], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={},
        )
    except OSError as error:
        log.warning("sandbox: %s (%s)", fallback, error)
        return None
    try:
        said = holder.stdout.readline() if holder.stdout else b""
        if said != b"ready\n":
            raise OSError(holder.stderr.read().decode(errors="replace").strip() if holder.stderr
                          else "no answer")
        return os.open(f"/proc/{holder.pid}/ns/{kind}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as error:
        log.warning("sandbox: %s (%s)", fallback, error)
        return None
    finally:
        for stream in (holder.stdin, holder.stdout, holder.stderr):
            if stream is not None:
                stream.close()
        holder.wait()
