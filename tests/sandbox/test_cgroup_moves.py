"""favordynmods: the runner makes moves into seat cgroups cheap once per worker, or says why not;
the switch turns it off."""

from __future__ import annotations

import os

import pytest

from sandbox import cgroup_moves
from sandbox.runners.bwrap import BwrapRunner


def test_switched_off(monkeypatch) -> None:
    cgroup_moves.favor_moves.cache_clear()
    monkeypatch.setenv("QUATRESEPT_CGROUP_FAVOR", "0")
    try:
        assert cgroup_moves.favor_moves().startswith("off")
    finally:
        cgroup_moves.favor_moves.cache_clear()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a cgroup hierarchy needs root")
def test_a_root_worker_gets_a_hierarchy_with_favordynmods(bwrap: BwrapRunner) -> None:
    report = BwrapRunner().confinement["cgroup_moves"]
    if bwrap.confinement["cgroups"] == "none":
        assert report == "unused"
        return
    assert report.startswith("on"), report
    assert cgroup_moves._mounted_with_favor()
