# Quatre Sept Arena: `make run` starts the platform, `make test` lints and runs the test suite
# but for the slow sweeps and fault-injection tests (test-slow, test-reliability); benchmarks are
# bench-* and never tests.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# Development targets (run, web, worker, migrate, seed) ask for DEBUG; a deployment leaves it off
# (the settings' default) and sets DJANGO_SECRET_KEY.
export DJANGO_DEBUG ?= 1
# DATABASE_URL / REDIS_URL for the local PostgreSQL and Redis when they answer, else nothing.
SERVICES = $(shell $(PYTHON) .ci/services.py)

.PHONY: chromium test-web test-docker bench-sandbox venv test test-fast test-slow test-reliability bench-api lint run migrate seed worker web bench bench-platform clean

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

# ruff, the import-layer contracts, chromium for the browser tests, then pytest over tests/ (engine,
# sandbox with real bubblewrap, arena, reliability/api, e2e with a real gunicorn and worker, web with
# headless chromium) against PostgreSQL and Redis when they answer (SQLite and the filesystem
# broker otherwise). Left out: tests marked `reliability` (make test-reliability) and the engine's
# `slow` sweeps (make test-slow); no benchmark runs.
test: venv lint chromium
	env $(SERVICES) $(PY) -m pytest

# The slow fault-injection tests (minutes): worker SIGKILLs, Redis restarts, PostgreSQL connections
# cut during round-robins. They need PostgreSQL and Redis.
test-reliability: venv
	env $(SERVICES) $(PY) -m pytest -m reliability tests/reliability

# The engine's large seeded sweep (tens of thousands of random matches per preset and option).
test-slow: venv
	$(PY) -m pytest -m slow tests/engine

# make test's pytest without the browser install and lint, stopping at the first failure.
test-fast: venv
	env $(SERVICES) $(PY) -m pytest -x -m "not slow and not reliability"

migrate: venv
	$(PY) manage.py migrate --noinput -v0

seed: migrate
	$(PY) manage.py seed_demo --yardstick-pairs 0

# Web and a worker (with an embedded beat) together on this machine; Ctrl-C stops both.
# With no DATABASE_URL / REDIS_URL: SQLite and the filesystem broker under var/.
run: seed
	HOST=$(HOST) PORT=$(PORT) $(PY) platform/run_local.py

worker: venv
	$(VENV)/bin/celery -A config worker --loglevel=INFO

web: venv
	$(PY) manage.py runserver $(HOST):$(PORT)

bench: venv
	$(PY) benchmarks/engine_speed.py

bench-platform: venv
	env $(SERVICES) $(PY) benchmarks/platform_speed.py

# The API at 100 requests/s on 1,000 versions and 100,000 matches (PostgreSQL needed): p50, p99.
bench-api: venv
	env $(SERVICES) $(PY) benchmarks/api_load.py

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .hypothesis

# Debian's Chromium for the browser tests (tests/web): installed with apt when missing (as root;
# otherwise the browser tests skip and say why). Playwright drives it; no browser is downloaded.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq || true; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: apt-get install -y chromium (browser tests skip)"; fi; }

# The pages alone: page and card tests, then the browser tests (screenshots in test-artifacts/).
test-web: venv chromium
	env $(SERVICES) $(PY) -m pytest tests/web

# The Docker sandbox backend and the real compose.yaml against a real Docker engine: installs and
# starts a private engine when none answers, builds local bases once (cached), builds the images,
# then runs every Docker test (none may skip): the hostile-bot suite under Docker and the compose
# stack with two workers, one of them killed mid round-robin. .ci/docker.sh says how.
test-docker: venv
	.ci/docker.sh test

# Sandbox speed: bare, bwrap and (when an engine answers: `.ci/docker.sh images` first) Docker.
bench-sandbox: venv
	nice -n 5 $(PY) benchmarks/sandbox_speed.py
