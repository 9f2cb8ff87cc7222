"""What the command modules share besides rendering (that is cli/output.py).

- :func:`open_jetstream`, the one place the stream / pub / sub / consumer verbs open the
  engine of the addressed cluster (``--cluster``); :func:`data_dir`, the data directory
  (``--data-dir``) the cluster verbs manage; :func:`make_clock`, the clock the engine runs with
  (tests replace it with a manual clock), and :func:`now_ns`, its time;
- :func:`replicate_step`, the one place commands replicate: when a command has written to a
  cluster database, one bounded pump step (``jetlink.core.replication.pump``) runs as the
  command ends, so a message published to an origin is in its mirror when the command returns
  (docs/replication.md "Each mutating CLI command runs one bounded step"). No command calls
  it: :func:`data_dir` arranges it for every command that opens the store;
- :func:`context_in_force`, the context in force (read once per invocation), and
  :func:`named_context`, the context ``--context`` or JETLINK_CONTEXT names;
- :func:`rest_settings`, whether the links / mirrors verbs call a REST API v3 endpoint
  (``--rest-url``, JETLINK_REST_URL or the context's ``rest_url``) instead of the engine,
  and :func:`rest_api_root`, that endpoint's API root;
- :func:`usage`, a usage error (exit status 2) for what the argument parser cannot catch;
- :func:`read_json_file`, a JSON document from a ``--config FILE``;
- :func:`user_metadata`, the metadata keys a user set (natscli hides and never edits the
  ``_nats.*`` keys the server sets itself).

Not a command module: imported by command bodies only, never by ``jetlink --help``. Core is
imported inside the functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import typer

    from jetlink.cli.app import App
    from jetlink.core.clock import Clock
    from jetlink.core.contexts import Context
    from jetlink.core.api import JetStreamAPI
    from jetlink.core.errors import JetlinkError, UsageError
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir


# -- the engine of the addressed cluster ----------------------------------------------------


def make_clock() -> Clock:
    """The clock every engine call runs with (tests put a ManualClock here)."""
    from jetlink.core.clock import SystemClock

    return SystemClock()


def now_ns() -> int:
    """The engine clock's time (what "3s ago" and --since are measured against)."""
    return make_clock().now_ns()


_STORE_KEY = "jetlink.data_dir"
_NO_STEP_KEY = "jetlink.no_replicate_step"


def data_dir(app: App, *, step: bool = True) -> DataDir:
    """The data directory of ``--data-dir``: one DataDir per command (every call of one
    command returns the same), closed when the command ends, after :func:`replicate_step`
    (``step=False``: none, for ``jetlink replicate`` which pumps itself)."""
    from typer._click.globals import get_current_context

    from jetlink.core.store import DataDir

    ctx = get_current_context(silent=True)
    if getattr(app, "target", None) is not None:
        raise embedded_only(app, ctx)
    if ctx is None:  # called outside a command (a test): the caller closes it
        return DataDir(app.data_dir)
    meta = ctx.meta  # shared by every context of this invocation
    if not step:
        meta[_NO_STEP_KEY] = True
    store = meta.get(_STORE_KEY)
    if store is None or store.path != app.data_dir:
        store = DataDir(app.data_dir, create=not reads_only(ctx))
        meta[_STORE_KEY] = store
        ctx.call_on_close(store.close)  # close callbacks run last-in first-out:

        def step_at_close() -> None:  # ... so the step runs first
            if not meta.get(_NO_STEP_KEY):
                replicate_step(app, store)

        ctx.call_on_close(step_at_close)
    return store


# Verbs that only read (their last word): their data directory creates nothing, not the
# directory, not the default cluster (core/store/datadir.py DataDir ``create``).
READ_VERBS = frozenset({"ls", "info", "report", "get", "view", "subjects", "history", "keys",
                        "watch", "describe", "show", "sub", "export"})


def reads_only(ctx: Any) -> bool:
    """Whether the command of ``ctx`` only reads the data directory."""
    return ctx is not None and ctx.info_name in READ_VERBS


def check_write_count(app: App, count: int, msg_bytes: int) -> None:
    """Refuse ``--count`` before anything is written (core/counts.py): more than the
    maximum per command (exit 2), or, on the embedded engine, more than the data
    directory's filesystem has room for (exit 1)."""
    from jetlink.core.counts import check_count, check_space

    check_count(count)
    if getattr(app, "target", None) is None:
        check_space(count, msg_bytes, app.data_dir)


def embedded_only(app: App, ctx: Any) -> JetlinkError:
    """The refusal of a verb that works on the embedded engine's data directory only, when
    a live server is in force."""
    from jetlink.core.errors import JetlinkError

    verb = ctx.command_path if ctx is not None else "this command"
    target = app.target
    return JetlinkError(
        f"{verb} works on the embedded engine's data directory: it is not available with a "
        f"live server ({target.url} from {target.origin}); leave out the server settings to "
        "use the embedded engine", field="server")


