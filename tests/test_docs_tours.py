"""The tours of README.md and the documentation run as written: each `$ jetlink ...` line of
a tour's console block, in order, on a fresh data directory, exits as the page says (0, or
the status its comment names) and prints (on stdout or stderr) the lines the page shows
after it (those it shows:
`...` stands for lines left out, a line ending in `...` for the rest of that line)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


class Step:
    """One ``$`` line: its commands (``A && B`` is two), the status its comment names, the
    lines the page shows after it."""

    def __init__(self, commands: list[list[str]], status: int) -> None:
        self.commands = commands
        self.status = status
        self.shown: list[str] = []


def _status(comment: str) -> int:
    """The exit status a command's comment names (``exit status 2``, ``CRITICAL``), else 0."""
    found = re.search(r"exit status (\d)", comment)
    if found:
        return int(found.group(1))
    return 2 if comment.lstrip().startswith("CRITICAL") else 0


def tour(path: str, block: int = 0) -> list[Step]:
    """Console block number ``block`` of ``path`` (from the repository's top): per
    ``$ jetlink`` command (continuation lines joined; ``A && B`` two commands), its
    arguments, the status its comment names and the lines shown after it. ``$ export``
    lines are left out (the data directory is the test's)."""
    text = (ROOT / path).read_text(encoding="utf-8")
    body = text.split("```console\n")[block + 1].split("```", 1)[0]
    steps: list[Step] = []
    pending = ""
    for line in body.splitlines():
        if pending:
            pending += " " + line.strip()
        elif line.startswith("$ "):
            pending = line[2:]
        else:
            if steps and line.strip():
                steps[-1].shown.append(line)
            continue
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        command, _, comment = pending.partition("  # ")
        pending = ""
        words = shlex.split(command)
        if words[0] == "export":
            continue
        parts = [words]
        if "&&" in words:
            i = words.index("&&")
            parts = [words[:i], words[i + 1:]]
        assert all(one[0] == "jetlink" for one in parts), parts
        steps.append(Step([one[1:] for one in parts], _status(comment)))
    return steps


def _shown(line: str, out: list[str]) -> bool:
    if line.strip() == "...":
        return True
    if line.rstrip().endswith("..."):
        head = line.rstrip()[:-3].rstrip()
        return any(o.startswith(head) for o in out)
    return line in out


@pytest.mark.parametrize(("path", "block", "tmp_paths"), [
    ("docs/mirror-topics.md", 0, ()),
    ("docs/acls.md", 3, ()),                         # what acls rm removes
    ("README.md", 3, ("/tmp/jetlink-tour",)),        # five minutes for a NATS operator
    ("README.md", 5, ("/tmp/jetlink-kafka",)),       # five minutes for a Kafka operator
])
def test_a_tour_runs_as_written(jl, tmp_path, path, block, tmp_paths):
    steps = tour(path, block)
    assert len(steps) >= 5
    scratch = str(tmp_path / "scratch")
    for step in steps:
        out: list[str] = []
        for args in step.commands:
            for fixed in tmp_paths:  # the page's scratch paths, in this test's directory
                args = [a.replace(fixed, scratch) for a in args]
            r = jl(*args)
            assert r.exit_code == step.status, (args, r.stdout, r.stderr)
            # (what a terminal shows: stdout, and the notices and errors on stderr)
            out += [line.replace(scratch, tmp_paths[0]) if tmp_paths else line
                    for line in (r.stdout + r.stderr).splitlines()]
        missing = [line for line in step.shown if not _shown(line, out)]
        assert not missing, (step.commands, missing, out)
