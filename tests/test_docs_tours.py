"""The documentation's tours run as written: each `$ jetlink ...` line of a page's first
console block, in order, on a fresh data directory, exits 0 and prints the lines the page
shows after it (those it shows: a page may leave some out)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def tour(page: str) -> list[tuple[list[str], list[str]]]:
    """The first console block of ``page``: per ``$ jetlink`` command (continuation lines
    joined, a trailing ``# comment`` dropped), its arguments and the lines shown after it."""
    text = (DOCS / page).read_text(encoding="utf-8")
    block = text.split("```console\n", 1)[1].split("```", 1)[0]
    steps: list[tuple[list[str], list[str]]] = []
    pending = ""
    for line in block.splitlines():
        if pending:
            pending += " " + line.strip()
        elif line.startswith("$ "):
            pending = line[2:]
        else:
            if steps and line.strip():
                steps[-1][1].append(line)
            continue
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        words = shlex.split(pending, comments=True)
        pending = ""
        assert words[0] == "jetlink", words
        steps.append((words[1:], []))
    return steps


@pytest.mark.parametrize("page", ["mirror-topics.md"])
def test_a_tour_runs_as_written(jl, page):
    steps = tour(page)
    assert len(steps) >= 5
    for args, shown in steps:
        if args[:2] == ["cluster", "add"] and "&&" in args:  # two commands on one line
            first = args[:args.index("&&")]
            second = args[args.index("&&") + 2:]
            for one in (first, second):
                r = jl(*one)
                assert r.exit_code == 0, (one, r.stdout, r.stderr)
            continue
        r = jl(*args)
        assert r.exit_code == 0, (args, r.stdout, r.stderr)
        out = r.stdout.splitlines()
        for line in shown:
            if "..." in line:  # a line the page cut short
                assert any(o.startswith(line.split("...")[0].rstrip()) for o in out), (
                    args, line, out)
            else:
                assert line in out, (args, line, out)