def open_jetstream(app: App) -> JetStreamAPI:
    """The JetStream API the command acts on (core/api.py), chosen once per invocation: the
    live server in force (``--server``, ``NATS_URL``, a context: ``app.target``), else the
    embedded engine's cluster named by ``--cluster`` (``local`` is created on first use;
    another name must have been added with ``jetlink cluster add``). A cluster taken down
    with ``jetlink cluster down`` still serves its own clients: the drill cuts the
    replication paths out of it (a partition), so its lag keeps growing."""
    if getattr(app, "target", None) is not None:
        return live_jetstream(app)
    return embedded_jetstream(app)


def embedded_jetstream(app: App) -> JetStream:
    """The embedded engine's JetStream API of ``--cluster``, for the verbs that work on the
    data directory itself (stream export / import read and write its store in one
    snapshot); refused with a sentence when a live server is in force (:func:`data_dir`)."""
    from jetlink.core.jetstream import JetStream

    return JetStream(data_dir(app).open_kind(app.cluster, "nats", "streams"), make_clock())


def embedded_data_dir(app: App) -> Path:
    """``--data-dir`` for the verbs that open it themselves (dashboard, serve); refused
    with a sentence when a live server is in force."""
    if getattr(app, "target", None) is not None:
        from typer._click.globals import get_current_context

        raise embedded_only(app, get_current_context(silent=True))
    return app.data_dir


def open_kv(app: App) -> Any:
    """The KV API (core/kv.py KV) over the same choice as :func:`open_jetstream`: the live
    server's domains, else the data directory's clusters addressed from ``--cluster``."""
    from jetlink.core.kv import KV

    if getattr(app, "target", None) is not None:
        from jetlink.core.live.jetstream import LiveDomains

        return KV.over(LiveDomains(live_jetstream(app)), app.target.js_domain or "")
    # make_clock looked up at each call: tests replace it with a manual clock
    store = data_dir(app)
    store.open_kind(app.cluster, "nats", "Key-Value buckets")
    return KV(store, app.cluster, make_clock())


_LIVE_KEY = "jetlink.live"


def live_jetstream(app: App) -> JetStreamAPI:
    """The live server's JetStream API: one connection per command (every call of one
    command returns the same), closed when the command ends. nats-py is imported here,
    only when a server is in force."""
    from typer._click.globals import get_current_context

    from jetlink.core.live.client import connect
    from jetlink.core.live.jetstream import LiveJetStream

    ctx = get_current_context(silent=True)
    if ctx is None:  # outside a command (a test): the caller closes it
        return LiveJetStream(connect(app.target))
    js = ctx.meta.get(_LIVE_KEY)
    if js is None:
        js = ctx.meta[_LIVE_KEY] = LiveJetStream(connect(app.target))
        ctx.call_on_close(js.close)
    return js


def replicate_step(app: App, store: DataDir) -> list[Any]:
    """One bounded replication step (core/step.py ``bounded_step``) when the command wrote
    anything; returns the pump's AgreementReports. A failing step never fails the command:
    it is reported on stderr (``jetlink replicate`` shows the details)."""
    if not store.wrote():
        return []
    from jetlink.core.step import bounded_step  # only after a write: reads import no pump

    return bounded_step(store, make_clock(), lambda err: notice_step_error(app, err))[0]


def step_error_text(err: Exception) -> str:
    """The warning a failed replication step prints on stderr (commands and ``serve``)."""
    return f"jetlink: warning: replication step failed: {err}"


def notice_step_error(app: App, err: Exception) -> None:
    from jetlink.cli.output import notice

    notice(app, step_error_text(err))


# -- the context in force ------------------------------------------------------------------

_CONTEXT_KEY = "jetlink.context"


def named_context(ctx: typer.Context) -> tuple[str | None, str]:
    """The context the global option --context or JETLINK_CONTEXT names (None: none), and
    where its name comes from: ``--context`` or JETLINK_CONTEXT (also when a group runs
    without the root, in tests: then JETLINK_CONTEXT is read here)."""
    import os

    from typer._click.core import ParameterSource

    from jetlink.cli.app import ENV_CONTEXT

    root = ctx.find_root()
    if "context" not in root.params:
        return os.environ.get(ENV_CONTEXT, "") or None, ENV_CONTEXT
    from_cli = root.get_parameter_source("context") == ParameterSource.COMMANDLINE
    return root.params["context"], "--context" if from_cli else ENV_CONTEXT


