"""Import guards: start-up stays cheap and the layers keep their dependencies.

- ``jetlink --help`` (any command's) imports neither pyspark, textual, httpx, the HTTP server
  (starlette, uvicorn) nor the heavy data libraries, nor Rich (the plain help keeps start-up
  within its 250 ms budget; Rich is imported by cli/output.py when a table is printed);
- core/ imports no CLI, TUI, HTTP or Spark library (docs/architecture.md "Layering").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

HELP_FORBIDDEN = (
    "pyspark",
    "textual",
    "httpx",
    "pandas",
    "pyarrow",
    "rich",
    "starlette",
    "uvicorn",
    "jetlink.sparkops",
    "nats",
    "jetlink.core.live.client",
)
CORE_FORBIDDEN = (
    "typer", "click", "rich", "textual", "httpx", "starlette", "uvicorn", "pyspark", "jetlink.cli",
)


def imported_modules(args: list[str]) -> tuple[set[str], subprocess.CompletedProcess]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":  # the header line
                names.add(name)
    return names, proc


def offenders(names: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in forbidden))


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["validate", "--help"],
        ["bench", "--help"],
        ["bench", "transform", "--help"],
        ["serve", "--help"],
    ],
    ids=" ".join,
)
def test_help_imports_nothing_heavy(argv):
    names, proc = imported_modules(["-m", "jetlink.cli.main", *argv])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("Usage: jetlink")
    assert "typer" in names  # the measurement itself works
    assert offenders(names, HELP_FORBIDDEN) == []


def core_modules() -> list[str]:
    modules = []
    for path in sorted((REPO / "core").rglob("*.py")):
        rel = path.relative_to(REPO / "core").with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        modules.append(".".join(["jetlink.core", *parts]))
    return modules


def test_core_imports_no_outer_layer():
    modules = core_modules()
    assert "jetlink.core.errors" in modules
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    names, proc = imported_modules(["-c", code])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert offenders(names, CORE_FORBIDDEN) == []


def test_root_help_imports_no_command_module():
    # `jetlink --help` lists commands from the registry: start-up does not grow with them.
    from jetlink.cli.main import COMMAND_MODULES

    names, proc = imported_modules(["-m", "jetlink.cli.main", "--help"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(n for n in names if n in {f"jetlink.cli.{m}" for m in COMMAND_MODULES}) == []


@pytest.mark.parametrize(
    "argv",
    [["stream", "ls"], ["kv", "ls"], ["pub", "x.y", "hello"], ["consumer", "ls", "S"]],
    ids=" ".join,
)
def test_embedded_verbs_never_import_the_live_client(argv, tmp_path):
    # nats-py is imported only when a server is in force: the embedded engine's verbs pay
    # nothing for the live client (issue 18).
    env_free = ["-c", "import os, sys; [os.environ.pop(k, None) for k in list(os.environ) "
                "if k.startswith(('NATS_', 'JETLINK_'))]; sys.argv = ['jetlink', '--data-dir', "
                f"{str(tmp_path)!r}, *{argv!r}]; from jetlink.cli.main import run; run()"]
    names, proc = imported_modules(env_free)
    assert "jetlink.cli.main" in names  # the measurement itself works
    assert offenders(names, ("nats", "jetlink.core.live.client", "jetlink.core.live.jetstream")) == []


def test_a_server_in_force_imports_the_live_client():
    names, proc = imported_modules(["-m", "jetlink.cli.main", "--server", "nats://127.0.0.1:1",
                                    "stream", "ls"])
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "nats" in names and "jetlink.core.live.client" in names
