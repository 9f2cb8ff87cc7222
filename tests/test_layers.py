"""core/ is layered: its modules' imports form no cycle (DESIGN.md "Layers").

Every import of every core module counts, at module level and inside functions (a lazy
import still ties two modules together); imports under ``if TYPE_CHECKING:`` do not (they
exist for annotations only and never run). Relative imports are resolved to modules;
``from . import x`` is the module x.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "core"


def _module_names() -> dict[str, Path]:
    out = {}
    for path in CORE.rglob("*.py"):
        parts = [p for p in path.relative_to(CORE).with_suffix("").parts if p != "__init__"]
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(sub) for sub in ast.walk(node))
    return skip


def import_graph() -> dict[str, set[str]]:
    modules = _module_names()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        tree = ast.parse(path.read_text())
        skip = _type_checking_nodes(tree)
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        if mod == "":
            package = []
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                elif node.module and (node.module + ".").startswith("jetlink.core."):
                    target = node.module[len("jetlink.core."):]
                else:
                    continue
                targets = [target, *(f"{target}.{a.name}" if target else a.name
                                     for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name[len("jetlink.core."):] for a in node.names
                           if a.name.startswith("jetlink.core.")]
            for t in targets:
                if t in modules and t != mod:
                    graph[mod].add(t)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        stack.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return [*stack[stack.index(w):], w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_the_graph_is_read():
    graph = import_graph()
    assert "streams" in graph["jetstream"] and "live.client" in graph["live.jetstream"]


def test_core_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle in core/: " + " -> ".join(cycle)


def test_a_cycle_is_found():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


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
