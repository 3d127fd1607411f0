"""The expert as it was at another git revision, importable next to today's (for measurements).

``expert_at("main")`` extracts ``engine/bots/expert`` of that revision, its Python and its C
(``git archive``), into a folder of the temporary directory, as the package
``revision_bots_<sha>.expert``, and returns its ``ExpertBot``. The package's own modules are
that revision's (relative imports); ``engine.*`` (the rules, the state) is today's tree, so this
compares two experts only where the engine itself did not change between them. Invariant: one
extraction per commit, reused.
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "engine/bots/expert"


def commit_of(revision: str) -> str:
    """The full commit id a revision names (``main``, ``HEAD~2``, a short id)."""
    out = subprocess.run(
        ["git", "rev-parse", "--verify", f"{revision}^{{commit}}"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return out.stdout.strip()


def expert_at(revision: str) -> type:
    """``ExpertBot`` of ``revision`` (its own modules, today's engine)."""
    sha = commit_of(revision)
    top = f"revision_bots_{sha[:12]}"
    base = Path(tempfile.gettempdir()) / top
    if not (base / top / "expert" / "__init__.py").exists():
        archive = subprocess.run(
            ["git", "archive", "--format=tar", sha, PACKAGE],
            cwd=ROOT, check=True, capture_output=True,
        ).stdout  # fmt: skip
        target = base / top
        target.mkdir(parents=True, exist_ok=True)
        (target / "__init__.py").write_text("")
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.endswith((".py", ".c")):
                    data = tar.extractfile(member)
                    assert data is not None
                    path = target / "expert" / Path(member.name).relative_to(PACKAGE)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data.read())
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    return importlib.import_module(f"{top}.expert").ExpertBot
