"""``jetlink links ...``: cluster links (the ``kafka-cluster-links`` verbs).

A link is stored on its DESTINATION cluster, the one the command addresses (``--cluster``),
and names its source with ``--source-cluster NAME``, another cluster of the data directory.
The engine is ``jetlink.core.kafka.links.Links``; this module parses, calls it and prints
what ``kafka-cluster-links`` prints (``Cluster link 'L' creation successfully completed.``,
its ``--list`` and ``--describe`` lines), or REST v3 link data with ``--json``. With
``--rest-url`` (or a context's ``rest_url``) the same calls go to a REST API v3 endpoint
(cli/rest/remote.py ``RestLinks``, which returns the engine's LinkInfo): one rendering path.

Configurations come from ``--config-file F`` (a Java properties file), then repeated
``--config KEY=VALUE`` (later wins), then the filter JSON files (group, topic and ACL
filters); a filter configuration given
both as ``--config`` and as a JSON file is a usage error.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.common import data_dir, usage
from jetlink.cli.options import JsonOption, force_option, rest_callback

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.kafka.links import LinkInfo, Links

links_app = typer.Typer(
    name="links",
    help="Manage cluster links (kafka-cluster-links).\n\nA link lives on its "
    "destination cluster (--cluster) and copies from its source cluster (--source-cluster) "
    "into mirror topics (jetlink mirrors ...).\n\nWith --rest-url URL (before or after the "
    "verb; or a context's rest_url) the verbs call that REST API v3 endpoint, cluster ID "
    "--cluster, and print the same output.",
    no_args_is_help=True,
)
links_app.callback()(rest_callback)

RestUrlOpt = Annotated[str | None, common.rest_url_option()]
LinkArg = Annotated[str, typer.Argument(metavar="LINK", help="The cluster link's name.",
                                        autocompletion=completion.links)]
ConfigOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--config",
        "-c",
        metavar="K=V[,K=V...]",
        help="Link configurations (repeatable; a comma starts a new pair when K= follows), "
             "e.g. consumer.offset.sync.enable=true.",
        show_default=False,
    ),
]
ConfigFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--config-file",
        metavar="FILE",
        exists=True,
        dir_okay=False,
        help="Java properties file of link configurations (key=value lines, # comments).",
        show_default=False,
    ),
]
GroupFiltersOpt = Annotated[
    Path | None,
    typer.Option(
        "--consumer-group-filters-json-file",
        metavar="FILE",
        exists=True,
        dir_okay=False,
        help='JSON {"groupFilters": [...]}: consumer.offset.group.filters.',
        show_default=False,
    ),
]
TopicFiltersOpt = Annotated[
    Path | None,
    typer.Option(
        "--topic-filters-json-file",
        metavar="FILE",
        exists=True,
        dir_okay=False,
        help='JSON {"topicFilters": [...]}: auto.create.mirror.topics.filters.',
        show_default=False,
    ),
]
AclFiltersOpt = Annotated[
    Path | None,
    typer.Option(
        "--acl-filters-json-file",
        metavar="FILE",
        exists=True,
        dir_okay=False,
        help='JSON {"aclFilters": [...]}: acl.filters, the ACLs the link syncs.',
        show_default=False,
    ),
]


# -- helpers ----------------------------------------------------------------------------------


def _links(app: App) -> Links:
    """The engine's Links of --cluster, or, with --rest-url (or a context's rest_url), the
    same calls over REST v3 (cli/rest/remote.py)."""
    rest = common.rest_settings(app)
    if rest is not None:
        from jetlink.cli.rest.remote import RestLinks, open_client

        return RestLinks(open_client(app, rest))  # type: ignore[return-value]  # duck-typed
    from jetlink.core.kafka.links import Links

    store = data_dir(app)
    store.open_kind(app.cluster, "kafka", "cluster links")
    return Links.open(store, app.cluster, common.make_clock())


def _read_text(path: Path) -> str:
    """A properties or filters file's text (at most core/limits.py MAX_INPUT_FILE)."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.limits import read_input_file

    try:
        return read_input_file(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JetlinkError(f"cannot read {path}: not UTF-8 text ({exc.reason})") from None


def gather_configs(
    pairs: list[str] | None,
    config_file: Path | None,
    group_filters_file: Path | None,
    topic_filters_file: Path | None,
    acl_filters_file: Path | None = None,
) -> dict[str, str]:
    """The configurations of one command line: the properties file, then ``--config``
    pairs, then the filter JSON files."""
    from jetlink.core.kafka.links import parse_config_pairs, parse_properties, split_config_pairs

    configs: dict[str, str] = {}
    if config_file is not None:
        configs.update(parse_properties(_read_text(config_file)))
    configs.update(parse_config_pairs(split_config_pairs(pairs)))
    for path, key, flag in (
        (group_filters_file, "consumer.offset.group.filters", "--consumer-group-filters-json-file"),
        (topic_filters_file, "auto.create.mirror.topics.filters", "--topic-filters-json-file"),
        (acl_filters_file, "acl.filters", "--acl-filters-json-file"),
    ):
        if path is None:
            continue
        if key in configs:
            raise usage(f"{key} is given twice: by {flag} and by --config / --config-file")
        text = _read_text(path)
        if not text.strip():  # (as a value, "" would unset the filters: nothing said)
            raise usage(f"{flag} {str(path)!r}: the file is empty: it holds the JSON "
                        f"document of {key}")
        configs[key] = text
    return configs


def _warn(app: App, info: LinkInfo) -> None:
    if not app.json:
        for text in [*info.config.warnings(), *info.notices]:
            output.notice(app, f"jetlink: warning: {text}")


def list_line(info: LinkInfo, *, include_topics: bool = False) -> str:
    """One ``kafka-cluster-links --list`` line (Confluent Platform 7.x)."""
    text = (
        f"Link name: '{info.name}', link ID: '{info.link_id}', "
        f"remote cluster ID: '{info.source_cluster}', "
        f"local cluster ID: '{info.destination_cluster}', "
        f"remote cluster available: '{'true' if info.source_available else 'false'}', "
        f"link state: '{info.state}'"
    )
    if include_topics:
        text += f", topics: [{', '.join(info.topic_names)}]"
    return text


def describe_lines(info: LinkInfo) -> list[str]:
    """The ``kafka-cluster-links --describe`` lines: the link, then ``Configs:`` with the
    explicitly set configurations."""
    cfg = info.config
    first = (
        f"Link name: '{info.name}', link ID: '{info.link_id}', "
        f"remote cluster ID: '{info.source_cluster}', "
        f"local cluster ID: '{info.destination_cluster}', "
        f"link mode: '{cfg.get('link.mode')}', connection mode: '{cfg.get('connection.mode')}', "
        f"link state: '{info.state}', topics: [{', '.join(info.topic_names)}]"
    )
    # a sensitive value (sasl.jaas.config, passwords) is never shown: null, as REST lists it
    configs = ",".join(f"{k}={'null' if v is None else v}"
                       for k, v in cfg.public_json().items())
    lines = [first, f"Configs: {configs}".rstrip()]
    if info.link_error != "NO_ERROR":
        lines.append(f"Link error: {info.link_error}: {info.link_error_message or ''}")
    return lines


def render_describe(app: App, info: LinkInfo) -> None:
    for text in describe_lines(info):
        output.line(app, text)
    output.line(app)
    output.table(
        app,
        ("Name", "Value", "Default"),
        [
            # a sensitive value is null here as on the Configs: line (REST lists it so)
            [e["name"], "null" if e["value"] is None else e["value"],
             "yes" if e["is_default"] else "no"]
            for e in info.config.entries()
        ],
        title="Configurations",
        no_wrap=("Name",),
    )
    output.table(
        app,
        ("Task Name", "State", "Errors"),
        [
            [
                t.task_name,
                t.state,
                ", ".join(f'{e["error_code"]}: "{e["error_message"]}"' for e in t.errors),
            ]
            for t in info.tasks
        ],
        title="Tasks",
        no_wrap=("Task Name", "State"),
    )
    if info.principal is not None:
        output.line(app, f"Principal on the source: {info.principal}")


# -- commands ---------------------------------------------------------------------------------


@links_app.command("create")
def create(
    ctx: typer.Context,
    name: LinkArg,
    source_cluster: Annotated[
        str,
        typer.Option(
            "--source-cluster",
            metavar="NAME",
            help="The cluster of the data directory the link copies from.",
            show_default=False,
            autocompletion=completion.clusters,
        ),
    ],
    config: ConfigOpt = None,
    config_file: ConfigFileOpt = None,
    group_filters: GroupFiltersOpt = None,
    topic_filters: TopicFiltersOpt = None,
    acl_filters: AclFiltersOpt = None,
    validate_only: Annotated[
        bool, typer.Option("--validate-only", help="Check everything; create nothing.")
    ] = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Create a cluster link from a source cluster.

    The link is stored on this cluster (--cluster), its destination.
    Every configuration has Confluent's default (links describe LINK lists them);
    unknown keys and bad values are refused. consumer.offset.sync.enable=true needs group
    filters, auto.create.mirror.topics.enable=true topic filters, acl.sync.enable=true ACL
    filters (--acl-filters-json-file); cluster.link.prefix (at most 12 characters) can only
    be set here. The source cluster must exist and be up. With --json: the link (REST v3
    link data).
    """
    app = App.of(ctx)
    configs = gather_configs(config, config_file, group_filters, topic_filters, acl_filters)
    info = _links(app).create(name, source_cluster, configs, validate_only=validate_only)
    _warn(app, info)
    action = "validated" if validate_only else "completed"
    app.emit(
        info.to_json(),
        human=lambda a, _d: output.line(
            a, f"Cluster link '{name}' creation successfully {action}."
        ),
    )


@links_app.command("ls")
def ls(
    ctx: typer.Context,
    include_topics: Annotated[
        bool, typer.Option("--include-topics", help="Also list each link's mirror topics.")
    ] = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
    link: Annotated[str | None, typer.Option(
        "--link", metavar="LINK", help="Only this link (CLUSTER_LINK_NOT_FOUND when there "
        "is none).", show_default=False)] = None,
) -> None:
    """List the cluster links of this cluster.

    One kafka-cluster-links --list line per link (--link: that one). With --json: a list of
    links (REST v3 link data, topic_names included).
    """
    app = App.of(ctx)
    infos = [_links(app).get(link)] if link is not None else _links(app).list()

    def human(a: App, _docs: Any) -> None:
        if not infos:
            output.notice(a, "No cluster links found.")
        for info in infos:
            output.line(a, list_line(info, include_topics=include_topics))

    app.emit([i.to_json() for i in infos], human=human)


@links_app.command("describe")
def describe(ctx: typer.Context, name: LinkArg, rest_url: RestUrlOpt = None,
             json_output: JsonOption = False) -> None:
    """Show a link's state, configs and tasks.

    The kafka-cluster-links --describe lines, then every configuration with its value and
    whether it is the default, then the tasks (AclSync, AutoCreateMirror,
    ConsumerOffsetSync, TopicConfigsSync) with their state and errors, then the principal
    the source authorizes the link as (User:<username> of its sasl.jaas.config, else
    User:ANONYMOUS; no secret is ever shown). With --json: REST v3 link data plus configs
    and principal.
    """
    app = App.of(ctx)
    info = _links(app).get(name)
    doc = info.to_json(include_configs=True)
    if info.principal is not None:  # the source authorizes the link as this principal
        doc["principal"] = info.principal
    app.emit(doc, human=lambda a, _d: render_describe(a, info))


@links_app.command("alter")
def alter(
    ctx: typer.Context,
    name: LinkArg,
    config: ConfigOpt = None,
    delete_config: Annotated[
        list[str] | None,
        typer.Option(
            "--delete-config",
            metavar="KEY",
            help="Revert a configuration to its default (repeatable).",
            show_default=False,
        ),
    ] = None,
    config_file: ConfigFileOpt = None,
    group_filters: GroupFiltersOpt = None,
    topic_filters: TopicFiltersOpt = None,
    acl_filters: AclFiltersOpt = None,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Change a link's configurations.

    cluster.link.paused=true pauses the link (its mirrors become PAUSED), false resumes
    it; auto.create.mirror.topics.enable=false also clears the topic filters (and
    consumer.offset.sync.enable or acl.sync.enable turned off, their filters);
    cluster.link.prefix cannot change. With --json: the link as links describe --json.
    """
    app = App.of(ctx)
    configs = gather_configs(config, config_file, group_filters, topic_filters, acl_filters)
    if not configs and not delete_config:
        raise usage(
            "nothing to alter: give --config KEY=VALUE, --delete-config KEY, --config-file "
            "or a filters JSON file"
        )
    info = _links(app).alter(name, configs, delete=delete_config or ())
    _warn(app, info)
    app.emit(
        info.to_json(include_configs=True),
        human=lambda a, _d: output.line(a, f"Completed updating config for cluster-link {name}."),
    )


@links_app.command("delete")
def delete(
    ctx: typer.Context,
    name: LinkArg,
    force: Annotated[bool, force_option("Delete, even with mirror topics,")] = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Delete a cluster link.

    Refused while mirror topics use the link (delete, promote or fail them over first)
    unless -f/--force, which also skips the confirmation: the mirror topics then stop
    mirroring. Stopped mirrors lose their history with the link. Asks for confirmation on a
    terminal; without one, -f/--force is required.
    """
    delete_link(App.of(ctx), name, force=force, ask=True)


def delete_link(app: App, name: str, *, force: bool, ask: bool) -> None:
    """``links delete``: refused while mirror topics use the link unless ``force``;
    ``ask``: confirm first (on a terminal; without one ``force`` is required).
    kafka-cluster-links --delete asks nothing, as Confluent's tool does not (its --force
    only means: even with mirror topics)."""
    from jetlink.core.kafka.errors import KafkaError

    links = _links(app)
    links.get(name, with_topics=False)  # CLUSTER_LINK_NOT_FOUND before anything is asked
    if not force:
        topics = links.in_use(name)
        if topics:
            raise KafkaError(
                "CLUSTER_LINK_IN_USE",
                f"Cluster link '{name}' is in use by mirror topics: {', '.join(topics)}; "
                "delete, promote or fail them over first, or force the deletion with -f/--force",
                field="link_name",
            )
    if ask:
        output.confirm(
            app,
            f'Are you sure you want to delete cluster link "{name}"?',
            force=force,
            action=f"delete cluster link {name}",
        )
    clamps: list[Any] = []
    in_use = links.in_use(name) if force else []
    if in_use:
        # Failed over first, as mirrors failover does, so the consumer offsets it clamps are
        # printed (the delete's own failover of what is left reports none)
        from jetlink.cli.mirrors import _mirrors

        clamps = [c for r in _mirrors(app).failover(in_use, name, dry_run=False)
                  for c in r.clamps]
    stopped = links.delete(name, force=force)
    stopped = sorted(set(stopped) | set(in_use))
    if stopped and not app.json:
        output.notice(
            app, f"jetlink: mirror topics of link {name} stopped mirroring: {', '.join(stopped)}"
        )
    doc: dict[str, Any] = {"success": True}
    if clamps:
        doc["clamps"] = [c.to_json() for c in clamps]

    def human(a: App, _d: Any) -> None:
        for c in clamps:
            output.line(a, f"Clamped consumer group {c.group} on {c.topic} partition "
                           f"{c.partition}: offset {c.from_offset} -> {c.to_offset}")
        output.line(a, f"Cluster link '{name}' deletion successfully completed.")

    app.emit(doc, human=human)


# -- one configuration ------------------------------------------------------------------------

config_app = typer.Typer(
    name="config",
    help="One configuration of a link.\n\nRead, set or revert one key at a time (links alter "
    "changes several at once). With --rest-url (after links, or after the verb): REST v3's "
    "/links/LINK/configs/KEY (GET, PUT, DELETE).",
    no_args_is_help=True,
)
links_app.add_typer(config_app, name="config")

KeyArg = Annotated[str, typer.Argument(metavar="KEY", help="The configuration's name.")]


class EngineConfigs:
    """One configuration of a link of the embedded engine (what RestLinks does with
    getKafkaLinkConfigs / updateKafkaLinkConfig / deleteKafkaLinkConfig): entries as
    ``LinkConfig.entries``; an unknown key is the engine's error."""

    def __init__(self, links: Links) -> None:
        self.links = links

    def get_config(self, name: str, key: str) -> dict[str, Any]:
        """The link config data of ``key``: a link configuration, or a connection setting
        (set or not: one not set is "", as getKafkaLinkConfigs answers it); the engine's
        unknown-configuration error otherwise."""
        from jetlink.core.kafka.links import CONNECTION_CONFIGS, LINK_CONFIG_DEFAULTS, LinkConfig

        config = self.links.get(name, with_topics=False).config
        if key not in LINK_CONFIG_DEFAULTS and key not in CONNECTION_CONFIGS:
            LinkConfig.build({key: ""})  # raises the engine's unknown-configuration error
        return config.entry(key)

    def set_config(self, name: str, key: str, value: str) -> dict[str, Any]:
        self.links.alter(name, {key: value})
        return self.get_config(name, key)

    def delete_config(self, name: str, key: str) -> dict[str, Any]:
        self.links.alter(name, {}, delete=[key])
        return self.get_config(name, key)


def _configs_of(app: App) -> Any:
    links = _links(app)
    return links if common.rest_settings(app) is not None else EngineConfigs(links)


def _config_line(entry: dict[str, Any]) -> str:
    value = "(sensitive)" if entry["is_sensitive"] and not entry["value"] else entry["value"]
    default = " (default)" if entry["is_default"] else ""
    return f"{entry['name']}={'' if value is None else value}{default}"


@config_app.command("get")
def config_get(ctx: typer.Context, name: LinkArg, key: KeyArg, rest_url: RestUrlOpt = None,
               json_output: JsonOption = False) -> None:
    """Show one configuration of a link.

    Prints KEY=VALUE, with "(default)" when it is not set. With --json: REST v3 link
    config data (name, value, is_default, is_read_only, is_sensitive, source).
    """
    app = App.of(ctx)
    entry = _configs_of(app).get_config(name, key)
    app.emit(entry, human=lambda a, _d: output.line(a, _config_line(entry)))


# (a VALUE such as -5 is the value, not an unknown option: the engine names what is wrong)
@config_app.command("set", context_settings={"ignore_unknown_options": True})
def config_set(ctx: typer.Context, name: LinkArg, key: KeyArg,
               value: Annotated[str, typer.Argument(metavar="VALUE", help="The new value.")],
               rest_url: RestUrlOpt = None, json_output: JsonOption = False) -> None:
    """Set one configuration of a link.

    The same rules as links alter --config KEY=VALUE. With --json: the configuration as
    links config get --json.
    """
    app = App.of(ctx)
    entry = _configs_of(app).set_config(name, key, value)
    app.emit(entry, human=lambda a, _d: output.line(
        a, f"Completed updating config {key} for cluster-link {name}."))


@config_app.command("delete")
def config_delete(ctx: typer.Context, name: LinkArg, key: KeyArg, rest_url: RestUrlOpt = None,
                  json_output: JsonOption = False) -> None:
    """Revert one configuration to its default.

    As links alter --delete-config KEY. With --json: the configuration as links config get
    --json.
    """
    app = App.of(ctx)
    entry = _configs_of(app).delete_config(name, key)
    app.emit(entry, human=lambda a, _d: output.line(
        a, f"Completed reverting config {key} for cluster-link {name} to its default."))


def register(app: typer.Typer) -> None:
    app.add_typer(links_app, name="links")
