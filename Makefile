# Two entry points: `make repro` (run the DAG) and `make test` (run the suite).
# Both create .venv and install requirements.lock, skipping the install while the
# lock file is unchanged since the last one (.venv/.installed is newer than it).
PYTHON ?= python3.11
VENV := .venv
STAMP := $(VENV)/.installed
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: install repro test lint clean

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

repro: $(STAMP)
	$(VENV)/bin/dvc repro

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV)
