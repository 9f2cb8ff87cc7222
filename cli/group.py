"""``jetlink group ...``: consumer groups of the addressed cluster (kafka-consumer-groups).

Parsing and rendering only (``jetlink.core.kafka.topics.Kafka``). The human layouts are
kafka-consumer-groups' printf columns (trailing blanks trimmed):

- ``ls``: ``--list --state``'s GROUP / STATE columns;
- ``describe``: ``--describe``'s GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG
  CONSUMER-ID HOST CLIENT-ID table, ``--members``' GROUP CONSUMER-ID HOST CLIENT-ID
  #PARTITIONS (ASSIGNMENT), or ``--state``'s GROUP STATE #MEMBERS; an Empty group gets the
  tool's "Consumer group 'G' has no active members." on stderr;
- ``set-offsets``: ``--reset-offsets``' GROUP TOPIC PARTITION NEW-OFFSET table (--dry-run
  shows it without writing, as the tool does without --execute), or with ``--export`` the
  tool's ``topic,partition,offset`` CSV;
- ``delete-offsets``: ``--delete-offsets``' TOPIC PARTITION STATUS table;
- ``rm``: ``--delete``'s "Deletion of requested consumer groups ('G') was successful.".

JSON: ``GroupInfo.to_json()`` (describe; a list for ls), ``[{"group", "topic",
"partition", "old_offset", "new_offset"}]`` for set-offsets, ``{"group", "partitions":
[{"topic", "partition", "error"}]}`` for delete-offsets, ``{"success": true}`` for rm.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jetlink.cli import completion, output
from jetlink.cli.app import App
from jetlink.cli.common import usage
from jetlink.cli.options import JAVA_DURATION, JsonOption, force_option
from jetlink.cli.topic import PrincipalOption, open_kafka
from jetlink.core.numbers import INT32_MAX, INT64_MAX, INT64_MIN

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.kafka.errors import KafkaError
    from jetlink.core.kafka.topics import GroupInfo

group_app = typer.Typer(
    name="group",
    help="Manage Kafka consumer groups.\n\nThe kafka-consumer-groups verbs. A group is "
    "Stable while a member is live (jetlink topic consume --group G), PreparingRebalance "
    "while its members join again after a change of them, else Empty; its "
    "committed offsets are what consumer offset sync copies between clusters.",
    no_args_is_help=True,
)

GroupArg = Annotated[
    str, typer.Argument(metavar="GROUP", help="Consumer group id.", show_default=False,
                        autocompletion=completion.groups)
]
MISSING = "-"


def _cell(value: Any) -> str:
    return MISSING if value is None else str(value)


def group_table(info: GroupInfo) -> list[str]:
    """kafka-consumer-groups --describe's offsets table (its column widths): a row per
    assigned or committed partition; a member with no partition assigned (its topic
    deleted, more members than partitions) has no row, as ConsumerGroupCommand's
    collectGroupsOffsets leaves it out (``--members`` lists it)."""
    # every row's cells after GROUP: TOPIC, PARTITION, the three offsets, the member's
    rows = [[o.topic, *map(_cell, (o.partition, o.committed, o.log_end, o.lag, o.member,
                                   o.host, o.client_id))] for o in info.offsets]
    gw = max([15, len(info.group)])
    tw = max([15, *(len(r[0]) for r in rows)])
    cw = max([15, *(len(r[5]) for r in rows)])
    hw = max([15, *(len(r[6]) for r in rows)])

    def fmt(*cols: Any) -> str:
        g, t, p, cur, end, lag, cid, host, client = (str(c) for c in cols)
        return (f"{g:<{gw}} {t:<{tw}} {p:<10} {cur:<15} {end:<15} {lag:<15} {cid:<{cw}} "
                f"{host:<{hw}} {client}").rstrip()

    out = ["", fmt("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                   "CONSUMER-ID", "HOST", "CLIENT-ID")]
    out += [fmt(info.group, *r) for r in rows]
    return out


def state_table(infos: list[GroupInfo]) -> list[str]:
    """``--describe --state``'s GROUP STATE #MEMBERS (without the coordinator and
    assignment-strategy columns; GROUP as wide as the tool's, at least 25)."""
    gw = max([25, *(len(i.group) for i in infos)])
    out = ["", f"{'GROUP':<{gw}} {'STATE':<15} #MEMBERS"]
    for i in infos:
        out.append(f"{i.group:<{gw}} {i.state:<15} {len(i.members)}")
    return out


