"""Topic administration of the Kafka engine: create (Kafka's CreateTopics checks, in its
order), describe, list, alter (configs, partition increase; a mirror topic's synced configs
and partition count refused to users) and delete topics, and marking a topic a mirror.

Its functions take the topics' state (:class:`~jetlink.core.kafka.topic_store.TopicStore`)
as their first argument; the ``Kafka`` facade (topics.py) binds them as its methods.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .errors import KafkaError, check_unique_config_keys
from .ids import random_uuid
from .topic_configs import (
    CONFIG_DEFS,
    MIRROR_SYNCED_CONFIGS,
    check_topic_collision,
    unknown_config,
    validate_partitions,
    validate_topic_configs,
    validate_topic_name,
)
from .topic_records import MAX_PARTITIONS, MAX_TOPICS, topic_range
from .topic_retention import apply_policies, maintain
from .topic_types import (
    TOPIC_COLS,
    PartitionInfo,
    TopicInfo,
    find_topic,
    get_topic,
    not_an_increase,
    row_topic,
    topic_info,
)

if TYPE_CHECKING:  # pragma: no cover
    from .topic_store import TopicStore

__all__ = [
    "alter_topic",
    "create_topic",
    "delete_topic",
    "describe_topic",
    "set_mirror_link",
    "topics",
]


def create_topic(kafka: TopicStore, name: str, partitions: int = 1,
                 configs: Mapping[str, Any] | None = None, *, validate_only: bool = False,
                 mirror_link: str | None = None, replication_factor: int = 1) -> TopicInfo:
    """Create topic ``name`` (Kafka's CreateTopics checks, in its order: name, exists,
    collision of '.' and '_', partitions, replication factor, configs). With
    ``validate_only`` nothing is written and the would-be TopicInfo is returned.
    ``mirror_link``: the topic is a mirror of that link (read-only)."""
    kafka.authorize("CreateTopics", topic=name)
    validate_topic_name(name)
    with kafka._schema.write() as conn:
        if find_topic(conn, name) is not None:
            raise KafkaError("TOPIC_ALREADY_EXISTS", f"Topic '{name}' already exists.",
                             field="name")
        if "." in name or "_" in name:
            check_topic_collision(
                name, (other for (other,) in conn.execute("SELECT name FROM topics")))
        validate_partitions(partitions)
        check_replication_factor(replication_factor)
        stored = validate_topic_configs(configs)
        now = kafka.now_ms()
        rowid = _free_rowid(conn)
        info = TopicInfo(name, random_uuid(),
                         [PartitionInfo(p, 0, 0, 0) for p in range(partitions)],
                         stored, now, mirror_link)
        if validate_only:
            return info
        conn.execute(
            "INSERT INTO topics(id, name, topic_id, partitions, configs, created_ms, "
            "mirror_link) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (rowid, name, info.topic_id, partitions, json.dumps(stored, sort_keys=True),
             now, mirror_link))
        conn.executemany("INSERT INTO partitions(topic, partition) VALUES (?, ?)",
                         [(rowid, p) for p in range(partitions)])
        return info


def _free_rowid(conn: Any) -> int:
    top = conn.execute("SELECT COALESCE(MAX(id), 0) FROM topics").fetchone()[0]
    if top < MAX_TOPICS:
        return top + 1
    row = conn.execute(
        "SELECT t.id + 1 FROM topics t WHERE t.id < ? AND NOT EXISTS "
        "(SELECT 1 FROM topics u WHERE u.id = t.id + 1) ORDER BY t.id LIMIT 1",
        (MAX_TOPICS,)).fetchone()
    if conn.execute("SELECT 1 FROM topics WHERE id = 1").fetchone() is None:
        return 1
    if row is None:
        raise KafkaError("POLICY_VIOLATION",
                         f"jetlink holds at most {MAX_TOPICS} topics per cluster.")
    return row[0]


def describe_topic(kafka: TopicStore, name: str) -> TopicInfo:
    """The topic with its partitions (retention applied first); UNKNOWN_TOPIC_OR_PARTITION."""
    kafka.authorize("Metadata", topic=name)
    maintain(kafka, name)
    with kafka._schema.read() as conn:
        return topic_info(conn, get_topic(conn, name))


def describe_with_configs(kafka: TopicStore, name: str) -> TopicInfo:
    """kafka-topics --describe: the topic (:func:`describe_topic`, DESCRIBE on it) and then
    its configs, which TopicCommand asks for with DescribeConfigs (DESCRIBE_CONFIGS on the
    topic: refused, TOPIC_AUTHORIZATION_FAILED, the whole describe fails, as the tool
    does)."""
    info = describe_topic(kafka, name)
    kafka.authorize("DescribeConfigs", topic=name)
    return info


def topics(kafka: TopicStore) -> list[TopicInfo]:
    """Every topic, sorted by name."""
    with kafka._schema.read() as conn:
        rows = [row_topic(r) for r in conn.execute(
            f"SELECT {TOPIC_COLS} FROM topics ORDER BY name")]
        return [topic_info(conn, t) for t in rows]


def check_replication_factor(replication_factor: int) -> None:
    """A topic's replication factor on this one-broker cluster: 1, or -1 for the default
    (Kafka's INVALID_REPLICATION_FACTOR texts otherwise)."""
    if replication_factor != 1 and replication_factor != -1:
        if replication_factor <= 0:
            raise KafkaError(
                "INVALID_REPLICATION_FACTOR",
                "Replication factor must be larger than 0, or -1 to use the default value.",
                field="replication_factor")
        raise KafkaError(
            "INVALID_REPLICATION_FACTOR",
            f"Unable to replicate the partition {replication_factor} time(s): The target "
            f"replication factor of {replication_factor} cannot be reached because only "
            "1 broker(s) are registered.", field="replication_factor")


def check_deletable(kafka: Any, name: str, keys: Iterable[str],
                    setting: Iterable[str] = ()) -> None:
    """kafka-configs --alter --delete-config's rule: every key deleted is set on the topic;
    those that are not (an unknown name never is) are INVALID_CONFIG ``Invalid config(s):
    k1,k2``, as ConfigCommand refuses them before it sends anything. The broker itself takes
    such a delete as nothing to do: only the tool refuses it."""
    also = set(setting)  # a key both set and deleted: alter_topic's duplicate-keys error
    wanted = [k for k in dict.fromkeys(keys) if k not in also]
    if not wanted:
        return
    unset = [k for k in wanted if k not in kafka.describe_topic(name).configs]
    if unset:
        err = KafkaError("INVALID_CONFIG", f"Invalid config(s): {','.join(unset)}",
                         field=unset[0])
        err.detail = "; ".join(_why_not_deletable(name, k) for k in unset)
        raise err


def _why_not_deletable(topic: str, key: str) -> str:
    """Why ``--delete-config key`` is refused, for people: a name Kafka does not know (the
    closest known one), or a config not set on the topic (its default is in force)."""
    if key in CONFIG_DEFS:
        return f"{key} is not set on topic {topic} (its default applies)"
    hint = unknown_config(key).detail
    return f"{key} is not a topic config" + (f": {hint}" if hint else "")


def alter_topic(kafka: TopicStore, name: str, *, configs: Mapping[str, Any] | None = None,
                delete: Iterable[str] = (), partitions: int | None = None,
                internal: bool = False) -> TopicInfo:
    """Set ``configs``, remove the ``delete`` ones (back to the default), raise the
    partition count to ``partitions`` (increase only: INVALID_PARTITIONS otherwise).
    On a mirror topic a user (``internal=False``) cannot change the synced configs
    (:data:`MIRROR_SYNCED_CONFIGS`) nor the partition count: INVALID_CONFIG /
    INVALID_REQUEST naming them; mirror_copy.py passes ``internal=True`` for config sync."""
    configs = dict(configs or {})
    delete = list(delete)
    check_unique_config_keys([*configs, *delete])
    for key in delete:
        if key not in CONFIG_DEFS:
            raise unknown_config(key)
    with kafka._schema.write() as conn:
        t = get_topic(conn, name)
        if t.mirror_link is not None and not internal:
            for key in [*configs, *delete]:
                if key in MIRROR_SYNCED_CONFIGS:
                    raise KafkaError(
                        "INVALID_CONFIG",
                        f"Topic config '{key}' of mirror topic '{name}' is synced from its "
                        "source topic and cannot be altered.", field=key)
            if partitions is not None and partitions != t.partitions:
                raise KafkaError(
                    "INVALID_REQUEST",
                    f"The partition count of mirror topic '{name}' follows its source "
                    "topic and cannot be altered.", field="partitions")
        base = {k: v for k, v in t.configs.items() if k not in delete}
        stored = validate_topic_configs(configs, base)
        if partitions is not None:
            if not isinstance(partitions, int) or isinstance(partitions, bool):
                raise KafkaError("INVALID_PARTITIONS",
                                 "Number of partitions was set to an invalid non-positive "
                                 "value.", field="partitions")
            # (no check of its own for 0 or less: KRaft's createPartitions finds it is not
            # an increase, as any count below the topic's)
            if partitions == t.partitions and not internal:
                raise KafkaError("INVALID_PARTITIONS",
                                 f"Topic already has {t.partitions} partition(s).",
                                 field="partitions")
            if partitions < t.partitions:
                raise not_an_increase(name, t.partitions, partitions)
            if partitions > MAX_PARTITIONS:
                raise KafkaError("INVALID_PARTITIONS",
                                 f"Number of partitions {partitions} is above jetlink's "
                                 f"limit of {MAX_PARTITIONS} per topic.", field="partitions")
            if partitions > t.partitions:
                conn.executemany(
                    "INSERT INTO partitions(topic, partition) VALUES (?, ?)",
                    [(t.rowid, p) for p in range(t.partitions, partitions)])
                conn.execute("UPDATE topics SET partitions = ? WHERE id = ?",
                             (partitions, t.rowid))
                t.partitions = partitions
        new = {**base, **stored}
        if new != t.configs:
            conn.execute("UPDATE topics SET configs = ? WHERE id = ?",
                         (json.dumps(new, sort_keys=True), t.rowid))
            t.configs = new
        apply_policies(conn, t, kafka.now_ms())
        return topic_info(conn, t)


def delete_topic(kafka: TopicStore, name: str) -> None:
    """Delete the topic, its records and the groups' committed offsets of it."""
    with kafka._schema.write() as conn:
        t = get_topic(conn, name)
        lo, hi = topic_range(t.rowid)
        conn.execute("DELETE FROM records WHERE id >= ? AND id < ?", (lo, hi))
        conn.execute("DELETE FROM partitions WHERE topic = ?", (t.rowid,))
        conn.execute("DELETE FROM partition_epochs WHERE topic = ?", (t.rowid,))
        conn.execute("DELETE FROM topics WHERE id = ?", (t.rowid,))
        conn.execute("DELETE FROM group_offsets WHERE topic = ?", (name,))


def set_mirror_link(kafka: TopicStore, name: str, link: str | None) -> None:
    """Mark the topic a (read-only) mirror of ``link``, or a normal topic with None."""
    with kafka._schema.write() as conn:
        t = get_topic(conn, name)
        conn.execute("UPDATE topics SET mirror_link = ? WHERE id = ?", (link, t.rowid))
