#!/usr/bin/env python3
"""``make run``'s last step: start the web server and one Celery worker (with an embedded beat)
on this machine, print the URL, and stop both on Ctrl-C (SIGINT) or SIGTERM.

Run with the project's virtual environment's Python from the project root. Standard library only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = os.environ.get("HOST", "127.0.0.1")
PORT = os.environ.get("PORT", "8000")


def main() -> int:
    python = sys.executable
    celery = str(Path(python).with_name("celery"))
    env = {**os.environ}
    env.setdefault("DJANGO_DEBUG", "1")  # a development server on this machine asks for DEBUG
    worker = subprocess.Popen(
        [celery, "-A", "config", "worker", "-B", "--loglevel=INFO", "--concurrency=2"], cwd=ROOT,
        env=env,
    )
    web = subprocess.Popen(
        [python, "manage.py", "runserver", "--noreload", f"{HOST}:{PORT}"], cwd=ROOT, env=env
    )
    children = [web, worker]
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    url = f"http://{HOST}:{PORT}/"
    announced = False
    try:
        while not stopping and all(child.poll() is None for child in children):
            if not announced and _answers(url + "health/"):
                announced = True
                print(f"\n  Quatre Sept Arena is up: {url}  (API docs: {url}api/docs/)")
                print("  demo users alice / bob, password demo-pass-1234; Ctrl-C stops both\n",
                      flush=True)
            time.sleep(0.3)
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for child in children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    return 0


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
