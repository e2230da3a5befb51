# Notewell: `make serve` runs the product on the example vault; `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
VAULT ?= examples/northwind
STAMP := $(VENV)/.installed

.PHONY: serve test lint install clean docs bench

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(BIN)/notewell index --vault $(VAULT)
	$(BIN)/notewell search "maximum discount" --vault $(VAULT) --project northwind-advisory

test: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

clean:
	rm -rf $(VENV) $(VAULT)/.notewell
