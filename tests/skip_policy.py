"""Under ``CI=true`` a test that would skip because a part of the platform is missing here (no
bubblewrap, no PostgreSQL) fails instead, so a green CI run means the confinement and PostgreSQL
paths ran. Elsewhere (a laptop without them) such tests skip and say why. Hooked in by
``tests/conftest.py``."""

from __future__ import annotations

import os
import re

import pytest

#: Skip reasons that mean a missing part, not a test that does not apply.
MISSING_PART = re.compile(r"\bbwrap\b|bubblewrap|postgres", re.IGNORECASE)


def in_ci() -> bool:
    """``CI`` is set to a true value (``true``, ``1``, ``yes``), as CI services and ``.ci/run``
    set it."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and in_ci()) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if MISSING_PART.search(reason):
        report.outcome = "failed"
        report.longrepr = (
            f"skipped for want of a part of the platform, which CI must run ({reason}); "
            "CI=true turns such a skip into a failure (tests/skip_policy.py)"
        )
