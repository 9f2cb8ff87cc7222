"""``jetlink validate FILE...``: check JSON stream configs and TOML/JSON topology files.

The rules live in core (``jetlink.core.topology.validate_files``; with ``--live``, the plan
of ``jetlink.core.topology.plan.plan_topology`` against the live servers the files bind
their clusters to, never applied); this module parses, calls, renders. A missing or
unparsable file is a problem reported by core, not a crash. Exit status 3 when any problem
is found, 0 when every file is clean, 1 when a server does not answer.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from jetlink.cli import output
from jetlink.cli.app import App, ExitCode
from jetlink.cli.options import JsonOption

PROBLEM_COLUMNS = ("file", "object", "field", "err_code", "description")


def validate(
    ctx: typer.Context,
    files: Annotated[
        list[str],
        typer.Argument(
            metavar="FILE...",
            help="Stream config (JSON) or topology (TOML or JSON) files to check.",
            show_default=False,
        ),
    ],
    live: Annotated[bool, typer.Option(
        "--live", help="Also check the files against the live servers their clusters are "
        "bound to (or the server in force); changes nothing.")] = False,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Warnings count as problems (exit 3).")] = False,
    json_output: JsonOption = False,
) -> None:
    """Check stream configs and topology files.

    Lists every problem found: its file, the object (stream, bucket, link...), the
    configuration field, the NATS err_code and the server's description. Every problem
    of an object is listed, the server's first one first. Exits 3 when a problem is
    found, 0 when every file is clean.

    Warnings are what the server accepts but is likely a mistake: a mirror or source
    whose origin is in no file (10059; the stream waits for its origin). They are
    listed and do not change the exit status, unless --strict.

    --live also checks the files against what the servers their clusters are bound to hold
    ([clusters.NAME] server = / context =; with a server in force, the unbound clusters are
    its JetStream domains): subjects overlapping the servers' streams (10065), mirrors and
    sources whose origin is neither in the files nor on a server (10059, a warning),
    changes to existing streams that are not legal updates; nothing is changed. A server
    that does not answer: one line, exit 1.
    """
    app = App.of(ctx)
    if live:
        from jetlink.core.topology import load_files

        problems, warnings = _live_problems(app, load_files(list(files)))
    else:
        from jetlink.core.topology import check_files

        problems, warnings = check_files(list(files))
    failing = bool(problems) or (strict and bool(warnings))
    doc = {
        "files": list(files),
        "problems": [problem.to_dict() for problem in problems],
        "warnings": [w.to_dict() for w in warnings],
        "valid": not failing,
    }
    app.emit(doc, human=lambda a, d: render(a, d, strict=strict))
    if failing:
        raise typer.Exit(ExitCode.PROBLEMS)


def _live_problems(app: App, topo: Any) -> tuple[list[Any], list[Any]]:
    """(problems, warnings) of the plan that would apply ``topo`` to its live servers (none
    applied): the files' own, the bindings', and those against what the servers hold."""
    from jetlink.cli.common import topology_backend
    from jetlink.core.topology import validate_topology
    from jetlink.core.topology.plan import plan_topology, unique_problems

    if any(p.object is None for p in topo.problems):  # a file that does not read: its
        # problem (exit 3), not a file that binds nothing (its clusters are not known)
        return unique_problems(validate_topology(topo)), topo.warnings
    backend, problems = topology_backend(app, topo, live_only=True)
    if backend is None:
        return unique_problems([*validate_topology(topo), *problems]), topo.warnings
    plan = plan_topology(backend, topo)
    return plan.problems, plan.warnings


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.normpath(os.path.abspath(a)) == os.path.normpath(os.path.abspath(b))


def render(app: App, doc: dict[str, Any], *, ok_lines: bool = True,
           strict: bool | None = None) -> None:
    """OK lines for clean files (``ok_lines``: under ``strict`` a file with a warning is not
    clean), one table of problems, a one-line summary on stderr; warnings on stderr, one
    line each."""
    problems = doc["problems"]
    warnings = doc.get("warnings") or []
    if strict is None:  # the warnings made the files invalid (``valid`` false, no problem)
        strict = not doc.get("valid", True) and not problems
    failing = [*problems, *(warnings if strict else [])]
    bad = [f for f in doc["files"] if any(_same_file(f, str(p["file"])) for p in failing)]
    for path in doc["files"] if ok_lines else ():
        if path not in bad:
            output.line(app, f"{path}: OK")
    render_warnings(app, warnings)
    more = f", {_plural(len(warnings), 'warning')}" if warnings else ""
    if not problems:
        if strict and warnings:
            output.line(app, f"{_plural(len(bad), 'file')} not valid: "
                             f"{_plural(len(warnings), 'warning')}, problems under --strict")
        if warnings:
            output.notice(app, _plural(len(warnings), "warning"))
        return
    if output.stdout_is_terminal():
        rows = [_row(p) for p in problems]
        output.table(app, PROBLEM_COLUMNS, rows, no_wrap=("file", "err_code"))
    else:
        # Piped or redirected: one line per problem, like a compiler, easy to grep.
        for p in problems:
            code = f" ({p['err_code']})" if p.get("err_code") else ""
            where = ": ".join(str(p[k]) for k in ("file", "object", "field") if p.get(k))
            detail = f": {p['detail']}" if p.get("detail") else ""
            output.line(app, f"{where}: {p['description']}{code}{detail}")
    # (under --strict a file with a warning only is not valid either: counted)
    places = {str(p["file"]) for p in failing}
    # what is not a file (the data directory, the live servers) is named as itself
    others = sorted(w.strip("<>") for w in places if w.startswith("<") and w.endswith(">"))
    n_files = len(places) - len(others)
    where = " and ".join(([_plural(n_files, "file")] if n_files else [])
                         + [f"the servers {o}" if "://" in o else f"the {o}"
                            for o in others])
    output.notice(app, f"{_plural(len(problems), 'problem')} in {where}{more}")


def render_warnings(app: App, warnings: list[dict[str, Any]]) -> None:
    """``FILE: OBJECT: FIELD: warning: DESCRIPTION (CODE)`` on stderr, one per warning."""
    for w in warnings:
        code = f" ({w['err_code']})" if w.get("err_code") else ""
        where = ": ".join(str(w[k]) for k in ("file", "object", "field") if w.get(k))
        output.notice(app, f"{where}: warning: {w['description']}{code}")


def _row(problem: dict[str, Any]) -> list[str]:
    # Plain strings: err_code 10034 stays "10034" (no thousands separator); 0 / null is "-".
    row = [str(problem.get(column) or "-") for column in PROBLEM_COLUMNS]
    if problem.get("detail"):
        row[-1] += f" ({problem['detail']})"
    return row


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
