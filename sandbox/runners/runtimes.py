"""Find what a bot runtime (python3, node) needs from the host, to mount exactly that in bwrap.

A ``HostRuntime`` lists the interpreter binary, the shared libraries it and its extension modules
load (from ``ldd``), the standard library folders, and folders to hide (the host's site-packages:
bots get the standard library only). Discovery runs once per process and per binary. Override the
binaries with ``QUATRESEPT_SANDBOX_PYTHON`` / ``QUATRESEPT_SANDBOX_NODE``. This module must not
import Django or ``engine``.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import shutil
import subprocess
from dataclasses import dataclass

#: Preferred interpreters, first found wins; the platform's python3 is the system one.
_CANDIDATES = {
    "python3": ("/usr/bin/python3", "/usr/local/bin/python3"),
    "node": ("/usr/bin/node", "/usr/local/bin/node"),
}
_ENV_OVERRIDE = {"python3": "QUATRESEPT_SANDBOX_PYTHON", "node": "QUATRESEPT_SANDBOX_NODE"}
#: Interpreter flags: python unbuffered (a forgotten flush cannot stall a bot), no .pyc writes,
#: UTF-8 I/O whatever the locale.
INTERPRETER_FLAGS = {"python3": ("-u", "-B", "-X", "utf8"), "node": ()}
#: Top-level paths that are symbolic links on merged-/usr systems, recreated in the sandbox.
TOP_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


class RuntimeNotFound(RuntimeError):
    """The runtime a bot asks for is not installed on this host."""


@dataclass(frozen=True)
class HostRuntime:
    """Host paths one runtime needs; every path absolute and mounted read-only at the same place.

    ``dirs`` are the standard library and the shared-library folders; ``files`` maps a path in
    the sandbox to its host source for libraries reached through a link (the dynamic loader).
    ``libraries`` lists, for the shared-library folders among ``dirs`` (``lib_dirs``), each
    library the runtime loads there as (path in the sandbox, host source): a runner may bind a
    folder holding just those instead of the whole host folder.
    """

    name: str
    binary: str
    flags: tuple[str, ...]
    files: tuple[tuple[str, str], ...]
    dirs: tuple[str, ...]
    hidden: tuple[str, ...]
    lib_dirs: tuple[str, ...] = ()
    libraries: tuple[tuple[str, str], ...] = ()

    def argv(self, entry: str, args: tuple[str, ...]) -> tuple[str, ...]:
        return (self.binary, *self.flags, entry, *args)


def find_binary(name: str) -> str:
    """The host interpreter for runtime ``name``, resolved; ``RuntimeNotFound`` if absent."""
    override = os.environ.get(_ENV_OVERRIDE.get(name, ""), "")
    candidates = [override] if override else [*_CANDIDATES.get(name, ()), shutil.which(name) or ""]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return os.path.realpath(candidate)
    raise RuntimeNotFound(f"runtime {name!r} is not installed here (looked at {candidates})")


@functools.cache
def host_runtime(name: str) -> HostRuntime:
    """Discover (once) what runtime ``name`` needs on this host."""
    binary = find_binary(name)
    dirs: list[str] = []
    hidden: list[str] = []
    objects = [binary]
    if name == "python3":
        paths = _python_paths(binary)
        for key in ("stdlib", "platstdlib"):
            if not any(_inside(paths[key], d) for d in dirs):
                dirs.append(paths[key])
        hidden = sorted({paths[k] for k in ("purelib", "platlib") if os.path.isdir(paths[k])
                         and any(_inside(paths[k], d) for d in dirs)})
        objects += sorted(glob.glob(os.path.join(paths["dynload"], "*.so")))
    # Library folders are mounted whole: one mount instead of one per library saves ~4 ms a start,
    # and they hold only the host's shared libraries. Libraries reached through a link from
    # another folder (the dynamic loader in /lib64) are mounted one by one.
    files = []
    lib_dirs: list[str] = []
    libraries = []
    for dest, source in _shared_libraries(objects):
        folder = os.path.dirname(source)
        if os.path.dirname(dest) == folder:
            if not any(_inside(folder, d) for d in dirs):
                dirs.append(folder)
                lib_dirs.append(folder)
            if folder in lib_dirs:
                libraries.append((dest, source))
        else:
            files.append((dest, source))
    return HostRuntime(name, binary, INTERPRETER_FLAGS.get(name, ()), tuple(files), tuple(dirs),
                       tuple(hidden), tuple(lib_dirs), tuple(libraries))


def _python_paths(binary: str) -> dict[str, str]:
    code = (
        "import json, sysconfig; p = sysconfig.get_paths(); print(json.dumps({k: p[k] for k in "
        "('stdlib', 'platstdlib', 'purelib', 'platlib')} | "
        "{'dynload': sysconfig.get_config_var('DESTSHARED') or ''}))"
    )
    out = subprocess.run([binary, "-S", "-E", "-c", code], capture_output=True, check=True,
                         timeout=30, env={})
    paths = json.loads(out.stdout)
    return {key: os.path.realpath(value) if value else "" for key, value in paths.items()}


def _shared_libraries(objects: list[str]) -> tuple[tuple[str, str], ...]:
    """(path in sandbox, host source) for every library ``ldd`` lists for ``objects``."""
    ldd = shutil.which("ldd") or "/usr/bin/ldd"
    found: dict[str, str] = {}
    for start in range(0, len(objects), 64):
        out = subprocess.run([ldd, *objects[start:start + 64]], capture_output=True, text=True,
                             timeout=60, env={"LC_ALL": "C"})
        for line in out.stdout.splitlines():
            words = line.split()
            path = words[2] if len(words) >= 3 and words[1] == "=>" else words[0] if words else ""
            if path.startswith("/") and os.path.exists(path):
                dest = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
                found[dest] = os.path.realpath(path)
    return tuple(sorted(found.items()))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
