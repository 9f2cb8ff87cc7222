"""The request rules of every Confluent REST API v3 operation ``jetlink serve`` answers, as
data, and the one checker of a request against them.

Written from Confluent's published OpenAPI descriptions (facts only, nothing copied): [O]
Confluent Cloud's ``kafkarest/v3/api/openapi.yaml`` of github.com/confluentinc/ccloud-sdk-go-v2
(commit b5d63ec4), [P] Confluent Platform's ``kafkarestv3/api/openapi.yaml`` of
github.com/confluentinc/kafka-rest-sdk-go (26451bd7), [K] ``api/v3/openapi.yaml`` of
github.com/confluentinc/kafka-rest (985d0e05, the clusters paths).

Where O and P declare an operation differently the rule is what either accepts: a query
parameter or body field declared by one is accepted (``include_tasks``, the body's
``validate_only``, ``remote_cluster_id``, ``cluster_link_id``, ``mirror_topic_name_pattern``
are O's), a field is required only when both require it (P requires ``mirror_topic_names``
in AlterMirrorsRequestData, O requires nothing there; the handlers then ask for one of the
two), and an enum is the union (O's MirrorTopicStatus holds P's). An operation only one
declares (``sources``) follows that one.

Schemas are the subset of JSON Schema the descriptions use: ``type`` (object, array, string,
integer, boolean), ``properties``, ``required``, ``items``, ``enum`` and ``nullable``.
Query values are strings on the wire: a boolean is ``true`` or ``false`` (any case), an
integer its decimal digits; an empty value is not a value of any type. A parameter or body
field no description declares is refused as well (a server that ignored it would act on a
request its client meant otherwise, e.g. a ``validate_only`` no operation of that name has).

:func:`check_request` raises :class:`RequestInvalid` (answered 400 with Confluent's Error body,
``error_code`` 400, as O's ``bad_request_cannot_deserialize`` example) naming the field, the
value and the rule. It runs before the handler: a refused request changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jetlink.core.kafka.mirror_model import REST_STATUSES

__all__ = [
    "OPERATIONS",
    "Operation",
    "RequestInvalid",
    "check_body",
    "check_query",
    "check_request",
]

CLOUD = "cloud"        # [O]
PLATFORM = "platform"  # [P]
KAFKA_REST = "kafka-rest"  # [K]

STRING: dict[str, Any] = {"type": "string"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
INT32: dict[str, Any] = {"type": "integer", "format": "int32"}  # Java's int
_INT32_RANGE = (-(2 ** 31), 2 ** 31 - 1)

# O's MirrorTopicStatus (P's is ACTIVE, FAILED, PAUSED, STOPPED, PENDING_STOPPED,
# PENDING_SYNCHRONIZE, PENDING_MIRROR: a subset).
MIRROR_TOPIC_STATUS: dict[str, Any] = {"type": "string", "enum": list(REST_STATUSES)}

# ConfigData: name and value required, value nullable.
CONFIG_DATA: dict[str, Any] = {
    "title": "ConfigData", "type": "object", "required": ["name", "value"],
    "properties": {"name": STRING, "value": {"type": "string", "nullable": True}},
}
CREATE_LINK_REQUEST_DATA: dict[str, Any] = {
    "title": "CreateLinkRequestData", "type": "object",
    "properties": {
        "source_cluster_id": STRING,
        "destination_cluster_id": STRING,
        "remote_cluster_id": STRING,   # O
        "cluster_link_id": STRING,     # O
        "configs": {"type": "array", "items": CONFIG_DATA},
    },
}
UPDATE_LINK_CONFIG_REQUEST_DATA: dict[str, Any] = {
    "title": "UpdateLinkConfigRequestData", "type": "object", "required": ["value"],
    "properties": {"value": STRING},
}
# AlterConfigBatchRequestData: operation is an extensible enum (SET, DELETE) in both.
ALTER_CONFIG_BATCH_REQUEST_DATA: dict[str, Any] = {
    "title": "AlterConfigBatchRequestData", "type": "object", "required": ["data"],
    "properties": {
        "data": {"type": "array", "items": {
            "title": "AlterConfigBatchRequestData_data", "type": "object",
            "required": ["name"],
            "properties": {
                "name": STRING,
                "value": {"type": "string", "nullable": True},
                "operation": {"type": "string", "nullable": True,
                              "enum": ["SET", "DELETE"], "case_insensitive": True},
            },
        }},
        "validate_only": BOOLEAN,  # O
    },
}
CREATE_MIRROR_TOPIC_REQUEST_DATA: dict[str, Any] = {
    "title": "CreateMirrorTopicRequestData", "type": "object",
    "required": ["source_topic_name"],
    "properties": {
        "source_topic_name": STRING,
        "mirror_topic_name": STRING,
        "replication_factor": INT32,
        "configs": {"type": "array", "items": CONFIG_DATA},
    },
}
# AlterMirrorsRequestData: O's form (names or a pattern, neither required) ...
ALTER_MIRRORS_REQUEST_DATA: dict[str, Any] = {
    "title": "AlterMirrorsRequestData", "type": "object",
    "properties": {
        "mirror_topic_names": {"type": "array", "items": STRING},
        "mirror_topic_name_pattern": STRING,
    },
}
# ... and P's (names required, no pattern), for the operations only P declares.
ALTER_MIRRORS_REQUEST_DATA_P: dict[str, Any] = {
    "title": "AlterMirrorsRequestData", "type": "object",
    "required": ["mirror_topic_names"],
    "properties": {"mirror_topic_names": {"type": "array", "items": STRING}},
}

# The ACL operations (getKafkaAcls, createKafkaAcls, deleteKafkaAcls: O and P;
# batchCreateKafkaAcls: O and K). AclResourceType is a closed enum in every description;
# AclPatternType, AclOperation and AclPermission are x-extensible-enum (their values are
# read by core/kafka/acls.py, which names the field and Kafka's values when it refuses one).
# Query enums are read in any case, as Confluent's REST server reads them
# (kafka-rest EnumConverterProvider).
ACL_RESOURCE_TYPE: dict[str, Any] = {"type": "string", "case_insensitive": True, "enum": [
    "UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN"]}
ACL_QUERY: dict[str, Any] = {
    "resource_type": {**ACL_RESOURCE_TYPE, "required": False},
    "resource_name": {"type": "string", "required": False},
    "pattern_type": {"type": "string", "required": False},
    "principal": {"type": "string", "required": False},
    "host": {"type": "string", "required": False},
    "operation": {"type": "string", "required": False},
    "permission": {"type": "string", "required": False},
}
CREATE_ACL_REQUEST_DATA: dict[str, Any] = {
    "title": "CreateAclRequestData", "type": "object",
    "required": ["resource_type", "resource_name", "pattern_type", "principal", "host",
                 "operation", "permission"],
    "properties": {"resource_type": ACL_RESOURCE_TYPE, "resource_name": STRING,
                   "pattern_type": STRING, "principal": STRING, "host": STRING,
                   "operation": STRING, "permission": STRING},
}
CREATE_ACL_REQUEST_DATA_LIST: dict[str, Any] = {
    "title": "CreateAclRequestDataList", "type": "object", "required": ["data"],
    "properties": {"data": {"type": "array", "items": CREATE_ACL_REQUEST_DATA}},
}


@dataclass(frozen=True)
class Operation:
    """One operation: its id, method, path (under ``/kafka/v3``, with the descriptions'
    parameter names), query parameters (name -> schema, ``required`` in the schema), body
    schema (None: no body is read), the status of its success and who declares it."""

    operation_id: str
    method: str
    path: str
    query: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    body: Mapping[str, Any] | None = None
    status: int = 200
    sources: tuple[str, ...] = (CLOUD, PLATFORM)


def _q(required: bool = False, **schema: Any) -> dict[str, Any]:
    return {**schema, "required": required}


VALIDATE_ONLY = {"validate_only": _q(type="boolean")}
_C = "/clusters/{cluster_id}"
_L = _C + "/links/{link_name}"
_ALTER = (
    ("updateKafkaMirrorTopicsPromote", "promote"),
    ("updateKafkaMirrorTopicsFailover", "failover"),
    ("updateKafkaMirrorTopicsPause", "pause"),
    ("updateKafkaMirrorTopicsResume", "resume"),
)

# In route order: ``/links/-/mirrors`` before ``/links/{link_name}/...``.
_ALL: tuple[Operation, ...] = (
    Operation("listKafkaClusters", "GET", "/clusters", sources=(KAFKA_REST,)),
    Operation("getKafkaCluster", "GET", _C, sources=(CLOUD, PLATFORM, KAFKA_REST)),
    Operation("listKafkaLinks", "GET", _C + "/links"),
    Operation("createKafkaLink", "POST", _C + "/links",
              query={"link_name": _q(True, type="string"), **VALIDATE_ONLY,
                     "validate_link": _q(type="boolean")},
              body=CREATE_LINK_REQUEST_DATA, status=204),
    Operation("listKafkaMirrorTopics", "GET", _C + "/links/-/mirrors",
              query={"mirror_status": _q(**MIRROR_TOPIC_STATUS)}),
    Operation("getKafkaLink", "GET", _L, query={"include_tasks": _q(type="boolean")}),
    # Both declare 200 "no content"; jetlink answers 204 as Confluent's own imitations of
    # their servers do (docs/serve.md: the evidence).
    Operation("deleteKafkaLink", "DELETE", _L,
              query={"force": _q(type="boolean"), **VALIDATE_ONLY}, status=204),
    Operation("listKafkaLinkConfigs", "GET", _L + "/configs"),
    Operation("updateKafkaLinkConfigBatch", "PUT", _L + "/configs:alter",
              query=VALIDATE_ONLY, body=ALTER_CONFIG_BATCH_REQUEST_DATA, status=204),
    Operation("getKafkaLinkConfigs", "GET", _L + "/configs/{config_name}"),
    Operation("updateKafkaLinkConfig", "PUT", _L + "/configs/{config_name}",
              body=UPDATE_LINK_CONFIG_REQUEST_DATA, status=204),
    Operation("deleteKafkaLinkConfig", "DELETE", _L + "/configs/{config_name}", status=204),
    Operation("listKafkaMirrorTopicsUnderLink", "GET", _L + "/mirrors",
              query={"mirror_status": _q(**MIRROR_TOPIC_STATUS)}),
    Operation("createKafkaMirrorTopic", "POST", _L + "/mirrors",
              body=CREATE_MIRROR_TOPIC_REQUEST_DATA, status=204),
    *(Operation(op, "POST", f"{_L}/mirrors:{verb}", query=VALIDATE_ONLY,
                body=ALTER_MIRRORS_REQUEST_DATA) for op, verb in _ALTER),
    Operation("updateKafkaMirrorTopicsReverseAndStartMirror", "POST",
              _L + "/mirrors:reverse-and-start-mirror", query=VALIDATE_ONLY,
              body=ALTER_MIRRORS_REQUEST_DATA, sources=(CLOUD,)),
    Operation("updateKafkaMirrorTopicsReverseAndPauseMirror", "POST",
              _L + "/mirrors:reverse-and-pause-mirror", query=VALIDATE_ONLY,
              body=ALTER_MIRRORS_REQUEST_DATA, sources=(CLOUD,)),
    Operation("updateKafkaMirrorTopicsTruncateAndRestoreMirror", "POST",
              _L + "/mirrors:truncate-and-restore",
              query={"include_partition_level_truncation_data": _q(type="boolean"),
                     **VALIDATE_ONLY},
              body=ALTER_MIRRORS_REQUEST_DATA, sources=(CLOUD,)),
    Operation("updateKafkaMirrorTopicsPromoteLocalAndStartRemoteMirror", "POST",
              _L + "/mirrors:promote-local-and-start-remote-mirror", query=VALIDATE_ONLY,
              body=ALTER_MIRRORS_REQUEST_DATA_P, sources=(PLATFORM,)),
    Operation("updateKafkaMirrorTopicsPromoteLocalAndPauseRemoteMirror", "POST",
              _L + "/mirrors:promote-local-and-pause-remote-mirror", query=VALIDATE_ONLY,
              body=ALTER_MIRRORS_REQUEST_DATA_P, sources=(PLATFORM,)),
    Operation("readKafkaMirrorTopic", "GET", _L + "/mirrors/{mirror_topic_name}",
              query={"include_state_transition_errors": _q(type="boolean")}),
    # O requires resource_type, pattern_type, operation and permission of deleteKafkaAcls,
    # P none: the handler asks for them (kafka-rest's AclsResource does, as O's example).
    Operation("getKafkaAcls", "GET", _C + "/acls", query=ACL_QUERY),
    Operation("createKafkaAcls", "POST", _C + "/acls", body=CREATE_ACL_REQUEST_DATA,
              status=201),
    Operation("deleteKafkaAcls", "DELETE", _C + "/acls", query=ACL_QUERY),
    Operation("batchCreateKafkaAcls", "POST", _C + "/acls:batch",
              body=CREATE_ACL_REQUEST_DATA_LIST, status=201, sources=(CLOUD, KAFKA_REST)),
)

OPERATIONS: dict[str, Operation] = {op.operation_id: op for op in _ALL}


# -- the checker ----------------------------------------------------------------------------


class RequestInvalid(ValueError):
    """A request its operation's schema refuses; the message names field, value and rule."""


