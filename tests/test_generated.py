"""The committed completions/, man/ and docs/cli.md are what scripts/generate.py writes today.

Regenerates into a temporary directory and compares file by file; on a difference run
``make generated`` and commit the result.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GENERATED_DIRS = ("completions", "man")
GENERATED_FILES = ("docs/cli.md",)


def tree(root: Path) -> dict[str, str]:
    files = {}
    for name in GENERATED_DIRS:
        for path in sorted([*(root / name).glob("jetlink*"), *(root / name).glob("_jetlink")]):
            if path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    for name in GENERATED_FILES:
        if (root / name).is_file():
            files[name] = (root / name).read_text(encoding="utf-8")
    return files


def test_generated_files_are_fresh(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "generate.py"), "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    fresh, committed = tree(tmp_path), tree(REPO)
    hint = (
        "generated files are stale: run `make generated` and commit completions/, man/ "
        "and docs/cli.md"
    )
    assert sorted(committed) == sorted(fresh), hint
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert stale == [], f"{hint} ({', '.join(stale)})"


def test_generation_is_deterministic(tmp_path):
    outputs = []
    for run in ("a", "b"):
        out = tmp_path / run
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "generate.py"), "--output-dir", str(out)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        outputs.append(tree(out))
    assert outputs[0] == outputs[1]
    assert sorted(outputs[0]) == [
        "completions/_jetlink",
        "completions/jetlink.bash",
        "completions/jetlink.fish",
        "docs/cli.md",
        *sorted(n for n in outputs[0] if n.startswith("man/")),
    ]
    assert "man/jetlink.1" in outputs[0]
    assert {"man/jetlink-validate.1", "man/jetlink-bench.1"} <= set(outputs[0])


def test_completion_scripts_are_what_jetlink_prints():
    # With shell detection disabled, Typer's --show-completion takes the shell as a value.
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    for shell in ("bash", "zsh", "fish"):
        proc = subprocess.run(
            [sys.executable, "-m", "jetlink.cli.main", "--show-completion", shell],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        script = "_jetlink" if shell == "zsh" else f"jetlink.{shell}"
        committed = (REPO / "completions" / script).read_text(encoding="utf-8")
        body = [line for line in committed.splitlines() if not line.startswith("# Generated")]
        assert body == proc.stdout.rstrip("\n").splitlines()


def test_man_pages_parse_cleanly():
    groff = subprocess.run(["sh", "-c", "command -v groff"], capture_output=True, text=True)
    if groff.returncode != 0:
        return  # groff is optional; the freshness test above is the contract
    for page in sorted((REPO / "man").glob("jetlink*.1")):
        proc = subprocess.run(
            ["groff", "-man", "-Tutf8", "-ww", "-z", str(page)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and proc.stderr == "", f"{page.name}: {proc.stderr}"


# -- docs/cli.md says what --help says --------------------------------------------------------


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def _plain(markdown: str, *, spans: bool = False) -> str:
    """Table-cell Markdown back to text: backslash escapes dropped, and the backticks of code
    spans unless ``spans`` (help text keeps its own `code spans`)."""
    text = markdown if spans else re.sub(r"`([^`]*)`", r"\1", markdown)
    text = text.replace("\\|", "|")
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text).replace("&amp;", "&")


def _doc_sections(doc: str) -> dict[str, list[list[str]]]:
    """Heading -> the cells of the table rows under it."""
    sections: dict[str, list[list[str]]] = {}
    rows: list[list[str]] = []
    for line in doc.splitlines():
        if line.startswith("## "):
            rows = sections.setdefault(line[3:], [])
        elif line.startswith("| ") and not line.startswith("| name |"):
            rows.append(_cells(line))
    return sections


def test_cli_doc_lists_every_command_parameter_and_default():
    # In-process, as tests/test_cli_help.py walks the tree: every command in --help order,
    # and for each parameter a row with its names, its help text and the default --help shows.
    from typer import _click as click
    from typer.main import get_command

    from jetlink.cli.main import app

    def walk(path, cmd, parent=None):
        ctx = click.Context(cmd, info_name=path[-1], parent=parent, **cmd.context_settings)
        yield path, cmd, ctx
        for name in cmd.list_commands(ctx) if hasattr(cmd, "list_commands") else []:
            sub = cmd.get_command(ctx, name)
            if not sub.hidden:
                yield from walk([*path, name], sub, ctx)

    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    sections = _doc_sections(doc)
    tree = list(walk(["jetlink"], get_command(app)))
    titles = [t for t in re.findall(r"^## (.*)$", doc, re.M) if t.startswith("jetlink ")]
    assert titles == [" ".join(path) for path, _, _ in tree[1:]]
    for path, cmd, ctx in tree:
        title = " ".join(path) if len(path) > 1 else "Global options"
        rows = {tuple(sorted(re.findall(r"`([^`]+)`", r[0]))): r for r in sections[title]}
        for param in cmd.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:  # hidden
                continue
            if param.param_type_name == "argument":
                names = (param.make_metavar(ctx),)
            else:
                names = tuple(sorted([*param.opts, *param.secondary_opts]))
            assert names in rows, f"{title}: no row for {names}"
            _, _, default, help_cell = rows[names]
            assert _plain(help_cell, spans=True).startswith(
                " ".join((param.help or "").split())), title
            # --help: "HELP  [env var: X; default: Y; required]"
            extras = record[1].rpartition("  [")[2][:-1].split("; ")
            shown = [e.removeprefix("default: ") for e in extras if e.startswith("default: ")]
            assert _plain(default) == (shown[0] if shown else ""), f"{title} {names}"
