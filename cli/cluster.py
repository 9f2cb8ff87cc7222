"""``jetlink cluster add|ls|rm|down|up``: the clusters of a data directory.

A data directory (``--data-dir``) holds one SQLite database per cluster; the cluster
``local`` is created on first use, any other is added with ``cluster add``. ``down`` and
``up`` mark a cluster unreachable and reachable again (a simulated outage: mirrors and
sources whose origin lives there report it and resume on ``up`` without loss). The store is
``jetlink.core.store.DataDir`` (opened by cli/common.py ``data_dir``); this module parses,
calls it and renders.
"""

from typing import Annotated, Any, Literal

import typer

from jetlink.cli import output
from jetlink.cli.app import App
from jetlink.cli.common import data_dir
from jetlink.cli.options import JsonOption, force_option
from jetlink.cli.output import to_doc

cluster_app = typer.Typer(
    name="cluster",
    help="Manage the clusters of the data directory.\n\nEach cluster is one SQLite database "
    "(<data-dir>/<name>.db). The cluster 'local' is created on first use; address another "
    "one with the global option --cluster NAME.",
    no_args_is_help=True,
)

KINDS = ("nats", "kafka")


# -- commands -------------------------------------------------------------------------------

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="Cluster name ([A-Za-z0-9_-]).")]


@cluster_app.command("add")
def add(
    ctx: typer.Context,
    name: NameArg,
    kind: Annotated[
        Literal["nats", "kafka"],
        typer.Option(
            "--kind",
            metavar="KIND",
            help="nats (streams, consumers, KV) or kafka (topics, groups, links).",
        ),
    ] = "nats",
    json_output: JsonOption = False,
) -> None:
    """Add a cluster to the data directory.

    Creates <data-dir>/NAME.db. Address the cluster afterwards with the global option
    --cluster NAME.
    """
    app = App.of(ctx)
    store = data_dir(app)
    info = store.add_cluster(name, kind=kind)
    if info is None:  # the store may return nothing: describe the new cluster
        info = next((c for c in store.clusters() if to_doc(c).get("name") == name), None)
    doc = to_doc(info)
    app.emit(doc, human=lambda a, d: output.line(a, f"Cluster {name} was created"))


@cluster_app.command("ls")
def ls(
    ctx: typer.Context,
    names: Annotated[
        bool, typer.Option("--names", "-n", help="Print only the cluster names.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """List the clusters of the data directory.

    With --json: a list of clusters (name, kind, down, path).
    """
    app = App.of(ctx)
    docs = [to_doc(c) for c in data_dir(app).clusters()]
    if names and not app.json:
        output.lines(app, (doc["name"] for doc in docs))
        return
    app.emit(docs, human=render_clusters)


def render_clusters(app: App, docs: list[dict[str, Any]]) -> None:
    if not docs:
        output.line(app, "No clusters defined")
        return
    rows = [
        [
            d.get("name", ""),
            d.get("kind", ""),
            "down" if d.get("down") else "up",
            str(d.get("path", "")),
        ]
        for d in docs
    ]
    output.table(app, ("Name", "Kind", "Status", "Path"), rows, title="Clusters", no_wrap=("Name",))


@cluster_app.command("rm")
def rm(
    ctx: typer.Context,
    name: NameArg,
    force: Annotated[bool, force_option("Remove")] = False,
    json_output: JsonOption = False,
) -> None:
    """Remove a cluster and all its data.

    Deletes <data-dir>/NAME.db with its streams, consumers and messages. Asks for
    confirmation on a terminal; without one, -f/--force is required.
    """
    app = App.of(ctx)
    output.confirm(
        app,
        f"Really remove cluster {name} and all its data",
        force=force,
        action=f"remove cluster {name}",
    )
    data_dir(app).remove_cluster(name)
    output.success(app, f"Cluster {name} was removed")


def _set_down(ctx: typer.Context, name: str, down: bool) -> None:
    app = App.of(ctx)
    store = data_dir(app)
    store.set_down(name, down)
    doc = to_doc(store.open(name).info())
    state = "down" if down else "up"
    app.emit(doc, human=lambda a, d: output.line(a, f"Cluster {name} is {state}"))


@cluster_app.command("down")
def down(ctx: typer.Context, name: NameArg, json_output: JsonOption = False) -> None:
    """Mark a cluster unreachable (an outage).

    Its data stays on disk. Mirrors and sources whose origin lives in NAME report the origin
    unavailable (their Error and Last Seen in stream info and stream report) and copy nothing
    until cluster up NAME; then they resume where they stopped, losing nothing. With --json:
    the cluster (name, kind, down, path, created).
    """
    _set_down(ctx, name, True)


@cluster_app.command("up")
def up(ctx: typer.Context, name: NameArg, json_output: JsonOption = False) -> None:
    """Mark a cluster reachable again.

    Ends a cluster down NAME: its mirrors and sources resume where they stopped (the
    command itself runs one replication step; jetlink replicate copies any backlog). With
    --json: the cluster (name, kind, down, path, created).
    """
    _set_down(ctx, name, False)


def register(app: typer.Typer) -> None:
    app.add_typer(cluster_app, name="cluster")
