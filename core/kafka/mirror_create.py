"""Creating mirror topics: ``Mirrors.create`` with every creation condition of Confluent's
Mirror Topics documentation (a link of this cluster in DESTINATION mode and ACTIVE, the
name the link's prefix + the source topic's, a new topic, the source topic reachable and
present, the configs a mirror topic may be given), and the link step's auto-create
(``auto.create.mirror.topics.enable`` + the link's topic filters; EXCLUDE wins; with a prefix
a source topic that is itself a mirror is not chained).

Its functions take the mirrors' state (:class:`~jetlink.core.kafka.mirror_state.MirrorState`)
as their first argument; the ``Mirrors`` facade binds them as its methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .authz import ANONYMOUS, mirror_refusal
from .errors import KafkaError
from .links import PAUSED as LINK_PAUSED
from .links import UNAVAILABLE, parse_start_offset_spec
from .mirror_model import (
    ACTIVE,
    NO_ERROR,
    PAUSED,
    START_OFFSET_SPEC,
    SYNCED_CONFIGS,
    MirrorInfo,
    PartitionLag,
    check_mirror_topic_configs,
    mirror_source_topic,
    mirror_topic_exists,
    now_ms,
    unknown_source_topic,
)
from .topic_configs import validate_topic_name

if TYPE_CHECKING:  # pragma: no cover
    from .mirror_state import MirrorState

__all__ = ["active_destination", "auto_create", "create"]


def active_destination(m: MirrorState, link: str, where: str, why_active: str) -> Any:
    """Link ``link`` of this cluster, in DESTINATION mode and ACTIVE (else the error says
    ``where`` / ``why_active``)."""
    info = m.links.get(link)
    if not info.is_destination:
        raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}' is not in DESTINATION "
                         f"mode: {where}", field="link")
    state = m._state(link)
    if state != ACTIVE:
        err = KafkaError("INVALID_REQUEST", f"Cluster link '{link}' is {state}, not "
                         f"ACTIVE: {why_active}", field="link")
        if state == LINK_PAUSED:
            err.detail = (f"resume it: jetlink --cluster {m.cluster} links alter {link} "
                          "--config cluster.link.paused=false")
        elif state == UNAVAILABLE:
            err.detail = (f"its source cluster {info.source_cluster} is unreachable "
                          f"(jetlink cluster up {info.source_cluster} when it is marked down)")
        raise err
    return info


def create(m: MirrorState, topic: str, link: str, *, source_topic: str | None = None,
           configs: dict[str, str] | None = None, validate_only: bool = False,
           auto_created: bool = False, paused: bool = False,
           replication_factor: int | None = None) -> MirrorInfo:
    """A new mirror topic (every creation condition of Confluent's Mirror Topics
    documentation). ``paused``: the mirror is born paused (the pump copies nothing into
    it until it is resumed; the bulk copy
    creates its mirror so, :meth:`bulk_begin`). ``replication_factor``: the mirror topic's,
    checked as a topic's (one broker here: 1, or -1 for the default)."""
    if replication_factor is not None:
        from .topic_admin import check_replication_factor

        check_replication_factor(replication_factor)
    info = active_destination(  # exactly one link, stored in this cluster
        m, link, "mirror topics are created on a link's destination cluster",
        "mirror topics can only be created on an active link")
    cfg = info.configs
    source_topic = mirror_source_topic(topic, info.config.prefix, source_topic)
    validate_topic_name(source_topic)  # Topic.validate, before any lookup (never "missing")
    validate_topic_name(topic)
    if m.kafka.has_topic(topic):  # its row alone, not every topic described
        raise mirror_topic_exists(topic)
    _info, src = m._source(link)
    if src is None:
        raise KafkaError("INVALID_REQUEST", f"Cluster link '{link}': the source cluster "
                         f"{info.source_cluster} can not be reached", field="link")
    # the link's credentials need READ and DESCRIBE_CONFIGS on the source topic (source ACLs)
    refused = mirror_refusal(src.cluster, info.principal or ANONYMOUS, source_topic, link)
    if refused is not None:
        raise refused
    try:
        stopic = src.describe_topic(source_topic)
    except KafkaError:
        raise unknown_source_topic(source_topic, info.source_cluster, link) from None
    given = configs or {}
    spec = given.get(START_OFFSET_SPEC, cfg.get(START_OFFSET_SPEC, "earliest"))
    if START_OFFSET_SPEC not in given:  # a given spec: check_mirror_topic_configs parses it
        parse_start_offset_spec(spec)
    own = {k: v for k, v in check_mirror_topic_configs(configs).items()
           if k != START_OFFSET_SPEC}
    synced = {k: v for k, v in stopic.configs.items() if k in SYNCED_CONFIGS}
    if validate_only:
        m.kafka.create_topic(topic, len(stopic.partitions), {**synced, **own},
                             validate_only=True)
        return _planned(m, topic, link, source_topic, len(stopic.partitions))
    now = now_ms(m.clock)
    m.kafka.create_topic(topic, len(stopic.partitions), {**synced, **own},
                         mirror_link=link)
    with m._schema.write() as conn:
        conn.execute(
            "INSERT INTO mirrors(topic, link, source_topic, status, status_time_ms, "
            "created_ms, auto_created, start_spec, paused, source_topic_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (topic, link, source_topic, PAUSED if paused else ACTIVE, now, now,
             int(auto_created), spec, int(paused), stopic.topic_id))
        conn.executemany(
            "INSERT INTO mirror_partitions(topic, partition) VALUES (?, ?)",
            [(topic, p.partition) for p in stopic.partitions])
    return m.describe(topic, link)


