"""``jetlink cluster add|ls|rm``: the clusters of a data directory.

A data directory (``--data-dir``) holds one SQLite database per cluster; the cluster
``local`` is created on first use, any other is added with ``cluster add``. The store is
``jetlink.core.store.DataDir``; this module parses, calls it and renders.

It also holds :func:`open_jetstream`, the one place the stream / pub / sub / consumer verbs
open the engine of the addressed cluster (``--cluster``), and :func:`make_clock`, the clock
they run with (tests replace it with a manual clock).
"""

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from jetlink.cli import output
from jetlink.cli.app import App
from jetlink.cli.options import JsonOption

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.clock import Clock
    from jetlink.core.jetstream import JetStream

cluster_app = typer.Typer(
    name="cluster",
    help="Manage the clusters of the data directory.\n\nEach cluster is one SQLite database "
    "(<data-dir>/<name>.db). The cluster 'local' is created on first use; address another "
    "one with the global option --cluster NAME.",
    no_args_is_help=True,
)

KINDS = ("nats", "kafka")


# -- the engine of the addressed cluster ----------------------------------------------------


def make_clock() -> "Clock":
    """The clock every engine call runs with (tests put a ManualClock here)."""
    from jetlink.core.clock import SystemClock

    return SystemClock()


def now_ns() -> int:
    """The engine clock's time (what "3s ago" and --since are measured against)."""
    return make_clock().now_ns()


def _close_with_command(resource: Any) -> None:
    """Close ``resource`` (a DataDir) when the running command ends."""
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(resource.close)


def data_dir(app: App) -> Any:
    """The data directory of ``--data-dir`` (its databases are closed with the command)."""
    from jetlink.core.store import DataDir

    store = DataDir(app.data_dir)
    _close_with_command(store)
    return store


def open_jetstream(app: App) -> "JetStream":
    """The JetStream API of the cluster named by ``--cluster`` (``local`` is created on
    first use; another name must have been added with ``jetlink cluster add``)."""
    from jetlink.core.jetstream import JetStream

    cluster = data_dir(app).open(app.cluster)
    return JetStream(cluster, make_clock())


def to_doc(value: Any) -> Any:
    """An engine value as its JSON document (``to_json()``), dataclasses as dicts."""
    for method in ("to_json", "to_dict"):
        fn = getattr(value, method, None)
        if callable(fn):
            return fn()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


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
        for doc in docs:
            output.line(app, doc["name"])
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
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Remove without asking for confirmation.")
    ] = False,
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
    app.emit({"success": True}, human=lambda a, d: output.line(a, f"Cluster {name} was removed"))


def register(app: typer.Typer) -> None:
    app.add_typer(cluster_app, name="cluster")
