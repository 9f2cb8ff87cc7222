"""What the ``jetlink spark`` verbs share (cli/spark.py, cli/spark_topic.py and
cli/spark_verify.py register them): the ``--master`` / ``--conf`` / ``--properties-file``
options, the SparkSession they make (:func:`session`), a job runner on it
(:func:`job_runner`) and the progress bar of a running job (:func:`with_progress`).
jetlink.sparkops (and so pyspark) is imported inside the functions only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import common, output
from jetlink.cli.app import App

MasterOpt = Annotated[str, typer.Option(
    "--master", metavar="URL", help="Spark master: local[*], spark://HOST:PORT, yarn, k8s://...")]
ConfOpt = Annotated[list[str] | None, typer.Option(
    "--conf", metavar="K=V", help="A Spark configuration property (repeatable).")]
PropsOpt = Annotated[Path | None, typer.Option(
    "--properties-file", metavar="FILE", exists=True, dir_okay=False,
    help="A Spark properties file (spark-defaults.conf format).")]


def session(master: str, conf: list[str] | None, props: Path | None,
            rows: int | None = None) -> Any:
    """The SparkSession of --master / --conf / --properties-file (a bad pair: exit 2);
    ``rows``: the job's input rows when known (a small job starts a faster JVM)."""
    return session_maker(master, conf, props, rows)()


def session_maker(master: str, conf: list[str] | None, props: Path | None,
                  rows: int | None = None) -> Any:
    """:func:`session`'s options checked now (a bad pair or master: exit 2; a spark://
    master none of whose addresses answers: exit 1), the session made when the function
    returned is called (a job refused before that starts no driver)."""
    from jetlink.core.errors import JetlinkError
    from jetlink.sparkops.session import (
        SparkConfError,
        SparkOptions,
        get_session,
        master_form_error,
        master_unreachable,
        under_spark_submit,
    )

    opts = SparkOptions(master=master, conf=list(conf or []),
                        properties_file=str(props) if props else None, expected_rows=rows)
    try:
        opts.settings()
    except SparkConfError as e:
        raise common.usage(str(e)) from None
    bad = None if under_spark_submit() else master_form_error(master)
    if bad:
        raise common.usage(bad)
    why = master_unreachable(master)
    if why:
        what = "no YARN ResourceManager" if master == "yarn" else "no Spark master"
        raise JetlinkError(f"--master {master}: {what} answers ({why}); nothing was "
                           "started", field="master")
    return lambda: get_session(opts)


def check_addresses(app: App, named: dict[str, list[str]]) -> None:
    """Each address argument (``{"TARGET": ["store:east/M"], "--from": [...]}``) checked
    before Spark starts: a malformed one is a usage error (exit status 2) naming it and the
    rule (sparkops/io.py ``parse_address``, the rule the job reads them by)."""
    import os

    from jetlink.sparkops.io import AddressError, parse_address

    parsed: dict[str, list[Any]] = {}
    for what, texts in named.items():
        for text in texts:
            try:
                parsed.setdefault(what, []).append(parse_address(text, app.cluster, what=what))
            except AddressError as err:
                raise common.usage(str(err)) from None

    def same(a: Any, b: Any) -> bool:
        if a.kind != b.kind:
            return False
        if a.kind == "parquet":
            return os.path.abspath(os.path.expanduser(a.path)) == \
                os.path.abspath(os.path.expanduser(b.path))
        return (a.cluster, a.name) == (b.cluster, b.name)

    for target in parsed.get("TARGET", []):
        for what, addresses in parsed.items():
            if what != "TARGET" and any(same(target, a) for a in addresses):
                raise common.usage(f"TARGET {target} is also {what}: a job writes a new "
                                   "target from its origins, never into one of them")
    # a cluster the data directory does not have, named with the argument that names it
    from jetlink.core.errors import NotFoundError, not_found
    from jetlink.core.store import DataDir

    store = DataDir(app.data_dir, create=False)
    known = store.cluster_names() if app.data_dir.is_dir() else []
    for what, addresses in parsed.items():
        for a in addresses:
            if a.kind != "parquet" and a.cluster != "local" and a.cluster not in known:
                raise not_found(NotFoundError(f"{what} {a}: cluster {a.cluster} not found",
                                              field=what), a.cluster, known)


