"""The schemas of Confluent's REST API v3 documents that jetlink sends or answers, as facts.

Written from the three descriptions named in ``restfacts.DESCRIPTIONS`` (their
``components/schemas``, ``allOf`` flattened: Resource / ResourceCollection give ``kind`` and
``metadata``). A schema is plain data:

- ``{"type": "string" | "integer" | "boolean"}``, ``{"type": "array", "items": SCHEMA}``,
  ``{"type": "object", "required": [...], "properties": {name: SCHEMA}}``;
- ``{"ref": "Name"}``: the schema of that name for the same description;
- ``"nullable": True``: null is allowed; ``"enum"``: the closed list of values;
  ``"extensible_enum"``: the description's ``x-extensible-enum`` (recorded, not enforced: the
  description says more values may come).

``SCHEMAS[source][name]``: ``source`` is ``"cloud"``, ``"platform"`` or ``"kafka-rest"``.
"""

from __future__ import annotations

from typing import Any

STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}


def _obj(required: list[str], **properties: Any) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": properties}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "nullable": True}


def _list_of(ref: str) -> dict[str, Any]:
    """A ResourceCollection whose ``data`` are ``ref`` documents."""
    return _obj(["kind", "metadata", "data"], kind=STRING,
                metadata={"ref": "ResourceCollectionMetadata"},
                data={"type": "array", "items": {"ref": ref}})


def _resource(required: list[str], **properties: Any) -> dict[str, Any]:
    """A Resource (``kind``, ``metadata``) with more properties."""
    return _obj(["kind", "metadata", *required], kind=STRING,
                metadata={"ref": "ResourceMetadata"}, **properties)


MIRROR_STATUS_CLOUD = ["ACTIVE", "FAILED", "LINK_FAILED", "LINK_PAUSED", "PAUSED",
                       "PENDING_STOPPED", "SOURCE_UNAVAILABLE", "STOPPED", "PENDING_MIRROR",
                       "PENDING_SYNCHRONIZE", "PENDING_SETUP_FOR_RESTORE", "PENDING_RESTORE"]
MIRROR_STATUS_PLATFORM = ["ACTIVE", "FAILED", "PAUSED", "STOPPED", "PENDING_STOPPED",
                          "PENDING_SYNCHRONIZE", "PENDING_MIRROR"]

_RELATIONSHIP = _obj(["related"], related=STRING)

# The ACL enums: AclResourceType is closed in the three descriptions; AclPatternType,
# AclOperation and AclPermission are x-extensible-enum.
ACL_RESOURCE_TYPES = ["UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID",
                      "DELEGATION_TOKEN"]
