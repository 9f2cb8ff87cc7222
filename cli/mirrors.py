"""``jetlink mirrors ...``: mirror topics of cluster links (the ``kafka-mirrors`` verbs).

Commands run on the DESTINATION cluster (``--cluster``), where the link and its mirror topics
live. The engine is ``jetlink.core.kafka.mirrors.Mirrors``; this module parses, calls it and
prints what ``kafka-mirrors`` prints (its lines for create / promote / failover, its
tab-separated ``--describe``), or the REST v3 documents with ``--json``. With ``--rest-url``
(or a context's ``rest_url``) the same calls go to a REST API v3 endpoint (cli/rest/remote.py
``RestMirrors``, which returns the engine's MirrorInfo / AlterResult): one rendering path.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.common import data_dir
from jetlink.cli.options import WAIT, JsonOption, rest_callback
from jetlink.core.numbers import INT32_MAX

mirrors_app = typer.Typer(
    name="mirrors",
    help="Manage mirror topics (kafka-mirrors).\n\nThe kafka-mirrors verbs. Run on the "
    "destination cluster (--cluster), where the link and its mirror topics live.\n\nWith "
    "--rest-url URL (before or after the verb; or a context's rest_url) the verbs call that "
    "REST API v3 endpoint, cluster ID --cluster, and print the same output "
    "(create --validate-only excepted: Confluent's createKafkaMirrorTopic has no validate-only "
    "form).",
    no_args_is_help=True,
)
mirrors_app.callback()(rest_callback)

RestUrlOpt = Annotated[str | None, common.rest_url_option()]
LinkOpt = Annotated[str, typer.Option("--link", "-l", metavar="LINK", help="The cluster link.",
                                      autocompletion=completion.links)]
TopicsArg = Annotated[
    list[str] | None,
    typer.Argument(metavar="[TOPIC]...", help="Mirror topics (none: every mirror of --link).",
                   autocompletion=completion.mirror_topics),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Report what would happen; change nothing.")
]
TimeoutOpt = Annotated[
    str | None,
    typer.Option("--timeout", metavar="DURATION", parser=WAIT,
                 help="With --rest-url: how long to wait for the mirrors to reach STOPPED "
                 "(default 60s; the local engine stops them at once).", show_default=False),
]


def _mirrors(app: App, *, wait_seconds: float | None = None) -> Any:
    """The engine's Mirrors of --cluster, or, with --rest-url (or a context's rest_url), the
    same calls over REST v3 (cli/rest/remote.py); ``wait_seconds``: how long a remote
    promote / failover waits for its mirrors to reach STOPPED."""
    rest = common.rest_settings(app)
    if rest is not None:
        from jetlink.cli.rest.remote import DEFAULT_WAIT_SECONDS, RestMirrors, open_client, spinner

        return RestMirrors(open_client(app, rest), progress=spinner(app),
                           wait_seconds=DEFAULT_WAIT_SECONDS if wait_seconds is None
                           else wait_seconds)
    from jetlink.core.kafka.mirrors import Mirrors

    store = data_dir(app)
    store.open_kind(app.cluster, "kafka", "mirror topics")
    return Mirrors(store, app.cluster, common.make_clock())


def _configs(pairs: list[str] | None) -> dict[str, str]:
    from jetlink.core.kafka.links import parse_config_pairs, split_config_pairs

    return parse_config_pairs(split_config_pairs(pairs))


def _ms_time(ms: int) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


# -- create ----------------------------------------------------------------------------------


@mirrors_app.command("create")
def create(
    ctx: typer.Context,
    topic: Annotated[str, typer.Argument(metavar="TOPIC", help="The mirror topic's name.")],
    link: LinkOpt,
    source_topic: Annotated[
        str | None,
        typer.Option("--source-topic", metavar="TOPIC",
                     help="The source topic (needed when the link has a prefix)."),
    ] = None,
    config: Annotated[
        list[str] | None,
        typer.Option("--config", "-c", metavar="K=V[,K=V...]",
                     help="Topic configs that are not synced from the source (repeatable; a "
                          "comma starts a new pair when K= follows)."),
    ] = None,
    replication_factor: Annotated[
        int | None,
        typer.Option("--replication-factor", metavar="N", min=-INT32_MAX - 1, max=INT32_MAX,
                     help="The mirror topic's replication factor (one broker here: 1).",
                     show_default=False),
    ] = None,
    validate_only: Annotated[
        bool, typer.Option("--validate-only", "--dry-run",
                           help="Check every condition; create nothing (--dry-run, as the "
                           "other mirrors verbs and kafka-mirrors --create take it).")
    ] = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Create a mirror topic.

    Like kafka-mirrors --create. The link must be stored in this cluster, ACTIVE and in
    DESTINATION mode; the source topic must exist on the link's source cluster under the
    same name (after the link's prefix), and no topic of that name may exist here.
    --validate-only is refused with --rest-url: Confluent's REST API cannot validate a
    mirror topic without creating it.
    """
    app = App.of(ctx)
    info = _mirrors(app).create(topic, link, source_topic=source_topic,
                                configs=_configs(config), validate_only=validate_only,
                                replication_factor=replication_factor)

    def human(a: App, _doc: Any) -> None:
        if validate_only:
            output.line(a, f"Topic {topic} can be created as a mirror of "
                           f"{info.source_topic_name} through link {link}.")
        else:
            output.line(a, f"Created topic {topic}.")

    app.emit(info.to_json(), human=human)


