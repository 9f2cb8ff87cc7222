"""What the command modules share besides rendering (that is cli/output.py).

- :func:`open_jetstream`, the one place the stream / pub / sub / consumer verbs open the
  engine of the addressed cluster (``--cluster``); :func:`data_dir`, the data directory
  (``--data-dir``) the cluster verbs manage; :func:`make_clock`, the clock the engine runs with
  (tests replace it with a manual clock), and :func:`now_ns`, its time; :func:`now_of` and
  :func:`ago`, how long before an engine document was made a time was by that clock;
- :func:`replicate_step`, the one place commands replicate: when a command has written to a
  cluster database, one bounded pump step (``jetlink.core.replication.pump``) runs as the
  command ends, so a message published to an origin is in its mirror when the command returns
  (docs/replication.md "Each mutating CLI command runs one bounded step"). No command calls
  it: :func:`data_dir` arranges it for every command that opens the store;
- :func:`context_in_force`, the context in force (read once per invocation),
  :func:`named_context`, the context ``--context`` or JETLINK_CONTEXT names, and
  :func:`target_in_force`, the live server the settings put in force (None: the engine);
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

import contextlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import typer

    from jetlink.cli.app import App
    from jetlink.core.api import JetStreamAPI
    from jetlink.core.backend import Backend
    from jetlink.core.clock import Clock
    from jetlink.core.contexts import Context
    from jetlink.core.dr.positions import PositionStore
    from jetlink.core.errors import UsageError
    from jetlink.core.jetstream import JetStream
    from jetlink.core.kv import KV
    from jetlink.core.store import DataDir


# -- the engine of the addressed cluster ----------------------------------------------------


def make_clock() -> Clock:
    """The clock every engine call runs with (tests put a ManualClock here)."""
    from jetlink.core.clock import SystemClock

    return SystemClock()


def now_ns() -> int:
    """The engine clock's time (what "3s ago" and --since are measured against)."""
    return make_clock().now_ns()


def now_of(doc: Mapping[str, Any]) -> int:
    """The time an engine document was made (its ``ts``), else the engine clock's now."""
    from jetlink.cli import output

    return output.rfc3339_ns(doc.get("ts")) or now_ns()


def ago(rfc3339: str | None, doc: Mapping[str, Any]) -> str:
    """How long before ``doc`` was made (:func:`now_of`) the time ``rfc3339`` was, as
    :func:`output.since` prints it; ``never`` for Go's zero time (natscli's ``Last ...``
    columns)."""
    from jetlink.cli import output

    last = output.rfc3339_ns(rfc3339)
    if not last:
        return "never"
    return output.since(max(now_of(doc) - last, 0))


def open_backend(app: App, *, reads: bool | None = None) -> Backend:
    """What the invocation acts on (core/backend.py): the live server in force
    (``--server``, ``NATS_URL``, a context: ``app.target``), else the data directory of
    ``--data-dir`` with the cluster of ``--cluster`` addressed. Nothing is opened before a
    command uses it; a command that only reads creates nothing (:data:`READ_VERBS`, read
    from the command's context when it runs; ``reads`` when the caller knows the verb); a
    command that wrote ends with one bounded replication step, whose failure is a warning
    on stderr, never the command's failure."""
    from jetlink.core.backend import open_backend as core_open

    return core_open(app.target, app.data_dir, app.cluster, lambda: make_clock(),
                     create=lambda: not (app.reading or app.existing
                                         or (reads_only(app.ctx) if reads is None else reads)
                                         or changes_nothing(app)),
                     # a dry run ends without the post-write step: whatever it touched (a
                     # temporary table, a transaction rolled back) is no write to follow up;
                     # nor does a verb that only reads (a schema brought up to date on
                     # opening is no write of its: it never copies while it reads)
                     step=lambda: not (dry_run(app) or only_reads(app.ctx)),
                     on_step_error=lambda err: notice_step_error(app, err),
                     on_connect=lambda: _data_dir_unused(app))


def _data_dir_unused(app: App) -> None:
    """A --data-dir typed beside a server in force, for a command that runs on the server:
    said once it reached the server (the data directory's verbs refuse the server instead,
    LiveBackend.data_dir; the ones that use both never reach it through the backend)."""
    ctx = app.ctx
    root = ctx.find_root() if ctx is not None else None
    if root is None or parameter_source(root, "data_dir") != "COMMANDLINE":
        return
    from jetlink.cli.output import notice

    notice(app, f"jetlink: notice: --data-dir {app.data_dir} is not used: {_verb(app)} runs "
                f"on the live server {app.target.shown_url} (from {app.target.origin})")


