"""The worker's bot cache: an uploaded package unpacked once per host, ``<cache>/<sha256><ext>``.

Folders appear complete or not at all (``install_package`` unpacks beside and renames), so workers
sharing a cache may race safely. Must not import Django.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from sandbox import InstalledBot, inspect_package, install_package

_installed: dict[Path, InstalledBot] = {}
_lock = threading.Lock()


def cached_install(
    cache_dir: Path, sha256: str, filename: str, load: Callable[[], bytes]
) -> InstalledBot:
    """The installed bot for package ``sha256`` (named ``filename``); ``load`` fetches its bytes
    only when the folder is not yet on this host or not yet known to this process."""
    suffix = PurePosixPath(filename).suffix.lower()
    dest = Path(cache_dir) / f"{sha256}{suffix}"
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
