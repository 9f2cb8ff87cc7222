"""``jetlink cluster add|ls|rm|down|up|check``: the clusters of a data directory.

A data directory (``--data-dir``) holds one SQLite database per cluster; the cluster
``local`` is created by the first command that writes to it (a read creates nothing), any
other is added with ``cluster add``. ``down`` and
``up`` mark a cluster unreachable and reachable again (a simulated outage: mirrors and
sources whose origin lives there report it and resume on ``up`` without loss). The store is
``jetlink.core.store.DataDir`` (opened by cli/common.py ``data_dir``); this module parses,
calls it and renders.
"""

from typing import Annotated, Any, Literal

import typer

from jetlink.cli import completion, output
from jetlink.cli.app import App
from jetlink.cli.common import data_dir, usage
from jetlink.cli.options import JsonOption, force_option
from jetlink.cli.output import to_doc

cluster_app = typer.Typer(
    name="cluster",
    help="Manage the clusters of the data directory.\n\nEach cluster is one SQLite database "
    "(<data-dir>/<name>.db). The cluster 'local' is created by the first command that "
    "writes to it (a read creates nothing); address another one with the global option "
    "--cluster NAME.",
    no_args_is_help=True,
)

KINDS = ("nats", "kafka")


# -- commands -------------------------------------------------------------------------------

AuthorizerOpt = Annotated[bool, typer.Option(
    "--authorizer", help="A Kafka cluster that enforces ACLs (authorizer.class.name set).")]
SuperUsersOpt = Annotated[str | None, typer.Option(
    "--super-users", metavar="'User:a;User:b'", show_default=False,
    help="Kafka's super.users, ';' separated: principals never refused (a ',TYPE:' "
    "in a name is warned about).")]
AllowEveryoneOpt = Annotated[bool, typer.Option(
    "--allow-everyone-if-no-acl-found",
    help="Kafka's allow.everyone.if.no.acl.found: a resource without any ACL is open.")]

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="Cluster name ([A-Za-z0-9_-]).",
                                        autocompletion=completion.clusters)]


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
    authorizer: AuthorizerOpt = False,
    super_users: SuperUsersOpt = None,
    allow_everyone: AllowEveryoneOpt = False,
    description: Annotated[str, typer.Option(
        "--description", metavar="TEXT",
        help="Words on the cluster, shown by cluster ls (a topology's description).",
    )] = "",
    json_output: JsonOption = False,
) -> None:
    """Add a cluster to the data directory.

    Creates <data-dir>/NAME.db. Address the cluster afterwards with the global option
    --cluster NAME. A Kafka cluster added with --authorizer enforces ACLs (jetlink acls,
    kafka-acls): every request of a principal (--principal) is authorized as Kafka's
    StandardAuthorizer would; jetlink itself, without --principal, administers it.
    """
    app = App.of(ctx)
    if (authorizer or super_users is not None or allow_everyone) and kind != "kafka":
        raise usage("--authorizer, --super-users and --allow-everyone-if-no-acl-found are for "
                    "a Kafka cluster (--kind kafka)")
    store = data_dir(app)
    _checked_super_users(super_users)  # checked before anything is created
    info = store.add_cluster(name, kind=kind, description=description)
    if kind == "kafka":  # the Kafka tables belong to the cluster from its creation
        from jetlink.core.kafka.schema import create_schema

        create_schema(store.open(name))
        if authorizer or super_users is not None or allow_everyone:
            from jetlink.core.kafka.acls import AclStore

            AclStore(store.open(name)).configure(enabled=authorizer, super_users=super_users,
                                                 allow_everyone=allow_everyone)
    if info is None:  # the store may return nothing: describe the new cluster
        info = next((c for c in store.clusters() if to_doc(c).get("name") == name), None)
    doc = to_doc(info)
    _warn_commas(app, super_users)
    app.emit(doc, human=lambda a, d: output.line(a, f"Cluster {name} was created"))


def _checked_super_users(super_users: str | None) -> None:
    """--super-users as given: each principal TYPE:NAME, and at least one (an empty value,
    or only ';', is what an unset variable in a runbook gives: it would drop every super
    user, so it is refused; ``cluster authorizer --no-super-users`` clears them)."""
    if super_users is None:
        return
    from jetlink.core.kafka.acls import super_users_of

    if not super_users_of(super_users):
        raise usage(f"--super-users {super_users!r} names no principal (give 'User:a;User:b'; "
                    "to remove every super user: jetlink cluster authorizer NAME "
                    "--no-super-users)")


