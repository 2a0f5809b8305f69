# batchviz: the two commands of the README do all the set-up on a fresh machine.
#   make demo   - create .venv, install batchviz, explain the paper's Figure 1 example
#   make test   - create .venv, install batchviz with test extras (and, as root, Debian's
#                 graphviz and chromium), run the whole test suite, compiled and from source
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test test-fast bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# re-install only when pyproject.toml changes
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[dev,browser,notebooks,bench,docs,optimum,dynet]"
	touch $@ $(VENV)/.demo-installed

demo: $(VENV)/.demo-installed
	$(BIN)/python -m batchviz demo

# the suite runs twice: compiled (as installed; in CI, where a C compiler is present, a build
# that fell back to the Python source fails it), and from the Python source
# (BATCHVIZ_PURE_PYTHON=1: what a machine without a compiler runs, and what a student's edit runs)
test: $(VENV)/.test-installed
	bash scripts/install-browser-deps.sh
	BATCHVIZ_EXPECT_COMPILED=$(if $(CI),1,0) $(BIN)/python -m pytest -n 2 -m "not browser" $(PYTEST_ARGS)
	BATCHVIZ_PURE_PYTHON=1 $(BIN)/python -m pytest -n 2 -m "not browser and not slow" $(PYTEST_ARGS)
	$(BIN)/python -m pytest -m browser tests/browser $(PYTEST_ARGS)

test-fast: $(VENV)/.test-installed
	$(BIN)/python -m pytest -n 2 -m "not browser and not slow" $(PYTEST_ARGS)

bench: $(VENV)/.test-installed
	$(BIN)/python -m benchmarks all

# the documentation site; warnings (broken links, failing examples) are errors
docs: $(VENV)/.test-installed
	$(BIN)/python -m sphinx -W --keep-going -n -b html docs docs/_build/html

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis artifacts docs/_build