# -- list / describe -------------------------------------------------------------------------


@mirrors_app.command("ls")
def ls(
    ctx: typer.Context,
    link: Annotated[
        str | None, typer.Option("--link", "-l", metavar="LINK", help="Only this link.",
                                 autocompletion=completion.links)
    ] = None,
    mirror_status: Annotated[
        str | None,
        typer.Option("--mirror-status", metavar="STATUS",
                     help="Only mirrors in this status (ACTIVE, PAUSED, STOPPED, ...)."),
    ] = None,
    pending_stopped_only: Annotated[
        bool, typer.Option("--pending-stopped-only", help="Only PENDING_STOPPED mirrors.")
    ] = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """List mirror topics.

    Like confluent kafka mirror list.

    Columns: Link Name, Mirror Topic Name, Source Topic Name, Mirror Status, Status Time
    (ms), Num Partition, Max Per Partition Mirror Lag. Stopped mirrors are listed as long as
    their link exists.
    """
    app = App.of(ctx)
    m = _mirrors(app)
    # a bad value of an option is a usage error (exit 2); the statuses are those of the
    # API called (the REST API's enum is longer than the engine's)
    if mirror_status is not None and mirror_status.upper() not in m.statuses:
        raise common.usage(f"invalid value for --mirror-status: {mirror_status!r}: one of "
                           f"{', '.join(m.statuses)}")
    infos = m.list(link, mirror_status, pending_stopped_only)
    docs = [dict(i.to_json(), status_time_ms=i.status_time_ms,
                 max_per_partition_mirror_lag=i.max_per_partition_mirror_lag) for i in infos]

    def human(a: App, _docs: Any) -> None:
        if not infos:
            output.notice(a, "No mirror topics found.")
            return
        output.table(
            a,
            ("Link Name", "Mirror Topic Name", "Source Topic Name", "Mirror Status",
             "Status Time (ms)", "Num Partition", "Max Per Partition Mirror Lag"),
            [[i.link_name, i.mirror_topic_name, i.source_topic_name, i.mirror_status,
              str(i.status_time_ms), str(i.num_partitions),
              str(i.max_per_partition_mirror_lag)] for i in infos],
            no_wrap=("Mirror Topic Name",),
        )

    app.emit(docs, human=human)


@mirrors_app.command("describe")
def describe(
    ctx: typer.Context,
    topics: TopicsArg = None,
    link: Annotated[
        str | None, typer.Option("--link", "-l", metavar="LINK", help="The cluster link.",
                                 autocompletion=completion.links)
    ] = None,
    pending_stopped_only: Annotated[
        bool, typer.Option("--pending-stopped-only", help="Only PENDING_STOPPED mirrors.")
    ] = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Describe mirror topics, tab separated.

    Like kafka-mirrors --describe.

    One line per topic (Topic, LinkName, LinkId, SourceTopic, State, StoppedSequenceNumber,
    StateTime, and MirrorTopicError when there is one, e.g. TOPIC_AUTHORIZATION_FAILED when
    the link may no longer read its source topic), then one per partition (State, LocalLogEndOffset,
    LastFetchSourceHighWatermark, Lag, TimeSinceLastFetchMs). An ACTIVE mirror copying
    nothing (its source topic deleted) gets a warning on stderr saying when it fails.
    """
    app = App.of(ctx)
    m = _mirrors(app)
    if topics:
        infos = [m.describe(t, link) for t in topics]
    else:
        infos = m.list(link, None, pending_stopped_only)
    if pending_stopped_only:
        infos = [i for i in infos if i.mirror_status == "PENDING_STOPPED"]
    now = common.make_clock().now_ns() // 1_000_000
    link_ids = {}
    for i in infos:
        if i.link_name not in link_ids:
            link_ids[i.link_name] = m.links.get(i.link_name).link_id

    def human(a: App, _docs: Any) -> None:
        if not infos:
            output.notice(a, "No mirror topics found.")
            return
        for i in infos:
            if i.trouble:  # ACTIVE, copying nothing: said on stderr, the lines stay the tool's
                output.notice(a, f"jetlink: warning: mirror topic {i.mirror_topic_name}: "
                                 f"{i.trouble}")
            error = ([f"MirrorTopicError: {i.mirror_topic_error}"]
                     if i.mirror_topic_error not in (None, "NO_ERROR") else [])
            output.line(a, "\t".join([
                f"Topic: {i.mirror_topic_name}", f"LinkName: {i.link_name}",
                f"LinkId: {link_ids[i.link_name]}", f"SourceTopic: {i.source_topic_name}",
                f"State: {i.mirror_status}", f"StoppedSequenceNumber: {i.stopped_seq}",
                f"StateTime: {_ms_time(i.status_time_ms)}", *error]))
            stopped = i.mirror_status in ("STOPPED", "PENDING_STOPPED")
            for p in i.mirror_lags:
                hw = -1 if stopped else p.source_hw
                lag = -1 if stopped else p.lag
                fields = [f"\tPartition: {p.partition}", f"State: {i.mirror_status}",
                          f"LocalLogEndOffset: {p.log_end}",
                          f"LastFetchSourceHighWatermark: {hw}", f"Lag: {lag}"]
                if p.last_fetch_ms is not None:  # None: the REST answer does not carry it
                    since = max(now - p.last_fetch_ms, 0) if p.last_fetch_ms else -1
                    fields.append(f"TimeSinceLastFetchMs: {since}")
                output.line(a, "\t".join(fields))

    app.emit([i.to_json() for i in infos], human=human)


# -- promote / failover / pause / resume -----------------------------------------------------


def _alter(ctx: typer.Context, how: str, topics: list[str] | None, link: str,
           dry_run: bool, timeout: str | None = None) -> None:
    app = App.of(ctx)
    wait = None
    if timeout is not None:
        from jetlink.cli.stream_flags import parse_duration_flag

        wait = parse_duration_flag(timeout, flag="--timeout", wait=True) / 1e9
    m = _mirrors(app, wait_seconds=wait)
    # a topic named twice is asked once (a REST endpoint may not drop the repeat)
    results = getattr(m, how)(list(dict.fromkeys(topics or [])), link, dry_run=dry_run)
    names = [r.mirror_topic_name for r in results]
    docs = {"kind": "KafkaAlterMirrorResultList", "dry_run": dry_run,
            "data": [r.to_json() for r in results]}

    def human(a: App, _doc: Any) -> None:
        if not results:  # --link alone, on a link without mirror topics
            output.notice(a, f"Link '{link}' has no mirror topics: nothing to {how}")
            return
        mirrored = [n for n, r in zip(names, results, strict=True) if not r.not_mirrored]
        if how in ("promote", "failover") and mirrored:
            output.line(a, f"Calculating max offset and ms lag for mirror topics: "
                           f"[{', '.join(mirrored)}]")
            output.line(a, "Finished calculating max offset lag and max lag ms for mirror "
                           f"topics: [{', '.join(mirrored)}]")
        for r in results:  # (a topic refused: its line on stderr, the exit status 1)
            if r.not_mirrored:
                output.notice(a, f"Topic '{r.mirror_topic_name}' is not mirrored"
                                 + (f"; {r.hint}" if r.hint else ""))
            elif r.already_stopped:
                output.notice(a, f"Topic '{r.mirror_topic_name}' has already stopped its "
                                 f"mirror from '{link}'")
            elif not r.ok:
                text = r.error_message or ""
                if not text.startswith(f"Topic '{r.mirror_topic_name}'"):
                    text = f"Topic '{r.mirror_topic_name}': {text}"
                output.notice(a, text)
            elif dry_run:
                output.line(a, f"Request for {_verb(how)} topic {r.mirror_topic_name}'s mirror "
                               "would succeed (dry run).")
            elif how in ("promote", "failover"):
                output.line(a, f"Request for stopping topic {r.mirror_topic_name}'s mirror was "
                               "successfully scheduled. Please use the describe command with "
                               "the --pending-stopped-only option to monitor progress.")
            else:
                output.line(a, f"Request for {_verb(how)} topic {r.mirror_topic_name}'s mirror "
                               "was successfully completed.")
            if r.ok and r.hint:  # (a resumed mirror whose link is paused: still PAUSED)
                output.notice(a, f"jetlink: warning: topic {r.mirror_topic_name}: {r.hint}")
            _render_clamps(a, r.clamps, dry_run)

    app.emit(docs, human=human)
    if any(not r.ok and not r.already_stopped for r in results):
        raise typer.Exit(1)


def _verb(how: str) -> str:
    return {"promote": "promoting", "failover": "failing over", "pause": "pausing",
            "resume": "resuming"}[how]


@mirrors_app.command("promote")
def promote(ctx: typer.Context, link: LinkOpt, topics: TopicsArg = None,
            dry_run: DryRunOpt = False, timeout: TimeoutOpt = None,
            rest_url: RestUrlOpt = None, json_output: JsonOption = False) -> None:
    """Promote mirror topics to normal topics.

    For migrations.

    Refused per topic unless the source cluster is reachable and there is no mirroring lag,
    no pending config sync and no pending consumer offset sync. Synced consumer group offsets
    beyond the mirror's log end offsets are clamped; every clamp is printed. --link alone
    promotes every mirror of the link. Exit status 1 when a topic was refused; a mirror
    already stopped is reported (error_code 42, INVALID_REQUEST, in --json; 400 with
    --rest-url, as REST v3 answers) with exit status 0, so a re-run after a promote or
    failover is not a failure.
    """
    _alter(ctx, "promote", topics, link, dry_run, timeout)


@mirrors_app.command("failover")
def failover(ctx: typer.Context, link: LinkOpt, topics: TopicsArg = None,
             dry_run: DryRunOpt = False, timeout: TimeoutOpt = None,
             rest_url: RestUrlOpt = None, json_output: JsonOption = False) -> None:
    """Fail over mirror topics, whatever the lag.

    Disaster recovery: stops mirroring now.

    Always succeeds, source reachable or not; synced consumer group offsets beyond the
    mirror's log end offsets are clamped and printed. --link alone fails over every mirror
    of the link. Exit status 1 when a topic is no mirror; one already stopped is reported
    (error_code 42 in --json) with exit status 0, so a re-run is not a failure.
    """
    _alter(ctx, "failover", topics, link, dry_run, timeout)


@mirrors_app.command("pause")
def pause(ctx: typer.Context, link: LinkOpt, topics: TopicsArg = None,
          dry_run: DryRunOpt = False, rest_url: RestUrlOpt = None,
          json_output: JsonOption = False) -> None:
    """Pause mirror topics.

    They keep their data and resume where they stopped.
    """
    _alter(ctx, "pause", topics, link, dry_run)


@mirrors_app.command("resume")
def resume(ctx: typer.Context, link: LinkOpt, topics: TopicsArg = None,
           dry_run: DryRunOpt = False, rest_url: RestUrlOpt = None,
          json_output: JsonOption = False) -> None:
    """Resume paused mirror topics."""
    _alter(ctx, "resume", topics, link, dry_run)


# -- failing back ----------------------------------------------------------------------------


def _render_clamps(a: App, clamps: list[Any], dry_run: bool) -> None:
    for c in clamps:
        output.line(a, f"  {'Would clamp' if dry_run else 'Clamped'} consumer group "
                       f"{c.group} on {c.topic} partition {c.partition}: offset "
                       f"{c.from_offset} -> {c.to_offset}")


def _render_truncate(a: App, res: Any, dry_run: bool, link: str = "") -> None:
    if getattr(res, "already_done", False):
        output.line(a, f"Topic {res.mirror_topic_name} is already a mirror through link "
                       f"{link} (restored by an earlier run): nothing left to do")
        return
    for p in res.partitions:
        verb = "would be truncated" if dry_run else "truncated"
        output.line(a, f"Topic {res.mirror_topic_name} partition {p['partition']}: "
                       f"{output.comma(p['messages_truncated'])} messages {verb}, log end "
                       f"offset {p['offset_truncated_to']}")
    _render_clamps(a, res.clamps, dry_run)


@mirrors_app.command("truncate-and-restore")
def truncate_and_restore(
    ctx: typer.Context,
    topic: Annotated[str, typer.Argument(metavar="TOPIC", help="The local topic.")],
    link: LinkOpt,
    dry_run: DryRunOpt = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Fail back: make a topic a mirror again.

    Of the topic that took over after a failover.

    Run on the original cluster with a link pointing to the cluster where the topic was
    failed over: the local topic is truncated per partition to the log end offsets at which
    that mirror stopped, then mirrors it from there. Prints the messages truncated per
    partition and the consumer group offsets left beyond a new log end, clamped to it (as
    a failover clamps). With --rest-url: REST mirrors:truncate-and-restore (Confluent Cloud's API;
    Confluent Platform's has none).
    """
    app = App.of(ctx)
    res = _mirrors(app).truncate_and_restore(topic, link, dry_run=dry_run)
    app.emit(res.to_json(), human=lambda a, _d: _render_truncate(a, res, dry_run, link))


def _reverse(ctx: typer.Context, topic: str, link: str, dry_run: bool, *, paused: bool
             ) -> None:
    app = App.of(ctx)
    m = _mirrors(app)
    verb = m.reverse_and_pause if paused else m.reverse_and_start
    res, trunc = verb(topic, link, dry_run=dry_run)

    def human(a: App, _d: Any) -> None:
        stop, mirrors = ("would stop", "would mirror") if dry_run else ("stopped", "mirrors")
        line = (f"Topic {topic}: mirror {stop}; {trunc.mirror_topic_name} on the source "
                f"cluster {mirrors} it from now on")
        if paused:
            line += (f", paused (mirrors resume {trunc.mirror_topic_name} --link {link} on "
                     "that cluster starts it)")
        elif trunc.mirror_status == "PAUSED":
            line += ", paused (its link there is paused)"
        output.line(a, line)
        _render_clamps(a, res.clamps, dry_run)
        _render_truncate(a, trunc, dry_run)

    app.emit({"dry_run": dry_run, "stopped": res.to_json(), "restored": trunc.to_json()},
             human=human)


_REVERSE_RULES = """Run on the cluster holding the mirror, on a bidirectional link (the link
    of the same name on the source cluster points back here) with both clusters up; refused
    otherwise, naming what is missing, before anything changes. The mirror stops as in
    failover (clamps printed) and its source topic is truncated to where it stopped (the
    records it never copied are counted per partition) and mirrors it through that link.
    A run killed part-way is finished by running it again."""


@mirrors_app.command("reverse-and-start", help=f"""Reverse a mirror's direction.

    This topic becomes writable, its source becomes its mirror and starts mirroring.

    Like confluent kafka mirror reverse-and-start (REST mirrors:reverse-and-start-mirror;
    on Confluent Platform mirrors:promote-local-and-start-remote-mirror).

    {_REVERSE_RULES}
    """)
def reverse_and_start(
    ctx: typer.Context,
    topic: Annotated[str, typer.Argument(metavar="TOPIC", help="The mirror topic here.")],
    link: LinkOpt,
    dry_run: DryRunOpt = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    _reverse(ctx, topic, link, dry_run, paused=False)


@mirrors_app.command("reverse-and-pause", help=f"""Reverse a mirror's direction, paused.

    As reverse-and-start, but the new mirror on the source cluster is left PAUSED: mirrors
    resume there starts it.

    Like confluent kafka mirror reverse-and-pause (REST mirrors:reverse-and-pause-mirror;
    on Confluent Platform mirrors:promote-local-and-pause-remote-mirror).

    {_REVERSE_RULES}
    """)
def reverse_and_pause(
    ctx: typer.Context,
    topic: Annotated[str, typer.Argument(metavar="TOPIC", help="The mirror topic here.")],
    link: LinkOpt,
    dry_run: DryRunOpt = False,
    rest_url: RestUrlOpt = None,
    json_output: JsonOption = False,
) -> None:
    _reverse(ctx, topic, link, dry_run, paused=True)


def register(app: typer.Typer) -> None:
    app.add_typer(mirrors_app, name="mirrors")
