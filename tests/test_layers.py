"""The house rules of the source tree: comments name rules, not issue numbers; one module
chooses the backend; the CLI uses Typer's and Click's public names only. (The module graph
has no circle: tests/test_module_graph.py.)"""

from __future__ import annotations

import re
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "core"


def test_code_names_rules_and_documents_not_issue_or_seed_numbers():
    """A reader of the code cannot open the project's issue tracker or its seed documents by
    number: comments and docstrings name the rule, the ADR, the server function or the
    document instead."""
    import re

    root = CORE.parent
    pattern = re.compile(r"\b[Ii]ssues? #?\d+\b|\b[Ss]eeds? 0\d\d\b")
    found = []
    paths = [path for top in ("core", "cli", "sparkops", "tests")
             for path in (root / top).rglob("*.py")]
    # the documentation too: README.md and the pages of the site
    paths += [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and "pattern = re.compile" not in line:
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert found == []


# Constructions and questions that choose between the embedded engine and a live server:
# core/backend.py is the one module that may make them (DESIGN.md "One seam per capability").
_CHOOSERS = re.compile(
    r"getattr\(app, \"target\"|\bapp\.target is\b|\bEmbeddedSite\(|\bLiveSite\(|"
    r"\bLiveDomains\(|\bKV\.over\(LiveDomains")


def test_only_the_backend_module_chooses_the_backend():
    root = CORE.parent
    allowed = {"core/backend.py"}
    found = []
    for top in ("core", "cli", "sparkops"):
        for path in (root / top).rglob("*.py"):
            rel = str(path.relative_to(root))
            if rel in allowed:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _CHOOSERS.search(line):
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert found == []


def test_the_cli_uses_only_public_typer_and_click_names():
    """Typer ships its own copy of Click under a private name: reaching into it would break
    with any Typer release."""
    root = CORE.parent
    found = [f"{path.relative_to(root)}:{n}"
             for top in ("core", "cli", "sparkops", "tests")
             for path in (root / top).rglob("*.py")
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if ("typer." + "_click") in line or ("get_current" + "_context") in line]
    assert found == []
