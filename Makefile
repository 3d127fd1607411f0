# Quatre Sept Arena: `make run` starts the platform, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv test test-fast lint run bench clean

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

test: venv lint
	$(PY) -m pytest

bench: venv
	$(PY) benchmarks/engine_speed.py

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .hypothesis
