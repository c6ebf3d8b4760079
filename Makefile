# The two commands of the README: `make run` and `make test`. Both set up what they need.
# `make run ARGS=--headless` serves without a window (no display: open its link in a browser).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test lint bench package install-desktop uninstall-desktop clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Re-install only when pyproject.toml changes.
$(VENV)/.run-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# The tests build the bundle too (tests/bundle): they need the package extra.
$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test,package]'
	touch $@ $(VENV)/.run-installed $(VENV)/.package-installed

$(VENV)/.package-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[package]'
	touch $@ $(VENV)/.run-installed

run: $(VENV)/.run-installed
	scripts/system-deps.sh run
	$(BIN)/sparrow-desktop $(ARGS)

lint: $(VENV)/.test-installed
	$(BIN)/ruff check server desktop tests bench
	$(BIN)/mypy

# The suite's one real model (llama.cpp's server and a small GGUF): built once per
# machine, cached outside the tree (scripts/llama-server.sh).
test: $(VENV)/.test-installed
	scripts/system-deps.sh test
	$(MAKE) --no-print-directory lint
	llama=$$(PYTHON=$(BIN)/python scripts/llama-server.sh) && \
	  SPARROW_LLAMA_SERVER=$$llama scripts/test-session.sh $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.test-installed
	scripts/system-deps.sh test
	llama=$$(PYTHON=$(BIN)/python scripts/llama-server.sh) && \
	  SPARROW_LLAMA_SERVER=$$llama scripts/test-session.sh $(BIN)/python -m bench

# The desktop app as a folder to copy anywhere: dist/Sparrow/ (dist/Sparrow.app on macOS).
package: $(VENV)/.package-installed
	scripts/system-deps.sh run
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build packaging/sparrow.spec
	$(BIN)/python packaging/licences.py dist/Sparrow

# The menu entry and icons under $${XDG_DATA_HOME:-~/.local/share}, launching the
# bundle when `make package` built one, else this checkout's sparrow-desktop.
BUNDLED := dist/Sparrow/sparrow-desktop
install-desktop: $(if $(wildcard $(BUNDLED)),,$(VENV)/.run-installed)
	packaging/install-desktop.sh $(if $(wildcard $(BUNDLED)),$(BUNDLED),$(BIN)/sparrow-desktop)

uninstall-desktop:
	packaging/install-desktop.sh --uninstall

clean:
	rm -rf $(VENV) build dist artifacts .pytest_cache .mypy_cache .ruff_cache
