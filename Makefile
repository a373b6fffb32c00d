# The two commands a newcomer needs: `make test` and `make serve`.
# Both create .venv on first use and reinstall when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# Compiled Numba kernels are cached here, so a second run (and every worker process) skips compilation.
export NUMBA_CACHE_DIR ?= $(CURDIR)/var/numba-cache

.PHONY: test serve install bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The client (client/, distribution pgs-client) is a package of its own; tests/client runs it
# and its `pgs` command against a real service.
$(STAMP): pyproject.toml client/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet -e './client[all,dev]'
	touch $@

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

serve: $(STAMP)
	$(BIN)/python -m app

bench: $(STAMP)
	$(BIN)/python -m bench.time_to_accuracy --markdown

clean:
	rm -rf $(VENV) var/numba-cache .pytest_cache
