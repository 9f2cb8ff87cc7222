"""Kafka-style topics and consumer groups of one cluster (schema component ``kafka``).

``Kafka(cluster, clock)`` is to topics what ``JetStream`` is to streams: every mutating call
is ONE transaction of the cluster database (``cluster.transaction()``), reads use one
snapshot (``cluster.read()``), and time comes from the clock (milliseconds,
``clock.now_ns() // 1_000_000``). Retention (``retention.ms``, ``retention.bytes``) and
compaction (``cleanup.policy=compact``) are applied at the start of produce, fetch and
describe of a topic (cheap when nothing is due); ``apply_retention()`` runs them for every
topic.

Storage (docs/kafka.md "Topics and consumer groups"):

- ``topics``: one row per topic (explicit configs as a JSON object of strings, ``mirror_link``
  set while the topic is a mirror and read-only);
- ``partitions``: log start / log end offsets and byte size per partition, plus the
  compaction bookkeeping (``cleaned``: first dirty offset, ``clean_bytes``, ``tomb_due_ms``);
- ``records``: a rowid table keyed by :func:`record_key` ``(topic, partition, offset)``:
  each partition is one contiguous rowid range (:func:`partition_range`), so a fetch is a
  range scan and retention deletes a key prefix. Offsets ``log_start .. log_end - 1`` (a
  compacted partition has holes);
- ``group_offsets`` and ``group_members``: committed offsets and live members of consumer
  groups (a member is gone once ``heartbeat_ms + session_timeout_ms <= now``:
  topic_groups.LIVE_MEMBER_SQL).

Errors are :class:`~jetlink.core.kafka.errors.KafkaError` with Kafka's names, numbers and
texts.
This module holds the :class:`Kafka` facade and re-exports the names of the modules that
hold the rest: :mod:`.topic_store` (the state: the tables ``COMPONENT``, ``SCHEMA_STEPS``,
the database and clock, the plain reads of topic rows), :mod:`.topic_records` (the record
key scheme, record sizes, headers), :mod:`.topic_configs` (names, partitions, topic configs
and their defaults), :mod:`.topic_types` (the returned objects, stored topic rows). The
facade is a ``TopicStore`` composing the rule modules, which take the store (never the
facade) as their first argument and import downward only: :mod:`.topic_admin` (topics),
:mod:`.topic_log` (produce, fetch, offsets), :mod:`.topic_retention` (retention and
compaction), :mod:`.topic_groups` (consumer groups and their offsets) and
:mod:`.group_reset` (a group's offsets reset); their functions are bound as its methods.
"""

from __future__ import annotations

from . import group_reset, topic_admin, topic_groups, topic_log, topic_retention
from .topic_configs import (
    MAX_TOPIC_NAME,
    MIRROR_SYNCED_CONFIGS,
    TOPIC_CONFIG_DEFAULTS,
    check_topic_collision,
    validate_partitions,
    validate_topic_config,
    validate_topic_configs,
    validate_topic_name,
)
from .topic_groups import (
    DEFAULT_REBALANCE_TIMEOUT_MS,
    DEFAULT_SESSION_TIMEOUT_MS,
    LIVE_MEMBER_SQL,
    MAX_REBALANCE_TIMEOUT_MS,
    MAX_SESSION_TIMEOUT_MS,
    MIN_SESSION_TIMEOUT_MS,
)
from .topic_records import (
    BATCH_OVERHEAD,
    MAX_OFFSET,
    MAX_PARTITIONS,
    MAX_TOPICS,
    OFFSET_BITS,
    PARTITION_BITS,
    SIZE_SQL,
    decode_headers,
    encode_headers,
    partition_range,
    record_key,
    record_size,
    records_bytes,
)
from .topic_store import COMPONENT, SCHEMA_STEPS, TopicStore
from .topic_types import (
    GroupInfo,
    GroupMember,
    GroupOffset,
    PartitionInfo,
    Record,
    TopicInfo,
)

__all__ = [
    "BATCH_OVERHEAD",
    "COMPONENT",
    "DEFAULT_REBALANCE_TIMEOUT_MS",
    "DEFAULT_SESSION_TIMEOUT_MS",
    "LIVE_MEMBER_SQL",
    "MAX_OFFSET",
    "MAX_REBALANCE_TIMEOUT_MS",
    "MAX_SESSION_TIMEOUT_MS",
    "MAX_TOPIC_NAME",
    "MIN_SESSION_TIMEOUT_MS",
    "OFFSET_BITS",
    "PARTITION_BITS",
    "SIZE_SQL",
    "SCHEMA_STEPS",
    "MAX_PARTITIONS",
    "MAX_TOPICS",
    "MIRROR_SYNCED_CONFIGS",
    "TOPIC_CONFIG_DEFAULTS",
    "GroupInfo",
    "GroupMember",
    "GroupOffset",
    "Kafka",
    "PartitionInfo",
    "Record",
    "TopicInfo",
    "check_topic_collision",
    "decode_headers",
    "encode_headers",
    "partition_range",
    "record_key",
    "record_size",
    "records_bytes",
    "validate_partitions",
    "validate_topic_config",
    "validate_topic_name",
    "validate_topic_configs",
]

class Kafka(TopicStore):
    """Topics, records and consumer groups of one cluster database.

    The state (tables, clock, the plain reads of topic rows) is :class:`TopicStore`; the
    methods below are the functions of the rule modules (module doc), which take the store as
    their first argument, bound here."""

    # --- topics (topic_admin) ------------------------------------------------------------------
    create_topic = topic_admin.create_topic
    describe_topic = topic_admin.describe_topic
    describe_with_configs = topic_admin.describe_with_configs
    topics = topic_admin.topics
    alter_topic = topic_admin.alter_topic
    delete_topic = topic_admin.delete_topic
    set_mirror_link = topic_admin.set_mirror_link

    # --- produce, fetch and offsets (topic_log) -------------------------------------------------
    produce = topic_log.produce
    fetch = topic_log.fetch
    offsets = topic_log.offsets
    offset_for_timestamp = topic_log.offset_for_timestamp
    iter_records = topic_log.iter_records

    # --- retention and compaction (topic_retention) ---------------------------------------------
    apply_retention = topic_retention.apply_retention

    # --- consumer groups (topic_groups) ---------------------------------------------------------
    group_active = topic_groups.group_active
    commit = topic_groups.commit
    committed = topic_groups.committed
    committed_all = topic_groups.committed_all
    write_offsets_internal = topic_groups.write_offsets_internal
    write_group_offsets = topic_groups.write_group_offsets
    join = topic_groups.join
    heartbeat = topic_groups.heartbeat
    keep_alive = topic_groups.keep_alive
    leave = topic_groups.leave
    describe_group = topic_groups.describe_group
    groups = topic_groups.groups
    assignment = topic_groups.assignment
    set_offsets = group_reset.set_offsets  # (--reset-offsets: group_reset)
    delete_group = topic_groups.delete_group
    check_delete_group = topic_groups.check_delete_group
    delete_offsets = topic_groups.delete_offsets