def backend(app: App) -> Backend:
    """The invocation's backend (opened by the root callback; a command run without the
    root, in a test, opens one here, closed with its command)."""
    if app.backend is None:
        app.backend = open_backend(app)
        if app.ctx is not None:
            app.ctx.call_on_close(app.backend.close)
    found: Backend = app.backend
    return found


def address_cluster(app: App, name: str) -> None:
    """Address the cluster ``name`` from now on (a Kafka tool's ``--bootstrap-server``
    naming a cluster of the data directory)."""
    app.cluster = name
    backend(app).address(name)


def data_dir(app: App, *, step: bool = True) -> DataDir:
    """The data directory of ``--data-dir``, for the verbs that work on the embedded engine
    only (refused with a sentence when a live server is in force); ``step=False``: no
    replication step when the command ends (``jetlink replicate`` pumps itself)."""
    return backend(app).data_dir(_verb(app), step=step)


def _verb(app: App) -> str:
    ctx = app.ctx
    return ctx.command_path if ctx is not None else "this command"


# Verbs that only read (their last word): their data directory creates nothing, not the
# directory, not the default cluster (core/store/datadir.py DataDir ``create``).
READ_VERBS = frozenset({"ls", "info", "report", "get", "view", "subjects", "history", "keys",
                        "watch", "describe", "show", "sub", "export", "check", "state",
                        "status", "list", "verify"})


# Groups whose every verb only reads (``server check stream|consumer|kv``).
READ_GROUPS = frozenset({"check"})

# Verbs that copy between or change objects that exist already (``replicate``, ``positions
# sync``, a mirror's promote / failover / failback / pause..., a region's fence): a data
# directory that does not exist holds none, so they create nothing either and say so, as a
# read does (``data directory ... does not exist``).
COPY_VERBS = frozenset({"replicate", "sync", "promote", "failover", "failback", "fence",
                        "pause", "resume", "truncate-and-restore", "reverse-and-start",
                        "reverse-and-pause"})

# Verbs that change objects that must exist already (a message of a stream, a key of a
# bucket, a consumer, a topic, a link, a cluster): a data directory that does not exist
# holds none of them, so they create nothing either (not the directory, not the default
# cluster) and say the directory is missing, as a read does. ``pub`` stores into a stream
# (a core publish reaches subscribers of this data directory, of which a missing one has
# none). The verbs that make objects (``add``, ``create``, ``import``, ``apply``) create.
EXISTING_VERBS = frozenset({"rm", "purge", "rmm", "del", "delete", "edit", "seal", "next",
                            "ack", "unpin", "reset", "compact", "revert", "put", "update",
                            "pub", "increment", "decrement", "incr", "decr", "copy", "alter",
                            "set", "set-offsets", "up", "down", "authorizer"})

# Verbs of a group that make an object inside another that must exist already (a consumer
# in its stream, a mirror topic on its link, a link from another cluster of the data
# directory, a group's offsets committed by consuming a topic, an ACL in a cluster's
# authorizer): a data directory that does not exist holds none, so they create nothing
# either and say the directory is missing.
EXISTING_IN = frozenset({("consumer", "add"), ("mirrors", "create"), ("links", "create"),
                         ("topic", "consume"), ("acls", "add")})

# Options that make any verb change nothing (``--dry-run``, ``--validate-only``): its data
# directory creates nothing, not the default cluster, as a read verb's (changes_nothing).
CHANGES_NOTHING = ("dry_run", "validate_only")


def reads_only(ctx: Any) -> bool:
    """Whether the command of ``ctx`` only reads the data directory, copies between objects
    it holds (:data:`COPY_VERBS`) or changes one of them (:data:`EXISTING_VERBS`): it
    creates nothing."""
    if ctx is None:
        return False
    parent = ctx.parent
    return (only_reads(ctx) or ctx.info_name in COPY_VERBS or ctx.info_name in EXISTING_VERBS
            or (parent is not None and (parent.info_name, ctx.info_name) in EXISTING_IN))


