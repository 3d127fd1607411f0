"""The CI skip policy (``tests.skip_policy``), run on a throwaway test file in a pytest of its own:
under ``CI=true`` a skip for want of bubblewrap or PostgreSQL fails, any other skip stays a skip;
without ``CI`` every skip stays a skip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TESTS = '''
import pytest

def test_no_bwrap():
    pytest.skip("bwrap cannot run on this machine: no user namespaces")

@pytest.mark.skipif(True, reason="the one-statement path is PostgreSQL's")
def test_no_postgresql():
    pass

def test_does_not_apply():
    pytest.skip("only on Windows")

@pytest.mark.xfail(reason="bwrap bug, expected")
def test_expected_failure():
    assert False
'''

CONFTEST = '''
import json

from tests.skip_policy import pytest_runtest_makereport  # noqa: F401

OUTCOMES = {}

def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        OUTCOMES.setdefault(report.nodeid.split("::")[-1], report.outcome)

def pytest_sessionfinish(session):
    with open("outcomes.json", "w") as out:
        json.dump(OUTCOMES, out)
'''


def outcomes(tmp_path: Path, ci: str | None) -> dict[str, str]:
    (tmp_path / "test_parts.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci is not None:
        env["CI"] = ci
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:django", "-q",
         "test_parts.py"],
        cwd=tmp_path, env=env, capture_output=True, timeout=120,
    )
    return json.loads((tmp_path / "outcomes.json").read_text())


@pytest.mark.parametrize("ci", ["true", "1"])
def test_in_ci_a_skip_for_a_missing_part_fails(tmp_path, ci):
    assert outcomes(tmp_path, ci) == {
        "test_no_bwrap": "failed", "test_no_postgresql": "failed",
        "test_does_not_apply": "skipped", "test_expected_failure": "skipped",
    }


@pytest.mark.parametrize("ci", [None, "false", ""])
def test_elsewhere_every_skip_stays_a_skip(tmp_path, ci):
    assert outcomes(tmp_path, ci) == {
        "test_no_bwrap": "skipped", "test_no_postgresql": "skipped",
        "test_does_not_apply": "skipped", "test_expected_failure": "skipped",
    }
