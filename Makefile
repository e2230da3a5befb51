# Notewell: `make serve` runs the product on the example vault; `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
VAULT ?= examples/northwind
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: serve test lint install clean docs bench

# The product alone (what `make serve` needs); the test and lint tools come with the dev extra, and the
# language-model SDKs (the llm extra) with them, so that the KEA extractor's tests run.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e ".[dev,llm]"
	touch $(DEV_STAMP)

install: $(DEV_STAMP)

PORT ?= 8765

# Index the example vault, make sure a local admin and a token exist (kept outside the vault, in
# ~/.local/state/notewell/quickstart/<vault id>/token, mode 0600), print the token and the client set-up, then
# serve MCP at http://127.0.0.1:$(PORT)/mcp, watching the vault. The commands are then in $(BIN) (notewell).
serve: $(STAMP)
	$(BIN)/notewell quickstart --vault $(VAULT) --port $(PORT)

# pytest runs on TEST_WORKERS processes (pytest-xdist), each test file whole on one of them; TEST_WORKERS=0 runs
# it in this process alone
TEST_WORKERS ?= 2
test: $(DEV_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src

clean:
	rm -rf $(VENV) $(VAULT)/.notewell