def _shown(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "..."


_JSON_TYPES = {"string": "a string", "integer": "an integer", "boolean": "a boolean",
               "array": "an array", "object": "an object"}


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    raise AssertionError(kind)  # pragma: no cover - the schemas above use these only


def check_body(operation: Operation, body: Any) -> None:
    """``body`` (the parsed JSON; None: no body was sent) against the operation's body
    schema. RequestInvalid otherwise."""
    if operation.body is None or body is None:
        return
    _check(operation, operation.body, body, "")


def _check(op: Operation, schema: Mapping[str, Any], value: Any, where: str) -> None:
    what = f"{where} in the request body of {op.operation_id}" if where \
        else f"The request body of {op.operation_id}"
    if value is None:
        if schema.get("nullable"):
            return
        raise RequestInvalid(f"{what} is null: it must be {_JSON_TYPES[schema['type']]}")
    if not _type_ok(schema["type"], value):
        raise RequestInvalid(f"{what} is {_shown(value)}: it must be "
                             f"{_JSON_TYPES[schema['type']]}")
    if schema.get("format") == "int32" and not _INT32_RANGE[0] <= value <= _INT32_RANGE[1]:
        raise RequestInvalid(f"{what} is {_shown(value)}: it must be an integer from "
                             f"{_INT32_RANGE[0]:,} to {_INT32_RANGE[1]:,}")
    enum = schema.get("enum")
    if enum is not None:
        given = value.upper() if schema.get("case_insensitive") else value
        if given not in enum:
            raise RequestInvalid(f"{what} is {_shown(value)}: it must be one of "
                                 + ", ".join(enum))
    if schema["type"] == "array":
        for i, item in enumerate(value):
            _check(op, schema["items"], item, f"{where}[{i}]")
    elif schema["type"] == "object":
        props = schema.get("properties", {})
        title = schema.get("title", "object")
        for name in schema.get("required", ()):
            if name not in value:
                path = f"{where}.{name}" if where else name
                raise RequestInvalid(
                    f"{path} is missing in the request body of {op.operation_id}: "
                    f"{title} requires " + ", ".join(schema["required"]))
        for name, item in value.items():
            path = f"{where}.{name}" if where else name
            if name not in props:
                raise RequestInvalid(
                    f"{path} in the request body of {op.operation_id} is not a field of "
                    f"{title} (its fields: {', '.join(props)})")
            _check(op, props[name], item, path)


def check_query(operation: Operation, query: Mapping[str, str]) -> dict[str, Any]:
    """The query parameters ``query`` (strings) checked against the operation's and typed
    (booleans as bool, integers as int); RequestInvalid otherwise."""
    declared = operation.query
    for name in query:
        if name not in declared:
            listed = ", ".join(declared) or "none"
            raise RequestInvalid(f"Query parameter {name} is not a parameter of "
                                 f"{operation.operation_id} (its parameters: {listed})")
    out: dict[str, Any] = {}
    for name, schema in declared.items():
        if name not in query:
            if schema.get("required"):
                raise RequestInvalid(f"Query parameter {name} of {operation.operation_id} "
                                     "is required")
            continue
        text = query[name]
        what = f"Query parameter {name}={_shown(text)} of {operation.operation_id}"
        kind = schema["type"]
        if kind == "boolean":
            if text.lower() not in ("true", "false"):
                raise RequestInvalid(f"{what}: it must be a boolean, true or false")
            out[name] = text.lower() == "true"
        elif kind == "integer":
            from jetlink.core.numbers import IntTextError, parse_int

            try:
                out[name] = parse_int(text)  # a 64-bit integer, as the Java server's long
            except IntTextError as err:
                raise RequestInvalid(
                    f"{what}: it must be an integer" if err.reason == "syntax" else
                    f"{what}: it must be an integer from {err.lo:,} to {err.hi:,}") from None
        else:
            if text == "" and schema.get("required"):
                raise RequestInvalid(f"{what}: it must be a non-empty string")
            enum = schema.get("enum")
            if enum is not None:
                if schema.get("case_insensitive"):
                    text = text.upper()
                if text not in enum:
                    raise RequestInvalid(f"{what}: it must be one of " + ", ".join(enum))
            out[name] = text
    return out


def check_request(operation: Operation, query: Mapping[str, str], body: Any
                  ) -> dict[str, Any]:
    """:func:`check_query` then :func:`check_body`; the typed query."""
    typed = check_query(operation, query)
    check_body(operation, body)
    return typed
