"""Engine tests: the sweeps marked ``slow`` run only when asked for, e.g. ``pytest -m slow``."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
