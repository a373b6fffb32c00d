# The two commands a newcomer needs: `make test` and `make serve`; while changing code, `make check`
# (seconds) and `make test-fast` (minutes) first (CONTRIBUTING.md, "Development loop").
# All create .venv on first use and reinstall when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# Compiled Numba kernels are cached here, so a second run (and every worker process) skips compilation.
export NUMBA_CACHE_DIR ?= $(CURDIR)/var/numba-cache

.PHONY: check test-fast test serve install lock docs bench bench-scale bench-report clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The client (client/, distribution pgs-client) is a package of its own; tests/client runs it
# and its `pgs` command against a real service. Both in one pip run (one resolution), every
# version pinned by constraints.txt, so a new release upstream changes nothing here until
# `make lock` takes it.
$(STAMP): pyproject.toml client/pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[service,dev]' -e './client[all,dev]'
	touch $@

# constraints.txt: every package the service, dev, bench and client extras install, pinned for
# the Python of the Docker image and CI (3.11, x86_64 Linux) whoever runs this. uv resolves from
# the two pyprojects alone, keeping the current pins where they still fit: run it after changing
# a dependency; `make lock LOCK_FLAGS=--upgrade` moves every pin to the newest release.
UV_VERSION := 0.13.9
lock: | $(BIN)/python
	$(BIN)/python -m pip install --quiet 'uv==$(UV_VERSION)'
	$(BIN)/uv pip compile pyproject.toml client/pyproject.toml --all-extras $(LOCK_FLAGS) \
		--python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
		--custom-compile-command 'make lock' --output-file constraints.txt --quiet

# The Numba cache the service and the tests start with (the solver's kernels compiled in parallel,
# one process per family, and the upload parser's); a job whose kernels are missing compiles them itself, off its clock. Its stamp
# lives in the cache, so a deleted var/ (the default data dir, which holds it) is warmed again.
WARM := $(NUMBA_CACHE_DIR)/.warm-stamp
$(WARM): $(STAMP)
	$(BIN)/python -m solver.warmup
	$(BIN)/python -m app.services.datasets.svmlight_kernel
	$(BIN)/python -m app.services.datasets.column_stats
	touch $@

install: $(STAMP) $(WARM)

SOURCES := app solver bench tests client tools

# The client's models against the app's OpenAPI document. Building the document imports the whole
# app (most of the time `check` takes), so it is compared again only when the app, the models,
# the tool or the installed packages changed.
SCHEMAS_CHECKED := $(VENV)/.schemas-checked
$(SCHEMAS_CHECKED): $(STAMP) $(shell find app -name '*.py') client/pgs_client/schemas.py client/tools/generate_schemas.py
	$(BIN)/python client/tools/generate_schemas.py --check
	touch $@

# Everything that runs no test, in seconds: the client's models (above), lint, formatting, types
# of the service and of the client, and docs/benchmarks.md against its records.
check: $(STAMP) $(SCHEMAS_CHECKED)
	$(BIN)/ruff check $(SOURCES)
	$(BIN)/ruff format --check $(SOURCES)
	$(BIN)/mypy
	cd client && $(abspath $(BIN))/mypy
	$(BIN)/python -m bench.report --check

# The suite less what needs more than the pytest process (PostgreSQL and Dask, Docker, a browser,
# larger-than-memory data, real service processes) and the single tests over 5 s: the markers in
# pyproject.toml. On two processes (pytest-xdist), a file's tests on one of them in order: some
# share a module's app and data (a list test counts the jobs the tests before it made).
FAST := not (cluster or docker or browser or large or system or slow)
test-fast: $(STAMP) $(WARM)
	$(BIN)/python -m pytest -m "$(FAST)" -n 2 --dist loadfile $(PYTEST_ARGS)

# The checks first (seconds), then the whole suite on two processes as test-fast runs (a file's
# tests on one of them, in order; tests/conftest.py gathers the contract check of both), and the
# 30 slowest tests listed at the end so CI logs show where the time goes. Tests that share a
# machine-wide resource take their own: free ports, a temp data dir, a Compose project per test.
test: check $(WARM)
	$(BIN)/python -m pytest -n 2 --dist loadfile --durations=30 $(PYTEST_ARGS)

serve: $(STAMP) $(WARM)
	$(BIN)/python -m app

# The reference pages generated from the code (docs/reference/: endpoints, settings, solver
# parameters); tests/docs/test_reference.py fails while one of them is stale.
docs: $(STAMP)
	$(BIN)/python -m tools.reference

# Every benchmark, each writing its JSON record to docs/results/ (over an hour on 2 cores; the
# commands are those docs/benchmarks.md shows), then the page rendered from the records.
bench: $(STAMP) $(WARM)
	$(BIN)/python -m bench.throughput --repeats 7
	$(BIN)/python -m bench.time_to_accuracy
	$(BIN)/python -m bench.pgs_ablation
	$(BIN)/python -m bench.paper_figures
	$(BIN)/python -m bench.inverse_time --runs 15
	$(BIN)/python -m bench.inverse_time --runs 15 --sigma-rule target
	$(BIN)/python -m bench.inverse_time --runs 10 --features 10 --sigma-rule achievable --setting paper --output last --max-iter 1000000
	$(BIN)/python -m bench.inverse_time --runs 15 --features 10 --sizes 1500,2000,3000,5000,10000,20000,50000,200000 --sigma-rule fixed --sigma 0.01 --setting paper --output last --max-iter 1000000
	$(BIN)/python -m bench.inverse_time --runs 50 --features 10 --sizes 1500,2000,3000,5000,10000,20000,50000,200000 --sigma-rule fixed --sigma 0.001 --setting paper --output last --max-iter 1000000
	$(BIN)/python -m bench.l1_paths
	$(BIN)/python -m bench.lecture_eq6
	$(BIN)/python -m bench.predict_bench
	$(BIN)/python -m bench.load_bench --setup both --duration 60
	$(BIN)/python -m bench.dispatch_bench --setup both --repeat 20
	$(BIN)/python -m bench.hostile_bench
	$(BIN)/python -m bench.long_poll_bench
	$(BIN)/python -m bench.end_to_end
	$(BIN)/python -m bench.setup_pass
	$(BIN)/python -m bench.cold_start
	$(BIN)/python -m bench.sigma_auto --timeout 120 --seeds 5
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[bench]'
	$(BIN)/python -m bench.peers
	$(BIN)/python -m bench.pgs_ablation --variants small_m --sets rt_polarity,reuters_moneyfx,w8a,a9a,ijcnn1 --seeds 10 --epochs 30 --name pgs_ablation_small_m
	$(BIN)/python -m bench.threads
	$(MAKE) bench-report

# The inverse time dependency at 1 to 100 million rows, through the service: not part of `bench`
# (about half an hour, and at 100 million rows about 26 GB of disk; docs/benchmarks.md).
bench-scale: $(STAMP) $(WARM)
	$(BIN)/python -m bench.inverse_time_scale --sizes 1M,4M,16M,64M,100M --time-budget 150

# docs/benchmarks.md from bench/benchmarks_template.md and the records in docs/results/.
bench-report: $(STAMP)
	$(BIN)/python -m bench.report

clean:
	rm -rf $(VENV) var/numba-cache .pytest_cache
