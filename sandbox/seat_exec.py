"""The ``seat-exec`` helper (``seat_exec.c``): joins the seat's cgroups, drops to its uid, lowers
its rlimits and arms the parent-death signal, then execs bwrap; what the runner's preexec function
did, in a program of its own, so that the worker starts a seat with vfork (a fork copies the
worker's page tables: ~4 ms of CPU for a Django worker, per seat).

Built once per host and per source with the C compiler (``cc``, or ``$CC``) into the staging
folder, complete or not at all; ``helper()`` is ``None`` when it cannot be built, and the runner
then falls back to the preexec function (same confinement, slower start). This module must not
import Django or ``engine``.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import subprocess
from pathlib import Path

from sandbox.staging import STAGE_BASE, make_root

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("seat_exec.c")


@functools.cache
def helper(base: Path = STAGE_BASE) -> str | None:
    """The path of the built helper, building it on first use; ``None`` if it cannot be built."""
    if os.environ.get("QUATRESEPT_SEAT_EXEC") == "off":
        return None
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    target = Path(base) / f"seat-exec-{digest}"
    if target.is_file():
        return str(target)
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        log.warning("sandbox: no C compiler to build seat-exec; seats start through fork")
        return None
    make_root(Path(base))
    partial = Path(base) / f".{target.name}.partial-{os.getpid()}"
    for flags in (["-static"], []):  # static starts faster; not every host has libc.a
        result = subprocess.run(
            [compiler, "-O2", "-Wall", *flags, "-o", str(partial), str(SOURCE)],
            capture_output=True, text=True, timeout=120,
        )
        if result.returncode == 0:
            break
    else:
        partial.unlink(missing_ok=True)
        log.warning("sandbox: cannot build seat-exec (%s); seats start through fork",
                    result.stderr.strip()[-500:])
        return None
    partial.chmod(0o755)
    partial.rename(target)
    return str(target)
