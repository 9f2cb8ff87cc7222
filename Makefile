# jetlink - bootstrap a virtualenv and run the demo, the tests or the generators.
#
#   make demo        create .venv if missing, install jetlink, run the demo
#   make test        create .venv if missing, install jetlink[test], run the whole test suite
#   make generated   rewrite completions/, man/ and docs/cli.md from the Typer app (commit the result)
#
# Installs are stamped with a hash of pyproject.toml (.venv/.installed-<hash>), so repeated
# runs do not reinstall; editing pyproject.toml triggers a fresh install.

SHELL := /bin/sh
VENV ?= .venv
PYTHON ?= $(shell command -v python3.11 >/dev/null 2>&1 && echo python3.11 || echo python3)
VENV_PY := $(VENV)/bin/python
JETLINK := $(VENV)/bin/jetlink
PYPROJECT_HASH := $(shell cksum pyproject.toml | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(PYPROJECT_HASH)
TEST_STAMP := $(VENV)/.installed-test-$(PYPROJECT_HASH)

.PHONY: demo test generated clean-venv

$(VENV_PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet -e .
	rm -f $(VENV)/.installed-*
	touch $@

$(TEST_STAMP): | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $@ $(STAMP)

# The engine is not built yet: the demo validates the example topologies. The second file
# is broken on purpose and `jetlink validate` must exit 3 (problems found) on it.
demo: $(STAMP)
	@echo '$$ jetlink validate examples/topology.toml'
	@$(JETLINK) validate examples/topology.toml
	@echo
	@echo '$$ jetlink validate examples/broken-topology.toml   # exit status 3 expected'
	@rc=0; $(JETLINK) validate examples/broken-topology.toml || rc=$$?; \
	  echo "exit status $$rc (3 = problems found, as expected)"; \
	  test $$rc -eq 3

test: $(TEST_STAMP)
	$(VENV_PY) -m pytest

generated: $(STAMP)
	$(VENV_PY) scripts/generate.py

clean-venv:
	rm -rf $(VENV)
