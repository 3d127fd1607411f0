"""The worker's bot cache: an uploaded package unpacked once per host, ``<cache>/<sha256><ext>``.

Folders appear complete or not at all (``install_package`` unpacks beside and renames), so workers
sharing a cache may race safely. Each use touches its folder; ``prune_idle`` removes the folders
no use has touched for days. Invariant: a folder is never removed while a process of this host
is between finding it and touching it (a shared lock there, an exclusive one to remove), and a
folder touched within the idle time is never removed, so a match that started with a folder
keeps it (matches last minutes; the idle time is at least a day). Must not import Django.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sandbox import InstalledBot, inspect_package, install_package

_installed: dict[Path, InstalledBot] = {}
_lock = threading.Lock()

#: The lock file in the cache folder: shared while a folder is found and touched, exclusive while
#: idle folders are moved aside.
LOCK_NAME = ".prune.lock"
#: A bot folder's name: the package's sha256 and its archive suffix.
_BOT_FOLDER = re.compile(r"[0-9a-f]{64}(\.[a-z0-9]+)*")
#: What a killed install leaves (``install_package``'s staging folder), and what a prune moved
#: aside and had not yet removed when it was killed.
_LEFTOVER = re.compile(r"\.([0-9a-f]{64}(\.[a-z0-9]+)*\.partial-\d+|trash-.+)")
#: Seconds between two prunes by one process (``prune_if_due``).
PRUNE_EVERY = 3600.0
_last_prune: dict[Path, float] = {}
DAY = 86400.0


@contextmanager
def _cache_locked(cache_dir: Path, *, exclusive: bool) -> Iterator[bool]:
    """Hold the cache's lock file; an exclusive lock is only tried (yields False if busy)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(cache_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def cached_install(
    cache_dir: Path, sha256: str, filename: str, load: Callable[[], bytes]
) -> InstalledBot:
    """The installed bot for package ``sha256`` (named ``filename``); ``load`` fetches its bytes
    only when the folder is not yet on this host or not yet known to this process. The folder is
    touched: it counts as used now."""
    suffix = PurePosixPath(filename).suffix.lower()
    dest = Path(cache_dir) / f"{sha256}{suffix}"
    with _cache_locked(Path(cache_dir), exclusive=False):
        bot = _find_or_install(dest, filename, load)
        os.utime(dest)
    return bot


def _find_or_install(dest: Path, filename: str, load: Callable[[], bytes]) -> InstalledBot:
    with _lock:
        known = _installed.get(dest)
    if known is not None and dest.is_dir():
        return known
    data = load()
    if dest.is_dir() and any(dest.iterdir()):
        bot = InstalledBot(folder=dest.absolute(), package=inspect_package(data, filename))
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.parent.chmod(0o755)
        try:
            bot = install_package(data, filename, dest)
        except (FileExistsError, OSError):
            if not dest.is_dir():
                raise
            bot = InstalledBot(folder=dest.absolute(), package=inspect_package(data, filename))
    with _lock:
        _installed[dest] = bot
    return bot


@dataclass(frozen=True)
class CachePruned:
    """Bot folders removed (and leftovers of killed installs or prunes), and their bytes."""

    folders: int = 0
    bytes: int = 0


def _size(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if not p.is_symlink() and p.is_file())


def prune_idle(cache_dir: Path, *, idle_days: float, now: float | None = None) -> CachePruned:
    """Remove the bot folders of ``cache_dir`` untouched for ``idle_days`` (at least one day),
    and leftovers older than a day. Skipped (nothing removed) while another process of this host
    holds the exclusive lock: it is pruning."""
    if idle_days < 1:
        raise ValueError("a bot folder is kept at least a day after its last use")
    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        return CachePruned()
    now = time.time() if now is None else now
    aside: list[Path] = []
    with _cache_locked(cache_dir, exclusive=True) as held:
        if not held:
            return CachePruned()
        for entry in cache_dir.iterdir():
            if not entry.is_dir() or entry.is_symlink():
                continue
            idle = now - entry.stat().st_mtime
            if (_BOT_FOLDER.fullmatch(entry.name) and idle > idle_days * DAY) or (
                _LEFTOVER.fullmatch(entry.name) and idle > DAY
            ):
                moved = cache_dir / f".trash-{entry.name}-{os.getpid()}"
                entry.rename(moved)
                aside.append(moved)
                with _lock:
                    _installed.pop(entry, None)
    freed = 0
    for folder in aside:
        freed += _size(folder)
        shutil.rmtree(folder, ignore_errors=True)
    return CachePruned(folders=len(aside), bytes=freed)


def prune_if_due(cache_dir: Path, *, idle_days: float) -> CachePruned | None:
    """``prune_idle`` at most once every ``PRUNE_EVERY`` seconds per process; None when not due
    or when ``idle_days`` is 0 (keep every folder)."""
    if idle_days <= 0:
        return None
    cache_dir = Path(cache_dir)
    clock = time.monotonic()
    if clock - _last_prune.get(cache_dir, -PRUNE_EVERY) < PRUNE_EVERY:
        return None
    _last_prune[cache_dir] = clock
    return prune_idle(cache_dir, idle_days=max(idle_days, 1))
