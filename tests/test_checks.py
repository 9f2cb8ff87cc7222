"""make test lints (ruff) and type-checks (mypy) before the suite runs: both are pinned in
constraints.txt, installed by the test extra, configured in pyproject.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_make_test_runs_ruff_and_mypy_before_pytest():
    recipe = (ROOT / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    ruff = recipe.index("-m ruff check .")
    mypy = recipe.index("-m mypy")
    assert ruff < mypy < recipe.index("-m pytest")


def test_the_checkers_are_in_the_test_extra_and_pinned():
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = {d.split(">")[0] for d in doc["project"]["optional-dependencies"]["test"]}
    assert {"mypy", "ruff"} <= extra
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    assert {"mypy", "ruff"} <= set(pins)
    assert doc["tool"]["mypy"]["packages"] == ["jetlink.core"]


def test_make_test_and_make_docs_build_the_site_strictly():
    """mkdocs.yml's site builds with --strict in make test (before pytest) and in make docs, so
    a broken link or anchor, or a page left out of the nav, fails; mkdocs is in the test extra
    and pinned."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert recipe.index("-m mkdocs build --strict") < recipe.index("-m pytest")
    docs = makefile.split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert "-m mkdocs build --strict" in docs
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = {d.split(">")[0] for d in doc["project"]["optional-dependencies"]["test"]}
    assert "mkdocs" in extra
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    assert "mkdocs" in pins
    config = (ROOT / "mkdocs.yml").read_text()
    assert "strict: true" in config and "omitted_files: warn" in config
    assert "site/" in (ROOT / ".gitignore").read_text().splitlines()
