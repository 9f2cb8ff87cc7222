"""``jetlink spark verify``: compare two streams or topics."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from jetlink.cli import output
from jetlink.cli.app import App
from jetlink.cli.options import JsonOption
from jetlink.cli.spark_session import (
    ConfOpt,
    MasterOpt,
    PropsOpt,
    check_addresses,
    check_inputs,
    job_runner,
    session_maker,
    with_progress,
)

_TITLES = {
    "missing_in_a": "Missing in A (in B only)",
    "missing_in_b": "Missing in B (in A only)",
    "different": "Different",
}


def _seqs(side: dict[str, Any] | None) -> str:
    if not side or not side["messages"]:
        return "-"
    return f"{side['first_seq']}..{side['last_seq']}"


def _of(shown: int, total: int) -> str:
    return f" (first {shown} of {output.comma(total)})" if shown < total else ""


def _key(entry: dict[str, Any], by: str) -> list[Any]:
    return [entry["partition"], entry["seq"]] if by == "partition" else [entry["seq"]]


def _titled(app: App, title: str, columns: list[str], rows: list[list[Any]]) -> None:
    """A blank line, the title on a line of its own (never wrapped to the table's width),
    the table."""
    output.line(app)
    output.line(app, title)
    output.table(app, columns, rows)


def _human(app: App, d: dict[str, Any]) -> None:
    a, b, totals, by = d["a"], d["b"], d["totals"], d["by"]
    times = " (times not compared)" if d["ignore_time"] else ""
    if d["equal"]:
        output.line(app, f"{a['address']} and {b['address']} are identical: "
                         f"{output.plural(a['messages'], 'message')}{times}")
        return
    output.line(app, f"{a['address']} and {b['address']} differ{times}")
    noun = "subjects" if by == "subject" else "partitions"
    output.kv_block(app, {
        "A": f"{a['address']}: {output.comma(a['messages'])} messages, sequences {_seqs(a)}",
        "B": f"{b['address']}: {output.comma(b['messages'])} messages, sequences {_seqs(b)}",
        "Matching": totals["matching"],
        "Missing in A": totals["missing_in_a"],
        "Missing in B": totals["missing_in_b"],
        "Different": totals["different"],
        f"Differing {noun}": totals["groups"],
    })
    if d["groups"]:
        rows = []
        for g in d["groups"]:
            row: list[Any] = [str(g[by])]
            for s in (g["a"], g["b"]):
                row += ([s["messages"], _seqs(s), s["checksum"]] if s else ["-", "-", "-"])
            rows.append(row)
        _titled(app, f"{noun.capitalize()} that differ"
                f"{_of(len(d['groups']), totals['groups'])}",
                [by.capitalize(), "A msgs", "A seqs", "A checksum", "B msgs", "B seqs",
                 "B checksum"], rows)
    lead = ["Partition", "Seq"] if by == "partition" else ["Seq"]
    for kind in ("missing_in_a", "missing_in_b", "different"):
        entries = d[kind]
        if not entries:
            continue
        title = _TITLES[kind] + _of(len(entries), totals[kind])
        if kind == "different":
            cols = lead + (["Subject A", "Subject B"] if by == "subject" else []) + ["Fields"]
            rows = [_key(e, by) + ([e["subject_a"], e["subject_b"]] if by == "subject" else [])
                    + [", ".join(e["fields"])] for e in entries]
        else:
            cols = lead + (["Subject"] if by == "subject" else [])
            rows = [_key(e, by) + ([e["subject"]] if by == "subject" else []) for e in entries]
        _titled(app, title, cols, rows)


def _check_live_inputs(js: Any, a: str, b: str) -> None:
    """Each stream of the live server ``js`` that A or B names is there, before Spark starts
    (a driver takes seconds): a ``store:`` address is a usage error, a missing stream the
    server's error naming the input."""
    from jetlink.cli.common import usage
    from jetlink.core.errors import JetlinkError
    from jetlink.sparkops.verify import live_name_problem

    for what, text in (("A", a), ("B", b)):
        if text.startswith("parquet:"):
            continue
        problem = live_name_problem(js, text, what)
        if problem is not None:
            raise usage(problem)
        try:
            js.stream_info(text)
        except JetlinkError as err:
            rest = err.detail or ""  # (the name, with a hint when one is close)
            rest = rest[len(text):] if rest.startswith(text) else (f"; {rest}" if rest else "")
            err.detail = f"{what} {text}@{js.where}{rest}"
            raise


def _check_store_inputs(app: App, a: str, b: str) -> None:
    """A and B of the data directory are there, and of one kind when both are the store's
    (a stream is not compared with a topic), before Spark starts."""
    from jetlink.core.errors import JetlinkError
    from jetlink.sparkops.io import parse_address
    from jetlink.sparkops.verify import store_kind_mismatch

    check_inputs(app, {"A": [a], "B": [b]}, meta=False)
    mismatch = store_kind_mismatch(parse_address(a, app.cluster, what="A"),
                                   parse_address(b, app.cluster, what="B"))
    if mismatch:
        raise JetlinkError(mismatch)


def register_commands(spark_app: typer.Typer) -> None:
    """Add this module's commands to the ``jetlink spark`` group."""

    @spark_app.command("verify")
    def verify(
        ctx: typer.Context,
        a: Annotated[str, typer.Argument(
            metavar="A", help="store:[CLUSTER/]STREAM, store:[CLUSTER/]topic/TOPIC or "
            "parquet:PATH; with a live server in force, a stream NAME of that server or "
            "parquet:PATH.")],
        b: Annotated[str, typer.Argument(
            metavar="B", help="The input to compare with A (same forms).")],
        ignore_time: Annotated[bool, typer.Option(
            "--ignore-time", help="Do not compare the messages' timestamps.")] = False,
        limit: Annotated[int, typer.Option(
            "--limit", metavar="N", min=0, max=2**31 - 1,  # (Spark's limit takes an Int)
            help="List at most N differences of each kind.")] = 20,
        master: MasterOpt = "local[*]",
        conf: ConfOpt = None,
        properties_file: PropsOpt = None,
        json_output: JsonOption = False,
    ) -> None:
        """Compare two streams or topics.

        Messages are matched by sequence (topic records by partition and offset); a pair
        differs when its subject, key, headers, payload or timestamp differ (--ignore-time
        leaves timestamps out). Prints the counts and sequence ranges of both sides, the
        subjects (partitions) whose count, range or checksum differ, and the first N
        messages missing on each side or different. Exit status 1 when A and B differ.

        With a live server in force (--server, NATS_URL, a context) A and B may name streams
        of that server: each is exported first (as stream export does: one consistent cut,
        sequences, times and headers as stored) into a temporary dataset on this machine,
        which the job reads (a local master, or executors sharing this filesystem), so a
        live mirror is compared with its live origin.
        """
        from jetlink.cli.common import backend, make_clock
        from jetlink.sparkops.verify import verify as run_verify

        app = App.of(ctx)
        check_addresses(app, {"A": [a], "B": [b]})

        def on_server(js: Any) -> tuple[Any, Any]:  # streams of the live server in force
            from jetlink.sparkops.run import Runner

            _check_live_inputs(js, a, b)
            return js, Runner(session_maker(master, conf, properties_file), None,
                              make_clock(), app.cluster)

        def on_data_dir(_dd: Any) -> tuple[Any, Any]:  # inputs there before Spark starts
            _check_store_inputs(app, a, b)
            return None, job_runner(app, master, conf, properties_file)

        live, runner = backend(app).either(data_dir=on_data_dir, server=on_server)

        def job() -> dict[str, Any]:
            return run_verify(runner, a, b, ignore_time=ignore_time, limit=limit, live=live)

        if app.json or not output.stdout_is_terminal():
            report = job()
        else:
            report = with_progress(job)
        output.emit(app, report, _human)
        if not report["equal"]:
            raise typer.Exit(1)
