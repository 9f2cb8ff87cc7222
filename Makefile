# jetlink - bootstrap a virtualenv and run the demo, the tests or the generators.
#
#   make demo        create .venv if missing, install jetlink, run the drill (jetlink demo)
#   make test        create .venv if missing, install jetlink[test], lint (ruff), type-check
#                    jetlink.core (mypy), build the documentation site (mkdocs --strict),
#                    run the whole test suite
#   make docs        build the documentation site from docs/ into site/ (mkdocs build --strict)
#   make soak        the five-minute soak of one shared data directory (tests/test_soak.py;
#                    the suite runs it for 30 s), its figures in .venv/soak.json
#   make generated   rewrite completions/, man/ and docs/cli.md from the Typer app (commit the result)
#
# Installs are stamped with a hash of pyproject.toml (.venv/.installed-<hash>), so repeated
# runs do not reinstall; editing pyproject.toml triggers a fresh install.

SHELL := /bin/sh
VENV ?= .venv
PYTHON ?= $(shell command -v python3.11 >/dev/null 2>&1 && echo python3.11 || echo python3)
VENV_PY := $(VENV)/bin/python
JETLINK := $(VENV)/bin/jetlink
PYPROJECT_HASH := $(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(PYPROJECT_HASH)
TEST_STAMP := $(VENV)/.installed-test-$(PYPROJECT_HASH)

.PHONY: demo test docs soak generated clean-venv

$(VENV_PY):
	$(PYTHON) -m venv $(VENV)

# An editable install leaves out data files: the man pages are linked into the environment
# where man finds them from its bin/ on PATH (share/man/man1), as a wheel installs them.
MAN_LINKS = mkdir -p $(VENV)/share/man/man1 && ln -sf $(CURDIR)/man/*.1 $(VENV)/share/man/man1/

$(STAMP): | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet -c constraints.txt -e '.[spark,live]'
	$(MAN_LINKS)
	rm -f $(VENV)/.installed-*
	touch $@

$(TEST_STAMP): | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet -c constraints.txt -e '.[spark,live,test]'
	$(MAN_LINKS)
	rm -f $(VENV)/.installed-*
	touch $@ $(STAMP)

# The disaster-recovery drill (jetlink demo): narrated, in a temporary data directory that
# is removed at the end. DEMO_ARGS passes options: make demo DEMO_ARGS=--keep
demo: $(STAMP)
	$(JETLINK) demo $(DEMO_ARGS)

# mypy can not follow the editable install's finder (jetlink.core -> core/): it checks the
# package through a link named as the import package, where pyproject.toml's mypy_path points.
TYPECHECK_LINK = mkdir -p .venv/typecheck/jetlink && ln -sfn $(CURDIR)/core .venv/typecheck/jetlink/core

test: $(TEST_STAMP)
	$(VENV_PY) -m ruff check .
	$(TYPECHECK_LINK)
	$(VENV_PY) -m mypy
	$(VENV_PY) -m mkdocs build --strict --quiet
	# bytecode caches written even where the environment turns them off: the suite starts
	# jetlink in hundreds of subprocesses, each of which would compile the package again
	env -u PYTHONDONTWRITEBYTECODE $(VENV_PY) -m pytest

# The documentation site (mkdocs.yml): a broken link or anchor, or a page missing from the
# nav, fails the build.
docs: $(TEST_STAMP)
	$(VENV_PY) -m mkdocs build --strict

soak: $(TEST_STAMP)
	JETLINK_SOAK_SECONDS=300 JETLINK_SOAK_REPORT=$(VENV)/soak.json $(VENV_PY) -m pytest \
		tests/test_soak.py -k every_kind
	cat $(VENV)/soak.json

generated: $(STAMP)
	$(VENV_PY) scripts/generate.py

clean-venv:
	rm -rf $(VENV)
