# The two commands of the README: `make demo` (the main job) and `make test` (every check).
# Each creates .venv on first use and reinstalls when pyproject.toml or the lock changes.
# Versions come from requirements.lock (exact pins, every platform and Python >= 3.11);
# pyproject.toml keeps ranges for users. `make lock` re-resolves the lock.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := requirements.lock
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK)
UV     := uv==0.13.9

.PHONY: demo test lint docs i18n bench lock skypilot clean

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "whichgpu needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e '.[dev]'
	touch $(STAMP)

# the optional SkyPilot extra (~450 MB), for the export test that uses SkyPilot's own parser
skypilot: $(STAMP)
	$(PIP) -e '.[dev,skypilot]'

lock:  # uv resolves for every platform; it runs from a venv of its own (.venv-lock)
	test -x .venv-lock/bin/uv || ($(PYTHON) -m venv .venv-lock && \
	  .venv-lock/bin/python -m pip install --quiet --disable-pip-version-check $(UV))
	.venv-lock/bin/uv pip compile pyproject.toml --extra dev --extra skypilot --universal \
	  --python-version 3.11 --custom-compile-command 'make lock' -o $(LOCK)

demo: $(STAMP)
	$(BIN)/whichgpu recommend --file tests/scenarios/d02-train-1-7b.toml
	$(BIN)/whichgpu compare a100-80gb-sxm rtx-a6000 rtx-a2000

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

i18n: $(STAMP)
	$(BIN)/python scripts/i18n.py update
	$(BIN)/python scripts/i18n.py compile

docs: $(STAMP)
	$(BIN)/python scripts/fit_frameworks.py
	$(BIN)/python scripts/gen_docs.py
	$(BIN)/python scripts/fit_efficiency.py

test: lint
	$(BIN)/python scripts/i18n.py compile >/dev/null
	$(BIN)/python scripts/i18n.py check
	$(BIN)/python scripts/fit_frameworks.py --check
	$(BIN)/python scripts/import_diffusion.py --check
	$(BIN)/python scripts/import_skypilot_offers.py --check
	$(BIN)/python scripts/import_dated_prices.py --check
	$(BIN)/python scripts/gen_docs.py --check
	$(BIN)/python scripts/fit_efficiency.py --check
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/coldstart.py

clean:
	rm -rf $(VENV) .venv-lock .mypy_cache .pytest_cache .ruff_cache
