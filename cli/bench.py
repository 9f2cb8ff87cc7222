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


def render(app: App, result: dict[str, Any]) -> None:
    output.kv_block(app, result)


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