def only_reads(ctx: Any) -> bool:
    """Whether the command of ``ctx`` is one that only reads (:data:`READ_VERBS`,
    :data:`READ_GROUPS`): unlike :func:`reads_only`, copies and changes of existing objects
    are no reads here."""
    if ctx is None:
        return False
    parent = ctx.parent
    return ctx.info_name in READ_VERBS or (parent is not None
                                            and parent.info_name in READ_GROUPS)


def dry_run(app: App) -> bool:
    """Whether the command is a dry run or a validate-only request (:data:`CHANGES_NOTHING`)."""
    ctx = app.ctx
    return ctx is not None and any(ctx.params.get(p) for p in CHANGES_NOTHING)


def changes_nothing(app: App) -> bool:
    """A dry run or validate-only request (:data:`CHANGES_NOTHING`) on a data directory that
    exists: it creates nothing there, not the default cluster, as a read. (On one that does
    not exist yet it is made, so that the plan of a first `apply --dry-run` can be shown.)"""
    if not dry_run(app):
        return False
    from pathlib import Path

    return Path(app.data_dir).is_dir()


def check_write_count(app: App, count: int, msg_bytes: int) -> None:
    """Refuse ``--count`` before anything is written (core/counts.py): more than the
    maximum per command (exit 2), or more than the backend's store has room for (exit 1)."""
    from jetlink.core.counts import check_count

    check_count(count)
    backend(app).check_space(count, msg_bytes)


def open_jetstream(app: App) -> JetStreamAPI:
    """The JetStream API the command acts on (core/api.py): the live server in force, else
    the embedded engine's cluster named by ``--cluster`` (``local`` is created on first use;
    another name must have been added with ``jetlink cluster add``). A cluster taken down
    with ``jetlink cluster down`` still serves its own clients: the drill cuts the
    replication paths out of it (a partition), so its lag keeps growing."""
    return backend(app).jetstream()


def embedded_jetstream(app: App) -> JetStream:
    """The embedded engine's JetStream of ``--cluster``, for the verbs that work on the data
    directory itself (stream export / import read and write its store in one snapshot);
    refused with a sentence when a live server is in force (:func:`data_dir`)."""
    from jetlink.core.jetstream import JetStream

    return JetStream(data_dir(app).open_kind(app.cluster, "nats", "streams"), make_clock())


def embedded_data_dir(app: App) -> Path:
    """``--data-dir`` for the verbs that open it themselves (serve); refused with a
    sentence when a live server is in force."""
    return data_dir(app).path


def open_kv(app: App) -> KV:
    """The KV API (core/kv.py KV) over the same choice as :func:`open_jetstream`."""
    return backend(app).kv()


def replicate_step(app: App) -> list[Any]:
    """The post-write replication step now (core/backend.py ``Backend.step``): the pump's
    AgreementReports; a failing step never fails the command, it is reported on stderr."""
    return backend(app).step()


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

    from jetlink.cli.app import ENV_CONTEXT

    root = ctx.find_root()
    if "context" not in root.params:
        return os.environ.get(ENV_CONTEXT, "") or None, ENV_CONTEXT
    from_cli = parameter_source(root, "context") == "COMMANDLINE"
    return root.params["context"], "--context" if from_cli else ENV_CONTEXT


def parameter_source(ctx: typer.Context, name: str) -> str | None:
    """Where the value of the parameter ``name`` of ``ctx`` came from, by the name of
    Click's ParameterSource: COMMANDLINE, ENVIRONMENT, DEFAULT, DEFAULT_MAP or PROMPT (None:
    not set)."""
    source = ctx.get_parameter_source(name)
    return None if source is None else str(source.name)


def given(ctx: typer.Context, name: str) -> bool:
    """Whether the user gave the parameter ``name`` (command line, environment, prompt),
    rather than leaving its default."""
    return parameter_source(ctx, name) not in (None, "DEFAULT", "DEFAULT_MAP")


