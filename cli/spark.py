"""``jetlink spark ...``: bulk replication jobs on Spark (sparkops/).

The only command group that imports jetlink.sparkops (and so pyspark), inside its command
bodies. Each job runs on ``--master`` (default ``local[*]``) with ``--conf k=v`` and
``--properties-file``, or in the session spark-submit gives it; it prints one summary (rows in,
rows out, seconds, rows/s, the cursors set), a JSON document with --json, and a progress bar
fed by Spark's status tracker on a terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import common, output
from jetlink.cli.app import App
from jetlink.cli.common import usage
from jetlink.cli.options import JsonOption, config_option
from jetlink.cli.spark_session import (
    ConfOpt,
    MasterOpt,
    PropsOpt,
    check_addresses,
    check_inputs,
    check_output,
    interrupt_said,
    job_runner,
    with_progress,
)

spark_app = typer.Typer(
    name="spark",
    help="Run bulk replication jobs on Spark.\n\nEach job seeds a new target from a large "
    "history (the embedded store or Parquet) with exactly what the pump would store, then "
    "sets the agreement's cursor so that online replication continues from there.",
    no_args_is_help=True,
)


@spark_app.callback()
def _spark(ctx: typer.Context) -> None:
    """Run bulk replication jobs on Spark."""
    from jetlink.cli.common import need_spark_extra

    if not ctx.resilient_parsing:
        need_spark_extra(ctx.command_path + (f" {ctx.invoked_subcommand}"
                                             if ctx.invoked_subcommand else ""))

TargetConfigOpt = Annotated[Path | None, config_option(
    "A StreamConfig JSON for a target the job creates (limits, storage, ...).")]


def _run(app: App, job: Any) -> None:
    """Run ``job()`` (a Summary) with a progress bar when stderr is a terminal (where the bar
    goes, as every bar: output.progress's rule), then print the summary."""
    summary = interrupt_said(
        app, lambda: job() if app.json or not output.stderr_is_terminal() else with_progress(job))
    # the job is done and its target written: an interrupt now would only cut the summary
    # short, and a script must not read a finished job as an interrupted one (exit 130)
    from jetlink.core.interrupts import ignored_from_now

    ignored_from_now()
    doc = summary.to_json()

    def human(_app: App, d: dict[str, Any]) -> None:
        output.kv_block(_app, {
            "Job": d["job"], "Target": d["target"] + (f" (also {d['output']})"
                                                     if d["output"] and d["output"] !=
                                                     d["target"] else ""),
            "Rows in": output.comma(d["rows_in"]), "Rows out": output.comma(d["rows_out"]),
            "Seconds": f"{d['seconds']:.2f}",
            "Rows/s": (output.comma(int(d["rows_per_second"])) if d["rows_per_second"] >= 100
                       else f"{d['rows_per_second']:.1f}"),
            "Cursors": ", ".join(f"{c['origin']} at {c['cursor']}" for c in d["cursors"])
            or "none (written to a lake)"})

    output.emit(app, doc, human)


def _config(path: Path | None, type_name: str = "StreamConfig") -> dict[str, Any] | None:
    """The --config file's JSON object (a document of another kind: the server's 10025)."""
    if path is None:
        return None
    from jetlink.core.config.codec import require_object

    return require_object(common.read_json_file(path), type_name)


@spark_app.command("mirror")
def mirror(
    ctx: typer.Context,
    origin: Annotated[str, typer.Argument(
        metavar="ORIGIN", help="store:[CLUSTER/]STREAM or parquet:PATH.")],
    target: Annotated[str, typer.Argument(
        metavar="TARGET", help="store:[CLUSTER/]STREAM (a new mirror) or parquet:PATH.")],
    config: TargetConfigOpt = None,
    master: MasterOpt = "local[*]",
    conf: ConfOpt = None,
    properties_file: PropsOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Seed a new mirror from its origin's history.

    Origin sequences and timestamps are kept, gaps stay gaps, the mirror's filter or subject
    transforms and start options apply, then the target's limits. A TARGET in the store is
    created as a mirror of ORIGIN when absent (--config adds limits); the pump then continues
    after the last sequence written.
    """
    app = App.of(ctx)
    check_addresses(app, {"ORIGIN": [origin], "TARGET": [target]})
    check_output("TARGET", target, [origin])
    check_inputs(app, {"ORIGIN": [origin]})
    runner = job_runner(app, master, conf, properties_file, [origin])
    _run(app, lambda: runner.mirror(origin, target, config=_config(config)))


@spark_app.command("source")
def source(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(
        metavar="TARGET", help="store:[CLUSTER/]STREAM: the sourcing stream (new or empty).")],
    origins: Annotated[list[str], typer.Option(
        "--from", metavar="ORIGIN", help="An origin: store:[CLUSTER/]STREAM or parquet:PATH "
        "(repeatable).")],
    transform: Annotated[list[str] | None, typer.Option(
        "--transform", metavar="SRC=DEST",
        help="A subject transform of every source of a new TARGET (repeatable).")] = None,
    config: TargetConfigOpt = None,
    master: MasterOpt = "local[*]",
    conf: ConfOpt = None,
    properties_file: PropsOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Seed a new sourcing stream from its origins.

    Filters and the first matching transform apply, Nats-Msg-Id duplicates inside the
    duplicate window are dropped, messages get new dense sequences in the pump's order
    (origin time, then origin name, then origin sequence) with a Nats-Stream-Source header,
    then the target's limits apply.
    """
    from jetlink.core.transform import TransformError, compile_transform, validate_mapping

    app = App.of(ctx)
    pairs = []
    for t in transform or []:
        src, sep, dest = t.partition("=")
        if not sep or not src or not dest:
            raise usage(f"--transform {t!r}: expected SRC=DEST")
        try:  # the server's transform rules, before a JVM starts
            validate_mapping(src, dest)
            compile_transform(src, dest)
        except TransformError as err:
            raise usage(f"--transform {t!r}: {err} (a source subject transform: "
                        "SRC=DEST, e.g. orders.*=shipping.{{wildcard(1)}})") from None
        pairs.append((src, dest))
    check_addresses(app, {"TARGET": [target], "--from": origins})
    check_inputs(app, {"--from": origins})
    runner = job_runner(app, master, conf, properties_file, origins)
    _run(app, lambda: runner.source(target, origins, transforms=pairs, config=_config(config)))


@spark_app.command("kv-aggregate")
def kv_aggregate(
    ctx: typer.Context,
    bucket: Annotated[str, typer.Argument(
        metavar="BUCKET", help="The new aggregate bucket (or KV mirror name).")],
    source: Annotated[list[str] | None, typer.Option(
        "--source", metavar="ORIGIN[:KEYS][@CLUSTER]",
        help="An origin bucket of the aggregate, its key filters (repeatable).")] = None,
    mirror: Annotated[str | None, typer.Option(
        "--mirror", metavar="ORIGIN[@CLUSTER]", help="Make a KV mirror of ORIGIN instead.")] = None,
    keys: Annotated[list[str] | None, typer.Option(
        "--keys", metavar="KEY", help="Mirror only the keys matching this filter "
        "(repeatable; with --mirror).")] = None,
    history: Annotated[int | None, typer.Option(
        "--history", metavar="N", min=1, max=64,
        help="Revisions kept per key, 1..64 (as kv add --history).")] = None,
    writable: Annotated[bool, typer.Option(
        "--writable", help="An aggregate that also takes writes.")] = False,
    master: MasterOpt = "local[*]",
    conf: ConfOpt = None,
    properties_file: PropsOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Seed a new KV aggregate or KV mirror.

    Creates the bucket as `jetlink kv add --source/--mirror` does, then fills it from the
    origin buckets' histories: the key filters apply, `history` revisions per key are kept,
    DEL and PURGE markers are revisions like any other (a writable aggregate applies the
    PURGE rollup), and the pump continues after the job.
    """
    from jetlink.cli.kv import parse_mirror, parse_source
    from jetlink.core.config.kv import KVAggregateConfig, KVMirrorConfig

    app = App.of(ctx)
    if (mirror is None) == (not source):
        raise usage("give either --source ORIGIN... (an aggregate) or --mirror ORIGIN")
    if keys and mirror is None:
        raise usage("--keys goes with --mirror (an aggregate takes --source ORIGIN:KEYS)")
    if writable and mirror is not None:
        raise usage("--writable goes with --source (an aggregate)")
    values: dict[str, Any] = {}
    if history is not None:
        values["history"] = history
    origins: list[Any] = []
    if mirror is not None:
        origin, cluster = parse_mirror(mirror, None)
        cfg: Any = KVMirrorConfig(name=bucket, origin_bucket=origin, domain=cluster,
                                  keys=list(keys or []), **values)
        origins = [(f"--mirror {mirror}", origin, cfg.filter_source())]

        def create(kv: Any) -> Any:
            return kv.create_mirror(cfg)
    else:
        parsed = [parse_source(s) for s in source or []]
        cfg = KVAggregateConfig(bucket=bucket, origins=parsed, writable=writable, **values)
        # each origin as typed, checked before the bucket is made
        origins = [(f"--source {text}", o.resolved(i)[1], src) for i, (text, o, src) in
                   enumerate(zip(source or [], parsed, cfg.sources(), strict=True))]

        def create(kv: Any) -> Any:
            return kv.create_aggregate(cfg)

    runner = job_runner(app, master, conf, properties_file)  # (its origins checked first)
    _run(app, lambda: runner.kv(create, origins=origins))
    if mirror is not None:
        from jetlink.cli.kv import warn_renamed_mirror

        warn_renamed_mirror(app, bucket, cfg.origin_bucket)


def register(app: typer.Typer) -> None:
    from jetlink.cli import spark_topic, spark_verify

    if not any(c.name == "verify" for c in spark_app.registered_commands):  # (once: the
        # group is this module's, a second register would add its commands again)
        spark_topic.register_commands(spark_app)
        spark_verify.register_commands(spark_app)
    app.add_typer(spark_app, name="spark")
