# The two commands a new user needs: `make demo` and `make test`. Both build .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo check test test-fast bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: install
	$(BIN)/dspla demo

# the linter, the architecture's import contracts and the public API's type hints (all three
# configured in pyproject.toml) first: fast, and a broken layering or a wrong hint is a design
# error before it is a test failure. mypy keeps its cache in .mypy_cache (about 20 s cold, 1 s warm).
check: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# Two tiers: everything but the real-mpiexec jobs on two pytest-xdist workers (the tests are
# independent: tmp paths, DSPLA_CACHE_DIR where a test writes the cache), then the mpiexec tier
# alone, since its jobs use up to 4 ranks on a 2-core machine and must not be doubled up.
# `make test PYTEST_WORKERS=0` runs the first tier in one process.
PYTEST_WORKERS ?= 2
test: check
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) -m "not mpi"
	$(BIN)/python -m pytest -q -m mpi

# Everything except the real-mpiexec tier.
test-fast: install
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) -m "not mpi"

# The benchmarks behind the issues' bars, one after another (tens of minutes; each prints its
# bars). One of them: `make bench BENCH=local ARGS="--rounds 5"`; every name: `dspla bench list`.
BENCH ?= runtime local algorithms planner
bench: install
	for b in $(BENCH); do $(BIN)/dspla bench $$b $(ARGS) || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
