"""Every REST API v3 operation jetlink serves (``jetlink serve``) or calls (``--rest-url``), as
facts: one dict per operation, written from the descriptions named in
``restfacts.DESCRIPTIONS`` (their ``paths``; parameters and request bodies resolved).

Shape (shared by every module that checks against these facts):

- ``operation_id``, ``method``; ``path``: relative to the API root (Cloud's paths start with
  ``/kafka/v3``, the Platform's and kafka-rest's with ``/clusters``: both are given here from
  ``/clusters``);
- ``sources``: the descriptions that declare the operation, with their commit;
- ``query``: declared query parameters, ``{name: {"type", "required"?, "enum"?}}``;
- ``body``: the request body schema (an object schema of ``restfacts.schemas``), or None;
- ``responses``: ``{status: schema name | None (no content) | "text" | tuple of those}``;
  ``"5XX"`` stands for any 500-599;
- ``differs``: where the Platform's (or kafka-rest's) description says otherwise than the
  first source, ``{source: {key: value}}`` replacing those keys for that source.
"""

from __future__ import annotations

from typing import Any

from .schemas import (
    ACL_OPERATIONS,
    ACL_PATTERN_TYPES,
    ACL_PERMISSIONS,
    ACL_RESOURCE_TYPES,
    MIRROR_STATUS_CLOUD,
    MIRROR_STATUS_PLATFORM,
    SCHEMAS,
)

CLOUD = "b5d63ec49044539918deb877ff9379eabc8c9e38"
PLATFORM = "26451bd70da77371a77a16f01308bc91ec72f60d"
KAFKA_REST = "985d0e056f841a4136b4fb392cf617ae81878732"

BOTH = {"cloud": CLOUD, "platform": PLATFORM}

BOOL: dict[str, Any] = {"type": "boolean"}

# Error answers every link / mirror operation declares: Cloud's 400 is an Error document; the
# Platform's 400 is an Error document or text/plain; both declare 401, 429 (text) and 5XX.
_ERRORS_CLOUD: dict[Any, Any] = {400: "Error", 401: "Error", 429: "text", "5XX": "Error"}
_ERRORS_PLATFORM: dict[Any, Any] = {400: ("Error", "text"), 401: "Error", 429: "text",
                                    "5XX": "Error"}


def _op(operation_id: str, method: str, path: str, *, ok: dict[Any, Any],
        query: dict[str, Any] | None = None, body: str | None = None,
        sources: dict[str, str] | None = None, differs: dict[str, Any] | None = None,
        forbidden: tuple[str, ...] = (), observed: dict[int, str] | None = None
        ) -> dict[str, Any]:
    """One fact; ``forbidden``: the sources that also declare 403 (an Error document);
    ``observed``: statuses Confluent's servers answer that the descriptions do not declare,
    each with its evidence (accepted by the answer checker, listed by a test)."""
    sources = dict(sources or BOTH)

    def responses(source: str) -> dict[Any, Any]:
        errors = _ERRORS_PLATFORM if source == "platform" else _ERRORS_CLOUD
        return {**ok, **errors, **({403: "Error"} if source in forbidden else {})}

    first = next(iter(sources))
    fact = {
        "operation_id": operation_id,
        "method": method,
        "path": path,
        "sources": sources,
        "query": dict(query or {}),
        "body": SCHEMAS[first][body] if body else None,
        "responses": responses(first),
        "differs": {},
        "observed": dict(observed or {}),
    }
    for source in list(sources)[1:]:
        extra = dict((differs or {}).get(source, {}))
        if body and SCHEMAS[source][body] != fact["body"]:
            extra["body"] = SCHEMAS[source][body]
        if responses(source) != fact["responses"]:
            extra["responses"] = responses(source)
        if extra:
            fact["differs"][source] = extra
    return fact


_LINK = "/clusters/{cluster_id}/links/{link_name}"
_MIRRORS = _LINK + "/mirrors"
_ALTER_OK = {200: "AlterMirrorStatusResponseDataList"}
_VALIDATE = {"validate_only": BOOL}


