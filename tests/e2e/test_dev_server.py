"""The development server ``make run`` serves through (``manage.py runserver``): a request over
the size limit is its documented 413 there too. (wsgiref refuses a hop-by-hop header from the
application, so the ``Connection: close`` the limit adds for gunicorn was a 500 here.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests

from tests.e2e.conftest import ROOT, _free_port, wait_for


@pytest.fixture
def dev_server(tmp_path):
    port = _free_port()
    env = {**os.environ, "DJANGO_DEBUG": "1", "ARENA_VAR_DIR": str(tmp_path),
           "ARENA_MAX_REQUEST_BYTES": "1000", "DJANGO_SETTINGS_MODULE": "config.settings"}
    for name in ("DATABASE_URL", "REDIS_URL", "ARENA_TEST_RUN"):
        env.pop(name, None)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if server.poll() is not None:
            pytest.fail(f"the development server exited: {server.stderr.read().decode()[-2000:]}")
        try:
            requests.get(f"{url}/health/", timeout=5)
        except requests.RequestException:
            return False
        return True

    try:
        wait_for(answers, 60, "the development server")
        yield url
    finally:
        server.terminate()
        server.wait(10)


def test_the_development_server_refuses_a_large_request_with_413(dev_server):
    response = requests.post(f"{dev_server}/api/tournaments/", data=b"{" + b" " * 5000 + b"}",
                             headers={"Content-Type": "application/json"}, timeout=30)
    assert response.status_code == 413, response.text[:500]
    assert "at most 1,000 bytes" in response.json()["detail"]
