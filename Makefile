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

test: check
	$(BIN)/python -m pytest -q

# Everything except the real-mpiexec tier.
test-fast: install
	$(BIN)/python -m pytest -q -m "not mpi"

# The benchmarks behind the issues' bars, one after another (tens of minutes; each prints its
# bars). One of them: `make bench BENCH=local ARGS="--rounds 5"`; every name: `dspla bench list`.
BENCH ?= runtime local algorithms planner
bench: install
	for b in $(BENCH); do $(BIN)/dspla bench $$b $(ARGS) || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