def context_in_force(ctx: typer.Context) -> Context | None:
    """The context in force: the one :func:`named_context` names, else the selected one,
    else None (``ContextStore.in_force``: an unknown name or a broken file is a
    JetlinkError). Read once per invocation: kept in ``ctx.meta``, which every context of
    the invocation shares."""
    meta = ctx.meta
    if _CONTEXT_KEY not in meta:
        from jetlink.core.contexts import ContextStore
        from jetlink.core.errors import NotFoundError

        name, source = named_context(ctx)
        try:
            meta[_CONTEXT_KEY] = ContextStore().in_force(name, source=source)
        except NotFoundError as err:
            # a selection naming a removed context: a command line that names its own
            # target runs on it (as it sets a selected context aside), with a warning;
            # any other stops here, rather than run somewhere the operator did not mean
            own = _own_target(ctx.find_root()) if name is None else None
            if own is None:
                raise
            from jetlink.cli.output import notice

            notice(None, f"jetlink: warning: {err.description}; not used: {own} names the "
                         "target (jetlink context select NAME mends the selection)")
            meta[_CONTEXT_KEY] = None
    found: Context | None = meta[_CONTEXT_KEY]
    return found


def _own_target(root: typer.Context) -> str | None:
    """What on the command line or in the environment names the target by itself: a
    server (--server, NATS_URL), a natscli context (--nats-context, NATS_CONTEXT) or a data
    directory (--data-dir, JETLINK_DATA_DIR); None when nothing does (--cluster alone names
    no data directory: the removed context's may have been another)."""
    import os

    for param, flag, var in (("server", "--server", "NATS_URL"),
                             ("nats_context", "--nats-context", "NATS_CONTEXT"),
                             ("data_dir", "--data-dir", "JETLINK_DATA_DIR")):
        if root.params.get(param) and parameter_source(root, param) == "COMMANDLINE":
            return flag
        if os.environ.get(var):
            return var
    return None


def target_in_force(ctx: typer.Context) -> Any:
    """The live server the invocation's settings put in force (core/live/settings.py:
    option > environment > jetlink context > natscli context), or None: the embedded
    engine. Read from the root's options; no nats-py import here.

    A context that is only *selected* (``jetlink context select``; not named by --context
    or JETLINK_CONTEXT) gives no server settings to an invocation whose command line
    addresses the embedded engine itself (--data-dir or --cluster) or that names a natscli
    context (--nats-context, NATS_CONTEXT): a rehearsal given its own data directory never
    reaches the selected context's server, and a natscli context named on the command line
    is used whole, never mixed with another source's URL (:func:`_selected_set_aside`)."""
    root = ctx.find_root()
    context = context_in_force(root)
    if context is not None and _selected_set_aside(
            root, context, ("data_dir", "cluster"), nats=True,
            what=_unused_parts(root, context)):
        context = None
    target = target_of(root.params, context)
    if target is not None:
        standing = _server_from_environment(root, target)
        addressed = [f"--{n.replace('_', '-')}" for n in ("data_dir", "cluster")
                     if parameter_source(root, n) == "COMMANDLINE"]
        if standing and addressed:
            from jetlink.cli.output import notice

            label, hint = standing
            notice(None, f"jetlink: notice: the server of {label} is not used: "
                         f"{' and '.join(addressed)} address"
                         f"{'es' if len(addressed) == 1 else ''} the embedded engine "
                         f"({hint})")
            return None
    if target is None:
        _no_server_for(root)
    return target


# the root's options that only a NATS server takes (credentials, TLS, JetStream domain and
# prefixes): given on the command line of an invocation with no server, they would be
# dropped while the command acts on the embedded engine
SERVER_ONLY = ("creds", "nkey", "user", "password", "tlscert", "tlskey", "tlsca", "tlsfirst",
               "js_domain", "js_api_prefix", "inbox_prefix")


def _no_server_for(root: typer.Context) -> None:
    """Refused (usage error, nothing done) when server-only options were given on the
    command line and no server is in force: the embedded engine would be acted on instead."""
    flags = [f"--{n.replace('_', '-')}" for n in SERVER_ONLY
             if parameter_source(root, n) == "COMMANDLINE"]
    if flags:
        files = ("; a topology file's bound clusters take theirs from their [clusters.NAME] "
                 'tables (user = "...", password = "...", context = "NAME"), never from the '
                 "command line" if root.invoked_subcommand in ("apply", "validate", "export")
                 else "")
        raise usage(f"{', '.join(flags)} appl{'ies' if len(flags) == 1 else 'y'} to a NATS "
                    "server, and none is in force: give it with -s/--server URL (or NATS_URL, "
                    "--nats-context, a context's server); the embedded engine takes no "
                    f"credentials, TLS or domain{files} (nothing was done)")


