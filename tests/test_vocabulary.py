"""One name for one concept in core: no public class name is defined in two modules of core/.

Public: a name without a leading underscore; classes defined at module level (what another
module imports by name). The scan reads the source with ast (nothing is imported), so a
collision is reported even in a module that is only imported lazily.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "core"


def public_classes(path: Path) -> list[str]:
    """The public classes ``path`` defines at module level."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [node.name for node in tree.body
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_")]


def collisions(root: Path) -> dict[str, list[str]]:
    """Public class name -> the modules under ``root`` defining it, for names defined in
    more than one module."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for name in public_classes(path):
            where[name].append(path.relative_to(root.parent).as_posix())
    return {name: mods for name, mods in sorted(where.items()) if len(mods) > 1}


def test_no_public_class_name_is_defined_in_two_modules_of_core() -> None:
    found = collisions(CORE)
    assert found == {}, "public class names defined in more than one module of core/: " + "; ".join(
        f"{name} in {', '.join(mods)}" for name, mods in found.items())


def test_the_scan_finds_a_name_defined_twice(tmp_path: Path) -> None:
    """The check itself: two modules (one in a subpackage) defining the same public class
    are reported with both paths; private and nested classes are not public names."""
    root = tmp_path / "core"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("class Backend:\n    pass\n\nclass _Private:\n    pass\n")
    (root / "sub" / "b.py").write_text(
        "class Backend:\n    pass\n\nclass _Private:\n    pass\n\n"
        "def f():\n    class Nested:\n        pass\n")
    (root / "c.py").write_text("def g():\n    class Nested:\n        pass\n")
    assert collisions(root) == {"Backend": ["core/a.py", "core/sub/b.py"]}
