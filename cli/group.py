"""``jetlink group ...``: consumer groups of the addressed cluster (kafka-consumer-groups).

Parsing and rendering only (``jetlink.core.kafka.topics.Kafka``). The human layouts are
kafka-consumer-groups' printf columns (trailing blanks trimmed):

- ``ls``: ``--list --state``'s GROUP / STATE columns;
- ``describe``: ``--describe``'s GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG
  CONSUMER-ID HOST CLIENT-ID table, then a GROUP STATE #MEMBERS line (``--state``); an Empty
  group gets the tool's "Consumer group 'G' has no active members." on stderr;
- ``set-offsets``: ``--reset-offsets``' GROUP TOPIC PARTITION NEW-OFFSET table (--dry-run
  shows it without writing, as the tool does without --execute), or with ``--export`` the
  tool's ``topic,partition,offset`` CSV;
- ``rm``: ``--delete``'s "Deletion of requested consumer groups ('G') was successful.".

JSON: ``GroupInfo.to_json()`` (describe; a list for ls), ``[{"group", "topic",
"partition", "old_offset", "new_offset"}]`` for set-offsets, ``{"success": true}`` for rm.
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
    from jetlink.core.kafka.topics import GroupInfo

group_app = typer.Typer(
    name="group",
    help="Manage Kafka consumer groups.\n\nThe kafka-consumer-groups verbs. A group is "
    "Stable while a member is live (jetlink topic consume --group G), else Empty; its "
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
    """kafka-consumer-groups --describe's offsets table (its column widths); a member with
    no partition assigned (its topic deleted, more members than partitions) gets a row of
    its own with "-" for the topic and the offsets, as ConsumerGroupCommand's
    rowsWithoutPartitionAssignments."""
    # every row's cells after GROUP: TOPIC, PARTITION, the three offsets, the member's
    rows = [[o.topic, *map(_cell, (o.partition, o.committed, o.log_end, o.lag, o.member,
                                   o.host, o.client_id))] for o in info.offsets]
    shown = {o.member for o in info.offsets}
    rows += [[MISSING] * 5 + [m.member, m.host, m.client_id]
             for m in info.members if not m.assignment and m.member not in shown]
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
    """``--describe --state``'s GROUP STATE #MEMBERS (without the coordinator columns)."""
    gw = max([15, *(len(i.group) for i in infos)])
    out = ["", f"{'GROUP':<{gw}} {'STATE':<15} #MEMBERS"]
    for i in infos:
        out.append(f"{i.group:<{gw}} {i.state:<15} {len(i.members)}")
    return out


@group_app.command("ls")
def ls(ctx: typer.Context, principal: PrincipalOption = None,
       json_output: JsonOption = False) -> None:
    """List the consumer groups and their state.

    kafka-consumer-groups --list --state: GROUP and STATE (Stable with a live member, else
    Empty). With --principal on a cluster that enforces ACLs: every group with DESCRIBE on
    the cluster, else the groups it may DESCRIBE. With --json a list of groups.
    """
    app = App.of(ctx)
    groups = open_kafka(app, principal).groups()

    def human(a: App, _docs: Any) -> None:
        if not groups:
            output.notice(a, "No consumer groups found.")
            return
        width = max(15, *(len(g.group) for g in groups)) + 10
        output.line(a, f"{'GROUP':<{width}} STATE")
        for g in groups:
            output.line(a, f"{g.group:<{width}} {g.state}")

    app.emit([g.to_json() for g in groups], human=human)


@group_app.command("describe")
def describe(ctx: typer.Context, group: GroupArg, principal: PrincipalOption = None,
             json_output: JsonOption = False) -> None:
    """Show a group's offsets, lag and state.

    Per partition the committed (CURRENT-OFFSET), LOG-END-OFFSET and LAG, and the member
    it is assigned to, as kafka-consumer-groups --describe; then the state and member count.
    With --principal on a cluster that enforces ACLs: DESCRIBE on the group. With --json
    the group (state, members, lags).
    """
    app = App.of(ctx)
    info = open_kafka(app, principal).describe_group(group)

    def human(a: App, _doc: Any) -> None:
        if info.state == "Empty":
            output.notice(a, f"\nConsumer group '{group}' has no active members.")
        output.lines(a, group_table(info))
        output.lines(a, state_table([info]))

    app.emit(info.to_json(), human=human)


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


def _synced_back(app: App, group: str, rows: list[Any]) -> None:
    """A warning per cluster link whose consumer offset sync sets the offsets just reset
    back to the source's (core/kafka/mirror_copy.py offset_sync_overwrites): the reset of
    a synced group on a mirror topic lasts until the sync's next run, as in Confluent."""
    from jetlink.cli.common import data_dir, make_clock
    from jetlink.core.kafka.mirrors import Mirrors

    m = Mirrors(data_dir(app), app.cluster, make_clock())
    for link, topics in m.offset_sync_overwrites(group, {t for t, *_ in rows}).items():
        output.notice(app, f"jetlink: warning: cluster link {link} syncs the offsets of group "
                           f"{group} on mirror topic{'s' if len(topics) > 1 else ''} "
                           f"{', '.join(topics)} (consumer.offset.sync.enable): its next "
                           "offset sync sets them back to the source's; leave the group out "
                           "of consumer.offset.group.filters, or promote the mirror, to keep "
                           "them")


def _reset_scope(topics: list[str] | None, all_topics: bool, partition: int | None,
                 from_file: bool) -> list[tuple[str, int | None]] | None:
    """What set-offsets resets (core/kafka/group_reset.py Scope): the partitions of the
    --topic values (with --partition: that one of the only topic), None for --all-topics;
    a usage error in the tool's words without either (--from-file names its own)."""
    from jetlink.core.errors import JetlinkError
    from jetlink.core.kafka.group_reset import parse_topic_scope

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
    return int(when.timestamp() * 1000)


@group_app.command("rm")
def rm(
    ctx: typer.Context,
    group: GroupArg,
    force: Annotated[bool, force_option("Delete")] = False,
    principal: PrincipalOption = None,
    json_output: JsonOption = False,
) -> None:
    """Delete a consumer group's committed offsets.

    Refused while the group has a live member (NON_EMPTY_GROUP). With --principal on a
    cluster that enforces ACLs: DELETE on the group. Asks for confirmation on
    a terminal; without one, -f/--force is required (exit status 2 otherwise).
    """
    app = App.of(ctx)
    kafka = open_kafka(app, principal)
    kafka.describe_group(group)  # an unknown group fails before the question
    output.confirm(app, f"Delete consumer group {group}?", force=force,
                   action=f"delete consumer group {group}")
    kafka.delete_group(group)
    output.success(app, f"Deletion of requested consumer groups ('{group}') was successful.")


def register(app: typer.Typer) -> None:
    app.add_typer(group_app, name="group")
