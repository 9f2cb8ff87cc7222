"""``jetlink topic ...``: Kafka-style topics of the addressed cluster (the kafka-topics,
kafka-configs, kafka-console-producer and kafka-console-consumer verbs).

Parsing and rendering only: every verb calls ``jetlink.core.kafka.topics.Kafka``, which owns
the rules (topic names, configurations and their defaults, the default partitioner,
retention and compaction, consumer groups).

- ``create`` / ``alter`` / ``describe`` / ``ls`` / ``rm``: ``Created topic T.`` like
  kafka-topics; ``describe`` prints kafka-topics --describe's tab-separated lines plus
  jetlink's LogStartOffset / LogEndOffset per partition;
- ``produce`` appends records (VALUE, or one record per stdin line; --count N repeats VALUE
  with natscli's ``{{Count}}`` templates, like ``jetlink pub``);
- ``consume`` reads as a member of --group (range assignment among the live members),
  commits after each batch, and with --follow keeps polling (heartbeats keep the group
  active) until --max, --timeout without records, or Ctrl-C (exit status 130).

JSON documents: ``TopicInfo.to_json()`` (create, alter, describe; a list for ls),
``[{"partition", "offset"}]`` for produce, a list of ``Record.to_json()`` for consume (JSON
lines, one record per line, with --follow), ``{"success": true}`` for rm.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.common import data_dir, usage
from jetlink.cli.options import DURATION, WAIT, JsonOption, force_option
from jetlink.core.numbers import INT32_MAX

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.core.kafka.topics import Kafka, Record, TopicInfo

topic_app = typer.Typer(
    name="topic",
    help="Manage Kafka-style topics (kafka-topics).\n\nTopics live in the cluster "
    "database beside the streams: partitions with offsets, Kafka's topic configurations "
    "and defaults, retention and compaction, consumer groups (see jetlink group).",
    no_args_is_help=True,
)

# How long one poll of `topic consume --follow` waits when there is nothing to read.
POLL_SECONDS = 0.2

TopicArg = Annotated[str, typer.Argument(metavar="TOPIC", help="Topic name.", show_default=False,
                                         autocompletion=completion.topics)]
ConfigOption = Annotated[
    list[str] | None,
    typer.Option(
        "--config",
        "-c",
        metavar="KEY=VALUE",
        help="A topic configuration, e.g. retention.ms=60000 (repeatable).",
        show_default=False,
    ),
]

PrincipalOption = Annotated[
    str | None,
    typer.Option(
        "--principal",
        metavar="User:NAME",
        help="Act as this client: on a cluster that enforces ACLs (cluster add --authorizer) "
        "the request is authorized as Kafka authorizes it (default: the operator, never "
        "refused).",
        show_default=False,
    ),
]


def open_kafka(app: App, principal: str | None = None) -> Kafka:
    """The topics and groups of the cluster named by ``--cluster``, acting for
    ``principal`` (``User:NAME``; None: the operator)."""
    from jetlink.core.kafka.acls import parse_principal
    from jetlink.core.kafka.topics import Kafka

    if principal is not None:
        principal = parse_principal(principal, acting=True)
    # common.make_clock looked up at call time: tests replace it
    return Kafka(data_dir(app).open_kind(app.cluster, "kafka", "topics"),
                 common.make_clock(), principal=principal)


def parse_configs(values: list[str] | None) -> dict[str, str]:
    """``KEY=VALUE`` options as a dict, read as kafka-topics reads them
    (``parseTopicConfigsToBeAdded``: split at ``=`` with the spaces around it, empty pieces
    at the end dropped, as Java's ``split``; exactly a key and a value, both trimmed): a
    usage error naming the option otherwise (``key=``, ``key``, ``a=b=c``)."""
    out: dict[str, str] = {}
    for item in values or []:
        parts = re.split(r"\s*=\s*", item)
        while parts and parts[-1] == "":  # (Java's split drops trailing empty strings)
            parts.pop()
        if len(parts) != 2 or not parts[0].strip():
            raise usage(f"invalid --config {item!r}: Invalid topic config: all configs to be "
                        'added must be in the format "key=val".')
        out[parts[0].strip()] = parts[1].strip()
    return out


# -- create / alter / describe / ls / rm -----------------------------------------------------


IfExistsOption = Annotated[bool, typer.Option(
    "--if-exists", help="Only if the topic exists: a topic that does not is no error "
    "(kafka-topics' --if-exists).")]


@contextmanager
def _unless(app: App, topic: str, name: str, given: bool, said: str) -> Iterator[list[bool]]:
    """kafka-topics' --if-exists / --if-not-exists: the Kafka error ``name`` (the topic
    missing, or there already) is no error when the flag is ``given``: nothing is done,
    ``said`` on stderr, exit 0. Yields a one-item list: True when that happened."""
    from jetlink.core.kafka.errors import KafkaError

    skipped = [False]
    try:
        yield skipped
    except KafkaError as err:
        if not given or err.name != name:
            raise
        skipped[0] = True
        output.notice(app, f"jetlink: topic {topic}: {said}")


@topic_app.command("create")
def create(
    ctx: typer.Context,
    topic: TopicArg,
    partitions: Annotated[
        int, typer.Option("--partitions", metavar="N", min=-INT32_MAX - 1, max=INT32_MAX,
                          help="Number of partitions.")
    ] = 1,
    replication_factor: Annotated[
        int,
        typer.Option(
            "--replication-factor",
            metavar="N", min=-INT32_MAX - 1, max=INT32_MAX,
            help="Replication factor (a local cluster has one broker: only 1).",
        ),
    ] = 1,
    config: ConfigOption = None,
    principal: PrincipalOption = None,
    if_not_exists: Annotated[bool, typer.Option(
        "--if-not-exists", help="Only if the topic does not exist: one that does is no "
        "error (kafka-topics' --if-not-exists).")] = False,
    json_output: JsonOption = False,
) -> None:
    """Create a topic.

    Names follow Kafka's rules (ASCII letters, digits, '.', '_', '-'; at most 249
    characters); --config takes any topic configuration jetlink knows (unknown keys and bad
    values are refused with Kafka's INVALID_CONFIG texts). With --principal on a cluster
    that enforces ACLs: CREATE on the cluster or on the topic. Prints "Created topic T.";
    with --json the topic. --if-not-exists: a topic of that name is left as it is (said on
    stderr, exit 0; with --json the topic as it is).
    """
    app = App.of(ctx)
    configs = parse_configs(config)
    # kafka-topics' order (TopicCommand.createTopic): the warning, then its own checks
    if "." in topic or "_" in topic:  # (Topic.hasCollisionChars)
        output.notice(app, "jetlink: warning: Due to limitations in metric names, topics with "
                           "a period ('.') or underscore ('_') could collide. To avoid issues "
                           "it is best to use either, but not both.")
    if not 1 <= replication_factor <= 32767:
        raise usage(f"invalid value for --replication-factor: {replication_factor}: The "
                    "replication factor must be between 1 and 32767 inclusive")
    if partitions < 1:
        raise usage(f"invalid value for --partitions: {partitions}: The partitions must be "
                    "greater than 0")
    # the tool checks the configs itself (TopicCommand: LogConfig.validate) before it asks
    # the broker: a bad one is refused whether the topic exists or not
    from jetlink.core.kafka.topic_configs import validate_topic_configs

    validate_topic_configs(configs)
    kafka = open_kafka(app, principal)
    with _unless(app, topic, "TOPIC_ALREADY_EXISTS", if_not_exists,
                 "exists already: left as it is (--if-not-exists)") as skipped:
        info = kafka.create_topic(topic, partitions, configs,
                                  replication_factor=replication_factor)
    if skipped[0]:
        if app.json:
            output.print_json(kafka.describe_topic(topic).to_json())
        return
    app.emit(info.to_json(), human=lambda a, d: output.line(a, f"Created topic {topic}."))


@topic_app.command("alter")
def alter(
    ctx: typer.Context,
    topic: TopicArg,
    config: ConfigOption = None,
    delete_config: Annotated[
        list[str] | None,
        typer.Option(
            "--delete-config",
            metavar="KEY",
            help="Remove a configuration: back to its default (repeatable; K1,K2 "
                 "removes both, as kafka-configs).",
            show_default=False,
        ),
    ] = None,
    partitions: Annotated[
        int | None,
        typer.Option("--partitions", metavar="N", min=-INT32_MAX - 1, max=INT32_MAX,
                     help="New partition count (increase only)."),
    ] = None,
    if_exists: IfExistsOption = False,
    json_output: JsonOption = False,
) -> None:
    """Change a topic's configs or partitions.

    Like kafka-configs --alter (--config K=V, --delete-config K[,K]) and kafka-topics
    --alter --partitions N (increase only). On a mirror topic the configurations synced from the
    source cannot be changed. With --json the topic. --if-exists: a topic that does not
    exist is no error (said on stderr, exit 0; with --json null).
    """
    app = App.of(ctx)
    configs = parse_configs(config)
    # kafka-configs' --delete-config 'k1,k2': values separated by commas, each trimmed
    delete_config = [k.strip() for item in delete_config or () for k in item.split(",")
                     if k.strip()]
    if not configs and not delete_config and partitions is None:
        raise usage("nothing to alter: give --config, --delete-config or --partitions")
    kafka = open_kafka(app)
    with _unless(app, topic, "UNKNOWN_TOPIC_OR_PARTITION", if_exists,
                 "does not exist: nothing altered (--if-exists)") as skipped:
        if delete_config:
            from jetlink.core.kafka.topic_admin import check_deletable

            check_deletable(kafka, topic, delete_config, configs)
        info = kafka.alter_topic(
            topic, configs=configs, delete=delete_config or (), partitions=partitions
        )
    if skipped[0]:
        if app.json:
            output.print_json(None)
        return

    def human(a: App, _doc: Any) -> None:
        if configs or delete_config:
            output.line(a, f"Completed updating config for topic {topic}.")
        if partitions is not None:
            output.line(a, f"Topic {topic} now has {info.partition_count} partitions.")

    app.emit(info.to_json(), human=human)


def describe_lines(info: TopicInfo) -> list[str]:
    """kafka-topics --describe: the topic line, then one line per partition as
    PartitionDescription prints it (no eligible leader replicas: ``Elr: N/A``,
    ``LastKnownElr: N/A``), plus jetlink's LogStartOffset / LogEndOffset at its end."""
    configs = ",".join(f"{k}={v}" for k, v in sorted(info.configs.items()))
    out = [
        f"Topic: {info.name}\tTopicId: {info.topic_id}\tPartitionCount: {info.partition_count}"
        f"\tReplicationFactor: 1\tConfigs: {configs}"
    ]
    for p in info.partitions:
        out.append(
            f"\tTopic: {info.name}\tPartition: {p.partition}\tLeader: 1\tReplicas: 1\tIsr: 1"
            f"\tElr: N/A\tLastKnownElr: N/A"
            f"\tLogStartOffset: {p.log_start}\tLogEndOffset: {p.log_end}"
        )
    return out


@topic_app.command("describe")
def describe(ctx: typer.Context, topic: TopicArg, principal: PrincipalOption = None,
             if_exists: IfExistsOption = False, json_output: JsonOption = False) -> None:
    """Show a topic and its partitions.

    The lines of kafka-topics --describe (Configs: the ones set on the topic), each
    partition with its log start and log end offsets. With --principal on a cluster that
    enforces ACLs: DESCRIBE and DESCRIBE_CONFIGS on the topic (kafka-topics asks for its
    configs too). With --json the topic (configs set, partitions with log_start_offset,
    log_end_offset, size_bytes). --if-exists: a topic that does not exist is no error
    (nothing on stdout, one line on stderr saying so, exit 0; with --json null).
    """
    app = App.of(ctx)
    kafka = open_kafka(app, principal)
    with _unless(app, topic, "UNKNOWN_TOPIC_OR_PARTITION", if_exists,
                 "does not exist (--if-exists)") as skipped:
        info = kafka.describe_with_configs(topic)
    if skipped[0]:
        if app.json:
            output.print_json(None)
        return
    app.emit(info.to_json(), human=lambda a, d: output.lines(a, describe_lines(info)))


@topic_app.command("ls")
def ls(
    ctx: typer.Context,
    names: Annotated[
        bool, typer.Option("--names", "-n",
                           help="Print only the topic names, one per line (kafka-topics "
                           "--list).")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """List the topics.

    A table of Name, Partitions, Records (log end minus log start offsets), Size and
    Mirror (the link of a mirror topic); --names prints the names alone, one per line, as
    kafka-topics --list does. With --json a list of topics.
    """
    app = App.of(ctx)
    topics = open_kafka(app).topics()
    if names and not app.json:
        output.lines(app, [t.name for t in topics])
        return

    def human(a: App, _docs: Any) -> None:
        if not topics:
            output.notice(a, "No topics found.")
            return
        output.table(
            a,
            ["Name", "Partitions", "Records", "Size", "Mirror"],
            [
                [t.name, t.partition_count, t.records, output.ibytes(t.bytes), t.mirror_link or ""]
                for t in topics
            ],
            no_wrap=("Name", "Size"),
        )

    app.emit([t.to_json() for t in topics], human=human)


@topic_app.command("rm")
def rm(
    ctx: typer.Context,
    topic: TopicArg,
    force: Annotated[bool, force_option("Delete")] = False,
    if_exists: IfExistsOption = False,
    json_output: JsonOption = False,
) -> None:
    """Delete a topic and its records.

    The groups' committed offsets of the topic go too. Asks for confirmation on a
    terminal; without one, -f/--force is required (exit status 2 otherwise). --if-exists:
    a topic that does not exist is no error (said on stderr, exit 0; with --json
    {"success": true}, nothing deleted).
    """
    app = App.of(ctx)
    kafka = open_kafka(app)
    with _unless(app, topic, "UNKNOWN_TOPIC_OR_PARTITION", if_exists,
                 "does not exist: nothing deleted (--if-exists)") as skipped:
        kafka.describe_topic(topic)  # an unknown topic fails before the question
    if skipped[0]:
        if app.json:
            output.print_json({"success": True})
        return
    from jetlink.core.kafka.mirrors import Mirrors

    again = Mirrors(data_dir(app), app.cluster, common.make_clock()).recreated_by(topic)
    if again is not None:  # Confluent's Mirror Topics: such a delete is futile
        link, source_topic = again
        output.notice(app, f"jetlink: warning: link {link}'s auto-create selects source topic "
                           f"{source_topic}, which exists: its next step creates {topic} "
                           "again and copies its history; to delete it for good, add an "
                           f"EXCLUDE filter for {source_topic} to the link's "
                           "auto.create.mirror.topics.filters first (jetlink links alter "
                           f"{link} --config ...)")
    output.confirm(app, f"Delete topic {topic}?", force=force, action=f"delete topic {topic}")
    kafka.delete_topic(topic)
    output.success(app, f"Deleted topic {topic}.")


# -- produce ------------------------------------------------------------------------------------


def _stdin_lines() -> list[bytes]:
    """stdin's lines (at most core/limits.py MAX_INPUT_FILE bytes of them: a larger input,
    ``< /dev/zero``, is refused before it fills the memory)."""
    from jetlink.core.limits import MAX_INPUT_FILE

    stream = getattr(sys.stdin, "buffer", None)
    data = (stream.read(MAX_INPUT_FILE + 1) if stream is not None
            else sys.stdin.read(MAX_INPUT_FILE + 1).encode())
    if len(data) > MAX_INPUT_FILE:
        raise usage(f"the records from stdin are more than {MAX_INPUT_FILE:,} bytes: produce "
                    "them in parts")
    lines = bytes(data).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]

PRODUCE_CHUNK = 10_000  # records per transaction of a large produce


@topic_app.command("produce")
def produce(
    ctx: typer.Context,
    topic: TopicArg,
    value: Annotated[
        str | None,
        typer.Argument(
            metavar="[VALUE]",
            help="Record value (default: one record per line of stdin).",
            show_default=False,
        ),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", "-k", metavar="KEY", help="Record key (default: no key)."),
    ] = None,
    key_separator: Annotated[
        str | None,
        typer.Option(
            "--key-separator",
            metavar="SEP",
            help="Read each stdin line as KEY<SEP>VALUE (kafka-console-producer's parse.key).",
        ),
    ] = None,
    partition: Annotated[
        int | None,
        typer.Option(
            "--partition", "-p", metavar="P", min=0, max=INT32_MAX,
            help="Partition (default: Kafka's partitioner)."
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option("--header", "-H", metavar="K:V", help="A record header (repeatable)."),
    ] = None,
    count: Annotated[
        int,
        typer.Option(
            "--count", metavar="N", min=1, help="Produce VALUE N times ({{Count}}: 1..N)."
        ),
    ] = 1,
    null_marker: Annotated[
        str | None,
        typer.Option(
            "--null-marker", metavar="TEXT",
            help="A key, value or header value equal to TEXT is produced as null "
            "(kafka-console-producer's null.marker).", show_default=False),
    ] = None,
    principal: PrincipalOption = None,
    json_output: JsonOption = False,
) -> None:
    """Produce records to a topic.

    One record with VALUE, else one record per line of stdin. Keyed records go to the
    partition of Kafka's default partitioner (murmur2 of the key); unkeyed records of one
    command all go to one partition (sticky), the next command to the next one. VALUE,
    --key and header values may use jetlink pub's templates ({{Count}}, {{ID}},
    {{TimeStamp}} ...). A mirror topic refuses records. With --principal on a cluster that
    enforces ACLs: WRITE on the topic (TOPIC_AUTHORIZATION_FAILED otherwise, nothing
    produced). --null-marker TEXT produces a key, value or header value equal to TEXT as
    null (kafka-console-producer's null.marker; a null value is a tombstone: on a compacted
    topic it deletes the key once delete.retention.ms passes). With --json a list of
    {"partition", "offset"}.
    """
    from jetlink.cli.common import now_ns
    from jetlink.cli.pub import _expand_or_warn, parse_headers

    app = App.of(ctx)
    pairs = parse_headers(header or [])
    marker = None if null_marker is None else null_marker.encode("utf-8")
    if null_marker is not None:  # LineMessageReader's checks of null.marker
        if null_marker == key_separator:
            raise usage(f"--null-marker and --key-separator are both {null_marker!r}: "
                        "null.marker and key.separator may not be equal")
        if any(k == null_marker for k, _v in pairs):
            raise usage(f"Header keys should not be equal to the null marker '{null_marker}' "
                        "as they can't be null")

    def nulled(data: bytes | None) -> bytes | None:  # null.marker: a key, value or header
        return None if marker is not None and data == marker else data  # value made null

    Rec = tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]
    records: list[Rec] | None = []  # stdin's records; None: VALUE --count times (made per chunk)
    if value is None:
        if count != 1:
            raise usage("--count needs VALUE (stdin gives one record per line)")
        if output.is_interactive():
            output.notice(app, "Reading records from STDIN, one per line")
        for n, line in enumerate(_stdin_lines(), start=1):
            rec_key = key.encode("utf-8") if key is not None else None
            rec_value = line
            if key_separator is not None:  # (an empty one: key "", as Kafka's indexOf)
                sep = key_separator.encode("utf-8")
                if sep not in line:  # LineMessageReader's words; nothing is sent
                    from jetlink.core.errors import JetlinkError

                    shown = line.decode("utf-8", "replace")
                    raise JetlinkError(f"No key separator found on line number {n}: "
                                       f"'{shown}'", field="--key-separator")
                rec_key, rec_value = line.split(sep, 1) if sep else (b"", line)
            records.append((nulled(rec_key), nulled(rec_value),  # (a null value: a tombstone)
                            [(k, nulled(v.encode("utf-8"))) for k, v in pairs]))
    else:
        if key_separator is not None:
            raise usage("--key-separator reads stdin: give no VALUE")
        from jetlink.cli.common import check_write_count
        from jetlink.core.counts import message_bytes

        check_write_count(app, count, message_bytes(topic, value, pairs, key or ""))
        records = None

    def made(n: int) -> Rec:  # record n (1..count) of VALUE
        now = now_ns()
        text = _expand_or_warn(app, value, "value", n, now, True)
        rec_key = None
        if key is not None:
            rec_key = _expand_or_warn(app, key, "key", n, now, True).encode("utf-8")
        hdrs = [
            (k, nulled(_expand_or_warn(app, v, "header", n, now, True, header=k)
                       .encode("utf-8")))
            for k, v in pairs
        ]
        return (nulled(rec_key), nulled(text.encode("utf-8", errors="surrogateescape")),
                hdrs)  # (a null value: a tombstone)

    total = count if records is None else len(records)
    if not total:
        output.notice(app, "Nothing to produce.")
        app.emit([], human=lambda a, d: None)
        return
    kafka = open_kafka(app, principal)
    # a producer asks for the topic's metadata (DESCRIBE on it: KafkaApis
    # handleTopicMetadataRequest) before it produces (WRITE): both must be allowed. WRITE
    # is asked first, so that a principal without either is told the one that grants both
    # (WRITE implies DESCRIBE); DESCRIBE then refuses only where a DENY says so
    kafka.authorize("Produce", topic=topic)
    kafka.describe_topic(topic)
    placed: list[tuple[int, int]] = []  # every (partition, offset) with --json
    produced = 0
    spans: dict[int, list[int]] = {}  # partition -> [first offset, last offset]
    # Large --count runs go in chunks (each chunk one transaction, made as it goes) so a bar
    # can move; a bar only on a terminal, never with --json.
    from jetlink.core.errors import JetlinkError
    from jetlink.core.interrupts import interrupt_deferred

    def stored() -> str:  # what the calls so far stored, for people
        return ", ".join(f"partition {q}: offsets {a}..{b}" for q, (a, b) in sorted(spans.items()))

    def placed_docs() -> list[dict[str, int]]:  # the --json document of what was stored
        return [{"partition": p, "offset": off} for p, off in placed]

    try:
        with output.progress(app, "Producing", total, enabled=total > PRODUCE_CHUNK) as bar:
            for i in range(0, total, PRODUCE_CHUNK):
                stop = min(total, i + PRODUCE_CHUNK)
                chunk = (records[i:stop] if records is not None
                         else [made(n) for n in range(i + 1, stop + 1)])
                # a call and its count as one: Ctrl-C lands between calls, so what was
                # stored is known exactly (each call all or nothing)
                with interrupt_deferred():
                    try:
                        done = kafka.produce(topic, [(k, v, h or None) for k, v, h in chunk],
                                             partition=partition)
                    except JetlinkError as err:
                        if produced and err.detail is None:  # what earlier calls stored
                            err.detail = (f"the first {produced} records were stored before it "
                                          f"(each call of {PRODUCE_CHUNK} records is all or "
                                          f"nothing): {stored()}")
                        raise
                    produced += len(done)
                    for p, off in done:
                        spans.setdefault(p, [off, off])[1] = off
                    if app.json:
                        placed += done
                bar.advance(len(chunk))
    except KeyboardInterrupt:
        # as pub's: what was stored, so that a retry does not store it twice unknowingly
        if app.json:  # (the document of what was placed, as a finished run prints it)
            output.print_json(placed_docs())
        output.notice(app, f"jetlink: interrupted: {produced:,} of {total:,} records were "
                           f"stored" + (f" ({stored()})" if produced else ""))
        raise

    def human(a: App, _docs: Any) -> None:
        if produced == 1:
            p, (off, _last) = next(iter(spans.items()))
            output.line(a, f"Produced 1 record to {topic} (partition {p}, offset {off})")
            return
        output.line(a, f"Produced {produced} records to {topic}")
        for p in sorted(spans):
            first, last = spans[p]
            span = f"offset {first}" if first == last else f"offsets {first}..{last}"
            output.line(a, f"  partition {p}: {span}")

    app.emit(placed_docs(), human=human)


# -- consume ------------------------------------------------------------------------------------


def format_record(record: Record, *, timestamp_type: str, print_key: bool, print_offset: bool,
                  print_partition: bool, print_timestamp: bool, print_headers: bool) -> bytes:
    """kafka-console-consumer's DefaultMessageFormatter: timestamp, partition, offset,
    headers, key (each followed by a tab when printed), then the value, as bytes: keys,
    values and header values written as they are (any bytes, as the tool writes them);
    null as ``null``."""

    def raw(data: bytes | None) -> bytes:
        return b"null" if data is None else data

    parts = []
    if print_timestamp:
        parts.append(f"{timestamp_type}:{record.timestamp}".encode())
    if print_partition:
        parts.append(f"Partition:{record.partition}".encode())
    if print_offset:
        parts.append(f"Offset:{record.offset}".encode())
    if print_headers:
        parts.append(
            b",".join(k.encode("utf-8") + b":" + raw(v) for k, v in record.headers)
            if record.headers else b"NO_HEADERS"
        )
    if print_key:
        parts.append(raw(record.key))
    parts.append(raw(record.value))
    return b"\t".join(parts)


def _start_offset(partition: int | None, offset: str | None, from_beginning: bool,
                  group: str | None) -> tuple[bool, int | None]:
    """kafka-console-consumer's --partition / --offset (ConsoleConsumerOptions, its checks
    and texts): (from the log start?, the offset to start at or None)."""
    if partition is None:
        if offset is not None:
            raise usage("The partition is required when offset is specified.")
        return from_beginning, None
    if group is not None:
        raise usage("Options group and partition cannot be specified together.")
    if offset is None:
        return from_beginning, None
    if from_beginning:
        raise usage("Options from-beginning and offset cannot be specified together.")
    word = offset.lower()
    if word in ("earliest", "latest"):
        return word == "earliest", None
    from jetlink.core.numbers import INT64_MAX, IntTextError, parse_int

    try:
        return False, parse_int(offset, 0, INT64_MAX)
    except IntTextError:
        raise usage(f"The provided offset value '{offset}' is incorrect. Valid values are "
                    "'earliest', 'latest', or a non-negative long.") from None


def _max_poll_interval_ms(text: str) -> int:
    """--max-poll-interval in milliseconds, as the consumer's config takes
    max.poll.interval.ms: an int of at least 1 (ConsumerConfig: ``atLeast(1)``; a
    ConfigException otherwise, before the consumer starts: a usage error here)."""
    from jetlink.cli.stream_flags import parse_duration_flag
    from jetlink.core.kafka.topics import MAX_REBALANCE_TIMEOUT_MS

    ms = parse_duration_flag(text, flag="--max-poll-interval") // 1_000_000
    if ms < 1:
        raise usage(f"invalid value for --max-poll-interval: {text!r}: Invalid value {ms} "
                    "for configuration max.poll.interval.ms: Value must be at least 1")
    if ms > MAX_REBALANCE_TIMEOUT_MS:
        raise usage(f"invalid value for --max-poll-interval: {text!r}: Invalid value {ms} "
                    "for configuration max.poll.interval.ms: Not a number of type INT "
                    f"(at most {MAX_REBALANCE_TIMEOUT_MS} ms)")
    return ms


@topic_app.command("consume")
def consume(
    ctx: typer.Context,
    topic: TopicArg,
    group: Annotated[
        str | None,
        typer.Option(
            "--group",
            "-g",
            metavar="GROUP",
            help="Consumer group: resume from its committed offsets and commit after each "
            "batch (default: no group, no commits).",
        ),
    ] = None,
    max_records: Annotated[
        int | None,
        typer.Option("--max-messages", "--max", metavar="N", min=0, max=INT32_MAX,
                     help="Stop after N records."),
    ] = None,
    partition: Annotated[
        int | None,
        typer.Option("--partition", metavar="P", min=0, max=INT32_MAX,
                     help="Read only this partition (no group), from its log end unless "
                     "--offset or --from-beginning.", show_default=False),
    ] = None,
    offset: Annotated[
        str | None,
        typer.Option("--offset", metavar="OFFSET",
                     help="With --partition: earliest, latest or an offset to start at.",
                     show_default=False),
    ] = None,
    from_beginning: Annotated[
        bool,
        typer.Option(
            "--from-beginning",
            help="Without a committed offset start at the log start (default: the log end).",
        ),
    ] = False,
    follow: Annotated[
        bool,
        typer.Option("--follow", help="Keep polling for new records (Ctrl-C to stop)."),
    ] = False,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            metavar="DURATION", parser=WAIT,
            help="With --follow: stop after this long without a record (e.g. 5s).",
        ),
    ] = None,
    session_timeout: Annotated[
        str,
        typer.Option(
            "--session-timeout",
            metavar="DURATION", parser=DURATION,
            help="The group member's session timeout (6s..30m).",
        ),
    ] = "45s",
    max_poll_interval: Annotated[
        str,
        typer.Option(
            "--max-poll-interval",
            metavar="DURATION", parser=DURATION,
            help="The group member's max.poll.interval.ms, its rebalance timeout: how long "
            "a rebalance waits for it to join again before going on without it.",
        ),
    ] = "5m",
    print_key: Annotated[bool, typer.Option("--print-key", help="Print the key.")] = False,
    print_offset: Annotated[
        bool, typer.Option("--print-offset", help="Print Offset:N.")
    ] = False,
    print_partition: Annotated[
        bool, typer.Option("--print-partition", help="Print Partition:N.")
    ] = False,
    print_timestamp: Annotated[
        bool, typer.Option("--print-timestamp", help="Print CreateTime:MS (or LogAppendTime).")
    ] = False,
    print_headers: Annotated[
        bool, typer.Option("--print-headers", help="Print the headers (k:v,... or NO_HEADERS).")
    ] = False,
    principal: PrincipalOption = None,
    json_output: JsonOption = False,
) -> None:
    """Consume records from a topic.

    Reads the partitions assigned to this consumer (with --group it joins the group as a
    member; the range assignor splits the partitions among live members) from the
    group's committed offsets, else from the log end (--from-beginning: the log start), and
    commits after each batch. When the group rebalances (a member joined or left) it
    commits, gives its partitions up and joins again; a consumer joining waits until every
    member has (Kafka's eager rebalance): no record is shown twice unless a member was gone
    before it committed; one that handles a batch longer than --max-poll-interval while
    the group rebalances is removed from it (the rebalance goes on without it) and joins
    again. Without --follow it stops when caught up; with --follow it
    keeps polling, the group stays active (heartbeats), until --max N, --timeout DURATION
    without records, or Ctrl-C (exit status 130). Prints each value per line
    (--print-key, --print-offset ... as kafka-console-consumer); "Processed a total of N
    messages" on stderr. With --principal on a cluster that enforces ACLs: READ on the
    topic, and with --group READ on the group (TOPIC_AUTHORIZATION_FAILED /
    GROUP_AUTHORIZATION_FAILED otherwise, nothing consumed or committed). With --json a
    list of records (JSON lines with --follow).
    """
    from jetlink.cli.stream_flags import parse_duration_flag
    from jetlink.core.kafka.consumer import TopicConsumer
    from jetlink.core.kafka.errors import KafkaError

    app = App.of(ctx)
    if timeout is not None and not follow:
        raise usage("--timeout needs --follow")
    earliest, start = _start_offset(partition, offset, from_beginning, group)
    idle_ns = (parse_duration_flag(timeout, flag="--timeout", wait=True)
               if timeout is not None else None)
    session_ms = parse_duration_flag(session_timeout, flag="--session-timeout") // 1_000_000
    poll_ms = _max_poll_interval_ms(max_poll_interval)
    kafka = open_kafka(app, principal)
    info = kafka.describe_topic(topic)
    ts_type = info.effective_configs()["message.timestamp.type"]
    got: list[dict[str, Any]] = []
    received = 0

    def emit(record: Record) -> None:
        nonlocal received
        received += 1  # (counted as shown: a Ctrl-C inside a poll says what was shown)
        if app.json:
            doc = record.to_json()
            if follow:
                output.json_line(doc, app)
            else:
                got.append(doc)
        else:
            output.write_bytes(format_record(
                record, timestamp_type=ts_type, print_key=print_key,
                print_offset=print_offset, print_partition=print_partition,
                print_timestamp=print_timestamp, print_headers=print_headers,
            ) + b"\n")

    last = time.monotonic_ns()
    try:
        with common.terminate_as_interrupt(), TopicConsumer(
                kafka, topic, group=group, from_beginning=earliest,
                session_timeout_ms=session_ms, max_poll_interval_ms=poll_ms,
                partition=partition, offset=start,
                on_notice=lambda text: output.notice(app, text)) as consumer:
            while max_records is None or received < max_records:
                fetched = consumer.poll(
                    None if max_records is None else max_records - received, emit)
                if fetched:
                    last = time.monotonic_ns()
                    continue
                if not follow and not consumer.joining:  # (caught up; a member waiting
                    # for its group's rebalance waits for it, as the tool's poll does)
                    break
                if idle_ns is not None and time.monotonic_ns() - last >= idle_ns:
                    break
                time.sleep(POLL_SECONDS)
    except KafkaError as err:  # the broker's refusal of the join, said with the option
        if err.name == "INVALID_SESSION_TIMEOUT":
            err.detail = f"--session-timeout {session_timeout}: {err.detail}"
        raise
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: the consumer left its group (its
        # close ran), the total still said, as kafka-console-consumer's shutdown hook does
        output.notice(app, f"Processed a total of {received} messages")
        if isinstance(stop, common.Terminated):
            raise typer.Exit(143) from None
        raise
    if app.json and not follow:
        output.print_json(got)
    output.notice(app, f"Processed a total of {received} messages")


def register(app: typer.Typer) -> None:
    app.add_typer(topic_app, name="topic")