#: ConsumerGroupState's names, as the tool lists the valid ones (UNKNOWN left out)
GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty",
                "Assigning", "Reconciling")


def _states(text: str) -> set[str]:
    """``--state``'s comma-separated list as the tool reads it (consumerGroupStatesFromString:
    each name trimmed, any case); a usage error in its words for a name it does not know."""
    by_upper = {s.upper(): s for s in GROUP_STATES}
    parts = text.split(",")
    while parts and parts[-1] == "":  # (Java's split drops the empty strings at the end)
        parts.pop()
    found = {by_upper.get(part.strip().upper()) for part in parts}
    if None in found:
        raise usage(f"Invalid state list '{text}'. Valid states are: "
                    f"{', '.join(GROUP_STATES)}")
    return {s for s in found if s is not None}


@group_app.command("ls")
def ls(
    ctx: typer.Context,
    state: Annotated[
        str | None,
        typer.Option("--state", metavar="STATE[,STATE...]",
                     help="Only the groups in these states (Stable, Empty ...; any case).",
                     show_default=False),
    ] = None,
    principal: PrincipalOption = None,
    json_output: JsonOption = False,
) -> None:
    """List the consumer groups and their state.

    kafka-consumer-groups --list --state: GROUP and STATE (Stable with a live member, else
    Empty); --state Stable,Empty only those. With --principal on a cluster that enforces
    ACLs: every group with DESCRIBE on the cluster, else the groups it may DESCRIBE. With
    --json a list of groups.
    """
    app = App.of(ctx)
    wanted = _states(state) if state else None
    groups = [g for g in open_kafka(app, principal).groups()
              if wanted is None or g.state in wanted]

    def human(a: App, _docs: Any) -> None:
        if not groups and wanted is None:
            output.notice(a, "No consumer groups found.")
            return
        # (--state: the tool's header even when no group is in those states)
        width = max([15, *(len(g.group) for g in groups)]) + 10
        output.line(a, f"{'GROUP':<{width}} STATE")
        for g in groups:
            output.line(a, f"{g.group:<{width}} {g.state}")

    app.emit([g.to_json() for g in groups], human=human)


def members_table(info: GroupInfo, verbose: bool) -> list[str]:
    """``--describe --members``' GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS (with
    ``--verbose`` the ASSIGNMENT: each topic's partitions as ``(0,1)``, topics sorted, "-"
    for none; the tool's printMembers, its widths)."""
    # (the tool widens the columns from the rows: none, none widened)
    gw = max([15, len(info.group)]) if info.members else 15
    cw = max([15, *(len(m.member) for m in info.members)])
    hw = max([15, *(len(m.host) for m in info.members)])
    lw = max([15, *(len(m.client_id) for m in info.members)])

    def fmt(*cols: Any) -> str:
        g, c, h, cl, n, *rest = (str(x) for x in cols)
        return f"{g:<{gw}} {c:<{cw}} {h:<{hw}} {cl:<{lw}} {n:<15} {''.join(rest)}".rstrip()

    out = ["", fmt("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
                   *(["ASSIGNMENT"] if verbose else []))]
    for m in info.members:
        extra = []
        if verbose:
            by_topic: dict[str, list[str]] = {}
            for t, p in m.assignment:
                by_topic.setdefault(t, []).append(str(p))
            extra = [", ".join(sorted("(" + ",".join(sorted(ps)) + ")"
                                      for ps in by_topic.values())) or MISSING]
        out.append(fmt(info.group, m.member, m.host, m.client_id, len(m.assignment), *extra))
    return out


