"""``jetlink kafka-mirrors`` and ``jetlink kafka-cluster-links``: the Kafka tools' own syntax.

Operators paste Confluent runbook lines (``kafka-mirrors --promote --topics T --link L
--bootstrap-server H:P --command-config F``). These two commands parse that syntax (exactly
one action flag, ``--topics T[,T...]``, ``--add-config k=v[,k=v]``) and call the verbs of
cli/mirrors.py and cli/links.py with the same values: the same engine (or REST v3 endpoint
with ``--rest-url``), the same output, the same exit statuses. Nothing else is decided here.

``--bootstrap-server`` selects the cluster when its value (or its host part) names a cluster
of the data directory, else the cluster in force applies (``--cluster``, JETLINK_CLUSTER, a
context's); it and ``--command-config`` are otherwise ignored (one notice on stderr says
so). A ``--cluster`` on the same command line naming another cluster is refused. One that
names no cluster, with no cluster named otherwise, is refused for a change.
A change made with neither ``--bootstrap-server`` nor ``--cluster`` says on stderr which
cluster it was made on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import common, completion
from jetlink.cli.app import App
from jetlink.cli.common import usage
from jetlink.cli.options import (
    WAIT,
    InsecureOption,
    JsonOption,
    RestApiKeyOption,
    RestApiSecretOption,
    RestTokenOption,
    RestUrlOption,
    rest_callback,
)
from jetlink.core.kafka.links import split_config_pairs
from jetlink.core.numbers import INT32_MAX

BootstrapOpt = Annotated[
    str | None,
    typer.Option("--bootstrap-server", metavar="HOST:PORT",
                 help="Selects the cluster when it (or its host) names a cluster of the data "
                 "directory; otherwise ignored, as --command-config (a change is refused "
                 "when no cluster is named otherwise).", show_default=False),
]
CommandConfigOpt = Annotated[
    str | None,
    typer.Option("--command-config", metavar="FILE",
                 help="Accepted and ignored (client properties of the Kafka tools).",
                 show_default=False),
]


def _flag(help_text: str, name: str) -> Any:
    return typer.Option(name, help=help_text)


# -- shared ---------------------------------------------------------------------------------


def one_action(tool: str, given: dict[str, bool]) -> str:
    """The one action flag given (``--promote``); none or several is a usage error naming
    them."""
    chosen = [flag for flag, on in given.items() if on]
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        raise usage(f"{tool}: give one action: {', '.join(given)}")
    raise usage(f"{tool}: give only one action, not {' and '.join(chosen)}")


def split_list(values: list[str] | None) -> list[str]:
    """``--topics a,b --topics c`` -> ``[a, b, c]`` (empty items dropped)."""
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def select_cluster(app: App, bootstrap_server: str | None, command_config: str | None, *,
                   flag: str = "--bootstrap-server") -> None:
    """``--bootstrap-server`` names the cluster when a cluster of the data directory has its
    value (or its first server's host) as name; one notice on stderr either way. One that
    names no cluster, without ``--cluster``, is refused (a read's answer would be the
    default cluster's, not the broker's). A change without either option
    and without ``--cluster`` names the cluster it is made on in one notice (as ``--list``
    does when ``--bootstrap-server`` names none)."""
    from jetlink.cli import output

    given = _cluster_named(app)
    if bootstrap_server is None and command_config is None:
        if not app.reading and given != "--cluster":
            # a change made where no option of this command line said: name the cluster
            why = given or "the default: no --cluster"
            output.notice(app, f"jetlink: notice: cluster {app.cluster} ({why})")
        return
    chosen = close = host = None
    if bootstrap_server:
        from jetlink.core.errors import did_you_mean

        chosen, host = _cluster_of_servers(app, bootstrap_server, flag)
        if chosen is None:
            close = did_you_mean(host, common.data_dir(app).cluster_names())
    if chosen is not None and given == "--cluster" and chosen != app.cluster:
        # two selectors of one command line naming two clusters: neither is guessed (a
        # --remove or a --failover made on the other cluster is not undone by a notice)
        raise usage(f"{flag} {bootstrap_server} selects cluster {chosen}, --cluster "
                    f"{app.cluster} another: give one of them (or both naming the same)")
    if chosen is not None:
        common.address_cluster(app, chosen)
        output.notice(app, f"jetlink: notice: {flag} {bootstrap_server} selects "
                           f"cluster {chosen}; {flag} and --command-config are "
                           "otherwise ignored")
    elif close is not None and not given:
        # a host one typo away from a cluster's name: answering for the default cluster
        # would be a wrong answer to a runbook line, not a rehearsal of it
        raise usage(f"{flag} {bootstrap_server}: no cluster of the data directory "
                    f"is named {host!r} (its host selects the cluster); {close} "
                    "(or give --cluster NAME)")
    elif bootstrap_server and not given:
        # a runbook line's broker is not the default cluster: the real tool would have
        # failed to connect; a change is not made there, and a read does not answer for it
        # ("No mirror topics found." read as the broker's answer)
        raise usage(f"{flag} {bootstrap_server}: no cluster of the data directory "
                    f"is named {host!r} (its host selects the cluster); give --cluster NAME "
                    f"to {'read' if app.reading else 'change'} cluster {app.cluster}")
    else:
        why = given or "the default: no --cluster"
        hint = f" ({close})" if close else ""
        output.notice(app, f"jetlink: notice: cluster {app.cluster} ({why}); "
                           f"{flag}{hint} and --command-config are ignored")


def _cluster_named(app: App) -> str | None:
    """Where the cluster in force was named, when it was: ``--cluster``, JETLINK_CLUSTER (the
    root option's environment variable) or the jetlink context in force (its ``cluster``);
    None: the default."""
    from jetlink.cli.app import ENV_CLUSTER
    from jetlink.core.errors import JetlinkError

    if app.ctx is None:
        return "--cluster"
    root = app.ctx.find_root()
    source = common.parameter_source(root, "cluster")
    if source == "ENVIRONMENT":
        return ENV_CLUSTER
    if common.given(root, "cluster"):
        return "--cluster"
    try:
        context = common.context_in_force(root)
    except JetlinkError:  # a broken context is reported by the command itself
        return None
    if context is not None and context.cluster:
        return f"jetlink context {context.name}"
    return None


def _link_source(app: App, source_cluster: str | None, config_file: Path | None,
                 pairs: list[str]) -> str | None:
    """The source cluster of a link ``--create`` makes: ``--cluster-id``, else the cluster
    its ``bootstrap.servers`` names (the last ``--config`` one, else ``--config-file``'s:
    the first host, or host:port, when it is a cluster of the data directory, as
    --bootstrap-server selects the destination; one notice says so). Given both, a
    bootstrap list naming another cluster of the data directory is a usage error: a link's
    bootstrap servers are its source cluster's brokers, and neither is guessed right."""
    servers, where, said = "", "", ""
    for pair in pairs:
        key, _eq, value = pair.partition("=")
        if key.strip() == "bootstrap.servers":
            servers, where = value.strip(), "--config bootstrap.servers"
            said = f"--config bootstrap.servers={servers}"
    if not where and config_file is not None:
        from jetlink.cli.links import _read_text
        from jetlink.core.kafka.links import parse_properties

        servers = parse_properties(_read_text(config_file)).get("bootstrap.servers") or ""
        where = "bootstrap.servers of --config-file"
        said = f"bootstrap.servers {servers} of --config-file"
    if not servers:
        return source_cluster
    name, _host = _cluster_of_servers(app, servers, f"{where}:")
    if source_cluster is None:
        if name is not None:
            from jetlink.cli import output

            output.notice(app, f"jetlink: notice: {said} names cluster {name}: the source "
                               "cluster")
        return name
    if name is not None and name != source_cluster:
        raise usage(f"{said} names cluster {name}, not --cluster-id "
                    f"{source_cluster}: a link's bootstrap servers are the brokers of its "
                    "source cluster (give one or make them agree)")
    return source_cluster


def _cluster_of_servers(app: App, servers: str, what: str = "--bootstrap-server"
                        ) -> tuple[str | None, str]:
    """The cluster of the data directory a Kafka server list names (its first server as
    HOST:PORT, or its host, is a cluster's name; None: none), and that host. A list whose
    servers name two clusters is a usage error naming ``what`` (a bootstrap list is the
    brokers of one cluster: neither is guessed)."""
    from jetlink.core.store.datadir import NAME_RE

    store = common.data_dir(app)

    def named(server: str) -> tuple[str | None, str]:
        server = server.strip()
        host = (server.rsplit(":", 1)[0] if ":" in server else server).strip("[]")
        for name in dict.fromkeys((server, host)):
            if name and NAME_RE.fullmatch(name) and store.has_cluster(name):
                return name, host
        return None, host

    each = [named(s) for s in servers.split(",")]
    clusters = list(dict.fromkeys(n for n, _h in each if n is not None))
    if len(clusters) > 1:
        raise usage(f"{what} {servers} names clusters {' and '.join(clusters)}: a bootstrap "
                    "list is the brokers of one cluster (give one of them)")
    return each[0]


def _link_of(app: App, topics: list[str], action: str) -> str:
    """The link of the mirror topics ``topics`` (``--topics`` without ``--link``, as
    kafka-mirrors takes them): each described; a topic that is no mirror is the describe's
    error; topics of several links are a usage error naming each link's."""
    from jetlink.cli import mirrors

    m = mirrors._mirrors(app)
    links: dict[str, list[str]] = {}
    for topic in dict.fromkeys(topics):
        links.setdefault(m.describe(topic).link_name, []).append(topic)
    if len(links) > 1:
        each = "; ".join(f"{', '.join(ts)} of link {name}" for name, ts in links.items())
        raise usage(f"{action} --topics names mirrors of {len(links)} links ({each}): run it "
                    "once per link (--link LINK --topics ...)")
    return next(iter(links))


def _need(value: Any, flag: str, action: str) -> Any:
    if not value:
        raise usage(f"{action} needs {flag}")
    return value


# -- kafka-mirrors --------------------------------------------------------------------------


def kafka_mirrors(
    ctx: typer.Context,
    describe: Annotated[bool, _flag("Describe mirror topics (mirrors describe).",
                                    "--describe")] = False,
    list_: Annotated[bool, _flag("List mirror topics (mirrors ls).", "--list")] = False,
    create: Annotated[bool, _flag("Create --mirror-topic (mirrors create).",
                                  "--create")] = False,
    promote: Annotated[bool, _flag("Promote --topics (mirrors promote).", "--promote")] = False,
    failover: Annotated[bool, _flag("Fail over --topics (mirrors failover).",
                                    "--failover")] = False,
    pause: Annotated[bool, _flag("Pause --topics (mirrors pause).", "--pause")] = False,
    unpause: Annotated[bool, _flag("Resume --topics (mirrors resume).", "--unpause")] = False,
    truncate_and_restore: Annotated[
        bool, _flag("Fail back one topic (mirrors truncate-and-restore).",
                    "--truncate-and-restore")] = False,
    reverse_and_start: Annotated[
        bool, typer.Option("--reverse-and-start", "--reverse-and-start-mirror",
                           help="Reverse one mirror (mirrors reverse-and-start).")] = False,
    reverse_and_pause: Annotated[
        bool, typer.Option("--reverse-and-pause", "--reverse-and-pause-mirror",
                           help="Reverse one mirror, the new one paused (mirrors "
                           "reverse-and-pause).")] = False,
    topics: Annotated[
        list[str] | None,
        typer.Option("--topics", metavar="TOPIC[,TOPIC...]",
                     help="Mirror topics, comma separated (repeatable).", show_default=False,
                     autocompletion=completion.mirror_topic_lists),
    ] = None,
    mirror_topic: Annotated[
        str | None,
        typer.Option("--mirror-topic", metavar="TOPIC", help="With --create: the mirror topic.",
                     show_default=False),
    ] = None,
    source_topic: Annotated[
        str | None,
        typer.Option("--source-topic", metavar="TOPIC",
                     help="With --create: the source topic (when the link has a prefix).",
                     show_default=False),
    ] = None,
    link: Annotated[
        str | None,
        typer.Option("--link", "--links", metavar="LINK", help="The cluster link.",
                     show_default=False, autocompletion=completion.links),
    ] = None,
    config: Annotated[
        list[str] | None,
        typer.Option("--config", metavar="K=V[,K=V...]",
                     help="With --create: topic configs not synced from the source.",
                     show_default=False),
    ] = None,
    replication_factor: Annotated[
        int | None,
        typer.Option("--replication-factor", metavar="N", min=-INT32_MAX - 1, max=INT32_MAX,
                     help="With --create: the mirror topic's replication factor (one broker "
                     "here: 1).", show_default=False),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would happen; change nothing "
                           "(with --create: --validate-only).")] = False,
    pending_stopped_only: Annotated[
        bool, typer.Option("--pending-stopped-only",
                           help="With --describe / --list: only PENDING_STOPPED mirrors.")
    ] = False,
    timeout: Annotated[
        str | None,
        typer.Option("--timeout", metavar="DURATION", parser=WAIT,
                     help="With --rest-url, --promote / --failover: how long to wait for "
                     "STOPPED.", show_default=False),
    ] = None,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    rest_url: RestUrlOption = None,
    rest_token: RestTokenOption = None,
    rest_api_key: RestApiKeyOption = None,
    rest_api_secret: RestApiSecretOption = None,
    insecure: InsecureOption = False,
    json_output: JsonOption = False,
) -> None:
    """Mirror topics, kafka-mirrors syntax.

    Exactly one action: --describe, --list, --create, --promote, --failover, --pause,
    --unpause, --truncate-and-restore, --reverse-and-start, --reverse-and-pause (each
    reverse action also spelled with -mirror, as the REST operations). Runs the jetlink
    mirrors verb of the same name, on the destination cluster, with the same output and
    exit status.
    """
    from jetlink.cli import mirrors

    rest_callback(ctx, rest_url, rest_token, rest_api_key, rest_api_secret, insecure)
    app = App.of(ctx)
    action = one_action("kafka-mirrors", {
        "--describe": describe, "--list": list_, "--create": create, "--promote": promote,
        "--failover": failover, "--pause": pause, "--unpause": unpause,
        "--truncate-and-restore": truncate_and_restore,
        "--reverse-and-start": reverse_and_start, "--reverse-and-pause": reverse_and_pause,
    })
    names = split_list(topics)
    if topics is not None and not names:  # (an unset $TOPICS in a runbook: never "all")
        raise usage(f"--topics {', '.join(repr(t) for t in topics)}: no topic named (an "
                    "empty list never means every mirror of the link; leave --topics out "
                    "for that)")
    if pending_stopped_only and action not in ("--describe", "--list"):
        raise usage(f"--pending-stopped-only applies to --describe and --list, not {action}")
    if dry_run and action in ("--describe", "--list"):
        raise usage(f"--dry-run does not apply to {action}")
    if timeout is not None and action not in ("--promote", "--failover"):
        raise usage(f"--timeout applies to --promote and --failover, not {action}")
    if action != "--create" and (mirror_topic or source_topic or config
                                 or replication_factor is not None):
        raise usage(f"--mirror-topic, --source-topic, --config and --replication-factor "
                    f"apply to --create, not {action}")
    if action in ("--create", "--list") and names:
        raise usage(f"--topics does not apply to {action}"
                    + (" (use --mirror-topic)" if action == "--create" else ""))
    alters = ("--promote", "--failover", "--pause", "--unpause")
    if action not in ("--describe", "--list") and not (action in alters and names):
        _need(link, "--link LINK" + (" (every mirror of it) or --topics TOPIC[,TOPIC...]"
                                     if action in alters else ""), action)
    app.reading = action in ("--describe", "--list")
    app.existing = True  # every action needs a link (a cluster of the data directory)
    select_cluster(app, bootstrap_server, command_config)
    if action in alters and link is None:
        link = _link_of(app, names, action)

    if action == "--describe":
        mirrors.describe(ctx, topics=names or None, link=link,
                         pending_stopped_only=pending_stopped_only)
    elif action == "--list":
        mirrors.ls(ctx, link=link, pending_stopped_only=pending_stopped_only)
    elif action == "--create":
        mirrors.create(ctx, _need(mirror_topic, "--mirror-topic TOPIC", action), link,
                       source_topic=source_topic, config=split_config_pairs(config) or None,
                       replication_factor=replication_factor, validate_only=dry_run)
    elif action in ("--promote", "--failover", "--pause", "--unpause"):
        verb = {"--promote": mirrors.promote, "--failover": mirrors.failover,
                "--pause": mirrors.pause, "--unpause": mirrors.resume}[action]
        extra = {"timeout": timeout} if action in ("--promote", "--failover") else {}
        verb(ctx, link=link, topics=names or None, dry_run=dry_run, **extra)
    else:
        if len(names) != 1:
            raise usage(f"{action} needs exactly one topic: --topics TOPIC")
        verb = {"--truncate-and-restore": mirrors.truncate_and_restore,
                "--reverse-and-start": mirrors.reverse_and_start,
                "--reverse-and-pause": mirrors.reverse_and_pause}[action]
        verb(ctx, names[0], link, dry_run=dry_run)


# -- kafka-cluster-links --------------------------------------------------------------------


def kafka_cluster_links(
    ctx: typer.Context,
    list_: Annotated[bool, _flag("List the links (links ls).", "--list")] = False,
    create: Annotated[bool, _flag("Create --link (links create).", "--create")] = False,
    describe: Annotated[bool, _flag("Describe --link (links describe).",
                                    "--describe")] = False,
    delete: Annotated[bool, _flag("Delete --link (links delete).", "--delete")] = False,
    alter: Annotated[bool, _flag("Change --link's configs (links alter).", "--alter")] = False,
    link: Annotated[
        str | None,
        typer.Option("--link", metavar="LINK", help="The cluster link.", show_default=False,
                     autocompletion=completion.links),
    ] = None,
    source_cluster: Annotated[
        str | None,
        typer.Option("--source-cluster", "--cluster-id", metavar="NAME",
                     help="With --create: the source cluster (a cluster of the data "
                     "directory).", show_default=False, autocompletion=completion.clusters),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option("--config-file", metavar="FILE", exists=True, dir_okay=False,
                     help="Java properties file of link configurations.", show_default=False),
    ] = None,
    group_filters: Annotated[
        Path | None,
        typer.Option("--consumer-group-filters-json-file", metavar="FILE", exists=True,
                     dir_okay=False, help='JSON {"groupFilters": [...]}.', show_default=False),
    ] = None,
    topic_filters: Annotated[
        Path | None,
        typer.Option("--topic-filters-json-file", metavar="FILE", exists=True,
                     dir_okay=False, help='JSON {"topicFilters": [...]}.', show_default=False),
    ] = None,
    acl_filters: Annotated[
        Path | None,
        typer.Option("--acl-filters-json-file", metavar="FILE", exists=True,
                     dir_okay=False, help='JSON {"aclFilters": [...]}: acl.filters.',
                     show_default=False),
    ] = None,
    add_config: Annotated[
        list[str] | None,
        typer.Option("--add-config", "--config", metavar="K=V[,K=V...]",
                     help="With --alter (or --create): configurations to set.",
                     show_default=False),
    ] = None,
    delete_config: Annotated[
        list[str] | None,
        typer.Option("--delete-config", metavar="K[,K...]",
                     help="With --alter: configurations reverted to their default.",
                     show_default=False),
    ] = None,
    include_topics: Annotated[
        bool, typer.Option("--include-topics", help="With --list: each link's mirror topics.")
    ] = False,
    validate_only: Annotated[
        bool, typer.Option("--validate-only", help="With --create: check; create nothing.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", "-f", help="With --delete: delete even with mirror "
                           "topics (they stop mirroring). --delete asks no confirmation, as "
                           "Confluent's tool asks none.")
    ] = False,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    rest_url: RestUrlOption = None,
    rest_token: RestTokenOption = None,
    rest_api_key: RestApiKeyOption = None,
    rest_api_secret: RestApiSecretOption = None,
    insecure: InsecureOption = False,
    json_output: JsonOption = False,
) -> None:
    """Cluster links, kafka-cluster-links syntax.

    Exactly one action: --list, --create, --describe, --delete, --alter. Runs the jetlink
    links verb of the same name, on the destination cluster, with the same output and exit
    status.
    """
    from jetlink.cli import links

    rest_callback(ctx, rest_url, rest_token, rest_api_key, rest_api_secret, insecure)
    app = App.of(ctx)
    action = one_action("kafka-cluster-links", {
        "--list": list_, "--create": create, "--describe": describe, "--delete": delete,
        "--alter": alter,
    })
    configs_given = bool(config_file or group_filters or topic_filters or acl_filters
                         or add_config)
    if action in ("--list", "--describe", "--delete") and (configs_given or delete_config):
        raise usage(f"configuration options do not apply to {action}")
    if delete_config and action != "--alter":
        raise usage(f"--delete-config applies to --alter, not {action}")
    if source_cluster and action != "--create":
        raise usage(f"--cluster-id / --source-cluster apply to --create, not {action}")
    if validate_only and action != "--create":
        raise usage(f"--validate-only applies to --create, not {action}")
    if force and action != "--delete":
        raise usage(f"--force applies to --delete, not {action}")
    if include_topics and action != "--list":
        raise usage(f"--include-topics applies to --list, not {action}")
    if action != "--list":
        _need(link, "--link LINK", action)
    app.reading = action in ("--describe", "--list")
    app.existing = True  # a link comes from another cluster of the data directory
    select_cluster(app, bootstrap_server, command_config)
    pairs = split_config_pairs(add_config) or None
    if action == "--create":
        source_cluster = _link_source(app, source_cluster, config_file, pairs or [])
        _need(source_cluster, "--cluster-id NAME (the source cluster; or a --config-file "
              "whose bootstrap.servers host names a cluster of the data directory)", action)

    if action == "--list":
        links.ls(ctx, include_topics=include_topics, link=link)
    elif action == "--create":
        links.create(ctx, link, source_cluster, config=pairs, config_file=config_file,
                     group_filters=group_filters, topic_filters=topic_filters,
                     acl_filters=acl_filters, validate_only=validate_only)
    elif action == "--describe":
        links.describe(ctx, link)
    elif action == "--delete":  # no question, as Confluent's tool asks none
        links.delete_link(app, link, force=force, ask=False)
    else:
        links.alter(ctx, link, config=pairs, delete_config=split_list(delete_config) or None,
                    config_file=config_file, group_filters=group_filters,
                    topic_filters=topic_filters, acl_filters=acl_filters)


def register(app: typer.Typer) -> None:
    app.command("kafka-mirrors")(kafka_mirrors)
    app.command("kafka-cluster-links")(kafka_cluster_links)