def _server_from_environment(root: typer.Context, target: Any) -> tuple[str, str] | None:
    """The environment variable the live server ``target`` was taken from and how the
    command line would use it: (``NATS_URL (nats://...)``, ``--server ... uses it``), or
    (``NATS_CONTEXT (the natscli context ops)``, ``--nats-context ops ...``); None when the
    command line or a jetlink context gave it. Such a standing setting gives way to a
    command line that addresses the embedded engine, as a selected context does."""
    import os

    from jetlink.core.live.settings import ENV, ENV_CONTEXT

    origin = target.origin
    if origin == ENV["servers"]:
        return (f"{origin} ({target.shown_url})",
                "jetlink --server URL ... uses a server")
    named = os.environ.get(ENV_CONTEXT)
    if (named and not root.params.get("nats_context")
            and origin.startswith(f"natscli context {named} (")):
        return (f"{ENV_CONTEXT} (the natscli context {named})",
                f"jetlink --nats-context {named} ... uses it")
    return None


def _unused_parts(root: typer.Context, context: Context) -> str | None:
    """What of the selected ``context`` an invocation that sets it aside does not use, for
    the notice: its server, and with --data-dir on the command line its cluster (a cluster
    of its own data directory); None: nothing it would have given."""
    import os

    from jetlink.cli.app import ENV_CLUSTER

    parts = []
    if context.server or context.nats_context:
        parts.append("server")
    if (context.cluster and parameter_source(root, "data_dir") == "COMMANDLINE"
            and parameter_source(root, "cluster") != "COMMANDLINE"
            and not os.environ.get(ENV_CLUSTER)):
        parts.append(f"cluster {context.cluster}")
    return " and ".join(parts) or None


def addressing(root: typer.Context, name: str) -> str:
    """How the root option ``name`` was given, for a notice: ``--data-dir`` from the
    command line, its variable (``JETLINK_DATA_DIR``) from the environment."""
    if parameter_source(root, name) == "ENVIRONMENT":
        param = next((p for p in root.command.params if p.name == name), None)
        env = getattr(param, "envvar", None)
        if isinstance(env, str):
            return env
    return f"--{name.replace('_', '-')}"


def _selected_set_aside(root: typer.Context, context: Context, names: Sequence[str], *,
                        nats: bool, what: str | None) -> bool:
    """Whether the *selected* context ``context`` is set aside for this invocation: it was
    not named (--context, JETLINK_CONTEXT) and the command line gives one of the root
    options ``names`` or their variables (JETLINK_DATA_DIR, JETLINK_CLUSTER: set for this
    shell, they are nearer than a selection kept on disk, as natscli's NATS_URL beats its
    selected context) or, with ``nats``, a natscli context (--nats-context, NATS_CONTEXT).
    A notice
    names what of it is not used (``what``: its server, its REST URL; None: nothing to
    say)."""
    import os

    if named_context(root)[0] is not None:
        return False
    addressed = [addressing(root, n) for n in names
                 if parameter_source(root, n) in ("COMMANDLINE", "ENVIRONMENT")]
    natscli = (root.params.get("nats_context") or os.environ.get("NATS_CONTEXT") or ""
               ) if nats else ""
    if not (addressed or natscli):
        return False
    if what:
        from jetlink.cli.output import notice

        # a natscli context named is what the invocation uses (its server), whatever data
        # directory is addressed beside it: the reason said first
        why = (f"the natscli context {natscli} is named" if natscli else
               f"{' and '.join(addressed)} address{'es' if len(addressed) == 1 else ''} "
               "the embedded engine")
        verb = "are" if " and " in what else "is"
        notice(None, f"jetlink: notice: the selected context {context.name}'s {what} {verb} "
                     f"not used: {why} (jetlink --context {context.name} ... uses it)")
    return True


def target_of(p: Mapping[str, Any], context: Context | None) -> Any:
    """The live server the root's options ``p`` (by parameter name; absent: not given) and
    the context in force put in force (:func:`target_in_force`)."""
    import os

    from jetlink.core.live.settings import resolve_target

    options = {"servers": p.get("server"), "creds": p.get("creds"), "nkey": p.get("nkey"),
               "user": p.get("user"), "password": p.get("password"),
               "tls_cert": p.get("tlscert"), "tls_key": p.get("tlskey"),
               "tls_ca": p.get("tlsca"), "tls_first": p.get("tlsfirst"),
               "js_domain": p.get("js_domain"), "js_api_prefix": p.get("js_api_prefix"),
               "inbox_prefix": p.get("inbox_prefix"), "timeout": p.get("timeout")}
    return resolve_target(options, os.environ, context, p.get("nats_context"))


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
    url_from: str | None = None  # the environment variable the URL came from, if one did


