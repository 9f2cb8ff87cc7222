"""The Kafka objects of topology files (``[topics]``, ``[links]``, ``[mirror_topics]``) as
:class:`TopicSpec`, :class:`LinkSpec` and :class:`MirrorTopicSpec`, checked by the engine's
own rules (core/kafka: topic names, partitions and configs; ``LinkConfig.build``; the mirror
topic rules of ``Mirrors.create``), every problem of an object reported, with Kafka's error
name and number.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import JetlinkError
from ..limits import CLUSTER_NAME_RE
from .model import (
    CLUSTER_RULE,
    AclSpec,
    LinkSpec,
    MirrorTopicSpec,
    Problem,
    TopicSpec,
    acl_identity,
)

if TYPE_CHECKING:  # pragma: no cover
    from .model import TopologyObject

# Kafka table -> its keys, in the order the docs list them.
_KAFKA_KEYS: dict[str, tuple[str, ...]] = {
    "topics": ("cluster", "name", "partitions", "configs"),
    "links": (
        "cluster", "name", "source_cluster", "configs", "consumer_group_filters", "topic_filters",
    ),
    "mirror_topics": ("cluster", "name", "link", "source_topic", "configs"),
    "acls": ("cluster", "principal", "operation", "resource_type", "resource_name",
             "pattern_type", "host", "permission"),
}
#: an ACL table's fields -> (AclBinding.make's argument, its default)
_ACL_FIELDS: dict[str, tuple[str, str | None]] = {
    "resource_type": ("resource_type", "TOPIC"), "resource_name": ("name", None),
    "pattern_type": ("pattern_type", "LITERAL"), "principal": ("principal", None),
    "host": ("host", "*"), "operation": ("operation", None),
    "permission": ("permission", "ALLOW"),
}
# link table array -> the link configuration it stands for
_FILTER_FIELDS: dict[str, str] = {
    "consumer_group_filters": "consumer.offset.group.filters",
    "topic_filters": "auto.create.mirror.topics.filters",
}
_FIELD_OF_FILTER = {key: fld for fld, key in _FILTER_FIELDS.items()}


def _kafka_problem(obj: TopologyObject, exc: JetlinkError, fld: str | None = None) -> Problem:
    """A Problem for a Kafka-side error: err_code 0 (the field holds NATS numbers), the Kafka
    error's name and number after its text, as jetlink prints engine errors:
    ``... (INVALID_CONFIG 40)``."""
    from ..kafka.errors import KafkaError

    text = exc.description
    if isinstance(exc, KafkaError):
        text = f"{text} ({exc.name} {exc.error_code})"
    return Problem(obj.file, obj.label, fld if fld is not None else exc.field, 0, text)


def _refield(exc: JetlinkError, fld: str | None) -> JetlinkError:
    exc.field = fld
    return exc


def _config_key(key: str | None) -> str:
    """The config an engine error names (as ``key`` or ``config.key``)."""
    key = key or ""
    return key[len("config."):] if key.startswith("config.") else key


def _configs_field(key: str) -> str:
    """The problem field of config ``key`` (the engine names ``key`` or ``config.key``)."""
    return f"configs.{_config_key(key)}"


def _config_table(body: dict[str, Any], errors: list[JetlinkError], *,
                  scalars_only: bool = True) -> dict[str, Any]:
    """``configs`` of a Kafka object: a table of config names to values (strings; integers,
    floats and booleans are the engine's to turn into Kafka's text)."""
    value = body.get("configs", {})
    if not isinstance(value, dict):
        errors.append(JetlinkError(
            "configs must be a table of configuration names and values", field="configs"))
        return {}
    out: dict[str, Any] = {}
    for key, v in value.items():
        if scalars_only and (not isinstance(v, (str, int, float)) or v is None):
            errors.append(JetlinkError(
                f'configs."{key}": a configuration value must be a string, a number or a '
                "boolean", field=_configs_field(key)))
            continue
        out[key] = v
    return out


def _checked_configs(body: dict[str, Any], errors: list[JetlinkError],
                     check: Callable[[dict[str, Any]], dict[str, str]]) -> dict[str, str]:
    """``configs`` of a topic or mirror topic through the engine's ``check`` ({} and the
    problem, named ``configs.<name>``, when it refuses one)."""
    from ..kafka.errors import KafkaError

    configs = _config_table(body, errors)
    refused = False
    while True:  # each refused config set aside and the rest checked again: every one named
        try:
            checked = check(configs)
            return {} if refused else checked
        except KafkaError as exc:
            refused = True
            key = _config_key(exc.field)
            errors.append(_refield(exc, _configs_field(key)))
            if key not in configs:
                return {}
            configs = {k: v for k, v in configs.items() if k != key}


def _topic_spec(body: dict[str, Any], name: str, cluster: str,
                errors: list[JetlinkError]) -> TopicSpec | None:
    from ..kafka.errors import KafkaError
    from ..kafka.topics import validate_partitions, validate_topic_configs, validate_topic_name

    try:
        validate_topic_name(name)
    except KafkaError as exc:
        errors.append(_refield(exc, "name"))
    partitions = body.get("partitions", 1)
    if not isinstance(partitions, int) or isinstance(partitions, bool):
        from ..errors import value_kind, value_text

        errors.append(JetlinkError(
            f"partitions must be an integer (the number of partitions), got "
            f"{value_kind(partitions)} {value_text(partitions)}", field="partitions"))
    else:
        try:
            validate_partitions(partitions)
        except KafkaError as exc:
            errors.append(_refield(exc, "partitions"))
    checked = _checked_configs(body, errors, validate_topic_configs)
    if errors:
        return None
    return TopicSpec(name, partitions, dict(sorted(checked.items())))


def _link_spec(body: dict[str, Any], name: str, cluster: str,
               errors: list[JetlinkError]) -> LinkSpec | None:
    from ..kafka.errors import KafkaError
    from ..kafka.links import FILTER_KEYS, LinkConfig, link_to_self, validate_link_name

    try:
        validate_link_name(name)
    except KafkaError as exc:
        errors.append(_refield(exc, "name"))
    source = body.get("source_cluster")
    partial: LinkSpec | None = None  # what passed, for the rules between objects
    if source is None:
        errors.append(JetlinkError(
            "source_cluster is required: the cluster the link copies from (the link itself "
            "lives on its destination cluster, cluster)", field="source_cluster"))
    elif not isinstance(source, str) or not CLUSTER_NAME_RE.fullmatch(source):
        errors.append(JetlinkError(f"invalid cluster name {source!r}: {CLUSTER_RULE}",
                                   field="source_cluster"))
    elif source == cluster:
        errors.append(link_to_self(cluster))
    else:  # the source cluster passed: the loader keeps it (its ``partial``) on a problem
        partial = LinkSpec(name, source, {})
    configs = _config_table(body, errors, scalars_only=False)
    given_in_configs = set(configs)
    for fld, key in _FILTER_FIELDS.items():
        if fld not in body:
            continue
        if key in configs:
            errors.append(JetlinkError(
                f"{key} is given twice: by {fld} and by configs", field=fld))
            continue
        items = body[fld]
        if not isinstance(items, list):
            errors.append(JetlinkError(
                f"{fld} must be an array of filters: "
                '[{ name = "...", patternType = "LITERAL", filterType = "INCLUDE" }, ...]',
                field=fld))
            continue
        configs[key] = json.dumps({FILTER_KEYS[key]: items})
    set_aside: set[str] = set()
    while True:  # each refused config set aside and the rest checked again: every one named
        try:
            cfg = LinkConfig.build(configs, creating=True)
            break
        except KafkaError as exc:
            key = _config_key(exc.field)
            if key not in configs:
                if not set_aside:  # (after one set aside, what follows from it is none of
                    _link_fault(errors, exc, key, given_in_configs)  # the file's own)
                return partial
            _link_fault(errors, exc, key, given_in_configs)
            set_aside.add(key)
            configs = {k: v for k, v in configs.items() if k != key}
    if errors:
        return partial
    assert isinstance(source, str), "a missing or non-string source_cluster is in errors"
    return LinkSpec(name, source, cfg.to_json())


def _link_fault(errors: list[JetlinkError], exc: JetlinkError, key: str,
                given_in_configs: set[str]) -> None:
    """A link config the engine refused, named by the field the file gave it in (a filter
    table, or ``configs.<name>``)."""
    if key in _FIELD_OF_FILTER and key not in given_in_configs:
        fld = _FIELD_OF_FILTER[key]
    else:
        fld = _configs_field(key)
    errors.append(_refield(exc, fld))


def _mirror_topic_spec(body: dict[str, Any], name: str, cluster: str,
                       errors: list[JetlinkError]) -> MirrorTopicSpec | None:
    from ..kafka.errors import KafkaError
    from ..kafka.mirrors import check_mirror_topic_configs
    from ..kafka.topics import validate_topic_name

    try:
        validate_topic_name(name)
    except KafkaError as exc:
        errors.append(_refield(exc, "name"))
    name_errors = len(errors)
    link = body.get("link")
    if link is None:
        errors.append(JetlinkError(
            "link is required: the cluster link (declared in the same cluster) the topic "
            "mirrors through", field="link"))
    elif not isinstance(link, str) or not link:
        errors.append(JetlinkError("link must be a link name", field="link"))
    source = body.get("source_topic")
    if source is not None:
        try:
            validate_topic_name(source)
        except KafkaError as exc:
            errors.append(_refield(exc, "source_topic"))
    checked = _checked_configs(body, errors, check_mirror_topic_configs)
    if errors:  # its link and source topic when they passed (the loader's ``partial``)
        good_source = source is None or not any(e.field == "source_topic" for e in errors)
        if isinstance(link, str) and link and good_source and not name_errors:
            return MirrorTopicSpec(name, link, source or name, {})
        return None
    assert isinstance(link, str), "a missing or non-string link is in errors"
    return MirrorTopicSpec(name, link, source or name, dict(sorted(checked.items())))


def _acl_binding(body: dict[str, Any], errors: list[JetlinkError]) -> Any:
    """The binding an ``[acls.<key>]`` table declares, each field checked as ``jetlink acls
    add`` checks it (every field's fault); None when it does not make one."""
    from ..kafka import acls

    checks: dict[str, Callable[[str], str]] = {
        "resource_type": acls.resource_type_of, "pattern_type": acls.pattern_type_of,
        "principal": acls.parse_principal, "operation": acls.operation_of,
        "permission": acls.permission_of}
    args: dict[str, str] = {}
    for fld, (arg, default) in _ACL_FIELDS.items():
        value = body.get(fld, default)
        if value is None and fld == "resource_name" and \
                str(body.get("resource_type", "")).upper() == "CLUSTER":
            value = acls.CLUSTER_NAME
        if value is None:
            errors.append(JetlinkError(f"{fld} is required", field=fld))
        elif not isinstance(value, str):
            errors.append(JetlinkError(f"{fld} must be a string", field=fld))
        else:
            try:
                if fld in checks:
                    checks[fld](value)
                args[arg] = value
            except JetlinkError as exc:
                errors.append(_refield(exc, fld))
    if errors:
        return None
    try:
        b = acls.AclBinding.make(**args)
        acls.check_operation(b.resource_type, b.operation)  # (as jetlink acls add)
        return b
    except JetlinkError as exc:  # the name, the host, CLUSTER's name, the operation
        errors.append(_refield(exc, {"name": "resource_name"}.get(exc.field or "",
                                                                   exc.field)))
        return None


def acl_name(body: Any) -> str | None:
    """The identity of an ``[acls.<key>]`` table (:func:`.model.acl_identity`), None when
    it declares no valid binding."""
    if not isinstance(body, dict):
        return None
    b = _acl_binding(_plain_acl(body), [])
    return None if b is None else acl_identity(b)


def _plain_acl(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k in _ACL_FIELDS}


def _acl_table_of(b: Any) -> dict[str, Any]:
    """The table fields of binding ``b`` (what export writes before normalizing)."""
    return {"resource_type": b.resource_type, "resource_name": b.name,
            "pattern_type": b.pattern_type, "principal": b.principal, "host": b.host,
            "operation": b.operation, "permission": b.permission}


def _acl_spec(body: dict[str, Any], name: str, cluster: str,
              errors: list[JetlinkError]) -> AclSpec | None:
    b = _acl_binding(_plain_acl(body), errors)
    if b is None:
        return None
    return AclSpec(acl_identity(b), b.resource_type, b.name, b.pattern_type, b.principal,
                   b.host, b.operation, b.permission)


# Kafka table -> its spec decoder, in the order the tables are read.
_KAFKA_TABLES: dict[str, Callable[..., Any]] = {
    "topics": _topic_spec,
    "links": _link_spec,
    "mirror_topics": _mirror_topic_spec,
    "acls": _acl_spec,
}