@group_app.command("describe")
def describe(
    ctx: typer.Context,
    group: Annotated[
        str | None, typer.Argument(metavar="[GROUP]", help="Consumer group id (or "
                                   "--all-groups).", show_default=False,
                                   autocompletion=completion.groups)
    ] = None,
    all_groups: Annotated[
        bool, typer.Option("--all-groups", help="Describe every consumer group.")
    ] = False,
    offsets: Annotated[
        bool, typer.Option("--offsets", help="The offsets table (the default).")
    ] = False,
    members: Annotated[
        bool, typer.Option("--members", help="The members table instead: each member's "
                           "host, client id and partition count.")
    ] = False,
    state: Annotated[
        bool, typer.Option("--state", help="The group's state and member count instead.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", help="With --members: each member's partitions "
                           "too (ASSIGNMENT).")
    ] = False,
    principal: PrincipalOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show a group's offsets and lag, or members.

    As kafka-consumer-groups --describe: per partition the committed (CURRENT-OFFSET),
    LOG-END-OFFSET and LAG, and the member it is assigned to; --members the members
    (--verbose: their partitions); --state the state (Stable with live members,
    PreparingRebalance while they join again after a change of them, else Empty) and member
    count. --all-groups: a table per group, by name. With --principal on
    a cluster that enforces ACLs: DESCRIBE on the group (--all-groups: the groups it may
    describe). With --json the group (state, members, lags) whatever the table, a list
    with --all-groups.
    """
    app = App.of(ctx)
    if (group is None) == (not all_groups):
        raise usage("give a GROUP or --all-groups" if group is None else
                    f"give GROUP {group!r} or --all-groups, not both")
    if sum((offsets, members, state)) > 1:  # (the tool takes the first of them silently)
        raise usage("give one of --offsets, --members, --state")
    if verbose and not members:
        raise usage("--verbose applies to --members")
    kafka = open_kafka(app, principal)
    infos = kafka.groups() if all_groups else [kafka.describe_group(group or "")]

    def human(a: App, _doc: Any) -> None:
        if not infos:
            output.notice(a, "No consumer groups found.")
        for info in infos:
            if info.state == "Empty":
                output.notice(a, f"\nConsumer group '{info.group}' has no active members.")
            elif info.state != "Stable":  # (ConsumerGroupCommand's words for a rebalance)
                output.notice(a, f"\nWarning: Consumer group '{info.group}' is rebalancing.")
            if state:
                output.lines(a, state_table([info]))
            elif members:
                if info.members:  # (none: the tool's notice above alone, no table)
                    output.lines(a, members_table(info, verbose))
            elif info.offsets:  # (the tool prints no table for a group with no row)
                output.lines(a, group_table(info))

    app.emit([i.to_json() for i in infos] if all_groups else infos[0].to_json(), human=human)


@group_app.command("set-offsets")
def set_offsets(
    ctx: typer.Context,
    group: GroupArg,
    topic: Annotated[
        list[str] | None,
        typer.Option("--topic", "-t", metavar="TOPIC[:P,...]",
                     help="Topic whose offsets to reset, every partition or those listed "
                     "(repeatable).", show_default=False),
    ] = None,
    all_topics: Annotated[
        bool, typer.Option("--all-topics", help="Every partition the group has a committed "
                           "offset for.")
    ] = False,
    partition: Annotated[
        int | None,
        typer.Option("--partition", "-p", metavar="P", min=0, max=INT32_MAX,
                     help="Only this partition (of one --topic)."),
    ] = None,
    to_offset: Annotated[
        int | None,
        typer.Option(
            "--to-offset", metavar="OFFSET", min=INT64_MIN, max=INT64_MAX,
            help="Reset to OFFSET (kept within the log)."
        ),
    ] = None,
    to_earliest: Annotated[
        bool, typer.Option("--to-earliest", help="Reset to the log start offsets.")
    ] = False,
    to_latest: Annotated[
        bool, typer.Option("--to-latest", help="Reset to the log end offsets.")
    ] = False,
    to_current: Annotated[
        bool, typer.Option("--to-current", help="Reset to the committed offsets (the log end "
                           "where none is).")
    ] = False,
    shift_by: Annotated[
        int | None,
        typer.Option("--shift-by", metavar="N", min=INT64_MIN, max=INT64_MAX,
                     help="Move the committed offsets by N (negative: back; kept within the "
                     "log).", show_default=False),
    ] = None,
    to_datetime: Annotated[
        str | None,
        typer.Option("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss",
                     help="Reset to the first offset at or after that time (UTC unless "
                     "it ends with Z or an offset such as +02:00, as the tool reads it).",
                     show_default=False),
    ] = None,
    by_duration: Annotated[
        str | None,
        typer.Option("--by-duration", metavar="DURATION", parser=JAVA_DURATION,
                     help="Reset to the first offset at or after that long ago (PnDTnHnMnS, "
                     "as Kafka's tool, or 1h30m).", show_default=False),
    ] = None,
    from_file: Annotated[
        Path | None,
        typer.Option("--from-file", metavar="FILE", dir_okay=False,
                     help="Reset to the offsets of a CSV file (topic,partition,offset lines, "
                     "as --export prints them).", show_default=False),
    ] = None,
    export: Annotated[
        bool, typer.Option("--export", help="Print the new offsets as CSV "
                           "(topic,partition,offset), for --from-file; with --dry-run (the "
                           "plan alone) or --execute.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the new offsets without writing them.")
    ] = False,
    execute: Annotated[
        bool, typer.Option("--execute", help="Write the new offsets (the default here; "
                           "kafka-consumer-groups needs it).")
    ] = False,
    principal: PrincipalOption = None,
    json_output: JsonOption = False,
) -> None:
    """Reset a group's committed offsets.

    Like kafka-consumer-groups --reset-offsets --execute (--execute is the default and
    accepted, --dry-run only shows): one of --to-offset, --to-earliest,
    --to-latest, --to-current, --shift-by, --to-datetime, --by-duration, --from-file, for
    every partition of each --topic (TOPIC:0,2 those partitions; --partition one), or of
    --all-topics, every partition the group has a committed offset for (--from-file: the
    partitions of the file). A target outside the log is kept within it, with the tool's
    warning. Refused while the group has a live member. With --principal on a cluster that
    enforces ACLs: READ on the group and the topics (DESCRIBE on them with --dry-run).
    Prints GROUP TOPIC PARTITION NEW-OFFSET, or with --export the CSV --from-file reads.
    """
    app = App.of(ctx)
    if dry_run and execute:  # (kafka-consumer-groups' check and text)
        raise usage("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
    chosen = [flag for flag, on in (("--to-offset", to_offset is not None),
                                    ("--to-earliest", to_earliest), ("--to-latest", to_latest),
                                    ("--to-current", to_current),
                                    ("--shift-by", shift_by is not None),
                                    ("--to-datetime", to_datetime is not None),
                                    ("--by-duration", by_duration is not None),
                                    ("--from-file", from_file is not None)) if on]
    if len(chosen) != 1:
        raise usage("give exactly one of --to-offset, --to-earliest, --to-latest, "
                    "--to-current, --shift-by, --to-datetime, --by-duration, --from-file"
                    + (f" (given: {', '.join(chosen)})" if chosen else ""))
    if export and json_output:
        raise usage("--export prints the new offsets as CSV, --json as JSON: give one")
    if export and not (dry_run or execute):
        # kafka-consumer-groups makes a plan file with --export and no --execute (a dry
        # run there); this verb writes unless --dry-run: neither is guessed
        raise usage("--export: give --dry-run to write only the plan (as "
                    "kafka-consumer-groups --export does without --execute), or --execute "
                    "to reset the offsets and print them (nothing was reset)")
    scope = _reset_scope(topic, all_topics, partition, from_file is not None)
    plan = _reset_plan(from_file, group) if from_file is not None else None
    to_time_ms = None
    if to_datetime is not None:
        to_time_ms = _datetime_ms(to_datetime)
    elif by_duration is not None:
        from jetlink.cli.common import now_ns
        ago = JAVA_DURATION.ns(by_duration)
        # a time an int64 of milliseconds holds (a duration of millions of years: the log's
        # start or end, as the tool's offsetsForTimes answers it)
        to_time_ms = max(-(2**63) + 1, min(2**63 - 1, (now_ns() - ago) // 1_000_000))
    kafka = open_kafka(app, principal)
    rows = kafka.set_offsets(
        group, scope, to_offset=to_offset, to_earliest=to_earliest,
        to_latest=to_latest, to_current=to_current, shift_by=shift_by,
        to_time_ms=to_time_ms, plan=plan, dry_run=dry_run,
    )
    if to_time_ms is not None and rows:
        _no_record_at_that_time(app, kafka, rows)
    # ConsumerGroupCommand's range check: a target outside the log is clamped to its end or
    # start, with a warning naming both
    from jetlink.core.kafka.group_reset import shifted_offset

    for t, p, old, new in rows:
        target = to_offset if to_offset is not None else \
            plan[(t, p)] if plan is not None else \
            shifted_offset(old, shift_by) if shift_by is not None and old is not None else None
        if target is not None and new != target:
            side = "higher than latest" if target > new else "lower than earliest"
            output.notice(app, f"New offset ({target}) is {side} offset for topic "
                               f"partition {t}-{p}. Value will be set to {new}")
    if not dry_run and rows:
        _synced_back(app, group, rows)
    if not rows and scope is None and plan is None:
        output.notice(app, f"jetlink: notice: group {group} has no committed offset: "
                           "nothing to reset (--all-topics resets the partitions it has "
                           "committed offsets for)")
    docs = [
        {"group": group, "topic": t, "partition": p, "old_offset": old, "new_offset": new}
        for t, p, old, new in rows
    ]

    def human(a: App, _docs: Any) -> None:
        if export:  # the tool's println of its CSV: a blank line after the records
            from jetlink.core.kafka.group_reset import export_csv

            output.lines(a, [*export_csv(rows), ""])
            return
        lines = [""]
        if rows:
            lines.append(f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} NEW-OFFSET")
        for t, p, _old, new in rows:
            lines.append(f"{group:<30} {t:<30} {p:<10} {new}")
        output.lines(a, lines)

    app.emit(docs, human=human)


def _synced_back(app: App, group: str, rows: list[Any], done: str = "reset") -> None:
    """A warning per cluster link whose consumer offset sync sets the offsets just reset
    (or deleted) back to the source's (core/kafka/mirror_copy.py offset_sync_overwrites):
    a change of a synced group on a mirror topic lasts until the sync's next run, as in
    Confluent."""
    from jetlink.cli.common import data_dir, make_clock
    from jetlink.core.kafka.mirrors import Mirrors

    m = Mirrors(data_dir(app), app.cluster, make_clock())
    for link, topics in m.offset_sync_overwrites(group, {t for t, *_ in rows}).items():
        output.notice(app, f"jetlink: warning: cluster link {link} syncs the offsets of group "
                           f"{group} on mirror topic{'s' if len(topics) > 1 else ''} "
                           f"{', '.join(topics)} (consumer.offset.sync.enable): its next "
                           f"offset sync sets the {done} offsets back to the source's; leave "
                           "the group out of consumer.offset.group.filters, or promote the "
                           "mirror, to keep them")


def _reset_scope(topics: list[str] | None, all_topics: bool, partition: int | None,
                 from_file: bool) -> list[tuple[str, int | None]] | None:
    """What set-offsets resets (core/kafka/group_reset.py Scope): the partitions of the
    --topic values (with --partition: that one of the only topic), None for --all-topics;
    a usage error in the tool's words without either (--from-file names its own)."""
    if topics and all_topics:
        raise usage("give one of the reset scopes --all-topics, --topic, not both")
    if not topics:
        if not all_topics and not from_file:
            raise usage("One of the reset scopes should be defined: --all-topics, --topic.")
        if partition is not None:
            raise usage("--partition applies to one --topic TOPIC")
        return None
    if partition is not None:
        if len(topics) != 1 or ":" in topics[0]:
            raise usage("--partition applies to one --topic TOPIC (or give --topic "
                        "TOPIC:P[,P...])")
        return [(topics[0], partition)]
    return _topic_args(topics)


def _topic_args(topics: list[str]) -> list[tuple[str, int | None]]:
    """The ``--topic`` values, ``T`` or ``T:P[,P...]``, as the tool reads them
    (core/kafka/group_reset.py ``parse_topic_scope``); a usage error in its words."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.kafka.group_reset import parse_topic_scope

    try:
        return [item for text in topics for item in parse_topic_scope(text)]
    except JetlinkError as err:
        raise usage(f"invalid value for --topic: {err.description}") from None


def _no_record_at_that_time(app: App, kafka: Any, rows: list[Any]) -> None:
    """The tool's warning for a partition with no record at or after the time asked
    (ListOffsets by time answers none): its offset is the log end (getLogTimestampOffsets:
    "Warn: Partition P from topic T is empty. Falling back to latest known offset.")."""
    from jetlink.core.errors import JetlinkError

    ends: dict[str, dict[int, int]] = {}
    for t, p, _old, new in rows:
        if t not in ends:
            try:  # (the reset is done: a topic the principal may not describe says nothing)
                ends[t] = {pi.partition: pi.log_end
                           for pi in kafka.describe_topic(t).partitions}
            except JetlinkError:
                ends[t] = {}
        if ends[t].get(p) == new:
            output.notice(app, f"Warn: Partition {p} from topic {t} is empty. Falling back "
                               "to latest known offset.")


def _reset_plan(path: Path, group: str) -> dict[tuple[str, int], int]:
    """The offsets --from-file gives ``group`` (core/kafka/group_reset.py reset_plan)."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.kafka.group_reset import reset_plan
    from jetlink.core.limits import read_input_file

    if path.is_dir():  # ("" reaches here as the current directory)
        raise usage(f"invalid value for --from-file: {str(path)!r} is a directory (an empty "
                    "value is the current one): give the reset plan's CSV file")
    data = read_input_file(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JetlinkError(f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                           f"{exc.start}): a reset plan is CSV text", field="from_file") from None
    return reset_plan(text, group, str(path))


# Kafka's Utils.getDateTime: yyyy-MM-dd'T'HH:mm:ss.SSS, then a zone (XXX or X), parsed
# strictly (no lenient dates, the milliseconds required); a time without a zone is UTC
_KAFKA_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(Z|[+-]\d{2}(?::?\d{2})?)?")


def _datetime_ms(text: str) -> int:
    """--to-datetime's value (Kafka's ``YYYY-MM-DDTHH:mm:SS.sss``, UTC unless a zone is
    given) as milliseconds since the epoch; a usage error naming the form otherwise: a
    date alone or a time without its milliseconds is refused, as Kafka's tool refuses it,
    never read as midnight or a whole second."""
    from datetime import UTC, datetime, timedelta, timezone

    form = ("expected YYYY-MM-DDTHH:mm:SS.sss (the milliseconds too), UTC, or with Z or an "
            "offset such as +02:00")
    if "T" not in text:
        raise usage(f"invalid value for --to-datetime: {text!r}: it does not contain a 'T' "
                    f"according to ISO8601 format: {form}")
    m = _KAFKA_DATETIME.fullmatch(text)
    if m is None:
        raise usage(f"invalid value for --to-datetime: {text!r}: {form}")
    zone = m.group(8) or "Z"
    offset = timedelta(0) if zone == "Z" else (1 if zone[0] == "+" else -1) * timedelta(
        hours=int(zone[1:3]), minutes=int(zone.replace(":", "")[3:5] or 0))
    try:
        when = datetime(*(int(g) for g in m.groups()[:6]), int(m.group(7)) * 1000,
                        tzinfo=UTC if zone == "Z" else timezone(offset))
    except ValueError as err:  # a day or an hour past its range: no lenient roll-over
        raise usage(f"invalid value for --to-datetime: {text!r}: {err}") from None
    # (integer arithmetic: a float's timestamp() * 1000 reads some milliseconds one short)
    return (when - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


@group_app.command("rm")
def rm(
    ctx: typer.Context,
    group: GroupArg,
    force: Annotated[bool, force_option("Delete")] = False,
    principal: PrincipalOption = None,
    json_output: JsonOption = False,
) -> None:
    """Delete a consumer group's committed offsets.

    Refused while the group has a live member (NON_EMPTY_GROUP), as kafka-consumer-groups
    --delete says it: "Group 'G' could not be deleted due to: The group is not empty.".
    With --principal on a cluster that enforces ACLs: DELETE on the group. Asks for confirmation on
    a terminal; without one, -f/--force is required (exit status 2 otherwise).
    """
    from jetlink.core.kafka.errors import KafkaError

    app = App.of(ctx)
    kafka = open_kafka(app, principal)
    try:
        kafka.check_delete_group(group)  # refused (ACL, unknown group) before the question
    except KafkaError as err:
        raise _not_deleted(group, err) from None
    output.confirm(app, f"Delete consumer group {group}?", force=force,
                   action=f"delete consumer group {group}")
    try:
        kafka.delete_group(group)
    except KafkaError as err:
        raise _not_deleted(group, err) from None
    output.success(app, f"Deletion of requested consumer groups ('{group}') was successful.")


def _not_deleted(group: str, err: KafkaError) -> KafkaError:
    """``err`` worded as kafka-consumer-groups --delete says a group it could not delete
    (ConsumerGroupCommand.deleteGroups: "Group 'G' could not be deleted due to: " and the
    exception, its message Kafka's: "The group id does not exist.", "The group is not
    empty."); its name, code, detail and what it found missing are kept."""
    from jetlink.core.kafka.errors import ERROR_MESSAGES

    # (a group not found: Errors' message, jetlink's own sentence naming the group again)
    reason = ERROR_MESSAGES[err.name] if err.missing else err.description
    err.description = f"Group '{group}' could not be deleted due to: {reason}"
    return err


@group_app.command("delete-offsets")
def delete_offsets(
    ctx: typer.Context,
    group: GroupArg,
    topic: Annotated[
        list[str],
        typer.Option("--topic", "-t", metavar="TOPIC[:P,...]",
                     help="Topic whose committed offsets to delete, every partition or those "
                     "listed (repeatable).", show_default=False),
    ],
    principal: PrincipalOption = None,
    json_output: JsonOption = False,
) -> None:
    """Delete a group's offsets of some topics.

    As kafka-consumer-groups --delete-offsets: the offsets of every partition of each
    --topic (TOPIC:0,2 those partitions) are removed, then TOPIC PARTITION STATUS per
    partition. A topic a live member of the group is subscribed to keeps its offsets
    (GROUP_SUBSCRIBED_TO_TOPIC), as does an unknown topic or partition
    (UNKNOWN_TOPIC_OR_PARTITION); the others are deleted and the exit status is 1. With
    --principal on a cluster that enforces ACLs: DELETE on the group, READ on the topics.
    With --json the group and each partition's error (null: deleted).
    """
    app = App.of(ctx)
    scope = _topic_args(topic)
    rows = open_kafka(app, principal).delete_offsets(group, scope)
    failed = [r for r in rows if r[2] is not None]
    if len(failed) < len(rows):
        _synced_back(app, group, [r for r in rows if r[2] is None], "deleted")
    doc = {"group": group, "partitions": [
        {"topic": t, "partition": p, "error": None if e is None else e.to_dict()["error"]}
        for t, p, e in rows]}

    def human(a: App, _doc: Any) -> None:
        if failed:
            output.notice(a, "\nError: Encounter some partition level error, see the "
                             "follow-up details:")
        else:
            output.line(a, "Request succeed for deleting offsets with topic "
                           f"{', '.join(topic)} group {group}")
        lines = ["", f"{'TOPIC':<30} {'PARTITION':<15} STATUS"]
        for t, p, e in rows:
            status = "Successful" if e is None else f"Error: {e.description} ({e.err_code})"
            lines.append(f"{t:<30} {'Not Provided' if p is None else p!s:<15} {status}")
        output.lines(a, lines)

    app.emit(doc, human=human)
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(group_app, name="group")