def context_in_force(ctx: typer.Context) -> Context | None:
    """The context in force: the one :func:`named_context` names, else the selected one,
    else None (``ContextStore.in_force``: an unknown name or a broken file is a
    JetlinkError). Read once per invocation: kept in ``ctx.meta``, which every context of
    the invocation shares."""
    meta = ctx.meta
    if _CONTEXT_KEY not in meta:
        from jetlink.core.contexts import ContextStore

        name, source = named_context(ctx)
        meta[_CONTEXT_KEY] = ContextStore().in_force(name, source=source)
    found: Context | None = meta[_CONTEXT_KEY]
    return found


# -- --rest-url: where the links / mirrors verbs send their calls ----------------------------

REST_KEY = "jetlink.rest"


@dataclass(frozen=True)
class RestSettings:
    """The REST options of the links / mirrors groups (cli/options.py ``rest_callback``)."""

    url: str | None = None
    token: str | None = None
    api_key: str | None = None
    api_secret: str | None = None
    insecure: bool = False


def rest_api_root(url: str) -> str:
    """The REST v3 root of ``url``: ``URL/kafka/v3``, or ``URL`` itself when its path ends
    with ``/v3`` (a REST Proxy). A URL that is not ``http(s)://HOST...`` is a usage error."""
    from urllib.parse import urlsplit

    text = (url or "").strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise usage(
            f"invalid REST URL {url!r}: expected http://HOST[:PORT] or https://HOST[:PORT]"
        )
    if parts.query or parts.fragment:
        raise usage(f"invalid REST URL {url!r}: no query or fragment allowed")
    text = text.rstrip("/")
    path = parts.path.rstrip("/")
    # The URL `jetlink serve` prints (``.../kafka/v3/clusters/{cluster}``) or a cluster's own
    # URL (``.../v3/clusters/C``): the root is what comes before ``/clusters``.
    found = _CLUSTERS_PATH.fullmatch(path)
    if found:
        return f"{parts.scheme}://{parts.netloc}{found.group(1)}"
    if path.endswith("/v3"):
        return text
    return text + "/kafka/v3"


_CLUSTERS_PATH = re.compile(r"(.*/v3)/clusters(?:/([^/]+))?")


def rest_url_cluster(url: str) -> str | None:
    """The cluster ID a REST URL names (``.../v3/clusters/C``), or None (no cluster, or the
    ``{cluster}`` placeholder `jetlink serve` prints)."""
    from urllib.parse import unquote, urlsplit

    found = _CLUSTERS_PATH.fullmatch(urlsplit((url or "").strip()).path.rstrip("/"))
    if not found or not found.group(2):
        return None
    cluster = unquote(found.group(2))
    return None if cluster.startswith("{") and cluster.endswith("}") else cluster


def _record_rest_url(ctx: Any, value: str | None) -> str | None:
    """``--rest-url`` given after a links / mirrors verb: it overrides the group's."""
    if value:
        given = ctx.meta.get(REST_KEY)
        settings = given if isinstance(given, RestSettings) else RestSettings()
        ctx.meta[REST_KEY] = replace(settings, url=value)
    return value


def rest_url_option(help: str | None = None) -> Any:
    """``--rest-url URL`` of a links / mirrors verb (the group's option, accepted after the
    verb too; same meaning)."""
    import typer

    return typer.Option(
        "--rest-url", metavar="URL", callback=_record_rest_url,
        help=help or "The group's --rest-url, given after the verb: call this REST API v3 "
        "endpoint.",
        show_default=False,
    )


def rest_settings(app: App) -> RestSettings | None:
    """The REST API the links / mirrors verbs call, or None: run on the local engine.

    The URL is ``--rest-url`` (or JETLINK_REST_URL), else the ``rest_url`` of the context in
    force (``--context NAME``, JETLINK_CONTEXT, else the selected one), else none."""
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    if ctx is None:
        return None
    given = ctx.meta.get(REST_KEY)
    settings = given if isinstance(given, RestSettings) else RestSettings()
    if settings.url:
        return settings
    if "context" not in ctx.find_root().params:  # a group run without the root (a test)
        return None
    found = context_in_force(ctx)
    if found is None or not found.rest_url:
        return None
    return replace(settings, url=found.rest_url)


# -- command-line values -------------------------------------------------------------------


def usage(message: str) -> UsageError:
    """A usage error (exit status 2) saying ``message``, for the caller to raise."""
    from jetlink.core.errors import UsageError

    return UsageError(message)


def read_json_file(path: Path) -> Any:
    """The JSON document in ``path``; an unreadable or unparsable file is a JetlinkError."""
    from jetlink.core.errors import JetlinkError

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise JetlinkError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise JetlinkError(f"{path}: not a JSON document: {exc}") from None


