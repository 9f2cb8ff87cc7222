"""``jetlink acls add|ls|rm|check`` and ``jetlink kafka-acls``: the ACLs of a Kafka cluster of
the data directory (core/kafka/acls.py ``AclStore``), parsed and rendered here.

``acls`` is jetlink's own group (tables, ``--json``: REST v3's AclData fields); ``kafka-acls``
takes the Kafka tool's syntax as runbooks type it (``--add --allow-principal User:alice
--operation Read --topic orders --bootstrap-server H:P``) and prints what it prints
(``Current ACLs for resource `ResourcePattern(...)`:``). Both act on ``--cluster`` (or the
cluster ``--bootstrap-server`` names); a cluster without an authorizer answers
SECURITY_DISABLED, as a broker without one does. ``acls check`` says why a principal is
allowed or refused, with the function the engine authorizes with. With ``--rest-url`` (or a
context's ``rest_url``) ``acls add|ls|rm`` call REST v3's ACL operations instead
(cli/rest/remote_acls.py ``RestAcls``, the same methods as the store): one rendering path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from jetlink.cli import common, output
from jetlink.cli.app import App
from jetlink.cli.options import ForceOption, JsonOption, rest_callback

acls_app = typer.Typer(
    name="acls",
    help="Manage the ACLs of a Kafka cluster.\n\nACLs as Kafka has them (principal, host, "
    "operation, ALLOW or DENY, on a topic, group, the cluster or a transactional id, LITERAL "
    "or PREFIXED), enforced by a cluster added with --authorizer.\n\nWith --rest-url URL "
    "(before or after add, ls or rm; or a context's rest_url) those verbs call that REST API "
    "v3 endpoint's ACL operations, cluster ID --cluster, and print the same output.",
    no_args_is_help=True,
)
acls_app.callback()(rest_callback)

RestUrlOpt = Annotated[str | None, common.rest_url_option()]

def _stripped(value: str | None) -> str | None:
    """A principal as kafka-acls reads it: the spaces around it are no part of it."""
    return value.strip() if value is not None else None


PrincipalOpt = Annotated[str | None, typer.Option(
    "--principal", metavar="TYPE:NAME", show_default=False, callback=_stripped,
    help="The principal, e.g. User:alice (User:* every user).")]
OperationOpt = Annotated[list[str] | None, typer.Option(
    "--operation", metavar="OP", show_default=False,
    help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, "
    "AlterConfigs, IdempotentWrite, All (Kafka's names too). Repeatable.")]
TopicOpt = Annotated[list[str] | None, typer.Option(
    "--topic", metavar="TOPIC", show_default=False, help="A topic (* every topic). Repeatable.")]
GroupOpt = Annotated[list[str] | None, typer.Option(
    "--group", metavar="GROUP", show_default=False, help="A consumer group. Repeatable.")]
ClusterResOpt = Annotated[bool, typer.Option(
    "--kafka-cluster", help="The cluster itself (the resource kafka-cluster).")]
TxnOpt = Annotated[list[str] | None, typer.Option(
    "--transactional-id", metavar="ID", show_default=False,
    help="A transactional id. Repeatable.")]
HostOpt = Annotated[str, typer.Option(
    "--host", metavar="HOST", help="The client's address the ACL applies to (* every host).")]


def _store(app: App, *, remote: bool = False) -> Any:
    """The ACLs of --cluster: the engine's AclStore, or, for ``remote`` verbs with
    --rest-url (or a context's rest_url), the same calls over REST v3
    (cli/rest/remote_acls.py)."""
    rest = common.rest_settings(app) if remote else None
    if rest is not None:
        from jetlink.cli.rest.remote import open_client
        from jetlink.cli.rest.remote_acls import RestAcls

        return RestAcls(open_client(app, rest))
    from jetlink.core.kafka.acls import AclStore

    return AclStore(common.data_dir(app).open_kind(app.cluster, "kafka", "ACLs"))


def _resources(topics: list[str] | None, groups: list[str] | None, cluster: bool,
               txns: list[str] | None, *, required: bool,
               cluster_flag: str = "--kafka-cluster", tokens: list[str] | None = None,
               users: list[str] | None = None, missing: str | None = None
               ) -> list[tuple[str, str]]:
    """The (resource type, name) pairs of the resource flags; ``required``: none is a usage
    error (``missing``: its text)."""
    from jetlink.core.kafka.acls import CLUSTER_NAME

    out = [("TOPIC", t) for t in topics or []] + [("GROUP", g) for g in groups or []]
    out += [("TRANSACTIONAL_ID", t) for t in txns or []]
    if cluster:
        out.append(("CLUSTER", CLUSTER_NAME))
    out += [("DELEGATION_TOKEN", t) for t in tokens or []]
    out += [("USER", u) for u in users or []]
    if required and not out:
        raise common.usage(missing or f"give a resource: --topic, --group, {cluster_flag} or "
                                      "--transactional-id")
    return out


def _doc(bindings: list[Any]) -> dict[str, Any]:
    return {"kind": "KafkaAclList", "data": [b.to_json() for b in bindings]}


def _table(app: App, doc: dict[str, Any]) -> None:
    rows = [[d["resource_type"], d["resource_name"], d["pattern_type"], d["principal"],
             d["host"], d["operation"], d["permission"]] for d in doc["data"]]
    if not rows:
        output.notice(app, "No ACLs")
        return
    output.table(app, ["Resource Type", "Name", "Pattern", "Principal", "Host", "Operation",
                       "Permission"], rows, title="ACLs")


@acls_app.command("add")
def add(
    ctx: typer.Context,
    principal: PrincipalOpt = None,
    operation: OperationOpt = None,
    topic: TopicOpt = None,
    group: GroupOpt = None,
    kafka_cluster: ClusterResOpt = False,
    transactional_id: TxnOpt = None,
    prefixed: Annotated[bool, typer.Option(
        "--prefixed", help="The names are prefixes (PREFIXED pattern), not names.")] = False,
    deny: Annotated[bool, typer.Option("--deny", help="A DENY ACL (default ALLOW).")] = False,
    host: HostOpt = "*",
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Add ACLs.

    One binding per resource and operation for the principal. Those that exist stay as they
    are. With --json: the bindings created (REST v3's AclData fields).
    """
    from jetlink.core.kafka.acls import AclBinding, check_operation

    app = App.of(ctx)
    if principal is None:
        raise common.usage("acls add needs --principal (e.g. User:alice)")
    if not operation:
        raise common.usage("acls add needs --operation (e.g. Read)")
    # each binding once, however often a flag repeats it (as kafka-acls's sets)
    bindings = list(dict.fromkeys(
        AclBinding.make(rt, name, "PREFIXED" if prefixed else "LITERAL", principal, host, op,
                        "DENY" if deny else "ALLOW")
        for rt, name in _resources(topic, group, kafka_cluster, transactional_id,
                                   required=True)
        for op in operation))
    for b in bindings:
        check_operation(b.resource_type, b.operation)
    store = _store(app, remote=True)
    store.require()
    made = store.add(bindings)
    _warn_unmatched(app, bindings)

    def human(a: App, _d: Any) -> None:
        for b in bindings:
            said = "Added" if b in made else "Exists"
            output.line(a, f"{said}: {b.pattern()} {b.entry()}")

    app.emit(_doc(made), human=human)


def _filter_flags(principal: str | None, operation: list[str] | None, topic: list[str] | None,
                  group: list[str] | None, kafka_cluster: bool, txn: list[str] | None,
                  pattern_type: str, host: str | None, permission: str | None) -> list[Any]:
    from jetlink.core.kafka.acls import AclFilter

    resources = _resources(topic, group, kafka_cluster, txn, required=False)
    ops = operation or [None]
    if not resources:
        return [AclFilter.make(None, None, pattern_type, principal, host, op, permission)
                for op in ops]
    return [AclFilter.make(rt, name, pattern_type, principal, host, op, permission)
            for rt, name in resources for op in ops]


PatternOpt = Annotated[str, typer.Option(
    "--resource-pattern-type", metavar="TYPE",
    help="any, match (the ACLs that apply to the name: literal, * and prefixes), literal or "
    "prefixed.")]
PrefixedOpt = Annotated[bool, typer.Option(
    "--prefixed", help="The names are prefixes: --resource-pattern-type prefixed, as acls "
    "add takes it.")]


def _pattern(ctx: typer.Context, pattern_type: str, prefixed: bool) -> str:
    """--resource-pattern-type, or --prefixed (acls add's flag); both refused unless they
    agree."""
    if not prefixed:
        return pattern_type
    if common.given(ctx, "pattern_type") and pattern_type.lower() != "prefixed":
        raise common.usage(f"--prefixed and --resource-pattern-type {pattern_type}: give one "
                           "of them")
    return "prefixed"


@acls_app.command("ls")
def ls(
    ctx: typer.Context,
    principal: PrincipalOpt = None,
    topic: TopicOpt = None,
    group: GroupOpt = None,
    kafka_cluster: ClusterResOpt = False,
    transactional_id: TxnOpt = None,
    pattern_type: PatternOpt = "any",
    prefixed: PrefixedOpt = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """List ACLs.

    Every ACL, or those of the resources and principal given. With --json: REST v3's
    AclDataList (kind, data).
    """
    app = App.of(ctx)
    pattern_type = _pattern(ctx, pattern_type, prefixed)
    filters = _filter_flags(principal, None, topic, group, kafka_cluster, transactional_id,
                            pattern_type, None, None)
    store = _store(app, remote=True)
    store.require()
    found: list[Any] = []
    for f in filters:
        found += [b for b in store.find(f) if b not in found]
    app.emit(_doc(sorted(found)), human=_table)


@acls_app.command("rm")
def rm(
    ctx: typer.Context,
    principal: PrincipalOpt = None,
    operation: OperationOpt = None,
    topic: TopicOpt = None,
    group: GroupOpt = None,
    kafka_cluster: ClusterResOpt = False,
    transactional_id: TxnOpt = None,
    pattern_type: PatternOpt = "literal",
    prefixed: PrefixedOpt = False,
    permission: Annotated[str | None, typer.Option(
        "--permission", metavar="PERM", show_default=False,
        help="allow or deny (default both).")] = None,
    host: Annotated[str | None, typer.Option(
        "--host", metavar="HOST", show_default=False, help="Only the ACLs of this host.")]
    = None,
    force: ForceOption = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Remove ACLs.

    The ACLs of any of the resources given (at least one of --topic, --group,
    --kafka-cluster, --transactional-id), narrowed by --principal, --operation, --host and
    --permission when given. Asks for confirmation on a terminal; without one, -f/--force
    is required. With --json: the bindings removed.
    """
    app = App.of(ctx)
    pattern_type = _pattern(ctx, pattern_type, prefixed)
    if not _resources(topic, group, kafka_cluster, transactional_id, required=True):
        return
    filters = _filter_flags(principal, operation, topic, group, kafka_cluster,
                            transactional_id, pattern_type, host, permission)
    store = _store(app, remote=True)
    store.require()
    matching = sorted({b for f in filters for b in store.find(f)})
    if matching:
        output.confirm(app, f"Really remove {len(matching)} ACL"
                            f"{'' if len(matching) == 1 else 's'}", force=force,
                       action=f"remove {len(matching)} ACLs")
    gone = store.remove(filters)
    _resynced(app, gone, store)

    def human(a: App, _d: Any) -> None:
        for b in gone:
            output.line(a, f"Removed: {b.pattern()} {b.entry()}")
        if not gone:  # (a notice on stderr, as every empty result: no false row on stdout)
            output.notice(a, "jetlink: notice: no ACL matched: nothing removed")

    app.emit(_doc(sorted(gone)), human=human)


@acls_app.command("check")
def check(
    ctx: typer.Context,
    principal: PrincipalOpt = None,
    operation: Annotated[str | None, typer.Option(
        "--operation", metavar="OP", show_default=False,
        help="The operation asked for (Read, Write, Describe ...).")] = None,
    topic: Annotated[list[str] | None, typer.Option(
        "--topic", metavar="TOPIC", show_default=False, help="The topic asked for.")] = None,
    group: Annotated[list[str] | None, typer.Option(
        "--group", metavar="GROUP", show_default=False,
        help="The consumer group asked for.")] = None,
    kafka_cluster: ClusterResOpt = False,
    transactional_id: Annotated[list[str] | None, typer.Option(
        "--transactional-id", metavar="ID", show_default=False,
        help="The transactional id asked for.")] = None,
    host: Annotated[str, typer.Option(
        "--host", metavar="HOST", help="The client's address.")] = "127.0.0.1",
    json_output: JsonOption = False,
) -> None:
    """Say whether a principal is allowed, and why.

    ALLOWED or DENIED (exit status 0 / 1) with what decided: the DENY that matched, the
    ALLOW (and the operation it implies), the super user, or no ACL on the resource
    (allow.everyone.if.no.acl.found). The same function the cluster authorizes requests
    with (Kafka's StandardAuthorizer rules).
    """
    from jetlink.core.kafka.acls import (
        check_operation,
        client_address,
        host_of,
        operation_of,
        parse_principal,
        resource_name_of,
    )

    app = App.of(ctx)
    if common.rest_settings(app) is not None:
        raise common.usage("acls check runs on the data directory's cluster: REST API v3 "
                           "has no operation for it (leave out --rest-url and the "
                           "context's rest_url)")
    if principal is None or operation is None:
        raise common.usage("acls check needs --principal and --operation")
    # (each resource option a list: one given twice is refused, never the last one asked)
    resources = _resources(topic or None, group or None, kafka_cluster,
                           transactional_id or None, required=True)
    if len(resources) != 1:
        raise common.usage("acls check takes one resource: --topic, --group, --kafka-cluster "
                           "or --transactional-id, once")
    (rt, name), = resources
    name = resource_name_of(name)
    op = operation_of(operation)
    if op == "ALL":
        raise common.usage("acls check asks about one operation a request needs (Read, "
                           "Write, Describe ...): ALL is what an ACL grants, never what a "
                           "request asks for")
    check_operation(rt, op)
    # (the client's address as Kafka's authorizer compares it: ::1 is 0:0:0:0:0:0:0:1)
    asking, client = parse_principal(principal, acting=True), client_address(host_of(host))
    # a request comes from one principal and one address: User:* and * are what an ACL
    # matches every principal or host with (Kafka's wildcards), never a request's
    if asking.partition(":")[2] == "*":
        raise common.usage(f"acls check --principal {asking}: a request comes from one "
                           "principal (User:alice); User:* is the ACL wildcard that matches "
                           "every user")
    if client == "*":
        raise common.usage("acls check --host *: a request comes from one address "
                           "(127.0.0.1, the default); * is the ACL wildcard that matches "
                           "every host")
    d = _store(app).authorize(asking, op, rt, name, client)
    doc = d.to_json()

    def human(a: App, x: dict[str, Any]) -> None:
        output.line(a, f"{x['result']}: {x['principal']} {x['operation']} on "
                       f"{x['resource_type']} {x['resource_name']} from {x['host']}: "
                       f"{x['reason']}")

    app.emit(doc, human=human)
    if not d.allowed:
        raise typer.Exit(1)


# -- kafka-acls -----------------------------------------------------------------------------


def kafka_acls(
    ctx: typer.Context,
    add_: Annotated[bool, typer.Option("--add", help="Add ACLs.")] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Remove ACLs.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List ACLs.")] = False,
    allow_principal: Annotated[list[str] | None, typer.Option(
        "--allow-principal", metavar="P", show_default=False,
        help="A principal the ACLs allow (User:alice). Repeatable.")] = None,
    deny_principal: Annotated[list[str] | None, typer.Option(
        "--deny-principal", metavar="P", show_default=False,
        help="A principal the ACLs deny. Repeatable.")] = None,
    allow_host: Annotated[list[str] | None, typer.Option(
        "--allow-host", metavar="H", show_default=False,
        help="The hosts of --allow-principal (default *). Repeatable.")] = None,
    deny_host: Annotated[list[str] | None, typer.Option(
        "--deny-host", metavar="H", show_default=False,
        help="The hosts of --deny-principal (default *). Repeatable.")] = None,
    principal: Annotated[list[str] | None, typer.Option(
        "--principal", metavar="[P]", show_default=False,
        help="With --list: only this principal's ACLs (no value: every ACL). "
        "Repeatable.")] = None,
    operation: OperationOpt = None,
    topic: TopicOpt = None,
    group: GroupOpt = None,
    cluster_res: Annotated[bool, typer.Option(
        "--cluster", help="The cluster resource (kafka-cluster).")] = False,
    transactional_id: TxnOpt = None,
    delegation_token: Annotated[list[str] | None, typer.Option(
        "--delegation-token", metavar="ID", show_default=False,
        help="A delegation token (* every token). Repeatable.")] = None,
    user_principal: Annotated[list[str] | None, typer.Option(
        "--user-principal", metavar="P", show_default=False,
        help="A user principal as the resource (for CreateTokens / DescribeTokens). "
        "Repeatable.")] = None,
    pattern_type: Annotated[str, typer.Option(
        "--resource-pattern-type", metavar="TYPE",
        help="literal (default), prefixed, match or any (the last two with --list and "
        "--remove).")] = "literal",
    producer: Annotated[bool, typer.Option(
        "--producer", help="WRITE, DESCRIBE and CREATE on the topics.")] = False,
    consumer: Annotated[bool, typer.Option(
        "--consumer", help="READ and DESCRIBE on the topics, READ on the groups.")] = False,
    idempotent: Annotated[bool, typer.Option(
        "--idempotent", help="With --producer: IDEMPOTENT_WRITE on the cluster.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Remove without asking.")] = False,
    bootstrap_server: Annotated[str | None, typer.Option(
        "--bootstrap-server", metavar="HOST:PORT", show_default=False,
        help="Selects the cluster when it (or its host) names a cluster of the data "
        "directory (a change is refused when it names none and no cluster is named "
        "otherwise).")] = None,
    bootstrap_controller: Annotated[str | None, typer.Option(
        "--bootstrap-controller", metavar="HOST:PORT", show_default=False,
        help="As --bootstrap-server (kafka-acls takes one of the two).")] = None,
    command_config: Annotated[str | None, typer.Option(
        "--command-config", metavar="FILE", show_default=False,
        help="Accepted and ignored.")] = None,
    json_output: JsonOption = False,
) -> None:
    """ACLs, kafka-acls syntax.

    One action: --add (with --allow-principal/--deny-principal, --operation or --producer
    / --consumer, and the resources), --remove (the same, or every ACL of the resources),
    --list (every ACL, or the resources' and --principal's). Prints what kafka-acls prints.
    """
    from jetlink.cli.kafka_tools import select_cluster
    from jetlink.core.kafka.acls import AclFilter, parse_principal, pattern_type_of

    app = App.of(ctx)
    if bootstrap_server is not None and bootstrap_controller is not None:
        raise common.usage("Only one of --bootstrap-server or --bootstrap-controller must be "
                           "specified")
    actions = [flag for flag, on in (("--add", add_), ("--remove", remove), ("--list", list_))
               if on]
    if len(actions) != 1:  # AclCommand checkArgs' text
        raise common.usage("Command must include exactly one action: --list, --add, --remove.")
    action = actions[0]
    given = {flag for flag, on in (
        ("--list", list_), ("--producer", producer), ("--consumer", consumer),
        ("--allow-host", allow_host), ("--allow-principal", allow_principal),
        ("--deny-host", deny_host), ("--deny-principal", deny_principal),
        ("--operation", operation is not None), ("--principal", principal),
        ("--topic", topic), ("--group", group), ("--cluster", cluster_res),
        ("--transactional-id", transactional_id), ("--idempotent", idempotent)) if on}
    _check_kafka_acls_args(given)
    if action == "--add" and pattern_type.strip().upper() in ("MATCH", "ANY"):
        raise common.usage(f"A '--resource-pattern-type' value of "
                           f"'{pattern_type.strip().upper()}' is not valid when adding acls.")
    # joptsimple converts the value as it parses (AclCommand PatternTypeConverter): a type
    # that is none is refused whatever the action, also where no resource would use it
    pattern_type_of(pattern_type, filter_=action != "--add")
    app.reading = action == "--list"
    app.existing = True  # an ACL lives in a cluster's authorizer (cluster authorizer)
    if bootstrap_controller is not None:
        select_cluster(app, bootstrap_controller, command_config, flag="--bootstrap-controller")
    else:
        select_cluster(app, bootstrap_server, command_config)
    # Every option is checked before the cluster is asked (kafka-acls checks its arguments
    # before the broker answers, SECURITY_DISABLED included). As AclCommand: names,
    # principals and hosts trimmed; the cluster resource only with the literal pattern type.
    topic = [t.strip() for t in topic or []] or None
    group = [g.strip() for g in group or []] or None
    tokens = [t.strip() for t in delegation_token or []] or None
    users = [u.strip() for u in user_principal or []] or None
    literal = pattern_type.strip().upper() == "LITERAL"
    others = topic or group or transactional_id or tokens or users
    if cluster_res and not literal and not others and action != "--list":
        raise common.usage(f"--cluster is the cluster resource kafka-cluster, a literal "
                           f"name: with --resource-pattern-type {pattern_type} it is no "
                           f"resource ({_NO_RESOURCE})")
    resources = _resources(topic, group, cluster_res and literal, transactional_id,
                           required=action != "--list", cluster_flag="--cluster",
                           tokens=tokens, users=users, missing=_NO_RESOURCE)
    if action == "--list":
        filters = [AclFilter.make(rt, name, pattern_type) for rt, name in resources] or \
            [AclFilter.make(None, None, "any")]
        names = [parse_principal(p.strip()) for p in principal or [] if p != _NO_VALUE]
        store = _enforcing(app)
        _kafka_list(app, store, filters, names)
        return
    entries = _entries(allow_principal, deny_principal, allow_host, deny_host)
    # AclCommand validateOperation checks the operations of the entries made: with no
    # principal there are none (--remove then removes every ACL of the resources)
    per_resource = _wanted_ops(resources, operation, producer, consumer, idempotent,
                               check=bool(entries))
    if action == "--add":
        plan = _add_plan(per_resource, entries, pattern_type)
        _kafka_add(app, _enforcing(app), plan)
        _hosts_unused(app, allow_principal, deny_principal, allow_host, deny_host)
        _warn_unmatched(app, [b for wanted in plan for b in wanted])
    else:
        filters = _remove_filters(per_resource, entries, pattern_type)
        _kafka_remove(app, _enforcing(app), filters, force)


# AclCommand getResourceFilter's text when no resource is given
_NO_RESOURCE = ("You must provide at least one resource: --topic <topic> or --cluster or "
                "--group <group> or --delegation-token <Delegation Token ID>")


def _check_kafka_acls_args(given: set[str]) -> None:
    """kafka-acls' own argument checks (AclCommand ``checkArgs``), in its order: options
    that exclude each other, and what --principal, --producer, --idempotent and --consumer
    need."""
    excluded = (
        ("--list", ("--producer", "--consumer", "--allow-host", "--allow-principal",
                    "--deny-host", "--deny-principal")),
        ("--producer", ("--operation", "--deny-principal", "--deny-host")),
        ("--consumer", ("--operation", "--deny-principal", "--deny-host")),
    )
    for used, others in excluded:
        for other in others:
            if used in given and other in given:
                # joptsimple names an option [list] (CommandLineUtils checkInvalidArgs)
                raise common.usage(f'Option "[{used[2:]}]" can\'t be used with option '
                                   f'"[{other[2:]}]"')
    if "--principal" in given and "--list" not in given:
        raise common.usage("The --principal option is only available if --list is set")
    if "--producer" in given and "--topic" not in given:
        raise common.usage("With --producer you must specify a --topic")
    if "--idempotent" in given and "--producer" not in given:
        raise common.usage("The --idempotent option is only available if --producer is set")
    if "--consumer" in given and (
            not {"--topic", "--group"} <= given
            or ("--producer" not in given and given & {"--cluster", "--transactional-id"})):
        raise common.usage("With --consumer you must specify a --topic and a --group and no "
                           "--cluster or --transactional-id option should be specified.")


def _enforcing(app: App) -> Any:
    """The cluster's ACL store, when the cluster enforces ACLs (SECURITY_DISABLED 54
    otherwise, as a broker without an authorizer answers)."""
    store = _store(app)
    store.require()
    return store


def _warn_unmatched(app: App, bindings: Sequence[Any]) -> None:
    """A warning on stderr per principal or host of the ACLs added that matches no client
    (core/kafka/acls.py ``binding_warnings``): Kafka takes them, and says nothing."""
    from jetlink.core.kafka.acls import binding_warnings

    for text in binding_warnings(bindings):
        output.notice(app, f"jetlink: warning: {text}")


def _hosts_unused(app: App, allow_p: list[str] | None, deny_p: list[str] | None,
                  allow_h: list[str] | None, deny_h: list[str] | None) -> None:
    """kafka-acls's hosts belong to their side (AclCommand getHosts): an --allow-host
    without --allow-principal (or a --deny-host without --deny-principal) is not used, and
    a --deny-principal without --deny-host denies from every host whatever --allow-host
    says. Kafka says neither; a warning on stderr does."""
    for hosts, principals, side in ((allow_h, allow_p, "allow"), (deny_h, deny_p, "deny")):
        if hosts and not principals:
            output.notice(app, f"jetlink: warning: --{side}-host {', '.join(hosts)} is not "
                               f"used: it is the host of --{side}-principal, and none is given")
    if deny_p and allow_h and not deny_h:
        output.notice(app, "jetlink: warning: --deny-principal without --deny-host denies "
                           "from every host (*): --allow-host is the host of "
                           "--allow-principal only")


def _entries(allow_p: list[str] | None, deny_p: list[str] | None, allow_h: list[str] | None,
             deny_h: list[str] | None) -> list[tuple[str, str, str]]:
    """(principal, host, permission) of the flags (a host defaults to * for its side)."""
    from jetlink.core.kafka.acls import parse_principal

    out = [(parse_principal(p.strip()), h.strip(), "ALLOW")
           for p in allow_p or [] for h in allow_h or ["*"]]
    out += [(parse_principal(p.strip()), h.strip(), "DENY")
            for p in deny_p or [] for h in deny_h or ["*"]]
    return out


def _wanted_ops(resources: list[tuple[str, str]], operation: list[str] | None,
                producer: bool, consumer: bool, idempotent: bool, *, check: bool = True
                ) -> dict[tuple[str, str], list[str]]:
    """The operations per resource: --operation on each (``check``: each one the resource
    type takes), or the --producer / --consumer shortcuts (kafka-acls AclCommand's sets;
    the cluster's IDEMPOTENT_WRITE of --idempotent is on the literal kafka-cluster whatever
    --resource-pattern-type says: ``pattern_for``)."""
    from jetlink.core.kafka.acls import CLUSTER_NAME, check_operation, tool_operation

    if not (producer or consumer):
        wanted = {r: [tool_operation(o) for o in operation or ["All"]] for r in resources}
        for (rt, _name), ops in wanted.items():  # AclCommand validateOperation
            for op in ops if check else ():
                check_operation(rt, op)
        return wanted
    out: dict[tuple[str, str], list[str]] = {}
    for rt, name in resources:
        ops: list[str] = []
        if producer and rt == "TOPIC":
            ops += ["WRITE", "DESCRIBE", "CREATE"]
        if producer and rt == "TRANSACTIONAL_ID":
            ops += ["WRITE", "DESCRIBE"]
        if consumer and rt == "TOPIC":
            ops += ["READ", "DESCRIBE"]
        if consumer and rt == "GROUP":
            ops += ["READ"]
        if ops:
            out[(rt, name)] = list(dict.fromkeys(ops))
    if producer and idempotent:
        out[("CLUSTER", CLUSTER_NAME)] = ["IDEMPOTENT_WRITE"]
    return out


def _add_plan(per_resource: dict[tuple[str, str], list[str]],
              entries: list[tuple[str, str, str]], pattern_type: str) -> list[list[Any]]:
    """The bindings ``--add`` creates, one list per resource, each field checked."""
    from jetlink.core.kafka.acls import AclBinding, pattern_type_of

    if not entries:
        raise common.usage("You must specify one of: --allow-principal, --deny-principal when "
                           "trying to add ACLs.")
    pt = pattern_type_of(pattern_type)
    return [[AclBinding.make(rt, name, pattern_for(rt, pt), p, h, op, perm)
             for p, h, perm in entries for op in ops]
            for (rt, name), ops in per_resource.items()]


def pattern_for(resource_type: str, pattern_type: str) -> str:
    """The pattern type kafka-acls gives a resource: the one asked for, but LITERAL for the
    cluster (AclCommand's CLUSTER_RESOURCE_FILTER: kafka-cluster is one literal name)."""
    return "LITERAL" if resource_type == "CLUSTER" else pattern_type


def _remove_filters(per_resource: dict[tuple[str, str], list[str]],
                    entries: list[tuple[str, str, str]], pattern_type: str) -> list[Any]:
    """The filters ``--remove`` removes by: the entries' on each resource, or every ACL of
    the resources when no principal is given."""
    from jetlink.core.kafka.acls import AclFilter

    filters = []
    for (rt, name), ops in per_resource.items():
        pt = pattern_for(rt, pattern_type)
        if entries:
            filters += [AclFilter.make(rt, name, pt, p, h, op, perm)
                        for p, h, perm in entries for op in ops]
        else:
            filters.append(AclFilter.make(rt, name, pt))
    return filters


def _kafka_add(app: App, store: Any, plan: list[list[Any]]) -> None:
    """AclCommand.addAcls: per resource, "Adding ACLs for resource `R`: " and every ACL the
    command line asks for (one that exists is created again: nothing changes), then
    nothing more (the tool no longer lists the resource's ACLs after a change)."""
    # every resource's ACLs in one change before anything is printed: a reader that goes
    # away (`| head -1`) cuts the report short, never the change (the tool, whose
    # PrintStream swallows a broken pipe, creates them all too)
    created: list[Any] = store.add([b for wanted in plan for b in wanted])
    if app.json:
        output.print_json(_doc(created))
        return
    for wanted in plan:
        if wanted:
            output.lines(app, _acl_block(f"Adding ACLs for resource `{wanted[0].pattern()}`",
                                         list(dict.fromkeys(wanted))))  # (a set: once each)


def _acl_block(head: str, bindings: list[Any]) -> list[str]:
    """AclCommand's block, byte for byte: ``s"$head: $Newline ${acls.map("\t" +
    _).mkString(Newline)} $Newline"`` then println: the head and a space, a space before
    the first ACL's tab, a space after the last ACL, a blank line."""
    entries = ["\t" + b.entry() for b in bindings]
    entries[0] = " " + entries[0]
    entries[-1] += " "
    return [f"{head}: ", *entries, ""]


def _resynced(app: App, gone: list[Any], store: Any) -> None:
    """A warning per cluster link whose ACL sync creates again ACLs just removed: its
    acl.filters select them and the source cluster holds them, whoever made them
    (core/kafka/links.py ``acls_synced_again``). Through REST nothing is known here of the
    server's links or of who made an ACL (``store.owners`` answers None): no warning."""
    if not gone or store.owners(gone) is None:
        return
    from jetlink.core.kafka.links import Links

    again = Links(common.data_dir(app), app.cluster).acls_synced_again(gone)
    for link, n in again.items():
        output.notice(app, f"jetlink: warning: {n} of the ACLs removed {'is' if n == 1 else 'are'}"
                           f" created again by the next run of the ACL sync of cluster link "
                           f"{link} (acl.sync.enable): its acl.filters select them and the "
                           "source cluster holds them; change the link's acl.filters, or "
                           "remove them on the source, to keep them removed")


def _kafka_remove(app: App, store: Any, filters: list[Any], force: bool) -> None:
    """AclCommand.removeAcls: per resource filter, unless --force, its question (the ACLs
    the command line names, or "delete all ACLs" when it names no principal) answered on
    stdin, a terminal or not (AclCommand confirmAction: ``y`` in any case removes them,
    anything else leaves them); stdin ending before an answer removes nothing and is a usage
    error (exit 2), as a removal with no way to confirm it."""
    groups: dict[str, list[Any]] = {}  # resource filter (as Kafka writes it) -> its filters
    for f in filters:
        groups.setdefault(f.pattern(), []).append(f)
    removing: list[Any] = []
    for shown, flts in groups.items():
        named = [f for f in flts if f.principal is not None]
        if not named:
            question = (f"Are you sure you want to delete all ACLs for resource filter "
                        f"`{shown}`? (y/n)")
        else:
            aces = "\n".join("\t" + f.entry() for f in named)
            question = (f"Are you sure you want to remove ACLs: \n {aces} \n from resource "
                        f"filter `{shown}`? (y/n)")
        if force or _answered_yes(app, question):
            removing += flts
    if filters and not removing:  # every question answered no: AclCommand says no more
        if app.json:
            output.print_json(_doc([]))
        return
    gone = store.remove(removing)
    _resynced(app, gone, store)
    if app.json:
        output.print_json(_doc(sorted(gone)))
        return
    if not gone:  # AclCommand prints nothing of its own here: a filter that matched nothing
        output.notice(app, "jetlink: notice: no ACL matched: nothing removed")


def _answered_yes(app: App, question: str) -> bool:
    """AclCommand's confirmAction: ``question`` on stdout (stderr with --json: stdout holds
    the document), then one line of stdin: ``y`` (any case) is yes. No line at all (stdin
    at its end) is a usage error: nothing can confirm the removal."""
    import sys

    from jetlink.core.errors import UsageError

    if app.json:
        output.notice(app, question)
    else:
        output.line(app, question)
    answer = sys.stdin.readline()
    if not answer:
        raise UsageError("no answer on stdin to confirm the removal: answer y, or pass "
                         "--force (nothing was removed)")
    return answer.rstrip("\r\n").lower() == "y"


def _kafka_list(app: App, store: Any, filters: list[Any], principals: list[str]) -> None:
    """``--list``: the ACLs of ``filters``, only those of ``principals`` (checked) when
    given."""
    found = sorted({b for f in filters for b in store.find(f)})
    if app.json:
        wanted = set(principals)
        output.print_json(_doc([b for b in found if not wanted or b.principal in wanted]))
        return

    def block(bindings: list[Any]) -> None:
        by_pattern: dict[str, list[Any]] = {}
        for b in bindings:
            by_pattern.setdefault(b.pattern(), []).append(b)
        for pattern, bs in by_pattern.items():
            output.lines(app, _acl_block(f"Current ACLs for resource `{pattern}`", bs))

    if not principals:
        block(found)
        return
    for name in principals:
        output.line(app, f"ACLs for principal `{name}`")
        block([b for b in found if b.principal == name])


# What --principal holds when it is given without a value (no argument can hold NUL)
_NO_VALUE = "\0"


class _OptionalPrincipal(TyperCommand):
    """kafka-acls' ``--principal`` takes an optional argument (joptsimple
    ``withOptionalArg``): the next word is its value unless there is none or it looks like
    an option (starts with ``-``); without a value it filters nothing."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        out: list[str] = []
        for i, word in enumerate(args):
            if word == "--":
                out.extend(args[i:])
                break
            after = args[i + 1] if i + 1 < len(args) else None
            if word == "--cluster" and after is not None and not after.startswith("-"):
                # jetlink's own --cluster, given after the verb: kafka-acls' is the resource
                raise common.usage(
                    f"kafka-acls' --cluster is the cluster resource (the ACLs of the cluster "
                    f"itself) and takes no value: select cluster {after} with jetlink "
                    f"--cluster {after} kafka-acls ..., or --bootstrap-server {after}")
            out.append(word)
            after = args[i + 1] if i + 1 < len(args) else None
            if word == "--principal" and (after is None or (
                    after.startswith("-") and len(after) > 1)):
                out.append(_NO_VALUE)
        return list(super().parse_args(ctx, out))


def register(app: typer.Typer) -> None:
    app.add_typer(acls_app, name="acls")
    app.command("kafka-acls", cls=_OptionalPrincipal)(kafka_acls)