def _warn_commas(app: App, super_users: str | None) -> None:
    """One warning on stderr per super user that looks like principals joined with ','
    (accepted, as Kafka accepts it)."""
    from jetlink.core.kafka.acls import super_users_comma_warnings

    for text in super_users_comma_warnings(super_users or ""):
        output.notice(app, f"jetlink: warning: {text}")


@cluster_app.command("authorizer")
def authorizer_cmd(
    ctx: typer.Context,
    name: NameArg,
    enable_: Annotated[bool, typer.Option(
        "--enable", help="Enforce ACLs.")] = False,
    disable: Annotated[bool, typer.Option(
        "--disable", help="Stop enforcing ACLs (the ACLs are kept).")] = False,
    super_users: SuperUsersOpt = None,
    no_super_users: Annotated[bool, typer.Option(
        "--no-super-users", help="Remove every super user (super.users empty).")] = False,
    allow_: Annotated[bool, typer.Option(
        "--allow-everyone-if-no-acl-found",
        help="Kafka's allow.everyone.if.no.acl.found=true: a resource without ACLs is "
        "open to every principal.")] = False,
    deny_: Annotated[bool, typer.Option(
        "--deny-if-no-acl-found",
        help="allow.everyone.if.no.acl.found=false (Kafka's default).")] = False,
    json_output: JsonOption = False,
) -> None:
    """Show or change a Kafka cluster's authorizer.

    Without options: its settings. --enable makes the cluster enforce ACLs, --disable stops
    it (its ACLs stay); --super-users replaces super.users, --no-super-users empties it.
    """
    from jetlink.core.kafka.acls import AclStore

    app = App.of(ctx)
    # a command line that says both opens or closes the cluster by the order of its flags:
    # refused, nothing changed
    for on, off, a, b in ((enable_, disable, "--enable", "--disable"),
                          (allow_, deny_, "--allow-everyone-if-no-acl-found",
                           "--deny-if-no-acl-found")):
        if on and off:
            raise usage(f"give {a} or {b}, not both")
    if no_super_users and super_users is not None:
        raise usage("give --super-users or --no-super-users, not both")
    _checked_super_users(super_users)
    if no_super_users:
        super_users = ""
    enable = True if enable_ else False if disable else None
    allow_everyone = True if allow_ else False if deny_ else None
    app.reading = enable is None and super_users is None and allow_everyone is None
    store = AclStore(data_dir(app).open_kind(name, "kafka", "ACLs"))
    settings = store.configure(enabled=enable, super_users=super_users,
                               allow_everyone=allow_everyone)
    _warn_commas(app, super_users)
    doc = {"cluster": name, **settings.to_json()}

    def human(a: App, d: dict[str, Any]) -> None:
        output.line(a, f"Cluster {name}: authorizer {'on' if d['authorizer'] else 'off'}, "
                       f"super.users={d['super.users'] or '(none)'}, "
                       "allow.everyone.if.no.acl.found="
                       f"{'true' if d['allow.everyone.if.no.acl.found'] else 'false'}")

    app.emit(doc, human=human)