def check_inputs(app: App, named: dict[str, list[str]], *, meta: bool = True) -> None:
    """Each input address (``{"ORIGIN": ["store:O"]}``) there before Spark starts: a stream
    or topic of the store, a local dataset (sparkops/io.py ``check_input``, read only: a
    refused job creates nothing, not the data directory)."""
    from jetlink.sparkops.io import check_input, parse_address

    dd = common.data_dir(app)
    for what, texts in named.items():
        for text in texts:
            check_input(dd, parse_address(text, app.cluster, what=what), meta=meta)


def check_output(what: str, text: str, inputs: Sequence[str] = ()) -> None:
    """A ``parquet:`` output on the local filesystem that cannot be written (no directory can
    be made there, or a dataset or an unfinished job's files are there already), or that is
    inside one of the job's ``parquet:`` inputs (its files would then be read as that
    dataset's rows by every later reader): one line naming it, why and how to clear it
    (exit status 1), before Spark starts."""
    import os

    from jetlink.core.errors import JetlinkError
    from jetlink.core.lake import local_path
    from jetlink.sparkops.io import occupied_output, unwritable_output

    if text.startswith("parquet:"):
        path = text[len("parquet:"):]
        why = unwritable_output(path) or occupied_output(path)
        if why:
            raise JetlinkError(f"{what} {text!r}: {why}; nothing was started", field=what)
        out = local_path(path)
        for given in inputs:
            inp = local_path(given[len("parquet:"):]) if given.startswith("parquet:") else None
            if out is not None and inp is not None and \
                    os.path.commonpath([out, inp]) == inp:
                raise JetlinkError(f"{what} {text!r}: inside the dataset {given} the job "
                                   "reads: its files would be read as that dataset's rows "
                                   "by every later reader; give a path outside it; nothing "
                                   "was started", field=what)


def job_runner(app: App, master: str, conf: list[str] | None, props: Path | None,
               inputs: list[str] | None = None) -> Any:
    """A job runner on the session of --master / --conf / --properties-file; a target it
    creates gets the defaults ``jetlink stream add --defaults`` gives (cli/stream_flags.py
    ``with_add_defaults``)."""
    from jetlink.cli.stream_flags import with_add_defaults
    from jetlink.sparkops.run import Runner
    from jetlink.sparkops.session import input_rows_hint

    dd = common.data_dir(app)
    rows = input_rows_hint(inputs, dd, app.cluster) if inputs else None
    return Runner(session_maker(master, conf, props, rows), dd, common.make_clock(),
                  app.cluster, defaults=with_add_defaults)


def with_progress(job: Any) -> Any:
    """``job()`` under a progress bar on stderr (tasks of the running Spark stages)."""
    import sys

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from jetlink.cli.console import make_console
    from jetlink.sparkops.progress import watch

    console = make_console(sys.stderr)
    with Progress(TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.fields[tasks]}"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("Spark", total=None, tasks="")

        def update(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total or None,
                       tasks=f"{done}/{total} tasks" if total else "",
                       description=f"Spark: {label}" if label else "Spark")

        with watch(update):
            return job()


def interrupt_said(app: App, run: Any) -> Any:
    """``run()``'s result; stopped by Ctrl-C, what the job left said on stderr (the job's
    own words when it knows them: a store target it created removed, a mirror topic's
    records kept), and with --json one document saying so, then exit 130."""
    from jetlink.sparkops.session import as_interrupt

    try:
        return run()
    except BaseException as exc:  # (py4j's clean-up after an interrupt failing is it too)
        stop = as_interrupt(exc)
        if stop is None:
            raise
    # the jobs say what they left once they write (sparkops/run.py); before that (the
    # driver starting, the origins read, the target planned) nothing was written
    said = getattr(stop, "left", None) or ("the job stopped before it wrote anything: "
                                           "nothing was changed (run the job again)")
    output.notice(app, f"jetlink: interrupted: {said}")
    if app.json:
        output.print_json({"interrupted": True, "description": said})
    raise stop
