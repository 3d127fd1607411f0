"""The worker's bot cache: an uploaded package unpacked once per host, ``<cache>/<sha256><ext>``.

Folders appear complete or not at all (``install_package`` unpacks beside and renames), so workers
sharing a cache may race safely. Each use touches its folder; ``prune_idle`` removes the folders
no use has touched for days. Invariants: a folder is never removed while a process of this host
is between finding it and touching it (a shared lock there, an exclusive one to move folders
aside), and a folder touched within the idle time (at least a day) is never removed, so a match
that started with a folder keeps it (matches last minutes). The first prune of a cache only
touches every folder: until then no use touched them. Pruning never raises into a match.
Must not import Django.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sandbox import InstalledBot, inspect_package, install_package

log = logging.getLogger(__name__)
_installed: dict[Path, InstalledBot] = {}
_lock = threading.Lock()

#: The lock file in the cache folder: shared while a folder is found and touched, exclusive while
#: idle folders are moved aside.
LOCK_NAME = ".prune.lock"
#: A bot folder's name: the package's sha256 and its archive suffix.
_BOT_FOLDER = re.compile(r"[0-9a-f]{64}(\.[a-z0-9]+)*")
#: What a killed install leaves (``install_package``'s staging folder).
_PARTIAL = re.compile(r"\.[0-9a-f]{64}(\.[a-z0-9]+)*\.partial-\d+")
#: The prefix of a folder a prune moved aside, to remove once out of the lock.
_TRASH = ".trash-"
#: Seconds between two prunes by one process (``prune_if_due``).
PRUNE_EVERY = 3600.0
_last_prune: dict[Path, float] = {}
DAY = 86400.0


@contextmanager
def _cache_locked(cache_dir: Path, *, exclusive: bool) -> Iterator[bool]:
    """Hold the cache's lock file (read-only, so that workers and an operator's commands running
    as other users share it); an exclusive lock is only tried. Yields False, holding nothing,
    when the file cannot be opened or another process holds the exclusive lock."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(cache_dir / LOCK_NAME, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError:
        yield False
        return
    with suppress(OSError):  # readable by every user whatever the umask (if it is ours)
        os.fchmod(fd, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _touch(folder: Path) -> None:
    """Mark ``folder`` used now; a folder this user may not touch stays as it is (its owner's
    workers touch it)."""
    with suppress(OSError):
        os.utime(folder)


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
        _touch(dest)
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
    """Bot folders removed (and leftovers of killed installs), and their bytes; ``started``:
    this was the cache's first prune, which only touched every folder."""

    folders: int = 0
    bytes: int = 0
    started: bool = False


#: Made by a cache's first prune, which touches every folder: from then on, uses touch them.
STARTED_NAME = ".pruned-since"


def _size(folder: Path) -> int:
    """The bytes of the files under ``folder`` (symbolic links not followed); what vanishes
    while it is read counts nothing."""
    total = 0
    for root, _dirs, files in os.walk(folder, onerror=lambda error: None):
        for name in files:
            with suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _idle(entry: Path, now: float) -> float:
    try:
        return now - entry.lstat().st_mtime
    except OSError:
        return 0.0


def prune_idle(cache_dir: Path, *, idle_days: float, now: float | None = None) -> CachePruned:
    """Remove the bot folders of ``cache_dir`` untouched for ``idle_days`` (at least one day),
    and leftovers of killed installs older than a day. Skipped (nothing removed) while another
    process holds the exclusive lock: it is pruning. The first prune of a cache touches every
    folder instead and removes nothing."""
    if idle_days < 1:
        raise ValueError("a bot folder is kept at least a day after its last use")
    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        return CachePruned()
    now = time.time() if now is None else now
    aside: list[Path] = []
    old_trash: list[Path] = []
    with _cache_locked(cache_dir, exclusive=True) as held:
        if not held:
            return CachePruned()
        if not (cache_dir / STARTED_NAME).exists():
            for entry in cache_dir.iterdir():
                if _BOT_FOLDER.fullmatch(entry.name):
                    _touch(entry)
            (cache_dir / STARTED_NAME).touch()
            return CachePruned(started=True)
        for entry in cache_dir.iterdir():
            if not entry.is_dir() or entry.is_symlink():
                continue
            idle = _idle(entry, now)
            if entry.name.startswith(_TRASH):
                if idle > DAY:  # a killed prune's: removed as it is
                    old_trash.append(entry)
            elif (_BOT_FOLDER.fullmatch(entry.name) and idle > idle_days * DAY) or (
                _PARTIAL.fullmatch(entry.name) and idle > DAY
            ):
                moved = cache_dir / f"{_TRASH}{entry.name}-{os.getpid()}"
                try:
                    entry.rename(moved)
                except OSError:  # gone meanwhile, or not this user's to move
                    continue
                _touch(moved)  # fresh: no other prune takes it for a killed prune's
                aside.append(moved)
                with _lock:
                    _installed.pop(entry, None)
    freed = 0
    for folder in aside:
        freed += _size(folder)
        shutil.rmtree(folder, ignore_errors=True)
    for folder in old_trash:
        shutil.rmtree(folder, ignore_errors=True)
    return CachePruned(folders=len(aside), bytes=freed)


def prune_if_due(cache_dir: Path, *, idle_days: float) -> threading.Thread | None:
    """Start ``prune_idle`` in the background, at most once every ``PRUNE_EVERY`` seconds per
    process, so that no match waits for it; None when not due or when ``idle_days`` is 0 (keep
    every folder). A prune that fails is logged, never raised."""
    if idle_days <= 0:
        return None
    cache_dir = Path(cache_dir)
    clock = time.monotonic()
    with _lock:
        if clock - _last_prune.get(cache_dir, -PRUNE_EVERY) < PRUNE_EVERY:
            return None
        _last_prune[cache_dir] = clock

    def run() -> None:
        try:
            pruned = prune_idle(cache_dir, idle_days=max(idle_days, 1))
        except Exception:
            log.exception("pruning the bot cache %s failed", cache_dir)
            return
        if pruned.folders:
            log.info("bot cache %s: removed %d folders (%d bytes) unused for %s days",
                     cache_dir, pruned.folders, pruned.bytes, idle_days)

    thread = threading.Thread(target=run, name="bot-cache-prune", daemon=True)
    thread.start()
    return thread