@cluster_app.command("ls")
def ls(
    ctx: typer.Context,
    names: Annotated[
        bool, typer.Option("--names", "-n", help="Print only the cluster names.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """List the clusters of the data directory.

    A cluster whose database cannot be used (damaged, emptied) is listed as DAMAGED with a
    warning on stderr (jetlink cluster check tells more). With --json: a list of clusters
    (name, kind, down, path, created, and description when it has one; such a cluster:
    kind, down and created null and an "error").
    """
    app = App.of(ctx)
    store = data_dir(app)
    broken: list[Any] = []  # databases that cannot be used: listed, marked, not fatal
    docs = [to_doc(c) for c in store.clusters(broken=broken)]
    docs += [store.damaged_doc(name, err) for name, err in broken]
    docs.sort(key=lambda d: d["name"])
    if broken:
        output.notice(app, f"jetlink: warning: {len(broken)} cluster database"
                      f"{'s' if len(broken) > 1 else ''} cannot be used: see 'jetlink "
                      "cluster check'")
    if names and not app.json:
        output.lines(app, (doc["name"] for doc in docs))
        return
    app.emit(docs, human=render_clusters)


def render_clusters(app: App, docs: list[dict[str, Any]]) -> None:
    if not docs:
        output.line(app, "No clusters defined")
        return
    described = any(d.get("description") for d in docs)  # the column only when one has one
    rows = [
        [
            d.get("name", ""),
            d.get("kind") or "?",
            _status(d),
            *([d.get("description", "")] if described else []),
            str(d.get("path", "")),
        ]
        for d in docs
    ]
    output.table(app, ("Name", "Kind", "Status", *(("Description",) if described else ()),
                       "Path"), rows, title="Clusters", no_wrap=("Name",))


def _status(doc: dict[str, Any]) -> str:
    """A cluster's Status column: up, down, DAMAGED (its database cannot be used),
    UNREADABLE (this process may not read its file: its permissions, no damage) or NEWER
    (a newer jetlink wrote it: upgrade jetlink)."""
    error = doc.get("error")
    if error:
        return ("UNREADABLE" if str(error).startswith("cannot read ") else
                "NEWER" if "written by a newer jetlink" in str(error) else "DAMAGED")
    return "down" if doc.get("down") else "up"


@cluster_app.command("rm")
def rm(
    ctx: typer.Context,
    name: NameArg,
    force: Annotated[bool, force_option("Remove")] = False,
    json_output: JsonOption = False,
) -> None:
    """Remove a cluster and all its data.

    Deletes <data-dir>/NAME.db with its streams, consumers and messages. Asks for
    confirmation on a terminal; without one, -f/--force is required. The mirrors, sourced
    streams and mirror topics of other clusters that copy from it are named first (a
    warning on stderr): they stop replicating. Refused while another process has the
    cluster open (a command running, replicate --follow, the dashboard, serve): stop it,
    then run rm again.
    """
    from jetlink.core.store import validate_cluster_name

    app = App.of(ctx)
    validate_cluster_name(name)  # (a name no cluster can have: a usage error, as add's)
    store = data_dir(app)
    if not store.has_cluster(name):  # said before any question
        from jetlink.core.errors import NotFoundError, not_found

        raise not_found(NotFoundError(f"cluster {name} not found", field="cluster"), name,
                        store.cluster_names())
    from jetlink.cli.common import make_clock
    from jetlink.core.dr.region import reading_from

    readers = reading_from(store, name, make_clock())
    if readers and (force or output.is_interactive()):  # said before the question
        n = len(readers)
        what, copy, stop, them = (
            ("1 mirror or source in other clusters", "copies", "stops", "it") if n == 1
            else (f"{n} mirrors and sources in other clusters", "copy", "stop", "them"))
        output.notice(app, f"jetlink: warning: {what} {copy} from cluster {name} and {stop} "
                      f"replicating once it is gone (jetlink dr check reports {them}): "
                      f"{', '.join(readers)}")
    output.confirm(
        app,
        f"Really remove cluster {name} and all its data",
        force=force,
        action=f"remove cluster {name}",
    )
    store.remove_cluster(name)
    output.success(app, f"Cluster {name} was removed")


def _set_down(ctx: typer.Context, names: list[str], down: bool) -> None:
    app = App.of(ctx)
    store = data_dir(app)
    for name in names:  # every name checked before any cluster changes
        store.open(name)
    docs = []
    for name in dict.fromkeys(names):
        store.set_down(name, down)
        docs.append(to_doc(store.open(name).info()))
    state = "down" if down else "up"

    def human(a: App, _d: Any) -> None:
        for d in docs:
            output.line(a, f"Cluster {d['name']} is {state}")

    app.emit(docs[0] if len(docs) == 1 else docs, human=human)


NamesArg = Annotated[
    list[str],
    typer.Argument(metavar="NAME...", help="Cluster names ([A-Za-z0-9_-]).", show_default=False,
                   autocompletion=completion.clusters),
]


@cluster_app.command("down")
def down(ctx: typer.Context, names: NamesArg, json_output: JsonOption = False) -> None:
    """Mark clusters unreachable (an outage).

    Their data stays on disk. Mirrors and sources whose origin lives in a cluster that is
    down report the origin unavailable (their Error and Last Seen in stream info and stream
    report), cluster links from it report UNAVAILABLE and their mirror topics
    SOURCE_UNAVAILABLE; nothing is copied until cluster up; then they resume where they
    stopped, losing nothing. Several names go down together (a region), before the
    command's replication step. With --json: the cluster (name, kind, down, path,
    created), a list of them for several names.
    """
    _set_down(ctx, names, True)


@cluster_app.command("up")
def up(ctx: typer.Context, names: NamesArg, json_output: JsonOption = False) -> None:
    """Mark clusters reachable again.

    Ends a cluster down: their mirrors, sources and links resume where they stopped (the
    command itself runs one replication step; jetlink replicate copies any backlog). With
    --json: the cluster (name, kind, down, path, created), a list of them for several names.
    """
    _set_down(ctx, names, False)


@cluster_app.command("check")
def check(
    ctx: typer.Context,
    names: Annotated[
        list[str] | None,
        typer.Argument(metavar="[NAME]...", help="Cluster names (default: every cluster).",
                       show_default=False, autocompletion=completion.clusters),
    ] = None,
    repair: Annotated[
        bool, typer.Option("--repair", help="Copy what is readable of a damaged cluster "
                           "into a new file; the damaged one is kept beside it.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Check the cluster databases for damage.

    Runs SQLite's integrity check on each database (reads only) and exits 1 when one is
    damaged. With --repair, each damaged cluster is rebuilt from what is still readable:
    rows on damaged pages are lost, the streams' counters and subject chains are made true
    for what survived, and the damaged file is kept as NAME.db.damaged-<time>. Stop
    every other use of the cluster first; a file nothing can be read of (emptied, its
    header overwritten) cannot be repaired, and is said so. With --json: a list of {name,
    path, ok, problems, repairable (when damaged)}, and with --repair a "repaired" list of
    what each repair copied.
    """
    from jetlink.core import repair as R
    from jetlink.core.store import validate_cluster_name

    app = App.of(ctx)
    for name in names or []:
        validate_cluster_name(name)
    store = data_dir(app)
    reports = R.check(store, names or None)
    repaired = []
    if repair:
        for rep in reports:  # every repairable one; those nothing can be read of are said
            if not rep.ok and rep.repairable:
                repaired.append(R.repair(store, rep.name))
        if repaired:
            reports = R.check(store, [r.name for r in reports])
    doc: Any = [r.to_json() for r in reports]
    if repair:
        doc = {"clusters": doc, "repaired": [r.to_json() for r in repaired]}

    def human(a: App, _d: Any) -> None:
        for r in repaired:
            lost = max(0, r.messages_before - r.messages_after)
            output.line(a, f"Cluster {r.name} was repaired: {output.comma(r.messages_after)} "
                        f"messages kept, {output.comma(lost)} lost; the damaged file is "
                        f"{r.damaged_copy}")
            if r.incomplete:
                output.line(a, f"  tables that lost rows: {', '.join(r.incomplete)}")
        if not reports:
            output.line(a, "No clusters defined")
        for r in reports:
            if r.ok:
                output.line(a, f"Cluster {r.name}: ok")
            else:
                state = "NEWER" if r.newer is not None else "DAMAGED"
                output.line(a, f"Cluster {r.name}: {state} ({r.path})")
                for p in r.problems:
                    output.line(a, f"  {p}")
                if not r.repairable and r.newer is None:
                    output.line(a, f"  {R.unrepairable(r.name, r.path)}")

    app.emit(doc, human=human)
    bad = [r.name for r in reports if not r.ok and r.newer is None]
    newer = [r.name for r in reports if r.newer is not None]
    if newer:
        output.notice(app, f"jetlink: {len(newer)} cluster database"
                      f"{'s' if len(newer) > 1 else ''} written by a newer jetlink "
                      f"({', '.join(newer)}): upgrade jetlink to use "
                      f"{'them' if len(newer) > 1 else 'it'}")
    if bad:
        fixable = [r.name for r in reports if not r.ok and r.repairable]
        hint = "" if repair or not fixable else (
            f": restore from a backup or run 'jetlink cluster check {' '.join(fixable)} "
            "--repair'")
        output.notice(app, f"jetlink: {len(bad)} damaged cluster database"
                      f"{'s' if len(bad) > 1 else ''}{hint}")
    if bad or newer:
        from jetlink.core.store.health import DamagedError

        raise typer.Exit(DamagedError.exit_code)


def register(app: typer.Typer) -> None:
    app.add_typer(cluster_app, name="cluster")