def _planned(m: MirrorState, topic: str, link: str, source: str, n: int) -> MirrorInfo:
    return MirrorInfo(link, topic, source, ACTIVE, NO_ERROR, now_ms(m.clock), n,
                      [PartitionLag(p, 0, 0) for p in range(n)])


AUTO_CREATE_TASK = "AutoCreateMirror"


def auto_create(m: MirrorState, li: Any, src: Any) -> tuple[list[str], list[str]]:
    """The link step's auto-create: a mirror topic for every source topic the link's topic
    filters select that has none yet and that the link is authorized (source ACLs) to
    mirror. ``(names created, errors)``: a selected topic that cannot be mirrored (a name
    over 249 characters with the prefix, one colliding with a topic of the destination...)
    is an error of the AutoCreateMirror task (IN_ERROR, recorded while it lasts, cleared
    once none is left), as a mirror created by hand would be refused."""
    from .links import filter_selects, topic_filters

    if not li.config.auto_create_enable or not li.is_destination:
        return [], []
    filters = topic_filters(li.configs)
    made: list[str] = []
    errors: list[tuple[dict[str, str], str]] = []  # (the task's error, its code said)
    prefix = li.config.prefix
    existing = set(m.kafka.topic_names()) if filters else set()
    for t in src.topics() if filters else ():
        if not filter_selects(filters, t.name):
            continue
        if prefix and t.mirror_link:
            # no chaining with a prefix and auto-create (Confluent's Mirror Topics docs)
            continue
        name = prefix + t.name
        if name in existing:
            continue
        try:
            create(m, name, li.name, source_topic=t.name, auto_created=True)
            made.append(name)
        except KafkaError as err:
            if err.name == "TOPIC_AUTHORIZATION_FAILED":
                continue  # (a topic the link may not read is not the link's to mirror)
            errors.append(({"error_code": err.name, "error_message": (
                f"source topic '{t.name}' not mirrored as '{name}': {err.description}")},
                f"{err.name} {err.error_code}"))
    task = next((t for t in li.tasks if t.task_name == AUTO_CREATE_TASK), None)
    if list(task.errors if task is not None else ()) != [e for e, _code in errors]:
        m.links.set_task_errors(li.name, AUTO_CREATE_TASK, [e for e, _code in errors])
    return made, [f"{e['error_message']} ({code})" for e, code in errors]


def recreated_by(m: MirrorState, topic: str) -> tuple[str, str] | None:
    """``(link, source topic)`` of a link in this cluster whose auto-create would make
    ``topic`` again at its next step (its topic filters select the source topic, which
    exists; Confluent's Mirror Topics: deleting such a mirror topic is futile, an EXCLUDE
    filter for it is the way), else None. A source that does not answer decides nothing."""
    from .links import filter_selects, topic_filters

    for li in m.links.list(with_topics=False):
        cfg = li.config
        if not cfg.auto_create_enable or not topic.startswith(cfg.prefix):
            continue
        source_topic = topic[len(cfg.prefix):]
        filters = topic_filters(li.configs)
        if not filters or not filter_selects(filters, source_topic):
            continue
        _info, src = m._source(li.name)
        if src is not None and src.has_topic(source_topic):
            return li.name, source_topic
    return None