def user_metadata(metadata: Mapping[str, str] | None) -> dict[str, str]:
    """``metadata`` without the keys the server manages (core's rule)."""
    from jetlink.core.config.validate import user_metadata as core_user_metadata

    return core_user_metadata(metadata)


# -- following a live source (sub, kv watch) ------------------------------------------------


def follow(next_item: Any, idle_ns: int | None, poll_seconds: float) -> Any:
    """The items ``next_item(timeout)`` returns (None: nothing yet), polled every
    ``poll_seconds``, until ``idle_ns`` nanoseconds pass without an item (None: forever; the
    caller stops on Ctrl-C or its own count)."""
    import time

    last = time.monotonic_ns()
    while True:
        wait = poll_seconds
        if idle_ns is not None:
            left = (last + idle_ns - time.monotonic_ns()) / 1e9
            if left <= 0:
                return
            wait = min(wait, left)
        item = next_item(wait)
        if item is None:
            continue
        last = time.monotonic_ns()
        yield item


# -- promote / failover and consumer positions: the same choice as open_jetstream ------------


def open_site(app: App) -> Any:
    """Where a mirror is promoted (core/failover.py ``Site``): the live server in force,
    else the embedded engine's ``--cluster``."""
    if getattr(app, "target", None) is not None:
        from jetlink.core.live.promote import LiveSite

        return LiveSite(live_jetstream(app))
    from jetlink.core.promote import EmbeddedSite

    return EmbeddedSite(data_dir(app), app.cluster, make_clock())


def open_positions(app: App) -> Any:
    """The consumer positions bucket of the addressed side (core/positions.py)."""
    from jetlink.core.positions import PositionStore

    return PositionStore(open_kv(app))


# -- topology as code: the data directory or the live servers a file binds ------------------


def topology_backend(app: App, topo: Any, *, live_only: bool = False
                     ) -> tuple[Any, list[Any]]:
    """Where ``jetlink apply`` and ``jetlink validate --live`` plan a topology file
    (core/topology_apply.py): the live servers when the file binds a cluster (``server =`` /
    ``context =``) or a server is in force (``app.target``: the file's unbound clusters go
    to it), else the data directory (``live_only``: a usage error instead). Returns
    ``(backend, problems)``: the bindings' problems with backend None (nothing connected).
    The connections close when the command ends; a server that does not answer is a
    LiveError (one line, exit status 1)."""
    from jetlink.core import topology_apply as core

    target = getattr(app, "target", None)
    if target is None and not core.is_live(topo):
        if live_only:
            raise usage("--live needs a file whose clusters are bound to servers (server = "
                        '"nats://..." or context = "NAME" in [clusters.<name>]) or a server '
                        "in force (--server, NATS_URL, a context)")
        return core.EmbeddedBackend(data_dir(app), make_clock()), []
    backend, problems = core.open_live(topo, target)
    if backend is not None:
        _close_at_end(backend)
    return backend, problems


def live_export_backend(app: App, domains: list[str] | None, source: Path | None) -> Any:
    """What ``jetlink export`` reads from live servers: the bound clusters of ``source``
    (``--from FILE``), else the server in force (its JetStream, or the JetStream domains
    ``domains`` as clusters of those names). None: neither (the data directory)."""
    from jetlink.core import topology_apply as core

    if source is not None:
        from jetlink.core.errors import JetlinkError
        from jetlink.core.topology import Topology

        topo = Topology()
        topo.add_file(str(source))
        bindings, problems = core.bound_clusters(topo, domains or None)
        if problems:
            p = problems[0]
            where = ": ".join(str(x) for x in (p.file, p.object, p.field) if x)
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise JetlinkError(f"{where}: {p.description}{more}", field="from")
        if not bindings:
            raise usage(f"{source} binds no cluster{' of those names' if domains else ''} to a "
                        'server (server = "nats://..." or context = "NAME" in '
                        "[clusters.<name>]): nothing to export from")
        backend = core.LiveBackend.connect(bindings)
    else:
        target = getattr(app, "target", None)
        if target is None:
            return None
        backend = core.LiveBackend.for_target(target, domains or ())
    _close_at_end(backend)
    return backend


def _close_at_end(backend: Any) -> None:
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(backend.close)


# -- optional parts of the installation -------------------------------------------------------

SPARK_EXTRA = ("pyspark", "pyarrow", "pandas")


def need_spark_extra(what: str) -> None:
    """Refuse ``what`` (a command) with the install line when the ``spark`` extra (pyspark,
    pyarrow, pandas) is not installed; looks the modules up without importing them."""
    import importlib.util

    from jetlink.core.errors import JetlinkError

    missing = [m for m in SPARK_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        raise JetlinkError(
            f"{what} needs {', '.join(missing)}, which this installation does not have: "
            "pip install 'jetlink[spark]' (pyspark, pyarrow and pandas, about 0.7 GB)")