ACL_PATTERN_TYPES = ["UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"]
ACL_OPERATIONS = ["UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
                  "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                  "IDEMPOTENT_WRITE"]
ACL_PERMISSIONS = ["UNKNOWN", "ANY", "DENY", "ALLOW"]
_ACL_ENUMS: dict[str, Any] = {
    "resource_type": {"type": "string", "enum": ACL_RESOURCE_TYPES},
    "pattern_type": {"type": "string", "extensible_enum": ACL_PATTERN_TYPES},
    "operation": {"type": "string", "extensible_enum": ACL_OPERATIONS},
    "permission": {"type": "string", "extensible_enum": ACL_PERMISSIONS},
}
_ACL_FIELDS = ["resource_type", "resource_name", "pattern_type", "principal", "host",
               "operation", "permission"]

# What the three descriptions define alike.
_COMMON: dict[str, dict[str, Any]] = {
    "Error": _obj(["error_code", "message"], error_code=INTEGER,
                  message=_nullable(STRING)),
    "ResourceMetadata": _obj(["self"], self=STRING, resource_name=_nullable(STRING)),
    "ResourceCollectionMetadata": _obj(["self"], self=STRING, next=_nullable(STRING)),
    "Relationship": _RELATIONSHIP,
    # ClusterData: controller is a Relationship, optional and not nullable.
    "ClusterData": _resource(
        ["cluster_id", "acls", "brokers", "broker_configs", "consumer_groups", "topics",
         "partition_reassignments"],
        cluster_id=STRING, controller={"ref": "Relationship"}, acls={"ref": "Relationship"},
        brokers={"ref": "Relationship"}, broker_configs={"ref": "Relationship"},
        consumer_groups={"ref": "Relationship"}, topics={"ref": "Relationship"},
        partition_reassignments={"ref": "Relationship"}),
    "ClusterDataList": _list_of("ClusterData"),
    "ConfigData": _obj(["name", "value"], name=STRING, value=_nullable(STRING)),
    "MirrorLag": _obj(["partition", "lag", "last_source_fetch_offset"], partition=INTEGER,
                      lag=INTEGER, last_source_fetch_offset=INTEGER),
    "ListLinksResponseDataList": _list_of("ListLinksResponseData"),
    "ListLinkConfigsResponseDataList": _list_of("ListLinkConfigsResponseData"),
    "ListMirrorTopicsResponseDataList": _list_of("ListMirrorTopicsResponseData"),
    "AlterMirrorStatusResponseDataList": _list_of("AlterMirrorStatusResponseData"),
    "CreateMirrorTopicRequestData": _obj(
        ["source_topic_name"], source_topic_name=STRING, mirror_topic_name=STRING,
        replication_factor=INTEGER, configs={"type": "array", "items": {"ref": "ConfigData"}}),
    "UpdateLinkConfigRequestData": _obj(["value"], value=STRING),
    # The ACL documents (the three descriptions alike; the Platform's AclData_allOf and its
    # inline_response_200 omit "type: object", which changes nothing they accept).
    "AclData": _resource(["cluster_id", *_ACL_FIELDS], cluster_id=STRING,
                         resource_name=STRING, principal=STRING, host=STRING, **_ACL_ENUMS),
    "AclDataList": _list_of("AclData"),
    # deleteKafkaAcls' 200 (O and P: inline_response_200; K: an inline schema): the deleted
    # ACLs, {data} only.
    "DeleteAclsResponseData": _obj(["data"], data={"type": "array",
                                                   "items": {"ref": "AclData"}}),
    "CreateAclRequestData": _obj(_ACL_FIELDS, resource_name=STRING, principal=STRING,
                                 host=STRING, **_ACL_ENUMS),
    # batchCreateKafkaAcls' body (O and K; P has no batch operation).
    "CreateAclRequestDataList": _obj(["data"], data={"type": "array",
                                                     "items": {"ref": "CreateAclRequestData"}}),
}

_CLOUD: dict[str, dict[str, Any]] = {
    **_COMMON,
    "LinkTaskError": _obj(["error_code", "error_message"], error_code=STRING,
                          error_message=STRING),
    "LinkTask": _obj(["task_name", "state", "errors"], task_name=STRING,
                     state={"type": "string", "extensible_enum": [
                         "UNKNOWN", "ACTIVE", "IN_ERROR", "NOT_CONFIGURED", "LINK_FAILED",
                         "LINK_UNAVAILABLE", "LINK_PAUSED"]},
                     errors={"type": "array", "items": {"ref": "LinkTaskError"}}),
    "ListLinksResponseData": _resource(
        ["cluster_link_id", "link_name", "topic_names"],
        source_cluster_id=_nullable(STRING), destination_cluster_id=_nullable(STRING),
        remote_cluster_id=_nullable(STRING), link_name=STRING, link_id=STRING,
        cluster_link_id=STRING, topic_names={"type": "array", "items": STRING},
        link_error={"type": "string", "extensible_enum": [
            "UNKNOWN", "NO_ERROR", "AUTHENTICATION_ERROR", "UNRESOLVABLE_BOOTSTRAP_ERROR",
            "INVALID_BOOTSTRAP_INTERNAL_ENDPOINT_ERROR", "BOOTSTRAP_TCP_CONNECTION_FAILED_ERROR",
            "TIMEOUT_ERROR"]},
        link_error_message=_nullable(STRING),
        link_state={"type": "string", "extensible_enum": [
            "ACTIVE", "FAILED", "UNAVAILABLE", "PAUSED", "UNKNOWN"]},
        tasks=_nullable({"type": "array", "items": {"ref": "LinkTask"}}),
        category_counts=_nullable({"type": "array", "items": {"type": "object"}})),
    # Cloud names the flags is_default, is_read_only, is_sensitive.
    "ListLinkConfigsResponseData": _resource(
        ["cluster_id", "is_default", "is_read_only", "is_sensitive", "link_name", "name",
         "source", "synonyms", "value"],
        cluster_id=STRING, name=STRING, value=STRING, is_default=BOOLEAN,
        is_read_only=BOOLEAN, is_sensitive=BOOLEAN,
        source={"type": "string", "extensible_enum": ["DYNAMIC_CLUSTER_LINK_CONFIG"]},
        synonyms={"type": "array", "items": STRING}, link_name=STRING),
    "ListMirrorTopicsResponseData": _resource(
        ["link_name", "mirror_lags", "mirror_status", "mirror_topic_name", "num_partitions",
         "source_topic_name", "state_time_ms"],
        link_name=STRING, mirror_topic_name=STRING, source_topic_name=STRING,
        num_partitions=INTEGER, mirror_lags={"type": "array", "items": {"ref": "MirrorLag"}},
        mirror_status={"type": "string", "enum": MIRROR_STATUS_CLOUD},
        mirror_topic_error={"type": "string", "extensible_enum": [
            "UNKNOWN", "NOT_SET", "NO_ERROR", "SOURCE_TOPIC_MAY_BE_DELETED",
            "SOURCE_TOPIC_ID_CHANGED", "SOURCE_PARTITIONS_DECREASED",
            "NON_MONOTONIC_LOG_APPEND_EPOCH", "UNEXPECTED_TRUNCATION",
            "UNSUPPORTED_MESSAGE_FORMAT", "NON_MONOTONIC_SOURCE_EPOCH", "ILLEGAL_STATE",
            "UNSUPPORTED_MIRROR_STATE"]},
        state_time_ms=INTEGER,
        mirror_state_transition_errors={"type": "array", "items": {"ref": "LinkTaskError"}}),
    "PartitionLevelTruncationData": _obj(
        ["partition_id", "offset_truncated_to", "messages_truncated"], partition_id=INTEGER,
        offset_truncated_to=INTEGER, messages_truncated=INTEGER),
    "AlterMirrorStatusResponseData": _resource(
        ["error_code", "error_message", "messages_truncated", "mirror_lags",
         "mirror_topic_name", "partition_level_truncation_data"],
        mirror_topic_name=STRING, error_message=_nullable(STRING),
        error_code=_nullable(INTEGER),
        mirror_lags={"type": "array", "items": {"ref": "MirrorLag"}},
        messages_truncated=_nullable(INTEGER),
        partition_level_truncation_data={"type": "array",
                                         "items": {"ref": "PartitionLevelTruncationData"}}),
    "CreateLinkRequestData": _obj(
        [], source_cluster_id=STRING, destination_cluster_id=STRING, remote_cluster_id=STRING,
        cluster_link_id=STRING, configs={"type": "array", "items": {"ref": "ConfigData"}}),
    "AlterConfigBatchRequestData": _obj(
        ["data"], validate_only=BOOLEAN,
        data={"type": "array", "items": _obj(
            ["name"], name=STRING, value=_nullable(STRING),
            operation=_nullable({"type": "string", "extensible_enum": ["SET", "DELETE"]}))}),
    # Cloud: mirror_topic_names or mirror_topic_name_pattern, neither required.
    "AlterMirrorsRequestData": _obj(
        [], mirror_topic_names={"type": "array", "items": STRING},
        mirror_topic_name_pattern=STRING),
}

_PLATFORM: dict[str, dict[str, Any]] = {
    **_COMMON,
    "ListLinksResponseData": _resource(
        ["cluster_link_id", "link_id", "link_name", "topic_names"],
        source_cluster_id=_nullable(STRING), destination_cluster_id=_nullable(STRING),
        link_name=STRING, link_id=STRING, cluster_link_id=STRING,
        topic_names={"type": "array", "items": STRING}),
    # Platform names the flags default, read_only, sensitive; "default" is required but its
    # type is not declared (the description lists it under required only).
    "ListLinkConfigsResponseData": _resource(
        ["cluster_id", "default", "link_name", "name", "read_only", "sensitive", "source",
         "synonyms", "value"],
        cluster_id=STRING, name=STRING, value=STRING, read_only=BOOLEAN, sensitive=BOOLEAN,
        source={"type": "string", "extensible_enum": ["DYNAMIC_CLUSTER_LINK_CONFIG"]},
        synonyms={"type": "array", "items": STRING}, link_name=STRING),
    "ListMirrorTopicsResponseData": _resource(
        ["link_name", "mirror_lags", "mirror_status", "mirror_topic_name", "num_partitions",
         "source_topic_name", "state_time_ms"],
        link_name=STRING, mirror_topic_name=STRING, source_topic_name=STRING,
        num_partitions=INTEGER, mirror_lags={"type": "array", "items": {"ref": "MirrorLag"}},
        mirror_status={"type": "string", "enum": MIRROR_STATUS_PLATFORM},
        state_time_ms=INTEGER),
    "AlterMirrorStatusResponseData": _resource(
        ["error_code", "error_message", "mirror_lags", "mirror_topic_name"],
        mirror_topic_name=STRING, error_message=_nullable(STRING),
        error_code=_nullable(INTEGER),
        mirror_lags={"type": "array", "items": {"ref": "MirrorLag"}}),
    "CreateLinkRequestData": _obj(
        [], source_cluster_id=STRING, destination_cluster_id=STRING,
        configs={"type": "array", "items": {"ref": "ConfigData"}}),
    "AlterConfigBatchRequestData": _obj(
        ["data"],
        data={"type": "array", "items": _obj(
            ["name"], name=STRING, value=_nullable(STRING),
            operation=_nullable({"type": "string", "extensible_enum": ["SET", "DELETE"]}))}),
    # Platform: mirror_topic_names required, no pattern.
    "AlterMirrorsRequestData": _obj(
        ["mirror_topic_names"], mirror_topic_names={"type": "array", "items": STRING}),
}

SCHEMAS: dict[str, dict[str, dict[str, Any]]] = {
    "cloud": _CLOUD,
    "platform": _PLATFORM,
    "kafka-rest": dict(_COMMON),
}