def rest_api_root(url: str) -> str:
    """The REST v3 root of ``url``: ``URL/kafka/v3``, or ``URL`` itself when its path ends
    with ``/v3`` (a REST Proxy). A URL that is not ``http(s)://HOST...`` is a usage error."""
    from urllib.parse import urlsplit

    text = (url or "").strip()
    expected = f"invalid REST URL {url!r}: expected http://HOST[:PORT] or https://HOST[:PORT]"
    try:
        parts = urlsplit(text)
        port = parts.port  # a port that is no number, or past 65535: ValueError
    except ValueError as err:
        raise usage(f"{expected} ({err})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise usage(expected)
    from jetlink.core.live.settings import host_problem

    problem = host_problem(parts.hostname)
    if problem:
        raise usage(f"invalid REST URL {url!r}: {problem}")
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

    try:
        path = urlsplit((url or "").strip()).path
    except ValueError:  # not a URL at all: rest_api_root says why
        return None
    found = _CLUSTERS_PATH.fullmatch(path.rstrip("/"))
    if not found or not found.group(2):
        return None
    cluster = unquote(found.group(2))
    return None if cluster.startswith("{") and cluster.endswith("}") else cluster


def refuse_empty_target(ctx: Any, name: str, value: str | None, flag: str, what: str) -> None:
    """An empty ``flag`` typed on the command line (a script's empty ``$URL``) is a usage
    error: it never means "none" and leaves the verbs on the local data directory. (An
    empty environment variable is unset, as natscli reads NATS_URL.)"""
    if value == "" and getattr(ctx.get_parameter_source(name), "name", "") == "COMMANDLINE":
        raise usage(f"{flag} '': empty: give {what}, or leave {flag} out (without it the "
                    "verbs act on the data directory)")


def _record_rest_url(ctx: Any, value: str | None) -> str | None:
    """``--rest-url`` given after a links / mirrors verb: it overrides the group's."""
    refuse_empty_target(ctx, "rest_url", value, "--rest-url", "the REST API's URL")
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
    ctx = app.ctx
    if ctx is None:
        return None
    found_settings = ctx.meta.get(REST_KEY)
    settings = found_settings if isinstance(found_settings, RestSettings) else RestSettings()
    if settings.url:
        return settings
    if "context" not in ctx.find_root().params:  # a group run without the root (a test)
        return None
    found = context_in_force(ctx)
    if found is None or not found.rest_url:
        return None
    if _selected_set_aside(ctx.find_root(), found, ("data_dir",), nats=False,
                           what="REST URL"):
        return None  # (--cluster is the REST API's cluster ID: it addresses no engine)
    return replace(settings, url=found.rest_url)


# -- command-line values -------------------------------------------------------------------


def check_subject_filter(option: str, value: str) -> None:
    """A subject filter given on the command line is a valid subject (wildcards allowed):
    a usage error naming the option, the value and the rule (core/subjects.py), asked
    before the server is (its subject tree answers an invalid filter with no subjects)."""
    from jetlink.core.subjects import subject_problem

    problem = subject_problem(value)
    if problem is not None:
        raise usage(f"{option}: {problem}")


def usage(message: str) -> UsageError:
    """A usage error (exit status 2) saying ``message``, for the caller to raise."""
    from jetlink.core.errors import UsageError

    return UsageError(message)


def read_json_file(path: Path) -> Any:
    """The JSON document in ``path``; an unreadable, unparsable or huge file (over
    core/limits.py MAX_INPUT_FILE) is a JetlinkError."""
    from jetlink.core.config.codec import loads
    from jetlink.core.errors import JetlinkError
    from jetlink.core.limits import read_input_file

    data = read_input_file(path)
    try:
        return loads(data.decode("utf-8"))
    except ValueError as exc:
        from jetlink.core.numbers import reason

        raise JetlinkError(f"{path}: not a JSON document: {reason(exc)}") from None


def checked_config_out(app: App, doc: dict[str, Any], out_file: Any, verdict: str) -> None:
    """natscli's ``add --validate`` / ``--output FILE`` of a configuration checked already:
    ``doc`` printed (indented JSON, a blank line, ``verdict``), or written to ``out_file``
    (JSON, mode 0600 when new, the form --config reads; nothing printed, as natscli)."""
    from jetlink.cli import output

    text = json.dumps(doc, indent=2)
    if out_file is not None:
        from jetlink.core.outfile import write_output

        write_output(out_file, text, new_mode=0o600)
        app.emit(doc, human=lambda a, _d: None)
        return

    def human(a: App, _d: Any) -> None:
        output.line(a, text)
        output.line(a)
        output.line(a, verdict)

    app.emit(doc, human=human)


def validate_or_output(validate_only: bool, out_file: Any) -> bool:
    """Whether ``add`` is natscli's ``--validate`` or ``--output FILE`` (a usage error for
    both: one prints the configuration, the other saves it)."""
    if validate_only and out_file is not None:
        raise usage("--validate prints the configuration, --output saves it: give one")
    return validate_only or out_file is not None


def user_metadata(metadata: Mapping[str, str] | None) -> dict[str, str]:
    """``metadata`` without the keys the server manages (core's rule)."""
    from jetlink.core.config.codec import user_metadata as core_user_metadata

    return core_user_metadata(metadata)


def read_stdin(limit: int, what: str) -> bytes:
    """All of stdin, refused (a usage error naming ``what``) when it holds more than
    ``limit`` bytes: read no further than that (``pub < /dev/zero`` never fills the
    memory)."""
    import sys

    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        data = bytes(stream.read(limit + 1))
    else:
        data = sys.stdin.read(limit + 1).encode("utf-8", "surrogateescape")
    if len(data) > limit:
        raise usage(f"{what} from stdin is larger than {limit:,} bytes (the largest payload, "
                    "max_payload)")
    return data


# -- following a live source (sub, kv watch) ------------------------------------------------


def follow(next_item: Any, idle_ns: int | None, poll_seconds: float) -> Any:
    """The items ``next_item(timeout)`` returns (None: nothing yet), polled every
    ``poll_seconds``, until ``idle_ns`` nanoseconds pass without an item (None or 0:
    forever, as natscli's ``sub --wait 0``, whose timer runs only for a positive wait; the
    caller stops on Ctrl-C or its own count)."""
    import time

    if not idle_ns:
        idle_ns = None
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
    """Where a mirror is promoted (core/dr/rules.py ``Site``) on the backend in force."""
    return backend(app).site()


def open_positions(app: App) -> PositionStore:
    """The consumer positions bucket of the addressed side (core/dr/positions.py)."""
    return backend(app).positions()


# -- topology as code: the data directory or the live servers a file binds ------------------


def topology_backend(app: App, topo: Any, *, live_only: bool = False
                     ) -> tuple[Any, list[Any]]:
    """Where ``jetlink apply`` and ``jetlink validate --live`` plan a topology file
    (core/backend.py ``Backend.planner``): the file's bound servers, the server in force, else
    the data directory (``live_only``: a usage error instead). Returns ``(planner,
    problems)``: the bindings' problems with planner None (nothing connected). The
    connections close when the command ends; a server that does not answer is a LiveError
    (one line, exit status 1)."""
    _timeout_not_for_bindings(app, topo)
    _credentials_not_for_bindings(app, topo)
    planner, problems = backend(app).planner(topo, live_only=live_only)
    if planner is not None:
        _close_at_end(app, planner)
    return planner, problems


def _timeout_not_for_bindings(app: App, topo: Any) -> None:
    """A --timeout (or NATS_TIMEOUT) given with a file that binds its clusters to servers:
    said once on stderr that it is not theirs (the file alone says how each cluster is
    reached: core/topology/bindings.py), rather than silently unused."""
    import os

    from jetlink.cli import output
    from jetlink.core.backend import topo_binds_servers

    root = app.ctx.find_root() if app.ctx is not None else None
    gave = (root is not None and given(root, "timeout")) or "NATS_TIMEOUT" in os.environ
    if gave and topo_binds_servers(topo):
        what = "--timeout" if root is not None and given(root, "timeout") else "NATS_TIMEOUT"
        output.notice(app, f"jetlink: notice: {what} is not used for the clusters the file "
                      "binds to servers: each takes its connection settings from its "
                      '[clusters.NAME] table (timeout = "1s" there)')


def _credentials_not_for_bindings(app: App, topo: Any) -> None:
    """Connection options (--user, --creds, --tlsca, ...) given on the command line with a
    file that binds its clusters to servers: a bound cluster takes its settings from its
    table alone. Refused (usage error, nothing done) when the file binds every cluster it
    declares (they would be used nowhere); else said once on stderr."""
    from jetlink.cli import output
    from jetlink.core.backend import topo_binds_servers

    root = app.ctx.find_root() if app.ctx is not None else None
    if root is None or not topo_binds_servers(topo):
        return
    flags = [f"--{n.replace('_', '-')}" for n in SERVER_ONLY
             if parameter_source(root, n) == "COMMANDLINE"]
    if not flags:
        return
    what = (f"{', '.join(flags)} {'is' if len(flags) == 1 else 'are'} not used for the "
            "clusters the file binds to servers: each takes its connection settings from "
            'its [clusters.NAME] table (user = "...", password = "...", creds = "...", '
            'tls_ca = "...", ..., or context = "NAME")')
    if all(c.bound for c in topo.clusters.values()):
        raise usage(f"{what}; the file binds every cluster it declares, so leave them out "
                    "(nothing was done)")
    output.notice(app, f"jetlink: notice: {what}")


class FileProblems(Exception):
    """A topology file's problems (the caller shows them as ``jetlink validate`` does: exit
    status 3)."""

    def __init__(self, file: str, problems: list[Any], warnings: list[Any]) -> None:
        super().__init__(file)
        self.file, self.problems, self.warnings = file, problems, warnings

    def to_json(self) -> dict[str, Any]:
        """``jetlink validate``'s document of the file."""
        return {"files": [self.file], "problems": [p.to_dict() for p in self.problems],
                "warnings": [w.to_dict() for w in self.warnings], "valid": False}


def live_export_backend(app: App, domains: list[str] | None, source: Path | None) -> Any:
    """What ``jetlink export`` reads from live servers: the bound clusters of ``source``
    (``--from FILE``; :class:`FileProblems` when it has problems), else the server in force
    (its JetStream, or the JetStream domains ``domains`` as clusters of those names). None:
    neither (the data directory)."""
    from jetlink.core.topology.bindings import bound_clusters
    from jetlink.core.topology.live import LiveClusters

    if source is not None:
        from jetlink.core.topology import Topology

        topo = Topology()
        topo.add_file(str(source))
        _timeout_not_for_bindings(app, topo)
        bindings, problems = bound_clusters(topo, domains or None)
        if problems:
            raise FileProblems(str(source), problems, topo.warnings)
        if not bindings:
            raise usage(f"{source} binds no cluster{' of those names' if domains else ''} to a "
                        'server (server = "nats://..." or context = "NAME" in '
                        "[clusters.<name>]): nothing to export from")
        found = LiveClusters.connect(bindings)
    else:
        found = backend(app).export_source(domains or ())
        if found is None:
            return None
    _close_at_end(app, found)
    return found


def _close_at_end(app: App, resource: Any) -> None:
    """Close ``resource`` when the command ends (a test without a command closes it)."""
    if app.ctx is not None:
        app.ctx.call_on_close(resource.close)


# -- optional parts of the installation -------------------------------------------------------

SPARK_EXTRA = ("pyspark", "pyarrow", "pandas")


def need_spark_extra(what: str) -> None:
    """Refuse ``what`` (a command) with the install line when the ``spark`` extra (pyspark,
    pyarrow, pandas) is not installed; looks the modules up without importing them."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.lake import SPARK_EXTRA_INSTALL, missing_modules

    missing = missing_modules(*SPARK_EXTRA)
    if missing:
        raise JetlinkError(
            f"{what} needs {', '.join(missing)}, which this installation does not have: "
            f"{SPARK_EXTRA_INSTALL}")


class Terminated(KeyboardInterrupt):
    """SIGTERM during :func:`terminate_as_interrupt`: raised where the process stands, so
    that the cleanup a Ctrl-C runs runs too (a consumer leaving its group); the command
    then exits 143 (128 + SIGTERM), as a process the signal ended."""


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block SIGTERM (systemd, Kubernetes, ``timeout``) raises
    :class:`Terminated` instead of ending the process at once; the handler before it is
    put back after. Outside the main thread (a test's runner) nothing changes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_terminated(_signum: int, _frame: Any) -> None:
        raise Terminated()

    before = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
