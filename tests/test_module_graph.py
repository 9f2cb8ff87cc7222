"""The module graph of the product (cli/, core/, sparkops/) has no circle (DESIGN.md
"Layers": arrows point down).

Every import counts: at module level, inside functions (a lazy import still ties two modules
together) and under ``if TYPE_CHECKING:`` (a type-only import still makes a reader of one
module read the other). Relative imports are resolved; ``from . import x`` and ``from .a
import x`` where ``x`` is a module are the module x; an import of a name is an arrow to the
module that defines it (its package's ``__init__`` for a package).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"cli": "jetlink.cli", "core": "jetlink.core", "sparkops": "jetlink.sparkops"}


def modules_of(root: Path, packages: dict[str, str]) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package's __init__) for every .py file below
    ``root/<folder>``, named as the import package ``packages[folder]`` maps it."""
    found = {}
    for folder, package in packages.items():
        for path in (root / folder).rglob("*.py"):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            init = parts[-1] == "__init__"
            name = ".".join([package, *(parts[:-1] if init else parts)])
            found[name] = (path, init)
    return found


def module_graph(root: Path = ROOT, packages: dict[str, str] = PACKAGES
                 ) -> dict[str, set[str]]:
    modules = modules_of(root, packages)

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, (path, init) in modules.items():
        here = mod if init else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [owner(a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = (f"{base}.{node.module}" if node.module else base) if node.level \
                    else node.module or ""
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules
                           else owner(source) for a in node.names]
            graph[mod].update(t for t in targets if t is not None and t != mod)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted,
    the largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found, key=lambda c: (-len(c), c))


def test_the_product_has_no_import_circle():
    graph = module_graph()
    assert "jetlink.core.streams" in graph["jetlink.core.jetstream"]
    found = circles(graph)
    assert found == [], "import circles (each: its modules):\n" + "\n".join(
        f"{len(c)}: " + ", ".join(c) for c in found)


def test_a_type_only_import_makes_a_circle(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import B\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n")
    (pkg / "c.py").write_text("def f():\n    from . import a\n")
    graph = module_graph(tmp_path, {"pkg": "x.pkg"})
    assert graph == {"x.pkg": set(), "x.pkg.a": {"x.pkg.b"}, "x.pkg.b": {"x.pkg.a"},
                     "x.pkg.c": {"x.pkg.a"}}
    assert circles(graph) == [["x.pkg.a", "x.pkg.b"]]


# -- long bodies ------------------------------------------------------------------------------

BODY_LIMIT = 80  # lines of a function body: its first statement after the docstring to its end
MOST_LONG_BODIES = 15  # the narrated drills (cli/demo.py, cli/demo_live.py) among them


def long_bodies(root: Path = ROOT) -> list[tuple[int, str]]:
    """(lines, "file:function") of every function body over BODY_LIMIT lines, longest first."""
    found = []
    for folder in PACKAGES:
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                body = node.body
                if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                        and isinstance(body[0].value.value, str):
                    body = body[1:]
                if body:
                    lines = (body[-1].end_lineno or body[-1].lineno) - body[0].lineno + 1
                    if lines > BODY_LIMIT:
                        found.append((lines, f"{path.relative_to(root)}:{node.name}"))
    return sorted(found, reverse=True)


def test_few_long_bodies():
    found = long_bodies()
    assert len(found) <= MOST_LONG_BODIES, (
        f"{len(found)} function bodies over {BODY_LIMIT} lines (at most {MOST_LONG_BODIES}): "
        "split the new one into steps named for what they do\n"
        + "\n".join(f"{n} {where}" for n, where in found))
