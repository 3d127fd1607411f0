#!/usr/bin/env python3
"""Print the environment for tests: ``DATABASE_URL`` / ``REDIS_URL`` for the local PostgreSQL
(127.0.0.1:5432, user postgres) and Redis (127.0.0.1:6379) when they answer, nothing otherwise
(the settings then fall back to SQLite and the filesystem broker). Standard library only."""

from __future__ import annotations

import socket
import subprocess


def _answers(port: int, probe: bytes, expect: bytes) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            if not probe:
                return True
            conn.sendall(probe)
            return conn.recv(64).startswith(expect)
    except OSError:
        return False


def _postgres_ready() -> bool:
    if not _answers(5432, b"", b""):
        return False
    try:
        out = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-tAc", "select 1"],
            capture_output=True, text=True, timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip() == "1"


def main() -> None:
    env = []
    if _postgres_ready():
        env.append("DATABASE_URL=postgres://postgres@127.0.0.1:5432/quatresept")
    if _answers(6379, b"PING\r\n", b"+PONG"):
        env.append("REDIS_URL=redis://127.0.0.1:6379/15")
    print(" ".join(env))


if __name__ == "__main__":
    main()