def _alter_mirrors(operation_id: str, action: str, *, sources: dict[str, str] | None = None,
                   query: dict[str, Any] | None = None) -> dict[str, Any]:
    return _op(operation_id, "POST", f"{_MIRRORS}:{action}", ok=_ALTER_OK,
               query=query or _VALIDATE, body="AlterMirrorsRequestData", sources=sources)


def _acl_query(*required: str) -> dict[str, Any]:
    """The ACL filter's query parameters (getKafkaAcls, deleteKafkaAcls), ``required`` ones
    marked; resource_type is a closed enum, the other enums extensible."""
    query: dict[str, Any] = {
        "resource_type": {"type": "string", "enum": ACL_RESOURCE_TYPES},
        "resource_name": {"type": "string"},
        "pattern_type": {"type": "string", "extensible_enum": ACL_PATTERN_TYPES},
        "principal": {"type": "string"},
        "host": {"type": "string"},
        "operation": {"type": "string", "extensible_enum": ACL_OPERATIONS},
        "permission": {"type": "string", "extensible_enum": ACL_PERMISSIONS},
    }
    for name in required:
        query[name] = {**query[name], "required": True}
    return query


_OPERATIONS = [
    # -- clusters (kafka-rest; the Platform's description has GET /clusters without an
    #    operationId; Cloud's has getKafkaCluster only)
    _op("listKafkaClusters", "GET", "/clusters", ok={200: "ClusterDataList"},
        sources={"kafka-rest": KAFKA_REST, "platform": PLATFORM}, forbidden=("kafka-rest",)),
    _op("getKafkaCluster", "GET", "/clusters/{cluster_id}", ok={200: "ClusterData"},
        sources={"kafka-rest": KAFKA_REST, "cloud": CLOUD, "platform": PLATFORM},
        forbidden=("kafka-rest", "cloud")),
    # -- cluster links
    _op("listKafkaLinks", "GET", "/clusters/{cluster_id}/links",
        ok={200: "ListLinksResponseDataList"}),
    _op("createKafkaLink", "POST", "/clusters/{cluster_id}/links", ok={204: None},
        query={"link_name": {"type": "string", "required": True},
               "validate_only": BOOL, "validate_link": BOOL},
        body="CreateLinkRequestData"),
    _op("getKafkaLink", "GET", _LINK, ok={200: "ListLinksResponseData"},
        query={"include_tasks": BOOL}, differs={"platform": {"query": {}}}),
    # Both descriptions: 200, "no content in the response".
    _op("deleteKafkaLink", "DELETE", _LINK, ok={200: None},
        query={"force": BOOL, "validate_only": BOOL},
        observed={204: "Confluent's own stand-ins for its servers answer 204 No Content: the "
                       "confluent CLI's test server (test/test-server/kafka_rest_router.go) "
                       "and terraform-provider-confluent's cluster link delete stub; every "
                       "other no-content DELETE in kafka-rest's description is 204"}),
    _op("listKafkaLinkConfigs", "GET", _LINK + "/configs",
        ok={200: "ListLinkConfigsResponseDataList"}),
    _op("getKafkaLinkConfigs", "GET", _LINK + "/configs/{config_name}",
        ok={200: "ListLinkConfigsResponseData"}),
    _op("updateKafkaLinkConfig", "PUT", _LINK + "/configs/{config_name}", ok={204: None},
        body="UpdateLinkConfigRequestData"),
    _op("deleteKafkaLinkConfig", "DELETE", _LINK + "/configs/{config_name}", ok={204: None}),
    _op("updateKafkaLinkConfigBatch", "PUT", _LINK + "/configs:alter", ok={204: None},
        query=_VALIDATE, body="AlterConfigBatchRequestData"),
    # -- mirror topics
    _op("listKafkaMirrorTopicsUnderLink", "GET", _MIRRORS,
        ok={200: "ListMirrorTopicsResponseDataList"},
        query={"mirror_status": {"type": "string", "enum": MIRROR_STATUS_CLOUD}},
        differs={"platform": {"query": {"mirror_status": {
            "type": "string", "enum": MIRROR_STATUS_PLATFORM}}}}),
    # createKafkaMirrorTopic declares no query parameter (no validate_only) in either.
    _op("createKafkaMirrorTopic", "POST", _MIRRORS, ok={204: None},
        body="CreateMirrorTopicRequestData"),
    _op("listKafkaMirrorTopics", "GET", "/clusters/{cluster_id}/links/-/mirrors",
        ok={200: "ListMirrorTopicsResponseDataList"},
        query={"mirror_status": {"type": "string", "enum": MIRROR_STATUS_CLOUD}},
        differs={"platform": {"query": {"mirror_status": {
            "type": "string", "enum": MIRROR_STATUS_PLATFORM}}}}),
    _op("readKafkaMirrorTopic", "GET", _MIRRORS + "/{mirror_topic_name}",
        ok={200: "ListMirrorTopicsResponseData"},
        query={"include_state_transition_errors": BOOL}, differs={"platform": {"query": {}}}),
    _alter_mirrors("updateKafkaMirrorTopicsPromote", "promote"),
    _alter_mirrors("updateKafkaMirrorTopicsFailover", "failover"),
    _alter_mirrors("updateKafkaMirrorTopicsPause", "pause"),
    _alter_mirrors("updateKafkaMirrorTopicsResume", "resume"),
    # Cloud only.
    _alter_mirrors("updateKafkaMirrorTopicsReverseAndStartMirror", "reverse-and-start-mirror",
                   sources={"cloud": CLOUD}),
    _alter_mirrors("updateKafkaMirrorTopicsReverseAndPauseMirror", "reverse-and-pause-mirror",
                   sources={"cloud": CLOUD}),
    _alter_mirrors("updateKafkaMirrorTopicsTruncateAndRestoreMirror", "truncate-and-restore",
                   sources={"cloud": CLOUD},
                   query={"include_partition_level_truncation_data": BOOL, **_VALIDATE}),
    # Platform only.
    _alter_mirrors("updateKafkaMirrorTopicsPromoteLocalAndStartRemoteMirror",
                   "promote-local-and-start-remote-mirror", sources={"platform": PLATFORM}),
    _alter_mirrors("updateKafkaMirrorTopicsPromoteLocalAndPauseRemoteMirror",
                   "promote-local-and-pause-remote-mirror", sources={"platform": PLATFORM}),
    # -- ACLs (Cloud's declare 403 too; the Platform's do not)
    _op("getKafkaAcls", "GET", "/clusters/{cluster_id}/acls", ok={200: "AclDataList"},
        query=_acl_query(), forbidden=("cloud",)),
    _op("createKafkaAcls", "POST", "/clusters/{cluster_id}/acls", ok={201: None},
        body="CreateAclRequestData", forbidden=("cloud",)),
    # Cloud's (and kafka-rest's) description requires four of the filter's fields, the
    # Platform's none.
    _op("deleteKafkaAcls", "DELETE", "/clusters/{cluster_id}/acls",
        ok={200: "DeleteAclsResponseData"},
        query=_acl_query("resource_type", "pattern_type", "operation", "permission"),
        differs={"platform": {"query": _acl_query()}}, forbidden=("cloud",)),
    # Cloud and kafka-rest only.
    _op("batchCreateKafkaAcls", "POST", "/clusters/{cluster_id}/acls:batch", ok={201: None},
        body="CreateAclRequestDataList", sources={"cloud": CLOUD, "kafka-rest": KAFKA_REST},
        forbidden=("cloud", "kafka-rest")),
]

OPERATIONS: dict[str, dict[str, Any]] = {op["operation_id"]: op for op in _OPERATIONS}
