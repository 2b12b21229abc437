# Two commands on a fresh machine:  `make demo` (main job) and `make test` (test suite).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint install clean

demo: $(STAMP)
	$(BIN)/libre train deployments/specs/pima.yaml

# one worker per core, at most 4; a test file stays on one worker (its fixtures are built once);
# the slowest files first (tests/conftest.py: SLOW_FIRST), so none is left running alone at the end
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder

lint: $(STAMP)
	$(BIN)/ruff check .

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
