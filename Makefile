# The two commands of the README: `make demo` (the main job) and `make test` (every check).
# Each creates .venv on first use and reinstalls when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint docs i18n bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "whichgpu needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

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
	$(BIN)/python scripts/gen_docs.py
	$(BIN)/python scripts/fit_efficiency.py

test: lint
	$(BIN)/python scripts/i18n.py compile >/dev/null
	$(BIN)/python scripts/i18n.py check
	$(BIN)/python scripts/gen_docs.py --check
	$(BIN)/python scripts/fit_efficiency.py --check
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/coldstart.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
