"""The server of ``jetlink serve``: Confluent's REST API v3 for cluster links and mirror topics,
over the embedded engine.

:func:`create_app` builds a Starlette application serving, under
``/kafka/v3/clusters/{cluster_id}`` (``cluster_id``: a cluster of the data directory, the
link's DESTINATION cluster as with ``jetlink --cluster C links ...``):

- ``GET /kafka/v3/clusters`` -> 200 KafkaClusterList (every Kafka cluster of the data
  directory, and ``local``, which takes both kinds)
- ``GET /kafka/v3/clusters/{cluster_id}`` -> 200 KafkaCluster (``cluster_id`` and the
  ``related`` links of Confluent's cluster resource; no ``controller``: an optional,
  non-nullable relationship, left out as there are no brokers)
- ``GET /links`` -> 200 KafkaLinkDataList
- ``POST /links?link_name=L&validate_only=&validate_link=`` -> 204 (connection settings in
  ``configs`` are stored, never dialled: core/kafka/links.py)
- ``GET /links/{link}?include_tasks=`` -> 200 KafkaLinkData (tasks always included)
- ``DELETE /links/{link}?force=&validate_only=`` -> 204
- ``GET /links/{link}/configs`` -> 200 KafkaLinkConfigDataList
- ``PUT /links/{link}/configs:alter?validate_only=`` -> 204
- ``GET /links/{link}/configs/{name}`` -> 200 KafkaLinkConfigData (404 for a configuration
  no link has); ``PUT`` ``{"value": V}`` -> 204; ``DELETE`` (back to the default) -> 204
- ``GET /links/{link}/mirrors?mirror_status=`` and ``GET /links/-/mirrors?mirror_status=``
  -> 200 KafkaMirrorDataList
- ``POST /links/{link}/mirrors`` -> 204
- ``GET /links/{link}/mirrors/{topic}?include_state_transition_errors=`` -> 200
  KafkaMirrorData
- ``POST /links/{link}/mirrors:promote`` (``:failover``, ``:pause``, ``:resume``)
  ``?validate_only=`` -> 200 KafkaPromoteMirror, a list of AlterMirrorsData
- ``POST /links/{link}/mirrors:reverse-and-start-mirror`` (``:reverse-and-pause-mirror``;
  P's ``:promote-local-and-start-remote-mirror`` / ``:promote-local-and-pause-remote-mirror``,
  the same reversal with promote's conditions for the local mirror) ``?validate_only=`` ->
  200 KafkaPromoteMirror, a list of AlterMirrorsData with ``messages_truncated`` and
  ``partition_level_truncation_data`` (the records of the old source beyond where the mirror
  stopped); a topic the engine refuses (link not bidirectional, source cluster down, a lag
  for the promote-local forms, ...) is an entry with ``error_code`` 400 and the engine's
  text, as a refused promote
- ``POST /links/{link}/mirrors:truncate-and-restore?include_partition_level_truncation_data=
  &validate_only=`` (O) -> 200 KafkaPromoteMirror: each topic truncated to where the other
  side's mirror stopped and mirroring again (the pattern selects the topics the engine could
  restore), ``messages_truncated`` and, when asked, the truncation per partition
- ``GET /acls?resource_type=&resource_name=&pattern_type=&principal=&host=&operation=
  &permission=`` -> 200 KafkaAclList of KafkaAcl (the cluster's AclStore, filtered);
  ``POST /acls`` (one CreateAclRequestData) and ``POST /acls:batch`` (O and K: ``{data:
  [...]}``, all read before any is created, one transaction) -> 201; ``DELETE /acls`` with
  the filter (resource_type, pattern_type, operation and permission required, as kafka-rest's
  AclsResource and O require them) -> 200 ``{data: [KafkaAcl]}`` of those deleted. A cluster
  without an authorizer answers SECURITY_DISABLED: 400/40002 (M: SecurityDisabledException)

Every request is first checked against its operation's rules (cli/rest/schemas.py: the query
parameters and body fields the descriptions declare, their types, enums and required ones):
a request they refuse is 400 ``{"error_code": 400, "message": ...}`` naming field, value and
rule, and changes nothing.

Errors are Confluent's error bodies ``{"error_code": N, "message": "..."}`` with the HTTP
status of :func:`rest_error` (the one place engine errors become HTTP ones).

What was checked against Confluent's published material, and where (the commits named):

- [O] Confluent Cloud's Kafka REST v3 OpenAPI document, ``kafkarest/v3/api/openapi.yaml`` of
  github.com/confluentinc/ccloud-sdk-go-v2 (commit b5d63ec4); [P] Confluent Platform's,
  ``kafkarestv3/api/openapi.yaml`` of github.com/confluentinc/kafka-rest-sdk-go (26451bd7);
  [M] ``KafkaExceptionMapper`` of github.com/confluentinc/rest-utils (5269b872), the
  exception -> status mapping of Confluent's REST servers; [K] ``api/v3/openapi.yaml`` and
  ``AclsResource`` / ``CreateAclBatchAction`` / ``AclManagerImpl`` of
  github.com/confluentinc/kafka-rest (985d0e05), Confluent's REST server.

=======================================  ================================================  ====
fact                                     jetlink                                           src
=======================================  ================================================  ====
list envelope                            ``{kind, metadata: {self, next: null}, data}``    O P
item envelope                            ``{kind, metadata: {self, resource_name}, ...}``  O P
link kinds                               KafkaLinkDataList / KafkaLinkData                 O P
link config kinds                        KafkaLinkConfigDataList / KafkaLinkConfigData     O P
link config fields                       cluster_id, name, value, source, synonyms,        O P
                                         link_name and the flags under both names: O's
                                         is_default, is_read_only, is_sensitive and P's
                                         default, read_only, sensitive (each requires its
                                         own); a sensitive value is null (a Cloud listing
                                         recorded in terraform-provider-confluent)
mirror kinds                             KafkaMirrorDataList / KafkaMirrorData             O P
promote/failover/pause/resume kinds      KafkaPromoteMirror / AlterMirrorsData (the        O P
                                         examples use these for all four verbs; jetlink
                                         answers the reverse verbs the same way)
reverse paths                            mirrors:reverse-and-start-mirror,                 O P
                                         mirrors:reverse-and-pause-mirror; validate_only;
                                         body AlterMirrorsRequestData
truncation data                          partition_level_truncation_data: [{partition_id,  O
                                         offset_truncated_to, messages_truncated}]
alter result fields                      mirror_topic_name, error_code, error_message,     O
                                         mirror_lags, messages_truncated,
                                         partition_level_truncation_data
per-topic error_code                     null on success; an HTTP-style code (the          O P
                                         example: 400, "Topic 'topic-2' has already
                                         stopped its mirror from 'my-new-link-1'")
create link body                         {source_cluster_id, configs: [{name, value}]}     O P
configs:alter body                       {data: [{name, value, operation: SET|DELETE}],    O
                                         validate_only}
mirror create body                       {source_topic_name (required),                    O P
                                         mirror_topic_name, configs, replication_factor}
alter mirrors body                       {mirror_topic_names} or                           O
                                         {mirror_topic_name_pattern}
POST links, POST mirrors,                204 No Content                                    O P
PUT configs:alter
DELETE link                              204 (the documents say 200 "Operation succeeded,  O P
                                         no content in the response"; Confluent's own
                                         imitations of their servers answer 204: docs/serve.md)
unknown cluster                          404 {404, "Cluster X cannot be found."}           O
unknown path                             404 {404, "HTTP 404 Not Found"}                   O
link not found                           404 {404, ...} (O's ClusterLinkNotFound           O
                                         response; not referenced by an operation)
unknown topic                            404 {40403, ...}                                  M
topic / link exists, invalid config,     400 {40002, ...} (TopicExistsException,           M
invalid request                          InvalidConfigurationException,
                                         InvalidRequestException)
authentication failed                    401 {40101, "Authentication failed"}              O M
ACL kinds                                KafkaAclList / KafkaAcl, fields cluster_id and    O K
                                         the binding's seven; delete: {data} only
ACL create / batch                       201 no content (K's server answers 204 to batch)  O P K
security disabled (no authorizer)        400 {40002, ...}                                  M
ACL request refusals                     400 {400, "resource_type cannot be unspecified    O K
                                         or UNKNOWN"}, "pattern_type cannot be MATCH" ...
=======================================  ================================================  ====

Not verified (no published source found): what Confluent Server answers for an existing link
(O defines a ClusterLinkExists response with error_code 404, referenced by no operation;
jetlink answers 400/40002 as for an existing topic) and for a link in use (400/40002 here);
the exact texts of Confluent's messages (jetlink's are the engine's, the CLI's).

jetlink's deliberate differences: ``destination_cluster_id`` of a link is the cluster it is
stored in (Confluent's examples leave it null or out for a link at its destination), as
``links ls --json``;
``link_id`` is the UUID form of ``cluster_link_id`` (Confluent's relation between the two);
an alter result carries an extra ``clamps`` list (the consumer offsets promote / failover
clamped: ``{group, topic, partition, from, to}``; no Confluent field has that name), and a
reverse result an extra ``restored_mirror_status`` (ACTIVE, or PAUSED: the new mirror's status
on the other cluster, which this cluster's answer does not otherwise show).
A link is always described with its ``tasks`` (``include_tasks`` is accepted and changes
nothing).

Requests: one DataDir per request, opened and closed by the one thread that runs the engine
work of every request in arrival order (cli/rest/worker.py), or, for requests queued back to
back, the one DataDir the thread holds while busy (:class:`Anchor`); a request that changed
the store is answered after a bounded replication step (``jetlink.core.step.bounded_step``, the one
every mutating CLI command ends with) that started after its write, shared with the requests
that wrote meanwhile, except a create of a link or mirror topic: answered before the link's
first fetch (as Confluent's server; its link's step follows in the background, the worker's
module doc); the queued work of a client that disconnected is dropped. A request
body must be JSON with ``Content-Type: application/json`` (415 otherwise: a browser cannot send that
cross-origin without a CORS preflight, which this server never grants).

Faults (docs/faults.md): a body over :data:`MAX_BODY_BYTES` is 413 whether it comes with a
Content-Length or chunked; a body nested deeper than :data:`MAX_JSON_DEPTH` arrays / objects
is 400, refused by a scan of the raw text before the JSON parser (a recursive one) runs; a
body that is not JSON (or holds NaN, Infinity or a lone surrogate) is 400. A server fault (an
unusable database, any unexpected exception) is a 500 whose body names neither a path nor a
traceback: the details go to stderr only, one line (``jetlink: error: 500 METHOD PATH:
...``), followed by the traceback for an unexpected exception. Without a token only
loopback ``Host`` headers are served (DNS rebinding); with one every request needs
``Authorization: Bearer <token>`` (compared with ``hmac.compare_digest``).

Starlette is imported here only; this module is imported by ``jetlink serve`` (and tests).
"""

from __future__ import annotations

import base64
import hmac
import ipaddress
import itertools
import json
import re
import sqlite3
import sys
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from jetlink.cli.rest.worker import EngineWorker, Outcome, WorkerClosed

__all__ = [
    "BASE_PATH",
    "MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
    "RestError",
    "collection",
    "create_app",
    "is_loopback_host",
    "link_id_uuid",
    "resource",
    "rest_error",
]

BASE_PATH = "/kafka/v3/clusters"
MAX_BODY_BYTES = 1 << 20
# Arrays and objects nested deeper than this are refused before parsing (Confluent's bodies
# nest 3 levels; Python's json parser recurses once per level and fails near 1,000).
MAX_JSON_DEPTH = 64

# Kafka-REST's error codes (M): KAFKA_BAD_REQUEST_ERROR_CODE, KAFKA_AUTHENTICATION_ERROR_CODE,
# KAFKA_UNKNOWN_TOPIC_PARTITION_CODE.
BAD_REQUEST = 40002
AUTHENTICATION_FAILED = 40101
UNKNOWN_TOPIC_PARTITION = 40403

# Kafka error name -> (HTTP status, REST error_code); any other KafkaError is 400/40002.
_KAFKA_STATUS: dict[str, tuple[int, int]] = {
    "CLUSTER_LINK_NOT_FOUND": (404, 404),
    "MIRROR_TOPIC_NOT_FOUND": (404, 404),
    "UNKNOWN_TOPIC_OR_PARTITION": (404, UNKNOWN_TOPIC_PARTITION),
    "UNKNOWN_TOPIC_ID": (404, UNKNOWN_TOPIC_PARTITION),
    "TOPIC_AUTHORIZATION_FAILED": (403, 40301),
    "CLUSTER_AUTHORIZATION_FAILED": (403, 40301),
    "GROUP_AUTHORIZATION_FAILED": (403, 40301),
}


# -- errors -------------------------------------------------------------------------------


class RestError(Exception):
    """An error answered as ``{"error_code": code, "message": message}`` with ``status``."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class BodyTooLarge(RestError):
    """A request body over :data:`MAX_BODY_BYTES` (raised while it is received)."""

    def __init__(self) -> None:
        super().__init__(413, 413, "HTTP 413 Request Entity Too Large: a request body is at "
                                   f"most {MAX_BODY_BYTES} bytes")


# Server faults: the body says this much, the log says the rest.
INTERNAL_ERROR = "Internal Server Error"
STORE_ERROR = ("Internal Server Error: the data directory's store cannot be used (the "
               "server's log has the details)")


def _storage_errors() -> tuple[type[BaseException], ...]:
    """The engine's errors for a failing store: sqlite3's and the OS's, and the
    StorageError (damaged, full, read-only) they become in core/store/health.py."""
    from jetlink.core.store.health import StorageError

    return (sqlite3.Error, OSError, StorageError)


def is_store_fault(err: BaseException) -> bool:
    """Whether ``err`` is the store failing (a database that is not one, a damaged or full
    one, a disk error, a permission), itself or as the cause of a jetlink error: a fault of
    the server, not of the request."""
    kinds = _storage_errors()
    seen = 0
    while err is not None and seen < 8:
        if isinstance(err, kinds):
            return True
        err = err.__cause__  # type: ignore[assignment]
        seen += 1
    return False


def rest_error(err: BaseException) -> RestError:
    """The REST error of ``err``: the one mapping from jetlink's errors to HTTP statuses and
    Confluent's error codes (table in the module docstring). A server fault is 500 with a
    body that says no more than :data:`STORE_ERROR` or :data:`INTERNAL_ERROR`."""
    from jetlink.core.errors import JetlinkError, NotFoundError, UsageError
    from jetlink.core.kafka.errors import KafkaError

    if isinstance(err, RestError):
        return err
    if isinstance(err, ClientDisconnect):
        return RestError(400, 400, "The client closed the connection before sending its body")
    if is_store_fault(err):
        return RestError(500, 500, STORE_ERROR)
    if isinstance(err, KafkaError):
        status, code = _KAFKA_STATUS.get(err.name, (400, BAD_REQUEST))
        return RestError(status, code, err.description)
    if isinstance(err, NotFoundError):
        return RestError(404, 404, err.description)
    if isinstance(err, UsageError):
        return RestError(400, 400, err.description)
    if isinstance(err, JetlinkError):
        return RestError(400, BAD_REQUEST, err.description)
    return RestError(500, 500, INTERNAL_ERROR)


def _error_response(err: RestError, headers: Mapping[str, str] | None = None) -> JSONResponse:
    doc = {"error_code": err.code, "message": err.message}
    try:
        return JSONResponse(doc, status_code=err.status, headers=dict(headers or {}))
    except UnicodeEncodeError:  # a lone surrogate echoed from the request: escape it
        return Response(json.dumps(doc).encode("ascii"), status_code=err.status,
                        headers=dict(headers or {}), media_type="application/json")


def _printable(text: str, limit: int = 200) -> str:
    """``text`` for one log line: control characters escaped, at most ``limit`` characters."""
    out = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                  for c in text[: limit + 1])
    return out if len(out) <= limit else out[:limit] + "..."


def log_line(level: str, scope: Scope, text: str) -> None:
    """One line on the server's log (stderr): ``jetlink: LEVEL: METHOD PATH: text``."""
    path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "replace")
    sys.stderr.write(f"jetlink: {level}: {scope.get('method', '?')} "
                     f"{_printable(path.decode('latin-1'))}: {_printable(text, 2000)}\n")
    sys.stderr.flush()


def log_fault(scope: Scope, err: RestError, exc: BaseException) -> None:
    """A server fault on the log: one line with the details (paths included), then, unless
    the store failed, the traceback. Never in a response body."""
    log_line("error", scope, f"{err.status} {type(exc).__name__}: {exc}")
    if not is_store_fault(exc):
        traceback.print_exception(exc, file=sys.stderr)
        sys.stderr.flush()


def _failure(scope: Scope, exc: Exception) -> JSONResponse:
    """The error body of ``exc``; a server fault, or a body refused for its size, is
    logged."""
    err = rest_error(exc)
    if err.status >= 500:
        log_fault(scope, err, exc)
    elif isinstance(err, BodyTooLarge):
        log_line("warning", scope, err.message)
    return _error_response(err)


def _http_phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:  # pragma: no cover - a status Starlette never raises
        return "Error"


async def _http_exception(_request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no route, wrong method, body too large) as error bodies:
    ``{"error_code": 404, "message": "HTTP 404 Not Found"}`` (O's endpoint_not_found)."""
    status = getattr(exc, "status_code", 500)
    headers = getattr(exc, "headers", None)
    return _error_response(RestError(status, status, f"HTTP {status} {_http_phrase(status)}"),
                           headers)


# -- shapes (pure) ------------------------------------------------------------------------


def collection(kind: str, self_url: str, data: list[dict[str, Any]]) -> dict[str, Any]:
    """A REST v3 collection: ``{kind, metadata: {self, next: null}, data}``."""
    return {"kind": kind, "metadata": {"self": self_url, "next": None}, "data": data}


def resource(kind: str, self_url: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A REST v3 resource: ``{kind, metadata: {self, resource_name: null}, **fields}``."""
    return {"kind": kind, "metadata": {"self": self_url, "resource_name": None}, **fields}


def link_id_uuid(cluster_link_id: str) -> str:
    """Confluent's ``link_id``: the UUID whose URL-safe base64 is ``cluster_link_id``
    (``eEBkTffYSESld6EO898x3w`` -> ``7840644d-f7d8-4844-a577-a10ef3df31df``)."""
    try:
        raw = base64.urlsafe_b64decode(cluster_link_id + "=" * (-len(cluster_link_id) % 4))
        return str(uuid.UUID(bytes=raw))
    except (ValueError, TypeError):
        return cluster_link_id


def link_data(base: str, info: Any) -> dict[str, Any]:
    """KafkaLinkData of a LinkInfo (its REST v3 link data plus ``link_id``)."""
    doc = info.to_json()
    fields: dict[str, Any] = {}
    for key, value in doc.items():
        fields[key] = value
        if key == "cluster_link_id":
            fields["link_id"] = link_id_uuid(value)
    return resource("KafkaLinkData", f"{base}/links/{_q(info.name)}", fields)


def link_config_data(base: str, cluster: str, link: str, entry: Mapping[str, Any]
                     ) -> dict[str, Any]:
    """KafkaLinkConfigData of one ``LinkConfig.entries()`` entry, with the flags under both
    descriptions' names: O's ``is_default``, ``is_read_only``, ``is_sensitive`` and P's
    ``default``, ``read_only``, ``sensitive`` (each description requires its own three;
    docs/serve.md has the evidence). A sensitive value is null."""
    return resource("KafkaLinkConfigData",
                    f"{base}/links/{_q(link)}/configs/{_q(entry['name'])}", {
                        "cluster_id": cluster,
                        "name": entry["name"],
                        "value": entry["value"],
                        "is_default": entry["is_default"],
                        "is_read_only": entry["is_read_only"],
                        "is_sensitive": entry["is_sensitive"],
                        "default": entry["is_default"],
                        "read_only": entry["is_read_only"],
                        "sensitive": entry["is_sensitive"],
                        "source": entry["source"],
                        "synonyms": [],
                        "link_name": link,
                    })


def mirror_data(base: str, info: Any) -> dict[str, Any]:
    """KafkaMirrorData of a MirrorInfo (its REST v3 mirror data)."""
    return resource("KafkaMirrorData",
                    f"{base}/links/{_q(info.link_name)}/mirrors/{_q(info.mirror_topic_name)}",
                    info.to_json())


def alter_data(base: str, link: str, result: Any) -> dict[str, Any]:
    """AlterMirrorsData of an AlterResult: ``error_code`` / ``error_message`` null on
    success, else the HTTP-style code of the engine's Kafka error and its text."""
    from jetlink.core.kafka.errors import KafkaError

    code = message = None
    if not result.ok:
        err = rest_error(KafkaError.from_code(result.error_code, result.error_message))
        code, message = err.status, err.message
    return resource("AlterMirrorsData",
                    f"{base}/links/{_q(link)}/mirrors/{_q(result.mirror_topic_name)}", {
                        "mirror_topic_name": result.mirror_topic_name,
                        "error_code": code,
                        "error_message": message,
                        "mirror_lags": [p.to_json() for p in result.mirror_lags],
                        "messages_truncated": None,
                        "partition_level_truncation_data": [],
                        "clamps": [c.to_json() for c in result.clamps],
                    })


def reverse_data(base: str, link: str, result: Any, restored: Any) -> dict[str, Any]:
    """AlterMirrorsData of a reverse (an AlterResult and the TruncateResult of the other
    side): the stop's fields, the truncation per partition and in all, and the new mirror's
    status."""
    doc = alter_data(base, link, result)
    doc["messages_truncated"] = restored.messages_truncated
    doc["partition_level_truncation_data"] = _truncation_data(restored)
    doc["restored_mirror_status"] = restored.mirror_status
    doc["restored_clamps"] = [c.to_json() for c in restored.clamps]  # the truncation's
    return doc


def _truncation_data(restored: Any) -> list[dict[str, int]]:
    """PartitionLevelTruncationData of a TruncateResult."""
    return [{"partition_id": p["partition"], "offset_truncated_to": p["offset_truncated_to"],
             "messages_truncated": p["messages_truncated"]} for p in restored.partitions]


def cluster_data(base: str, cluster: str) -> dict[str, Any]:
    """KafkaCluster of ``cluster`` (``base``: its URL, ``.../kafka/v3/clusters/C``): the
    fields of Confluent's ClusterData; the related collections are named as Confluent names
    them, although jetlink serves only the links under them."""
    def related(path: str) -> dict[str, str]:
        return {"related": f"{base}/{path}"}

    return {
        "kind": "KafkaCluster",
        "metadata": {"self": base, "resource_name": f"crn:///kafka={cluster}"},
        "cluster_id": cluster,
        "acls": related("acls"),
        "brokers": related("brokers"),
        "broker_configs": related("broker-configs"),
        "consumer_groups": related("consumer-groups"),
        "topics": related("topics"),
        "partition_reassignments": related("topics/-/partitions/-/reassignment"),
    }


def _q(name: str) -> str:
    return quote(name, safe="")


# -- hosts and tokens ---------------------------------------------------------------------


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a name or an IP literal, IPv6 with or without brackets) is the
    loopback: ``localhost`` or a loopback address. Names are not resolved."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_of(header: str) -> str:
    """The host of a ``Host`` header (``[::1]:8090`` -> ``[::1]``, ``a:1`` -> ``a``)."""
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class GuardMiddleware:
    """Every HTTP request: with a token, ``Authorization: Bearer <token>`` (401 and
    ``{"error_code": 40101, "message": "Authentication failed"}`` otherwise); without one,
    a loopback ``Host`` header (400 otherwise)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        problem: JSONResponse | None = None
        if self.token is not None:
            scheme, _, given = headers.get("authorization", b"").partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(),
                                                                      self.token):
                problem = _error_response(
                    RestError(401, AUTHENTICATION_FAILED, "Authentication failed"),
                    {"WWW-Authenticate": 'Bearer realm="jetlink"'})
        else:
            host = _host_of(headers.get("host", b"").decode("latin-1"))
            if not is_loopback_host(host):
                problem = _error_response(RestError(
                    400, 400, f"Invalid Host header {host!r}: without --auth-token-file "
                    "jetlink serve answers loopback names only"))
        if problem is not None:
            await problem(scope, receive, send)
            return
        await self.app(scope, receive, send)


class BodyLimitMiddleware:
    """Request bodies of at most ``max_bytes``: a larger Content-Length is refused before
    the body is read, a chunked body once it has grown past the limit (413 and Confluent's
    error body either way, one line on the log)."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = None
        for key, value in scope.get("headers", []):
            if key.lower() == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    length = None
        if length is not None and length > self.max_bytes:
            await _failure(scope, BodyTooLarge())(scope, receive, send)
            return
        total = 0

        async def limited_receive() -> Any:
            nonlocal total
            message = await receive()
            if message["type"] == "http.request":
                total += len(message.get("body", b""))
                if total > self.max_bytes:
                    raise BodyTooLarge()
            return message

        tracked = _TrackedSend(send)
        try:
            await self.app(scope, limited_receive, tracked)
        except BodyTooLarge as exc:  # read outside an endpoint's error handling
            if tracked.started:
                raise
            await _failure(scope, exc)(scope, receive, send)


class _TrackedSend:
    """An ASGI ``send`` that remembers whether the response has started (after that, an
    error can no longer be answered with a body of its own)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)


class FaultMiddleware:
    """The outermost layer: an exception no endpoint turned into an error body becomes
    ``500 {"error_code": 500, "message": "Internal Server Error"}`` (when no response has
    started), with one line and the traceback on the log; none reaches uvicorn."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tracked = _TrackedSend(send)
        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            response = _failure(scope, exc)
            if not tracked.started:
                await response(scope, receive, send)


# -- one request --------------------------------------------------------------------------


@dataclass
class Call:
    """What a handler gets: the cluster (its DataDir, opened for this request), the path
    parameters, the query, the JSON body, and the URL prefix of the cluster's resources."""

    store: Any
    cluster: str
    clock: Any
    params: dict[str, str]
    # the query, checked and typed by the operation's schema (cli/rest/schemas.py)
    query: dict[str, Any]
    body: Any
    base: str
    # set by a handler that must not end with a replication step (validate_only)
    dry: bool = field(default=False)
    # set by a create answered before its link's first step: the link (cli/rest/worker.py)
    early_link: str | None = field(default=None)

    def flag(self, name: str, default: bool = False) -> bool:
        """Boolean query parameter ``name`` (its schema checked it: absent is ``default``)."""
        return bool(self.query.get(name, default))

    def links(self) -> Any:
        from jetlink.core.kafka.links import Links

        return Links.open(self.store, self.cluster, self.clock)

    def mirrors(self) -> Any:
        from jetlink.core.kafka.mirrors import Mirrors

        return Mirrors(self.store, self.cluster, self.clock)


Handler = Callable[[Call], "tuple[int, Any]"]


def _body_object(call: Call) -> dict[str, Any]:
    if call.body is None:
        raise RestError(400, 400, "A JSON request body is required")
    if not isinstance(call.body, dict):
        raise RestError(400, 400, "The request body must be a JSON object")
    return call.body


def _clipped(value: Any) -> str:
    """A request's value as a message quotes it: its repr, cut when long (core's clip)."""
    from jetlink.core.errors import clip

    return clip(repr(value))


def _string(body: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = body.get(key)
    if value is None:
        if required:
            raise RestError(400, 400, f"{key} is required")
        return None
    if not isinstance(value, str) or not value:
        raise RestError(400, 400, f"{key} must be a non-empty string")
    return value


def _configs(body: Mapping[str, Any], key: str = "configs") -> dict[str, str]:
    """``[{name, value}]`` (ConfigData, its types checked by the operation's schema) as a
    dict; a null value is left out (the configuration keeps its default). A name given
    twice, null or not, is refused as Kafka refuses it (core/kafka/errors.py
    ``check_unique_config_keys``: 400, INVALID_REQUEST's text), never the last one kept."""
    from jetlink.core.kafka.errors import check_unique_config_keys

    items = body.get(key) or ()
    check_unique_config_keys(item["name"] for item in items)
    return {item["name"]: item["value"] for item in items if item["value"] is not None}


# -- handlers: clusters -------------------------------------------------------------------


def get_cluster(call: Call) -> tuple[int, Any]:
    return 200, cluster_data(call.base, call.cluster)


def _list_clusters(data_dir: Path, root: str, scope: Scope | None = None) -> dict[str, Any]:
    """The Kafka clusters (and local); a cluster whose database cannot be used (damaged:
    core/store/health.py) is left out and said on the log, the others are listed (as
    ``cluster ls`` lists them beside it)."""
    from jetlink.core.store import DataDir

    store = DataDir(data_dir)
    broken: list[tuple[str, Any]] = []
    try:
        names = [c.name for c in store.clusters(create_local=False, broken=broken)
                 if store.takes(c.name, "kafka")]
    finally:
        store.close()
    for name, err in broken:
        if scope is not None:
            log_line("warning", scope, f"cluster {name} left out: {err}")
    return collection("KafkaClusterList", root,
                      [cluster_data(f"{root}/{_q(n)}", n) for n in names])


def _clusters_endpoint(data_dir: Path, operation: Any) -> Callable[[Request], Any]:
    """``GET /kafka/v3/clusters`` (listKafkaClusters): KafkaClusterList."""

    async def list_clusters(request: Request) -> Response:
        if request.method == "OPTIONS":
            return _options(_allow(["GET"]))
        root = str(request.base_url).rstrip("/") + BASE_PATH
        try:
            checked_request(operation, request, None)
            doc = await run_in_threadpool(_list_clusters, data_dir, root, request.scope)
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error body
            return _failure(request.scope, exc)
        return JSONResponse(doc, status_code=200)

    return list_clusters


# -- handlers: links ----------------------------------------------------------------------


def list_links(call: Call) -> tuple[int, Any]:
    infos = call.links().list()
    return 200, collection("KafkaLinkDataList", f"{call.base}/links",
                           [link_data(call.base, i) for i in infos])


def create_link(call: Call) -> tuple[int, Any]:
    name = call.query["link_name"]
    body = _body_object(call)
    source = body.get("source_cluster_id")
    if source is None and ("destination_cluster_id" in body or "remote_cluster_id" in body):
        raise RestError(400, BAD_REQUEST, "jetlink creates destination-initiated links only: "
                                          "name the source cluster with source_cluster_id")
    if "cluster_link_id" in body:
        raise RestError(400, BAD_REQUEST, f"cluster_link_id {_clipped(body['cluster_link_id'])}: "
                                          "jetlink gives each link an id of its own; a link "
                                          "cannot be created with a given one")
    source = _string(body, "source_cluster_id", required=True)
    assert source is not None
    from jetlink.core.limits import CLUSTER_NAME_RE

    if not CLUSTER_NAME_RE.fullmatch(source):
        raise RestError(400, BAD_REQUEST, f"source_cluster_id {_clipped(source)}: a cluster id "
                                          "here is a cluster name, 1 to 64 letters, digits, "
                                          "'_' or '-'")
    remote = body.get("remote_cluster_id")  # (the expected remote: this link's source)
    if remote is not None and remote != source:
        raise RestError(400, BAD_REQUEST, f"remote_cluster_id {_clipped(remote)}: the remote "
                                          "cluster of a link created here is its source, "
                                          f"source_cluster_id {_clipped(source)} (give the "
                                          "same id, or leave it out)")
    dest = body.get("destination_cluster_id")
    if dest is not None and dest != call.cluster:  # (never silently another destination)
        raise RestError(400, BAD_REQUEST, f"destination_cluster_id {_clipped(dest)}: a link "
                                          f"created here has this cluster, {call.cluster}, as "
                                          "its destination (give it, or leave it out)")
    validate_only = call.flag("validate_only")
    call.dry = validate_only
    call.links().create(name, source, _configs(body), validate_only=validate_only,
                        validate_link=call.flag("validate_link", True))
    call.early_link = name  # answered before the link's first step, as Confluent's server
    return 204, None


def get_link(call: Call) -> tuple[int, Any]:
    return 200, link_data(call.base, call.links().get(call.params["link_name"]))


def delete_link(call: Call) -> tuple[int, Any]:
    validate_only = call.flag("validate_only")
    call.dry = validate_only
    call.links().delete(call.params["link_name"], force=call.flag("force"),
                        validate_only=validate_only)
    return 204, None


def list_link_configs(call: Call) -> tuple[int, Any]:
    link = call.params["link_name"]
    info = call.links().get(link, with_topics=False)
    return 200, collection(
        "KafkaLinkConfigDataList", f"{call.base}/links/{_q(link)}/configs",
        [link_config_data(call.base, call.cluster, link, e) for e in info.config.entries()])


def alter_link_configs(call: Call) -> tuple[int, Any]:
    """updateKafkaLinkConfigBatch: ``data`` (SET, the default operation, or DELETE) in one
    transaction; ``validate_only`` in the query or (O) the body."""
    from jetlink.core.kafka.errors import check_unique_config_keys

    body = _body_object(call)
    check_unique_config_keys(item["name"] for item in body["data"])
    sets: dict[str, str] = {}
    deletes: list[str] = []
    for item in body["data"]:
        name = item["name"]
        operation = (item.get("operation") or "SET").upper()
        if operation == "DELETE":
            deletes.append(name)
        elif item.get("value") is None:
            raise RestError(400, BAD_REQUEST, f"Config {name}: operation SET needs a value")
        else:
            sets[name] = item["value"]
    validate_only = call.flag("validate_only") or body.get("validate_only") is True
    call.dry = validate_only
    _known_link_config(call, [*sets, *deletes])
    call.links().alter(call.params["link_name"], sets, delete=deletes,
                       validate_only=validate_only)
    return 204, None


def _known_link_config(call: Call, names: Iterable[str] | None = None) -> tuple[str, str]:
    """(link, config) of a single link config path; 404 for a configuration no link has
    (``names``: each of them instead, the batch's), before anything is changed, as
    kafka-rest's safe config updates and resets check that the config exists first."""
    from jetlink.core.kafka.links import CONNECTION_CONFIGS, LINK_CONFIG_DEFAULTS

    link = call.params["link_name"]
    name = call.params.get("config_name", "")
    call.links().get(link, with_topics=False)  # an unknown link is 404 first
    for one in ([name] if names is None else names):
        if one not in LINK_CONFIG_DEFAULTS and one not in CONNECTION_CONFIGS:
            raise RestError(404, 404, f"Config {one} cannot be found for cluster link {link}.")
    return link, name


def get_link_config(call: Call) -> tuple[int, Any]:
    """getKafkaLinkConfigs: one KafkaLinkConfigData (a sensitive value is null)."""
    link, name = _known_link_config(call)
    info = call.links().get(link, with_topics=False)
    return 200, link_config_data(call.base, call.cluster, link, info.config.entry(name))


def update_link_config(call: Call) -> tuple[int, Any]:
    """updateKafkaLinkConfig: ``{"value": V}`` sets one configuration (404 for a name no link
    has; the engine's rules: a bad value is 400/40002)."""
    value = _body_object(call)["value"]
    link, name = _known_link_config(call)
    call.links().alter(link, {name: value})
    return 204, None


def delete_link_config(call: Call) -> tuple[int, Any]:
    """deleteKafkaLinkConfig: the configuration reverts to its default (404 for a name no
    link has)."""
    link, name = _known_link_config(call)
    call.links().alter(link, {}, delete=[name])
    return 204, None


# -- handlers: mirror topics --------------------------------------------------------------


def list_mirrors(call: Call) -> tuple[int, Any]:
    link = call.params.get("link_name", "-")
    status = call.query.get("mirror_status")  # one of MirrorTopicStatus (the schema's rule)
    m = call.mirrors()
    from jetlink.core.kafka.mirrors import STATUSES

    if status is not None and status not in STATUSES:
        if link != "-":
            m.links.get(link)  # an unknown link is still 404
        infos = []
    else:
        infos = m.list(None if link == "-" else link, status)
    return 200, collection("KafkaMirrorDataList", f"{call.base}/links/{_q(link)}/mirrors",
                           [mirror_data(call.base, i) for i in infos])


def create_mirror(call: Call) -> tuple[int, Any]:
    """createKafkaMirrorTopic (declares no validate_only: the schema refuses one)."""
    link = call.params["link_name"]
    body = _body_object(call)
    source = _string(body, "source_topic_name", required=True)
    topic = _string(body, "mirror_topic_name", required=False)
    if body.get("replication_factor") is not None:  # the mirror topic's, as a topic's
        from jetlink.core.kafka.topic_admin import check_replication_factor

        check_replication_factor(body["replication_factor"])
    m = call.mirrors()
    if topic is None:
        topic = m.links.get(link, with_topics=False).config.prefix + source
    m.create(topic, link, source_topic=source, configs=_configs(body))
    call.early_link = link  # answered before the first fetch: records follow (worker.py)
    return 204, None


def get_mirror(call: Call) -> tuple[int, Any]:
    from jetlink.core.kafka.errors import KafkaError

    link, topic = call.params["link_name"], call.params["mirror_topic_name"]
    m = call.mirrors()
    m.links.get(link, with_topics=False)
    try:
        info = m.describe(topic, link)
    except KafkaError as err:
        if err.name == "UNKNOWN_TOPIC_OR_PARTITION":  # the engine's text names the topic
            raise RestError(404, UNKNOWN_TOPIC_PARTITION, err.description) from None
        raise RestError(404, 404, f"Topic '{topic}' is not a mirror topic of cluster link "
                                  f"'{link}'") from None
    doc = mirror_data(call.base, info)
    if call.flag("include_state_transition_errors"):
        doc["mirror_state_transition_errors"] = []  # the engine records none
    return 200, doc


def _selected_mirrors(call: Call, m: Any, link: str,
                      candidates: Callable[[str], list[str]] | None = None) -> list[str]:
    """The topics of an AlterMirrorsRequestData body: ``mirror_topic_names``, or the
    ``candidates`` of the link (default: its mirrors) matching ``mirror_topic_name_pattern``
    (the whole name)."""
    body = _body_object(call)
    names = body.get("mirror_topic_names")
    pattern = body.get("mirror_topic_name_pattern")
    m.links.get(link, with_topics=False)
    if names is not None and pattern is not None:
        raise RestError(400, 400, "Give mirror_topic_names or mirror_topic_name_pattern, not "
                                  "both")
    if names is not None:
        return names
    if pattern is not None:
        if not isinstance(pattern, str) or len(pattern) > PATTERN_MAX:
            raise RestError(400, BAD_REQUEST, f"mirror_topic_name_pattern: a regular "
                                              f"expression of at most {PATTERN_MAX} characters")
        from jetlink.core.kafka.javaregex import JavaRegexError, to_python

        try:  # Java's syntax, as Confluent's server reads it (core/kafka/javaregex.py)
            python = to_python(pattern)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # (sets read as Java's)
                re.compile(python)
        except (JavaRegexError, re.error) as exc:
            raise RestError(400, BAD_REQUEST, f"mirror_topic_name_pattern {_shown(pattern)}: "
                                              f"{exc} (a Java regular expression)") from None
        return _matching(python, (candidates or m.topics_of)(link), shown=pattern)
    raise RestError(400, 400, "mirror_topic_names or mirror_topic_name_pattern is required")


PATTERN_MAX = 1000  # characters of a mirror_topic_name_pattern
PATTERN_SECONDS = 2.0  # the longest a pattern may take to match a link's mirror topics
_MATCH = ("import json, re, sys\n"
          "d = json.load(sys.stdin)\n"
          "r = re.compile(d['p'])\n"
          "print(json.dumps([n for n in d['n'] if r.fullmatch(n)]))\n")


def _shown(pattern: str) -> str:
    """A client's pattern as it sent it, quoted (no escapes doubled), cut when long."""
    return "'" + (pattern if len(pattern) <= 80 else pattern[:77] + "...") + "'"


def _matching(pattern: str, names: list[str], *, shown: str | None = None) -> list[str]:
    """The ``names`` a client's regular expression matches whole, matched in a child
    interpreter stopped after :data:`PATTERN_SECONDS`: a pattern whose backtracking
    explodes (``(a+)+`` against a long name) never holds the engine, and so every other
    client, for longer (Python's re can not be interrupted)."""
    import subprocess
    import sys

    if not names:
        return []
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-W", "ignore", "-c", _MATCH],
                              input=json.dumps({"p": pattern, "n": names}),
                              capture_output=True, text=True, timeout=PATTERN_SECONDS,
                              check=True)
    except subprocess.TimeoutExpired:
        raise RestError(400, BAD_REQUEST, f"mirror_topic_name_pattern "
                                          f"{_shown(shown or pattern)}: matching "
                                          f"it took longer than {PATTERN_SECONDS:g} s (its "
                                          "backtracking explodes): give a simpler pattern "
                                          "or mirror_topic_names") from None
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RestError(500, 500, f"mirror_topic_name_pattern {_shown(shown or pattern)}: "
                                  f"could not be matched: {exc}") from None
    found: list[str] = json.loads(done.stdout)
    return found


def _alter_answer(call: Call, link: str, data: list[dict[str, Any]]) -> tuple[int, Any]:
    return 200, {
        "kind": "KafkaPromoteMirror",
        "metadata": {"self": f"{call.base}/links/{_q(link)}/mirrors", "resource_name": None},
        "data": data,
    }


def _alter_mirrors(how: str) -> Handler:
    def handler(call: Call) -> tuple[int, Any]:
        link = call.params["link_name"]
        m = call.mirrors()
        names = _selected_mirrors(call, m, link)
        dry_run = call.flag("validate_only")
        call.dry = dry_run
        # The engine reads no topic as "every mirror of the link": an empty selection is none.
        results = getattr(m, how)(names, link, dry_run=dry_run) if names else []
        return _alter_answer(call, link, [alter_data(call.base, link, r) for r in results])

    handler.__name__ = f"{how}_mirrors"
    return handler


def _reverse_mirrors(how: str) -> Handler:
    """``mirrors:reverse-and-start-mirror`` / ``:reverse-and-pause-mirror`` (O) and
    ``mirrors:promote-local-and-start-remote-mirror`` / ``:promote-local-and-pause-remote-
    mirror`` (P; the reversal with promote's conditions, core/kafka/mirror_promote.py): each
    topic reversed by the engine's ``how``; a topic it refuses is an entry with its error."""

    def handler(call: Call) -> tuple[int, Any]:
        from jetlink.core.kafka.errors import KafkaError

        link = call.params["link_name"]
        m = call.mirrors()
        names = _selected_mirrors(call, m, link)
        dry_run = call.flag("validate_only")
        call.dry = dry_run
        verb = getattr(m, how)
        data = []
        for name in names:
            try:
                res, restored = verb(name, link, dry_run=dry_run)
            except KafkaError as err:
                data.append(_refused(call, m, link, name, err))
                continue
            data.append(reverse_data(call.base, link, res, restored))
        return _alter_answer(call, link, data)

    handler.__name__ = f"{how}_mirrors"
    return handler


def _refused(call: Call, m: Any, link: str, name: str, err: Any) -> dict[str, Any]:
    """The entry of a topic the engine refused: its error, and its lags when it is a mirror
    of the link (as promote's refused entries keep theirs; ``[]`` for any other topic)."""
    from jetlink.core.kafka.errors import KafkaError
    from jetlink.core.kafka.mirrors import AlterResult

    try:
        lags = m.describe(name, link).mirror_lags
    except KafkaError:
        lags = []
    return alter_data(call.base, link, AlterResult(name, error_code=err.error_code,
                                                   error_message=err.description,
                                                   mirror_lags=lags))


def truncate_and_restore_mirrors(call: Call) -> tuple[int, Any]:
    """``mirrors:truncate-and-restore`` (O): each named local topic (or each local topic the
    engine could restore through the link, ``Mirrors.restorable``, matching the pattern)
    truncated to where the other side's mirror stopped and made a mirror again; the entry
    has the new mirror's lags, ``messages_truncated``, and with
    ``include_partition_level_truncation_data=true`` the truncation per partition. A topic
    the engine refuses is an entry with its error."""
    from jetlink.core.kafka.errors import KafkaError
    from jetlink.core.kafka.mirrors import AlterResult

    link = call.params["link_name"]
    m = call.mirrors()
    names = _selected_mirrors(call, m, link, m.restorable)
    dry_run = call.flag("validate_only")
    call.dry = dry_run
    per_partition = call.flag("include_partition_level_truncation_data")
    data = []
    for name in names:
        try:
            restored = m.truncate_and_restore(name, link, dry_run=dry_run)
            if restored.already_done:  # (the API answers a mirror topic as Kafka does;
                # jetlink's verb reports a re-run done)
                raise KafkaError("INVALID_REQUEST", f"Topic '{name}' is already a mirror topic")
        except KafkaError as err:
            data.append(_refused(call, m, link, name, err))
            continue
        lags = [] if dry_run else m.describe(name, link).mirror_lags
        # (clamps: the group offsets the truncation clamped, jetlink's field as a stop's)
        doc = alter_data(call.base, link, AlterResult(name, mirror_lags=lags,
                                                      clamps=restored.clamps))
        doc["messages_truncated"] = restored.messages_truncated
        if per_partition:
            doc["partition_level_truncation_data"] = _truncation_data(restored)
        data.append(doc)
    return _alter_answer(call, link, data)


# -- handlers: ACLs -------------------------------------------------------------------------

# The fields of an ACL, as REST v3 names them (query parameters and AclData's fields).
ACL_FIELDS = ("resource_type", "resource_name", "pattern_type", "principal", "host",
              "operation", "permission")
# AclResourceType (every description: a closed enum without USER): a binding of another type
# is answered UNKNOWN, as kafka-rest's Acl.ResourceType.fromAdminResourceType answers it.
_REST_RESOURCE_TYPES = ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN")


def _acls_url(base: str, fields: Mapping[str, Any]) -> str:
    from urllib.parse import urlencode

    given = {k: fields[k] for k in ACL_FIELDS if fields.get(k) is not None}
    return f"{base}/acls" + (f"?{urlencode(given)}" if given else "")


def _acls_search_url(base: str, query: Mapping[str, Any]) -> str:
    """A search's ``self``, as kafka-rest's AclsResource builds it: the seven parameters
    always, the enumerations by name (ANY when not given), the strings as given."""
    from urllib.parse import urlencode

    enums = ("resource_type", "pattern_type", "operation", "permission")
    return f"{base}/acls?" + urlencode({
        k: (str(query.get(k) or "").upper() or "ANY") if k in enums else query.get(k) or ""
        for k in ACL_FIELDS})


def acl_data(base: str, cluster: str, binding: Any) -> dict[str, Any]:
    """KafkaAcl (AclData) of a binding: ``cluster_id`` and the binding's fields; its
    ``self`` is the ACL list filtered to exactly it (kafka-rest's AclsResource)."""
    fields = binding.to_json()
    if fields["resource_type"] not in _REST_RESOURCE_TYPES:
        fields["resource_type"] = "UNKNOWN"
    return resource("KafkaAcl", _acls_url(base, binding.to_json()),
                    {"cluster_id": cluster, **fields})


def _acl_store(call: Call) -> Any:
    from jetlink.core.kafka.acls import AclStore

    return AclStore(call.store.open_kind(call.cluster, "kafka", "ACLs"))


def _acl_filter(call: Call, *, required: tuple[str, ...] = ()) -> Any:
    """The AclFilter of the query (an empty value is no value, as kafka-rest reads it);
    ``required``: the parameters deleteKafkaAcls needs (kafka-rest's AclsResource, O's
    ``delete_acls_unspecified_resource_type``). UNKNOWN is refused in any of them."""
    from jetlink.core.kafka.acls import AclFilter

    q = {k: (call.query.get(k) or None) for k in ACL_FIELDS}
    for name in ("resource_type", "pattern_type", "operation", "permission"):
        value = q[name]
        if (value is None and name in required) or (value or "").upper() == "UNKNOWN":
            how = "unspecified or UNKNOWN" if name in required else "UNKNOWN"
            raise RestError(400, 400, f"{name} cannot be {how}")
    return AclFilter.make(q["resource_type"], q["resource_name"], q["pattern_type"],
                          q["principal"], q["host"], q["operation"], q["permission"])


def _acl_binding(entry: Mapping[str, Any], where: str = "") -> Any:
    """The AclBinding of a CreateAclRequestData (its fields' types checked by the schema):
    ANY, MATCH and UNKNOWN refused as kafka-rest's AclManagerImpl refuses them, each field
    then read by core/kafka/acls.py (UsageError naming it)."""
    from jetlink.core.kafka.acls import AclBinding

    for name, refused in (("resource_type", ("ANY", "UNKNOWN")),
                          ("pattern_type", ("ANY", "MATCH", "UNKNOWN")),
                          ("operation", ("ANY", "UNKNOWN")),
                          ("permission", ("ANY", "UNKNOWN"))):
        if str(entry[name]).upper() in refused:
            raise RestError(400, 400, f"{where}{name} cannot be {str(entry[name]).upper()}")
    return AclBinding.make(*(entry[k] for k in ACL_FIELDS))


def list_acls(call: Call) -> tuple[int, Any]:
    """``GET /acls`` (getKafkaAcls): the ACLs matching the query's filter, KafkaAclList,
    sorted by every field as kafka-rest sorts them."""
    flt = _acl_filter(call)
    store = _acl_store(call)
    store.require()
    found = store.find(flt)
    return 200, {"kind": "KafkaAclList",
                 "metadata": {"self": _acls_search_url(call.base, call.query), "next": None},
                 "data": [acl_data(call.base, call.cluster, b) for b in found]}


def create_acl(call: Call) -> tuple[int, Any]:
    """``POST /acls`` (createKafkaAcls): the binding created (an existing one stays) -> 201."""
    binding = _acl_binding(_body_object(call))
    store = _acl_store(call)
    store.require()
    store.add([binding])
    return 201, None


def batch_create_acls(call: Call) -> tuple[int, Any]:
    """``POST /acls:batch`` (batchCreateKafkaAcls, O and K): every binding read first (one
    refused: nothing created), then created in one transaction -> 201 (the descriptions;
    kafka-rest's CreateAclBatchAction answers 204)."""
    from jetlink.core.errors import UsageError

    bindings = []
    for i, entry in enumerate(_body_object(call)["data"]):
        try:
            bindings.append(_acl_binding(entry, f"data[{i}]."))
        except UsageError as err:
            raise RestError(400, 400, f"data[{i}]: {err.description}") from None
    store = _acl_store(call)
    store.require()
    store.add(bindings)
    return 201, None


def delete_acls(call: Call) -> tuple[int, Any]:
    """``DELETE /acls`` (deleteKafkaAcls): the ACLs matching the query's filter deleted (one
    transaction); ``{"data": [AclData]}`` of those deleted, none when nothing matched."""
    flt = _acl_filter(call, required=("resource_type", "pattern_type", "operation",
                                      "permission"))
    store = _acl_store(call)
    store.require()
    # a filter that matches nothing writes nothing (no transaction, no replication step)
    gone = sorted(store.remove([flt])) if store.find(flt) else []
    call.dry = not gone
    return 200, {"data": [acl_data(call.base, call.cluster, b) for b in gone]}


# -- the application ----------------------------------------------------------------------

# The handler of every operation (cli/rest/schemas.py OPERATIONS has their paths and rules).
HANDLERS: dict[str, Handler] = {
    "getKafkaCluster": get_cluster,
    "listKafkaLinks": list_links,
    "createKafkaLink": create_link,
    "listKafkaMirrorTopics": list_mirrors,
    "getKafkaLink": get_link,
    "deleteKafkaLink": delete_link,
    "listKafkaLinkConfigs": list_link_configs,
    "updateKafkaLinkConfigBatch": alter_link_configs,
    "getKafkaLinkConfigs": get_link_config,
    "updateKafkaLinkConfig": update_link_config,
    "deleteKafkaLinkConfig": delete_link_config,
    "listKafkaMirrorTopicsUnderLink": list_mirrors,
    "createKafkaMirrorTopic": create_mirror,
    "updateKafkaMirrorTopicsPromote": _alter_mirrors("promote"),
    "updateKafkaMirrorTopicsFailover": _alter_mirrors("failover"),
    "updateKafkaMirrorTopicsPause": _alter_mirrors("pause"),
    "updateKafkaMirrorTopicsResume": _alter_mirrors("resume"),
    "updateKafkaMirrorTopicsReverseAndStartMirror": _reverse_mirrors("reverse_and_start"),
    "updateKafkaMirrorTopicsReverseAndPauseMirror": _reverse_mirrors("reverse_and_pause"),
    "updateKafkaMirrorTopicsTruncateAndRestoreMirror": truncate_and_restore_mirrors,
    "updateKafkaMirrorTopicsPromoteLocalAndStartRemoteMirror":
        _reverse_mirrors("promote_local_and_start"),
    "updateKafkaMirrorTopicsPromoteLocalAndPauseRemoteMirror":
        _reverse_mirrors("promote_local_and_pause"),
    "readKafkaMirrorTopic": get_mirror,
    "getKafkaAcls": list_acls,
    "createKafkaAcls": create_acl,
    "deleteKafkaAcls": delete_acls,
    "batchCreateKafkaAcls": batch_create_acls,
}


# Creates answered before their link's first step, as Confluent's server answers them
# (cli/rest/worker.py; each sets Call.early_link).
ANSWERED_BEFORE_STEP = (create_link, create_mirror)


def _step_error(err: Exception) -> None:
    from jetlink.cli.common import step_error_text

    sys.stderr.write(step_error_text(err) + "\n")
    sys.stderr.flush()


class Anchor:
    """While the engine thread is busy (more work queued or owed: cli/rest/worker.py
    ``on_busy``), one DataDir with a connection to each cluster database of the data
    directory, kept open. SQLite checkpoints the write-ahead log into the database and
    deletes it (with fsyncs) when the last connection to a database closes, which each
    request's own DataDir otherwise was; with this one open, a request's close is just a
    close and the log is checkpointed as it grows (SQLite's automatic checkpoints). Between
    requests it holds no transaction, so it delays no checkpoint. A request that starts with
    more queued behind it runs on this DataDir itself (:meth:`shared`: requests queued back
    to back share their connections, as one batch), once the files are checked to be the
    ones it opened. Released (closed: the last close checkpoints, as before) whenever the
    engine thread has nothing left to do, before the answer that leaves it so
    (cli/rest/worker.py ``on_idle``): a client that got its answer finds the files as they
    stay."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.store: Any = None
        self.files: dict[str, tuple[int, int]] = {}  # cluster -> (device, inode) held
        self.queued = False  # the job running now started with more queued behind it

    def hold(self, queued: bool = False) -> None:
        self.queued = queued
        if self.store is not None:
            return
        from jetlink.core.errors import JetlinkError
        from jetlink.core.store import DataDir

        self.store = DataDir(self.data_dir)
        self.files = {}
        try:
            names = self.store.cluster_names()
        except OSError:
            return  # nothing to hold: the requests say why
        for name in names:
            try:
                self.store.open(name, create_local=False)
                self.files[name] = _file_id(self.store.cluster_path(name))
            except (JetlinkError, sqlite3.Error, OSError):
                continue  # the requests on it report it (and it is never shared)

    def shared(self) -> Any:
        """The held DataDir for the job running now when it started with more queued and
        the data directory still has exactly the cluster files held, each the same file (not
        one removed and created again) and no connection left in a transaction; else None
        (the DataDir is released when the files changed: the next busy job holds again)."""
        if self.store is None or not self.queued:
            return None
        try:
            same = self.store.cluster_names() == sorted(self.files) and all(
                _file_id(self.store.cluster_path(n)) == f for n, f in self.files.items())
            same = same and not any(self.store.open(n, create_local=False).conn.in_transaction
                                    for n in self.files)
        except Exception:  # noqa: BLE001 - anything unexpected: not shared
            same = False
        if not same:
            self.release()
            return None
        return self.store

    def changes(self) -> int | None:
        """Rows changed so far through the held connections (a shared request's writes are
        the difference); None when they cannot be read (a cluster removed meanwhile)."""
        try:
            return sum(self.store.open(n, create_local=False).changes for n in self.files)
        except Exception:  # noqa: BLE001 - the caller then counts the request as a write
            return None

    def release(self) -> None:
        store, self.store = self.store, None
        self.files = {}
        if store is not None:
            try:
                store.close()
            except sqlite3.Error as exc:
                _step_error(exc)


def _file_id(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino


def _run(handler: Handler, data_dir: Path, clock_factory: Callable[[], Any],
         cluster: str, params: dict[str, str], query: dict[str, Any], body: Any, base: str,
         mutating: bool, anchor: Anchor) -> Outcome:
    """``handler`` on a DataDir opened for this request, or shared with the requests queued
    with it (:meth:`Anchor.shared`; in the engine thread, cli/rest/worker.py): its answer
    ``(status, document)`` or its error, and whether it changed the store (the request is
    then answered after the next replication step)."""
    from jetlink.core.errors import clip
    from jetlink.core.store import DataDir
    from jetlink.core.store.datadir import NAME_RE

    if not NAME_RE.fullmatch(cluster):
        return Outcome(error=RestError(404, 404, f"Cluster {clip(cluster)} cannot be found."))
    shared = anchor.shared()
    store = shared if shared is not None else DataDir(data_dir)
    before = anchor.changes() if shared is not None else None
    call = Call(store, cluster, clock_factory(), params, query, body, base)
    outcome = Outcome()
    try:
        try:
            if not store.has_cluster(cluster) or not store.takes(cluster, "kafka"):
                # a NATS cluster is no Kafka cluster: as an unknown one (listKafkaClusters
                # does not list it)
                raise RestError(404, 404, f"Cluster {clip(cluster)} cannot be found.")
            outcome.value = handler(call)
        except Exception as exc:  # noqa: BLE001 - answered by the endpoint
            outcome.error = exc
        if shared is None:
            changed = store.wrote()
        else:  # unknown counts as changed: answered after a step, as a write is
            after = anchor.changes()
            changed = before is None or after is None or after > before
        wrote = mutating and not call.dry and changed
        if wrote and call.early_link is not None and outcome.error is None:
            outcome.links = frozenset({(cluster, call.early_link)})  # answered at once
        else:
            outcome.wrote = wrote
    finally:
        if shared is None:
            store.close()
    return outcome


def _step(data_dir: Path, clock_factory: Callable[[], Any]) -> None:
    """The bounded replication step every mutating CLI command ends with
    (``jetlink.core.step.bounded_step``), failures on the log."""
    from jetlink.core.step import bounded_step
    from jetlink.core.store import DataDir

    store = DataDir(data_dir)
    try:
        bounded_step(store, clock_factory(), _step_error)
    except Exception as exc:  # noqa: BLE001 - bounded_step reports engine errors itself
        _step_error(exc)
    finally:
        store.close()


def _links_step(data_dir: Path, clock_factory: Callable[[], Any],
                links: frozenset[tuple[str, str]]) -> None:
    """The step a create owes (cli/rest/worker.py): ``pump_links`` of the ``links``
    (cluster, link) only, as many records per mirror topic as :func:`_step`'s; failures on
    the log."""
    from jetlink.core import step
    from jetlink.core.kafka.mirrors import pump_links
    from jetlink.core.store import DataDir

    by_cluster: dict[str, list[str]] = {}
    for cluster, link in sorted(links):
        by_cluster.setdefault(cluster, []).append(link)
    store = DataDir(data_dir)
    try:
        pump_links(store, clock_factory(), links=by_cluster, max_records=step.STEP_MAX_MSGS,
                   on_error=lambda _cluster, err: _step_error(err))
    except Exception as exc:  # noqa: BLE001 - as _step: the server goes on
        _step_error(exc)
    finally:
        store.close()


# the answer to a request a stop leaves unrun (queued, or its body still being sent)
STOPPING = "The server is stopping: the request was not run"


async def _in_engine(request: Request, work: Callable[[], Outcome], *,
                     create: bool = False) -> Any:
    """``work`` run by the engine thread (cli/rest/worker.py); its value, or its error
    raised. A client that disconnects while the work waits in the queue has it dropped:
    :class:`ClientDisconnect` is raised then (nobody is left to answer)."""
    import asyncio

    engine: EngineWorker = request.app.state.engine
    job = engine.submit(work, create=create)
    answer = asyncio.wrap_future(job.future)
    gone = asyncio.ensure_future(_disconnected(request.receive))
    try:
        await asyncio.wait((answer, gone), return_when=asyncio.FIRST_COMPLETED)
        if not answer.done() and job.abandon():
            raise ClientDisconnect()
        return await answer
    except asyncio.CancelledError:  # the server stops
        if job.abandon():  # still queued: dropped, nothing done (the stop's 503)
            raise
        # started: the engine finishes it (worker.close lets the running request end, then
        # its step): its answer, never a 503 that would say nothing was done
        return await _finished(job)
    finally:
        gone.cancel()


async def _finished(job: Any) -> Any:
    """The value of ``job``, which the engine has started, awaited through the stop's
    cancellations (uvicorn's after its grace, asyncio.run's as it ends: both wait for the
    request's task to end)."""
    import asyncio

    waiting = asyncio.wrap_future(job.future)
    while True:
        try:
            return await asyncio.shield(waiting)
        except asyncio.CancelledError:
            if waiting.done():
                return waiting.result()


async def _disconnected(receive: Receive) -> None:
    """Returns once the client has closed the connection (the request body was read)."""
    while (await receive())["type"] != "http.disconnect":
        pass


# A JSON string (an unterminated one runs to the end): consumed left to right, so linear.
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in ``text`` (brackets inside strings do not count;
    for text that is not JSON, an upper bound of what a parser would reach). Linear."""
    if "[" not in text and "{" not in text:
        return 0
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate((1 if c in "[{" else -1 for c in brackets), initial=0))


_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def parse_json(raw: bytes) -> Any:
    """The JSON document ``raw`` (RestError 400 when it is not one, is nested deeper than
    :data:`MAX_JSON_DEPTH`, holds NaN / Infinity or a lone surrogate, or an object naming a
    key twice)."""
    from jetlink.core.config.codec import DuplicateKey, one_of_each

    try:
        text = raw.decode(json.detect_encoding(raw), "surrogatepass")
    except (UnicodeDecodeError, LookupError) as exc:
        raise RestError(400, 400, f"Request body is not valid JSON: {exc}") from None
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(text) > MAX_JSON_DEPTH:
        raise RestError(400, 400, "Request body is not valid JSON: arrays and objects nest "
                                  f"deeper than {MAX_JSON_DEPTH} levels")
    try:
        doc = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=one_of_each)
        json.dumps(doc, ensure_ascii=False).encode("utf-8")  # no lone surrogate
    except RecursionError:  # pragma: no cover - the depth scan refuses these first
        raise RestError(400, 400, "Request body is not valid JSON: nested too deeply") from None
    except UnicodeEncodeError:
        raise RestError(400, 400, "Request body is not valid JSON: a string holds a lone "
                                  "surrogate") from None
    except DuplicateKey as exc:  # (never the last one taken silently: which of two
        # mirror_topic_names a failover acts on), as a query parameter given twice is refused
        raise RestError(400, 400, f"Request body: {exc.key} is given more than once") \
            from None
    except ValueError as exc:
        from jetlink.core.numbers import reason

        raise RestError(400, 400, f"Request body is not valid JSON: {reason(exc)}") from None
    return doc


async def _read_json(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return None
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype != "application/json" and not (ctype.startswith("application/")
                                            and ctype.endswith("+json")):
        raise RestError(415, 415, "HTTP 415 Unsupported Media Type: send the body as "
                                  "Content-Type: application/json")
    return parse_json(raw)


def checked_request(operation: Any, request: Request, body: Any) -> dict[str, Any]:
    """The request's query, checked and typed, and its body checked, against
    ``operation``'s schema (cli/rest/schemas.py); 400 with Confluent's Error body naming
    field, value and rule otherwise (error_code 400, O's bad_request_cannot_deserialize).
    A parameter given twice is refused too (Confluent's servers read the first, Starlette
    the last: neither can be what the client meant)."""
    from jetlink.cli.rest.schemas import RequestInvalid, check_request

    pairs = request.query_params.multi_items()
    try:
        seen: set[str] = set()
        for name, _value in pairs:
            if name in seen:
                raise RequestInvalid(f"Query parameter {name} of {operation.operation_id} "
                                     "is given more than once")
            seen.add(name)
        return check_request(operation, dict(pairs), body)
    except RequestInvalid as exc:
        raise RestError(400, 400, str(exc)) from None


def _endpoint(handlers: Mapping[str, tuple[Any, Handler]], data_dir: Path,
              clock_factory: Callable[[], Any]) -> Callable[[Request], Any]:
    """The endpoint of one path: (operation, handler) by HTTP method (HEAD runs GET's).
    The request is checked against the operation's schema before the handler runs."""

    allow = _allow(handlers)

    async def endpoint(request: Request) -> Response:
        if request.method == "OPTIONS":
            return _options(allow)
        method = "GET" if request.method == "HEAD" else request.method
        operation, handler = handlers[method]
        params = dict(request.path_params)
        cluster = params.pop("cluster_id")
        base = str(request.base_url).rstrip("/") + f"{BASE_PATH}/{_q(cluster)}"
        try:
            body = await _read_json(request) if operation.body is not None else None
            query = checked_request(operation, request, body)
            status, doc = await _in_engine(request, lambda: _run(
                handler, data_dir, clock_factory, cluster, params, query, body, base,
                method != "GET", request.app.state.anchor),
                create=handler in ANSWERED_BEFORE_STEP)
        except ClientDisconnect:
            return Response(status_code=499)  # not sent: the client is gone
        except WorkerClosed:
            return _error_response(RestError(503, 503, STOPPING))
        except Exception as exc:  # noqa: BLE001 - every failure becomes an error body
            return _failure(request.scope, exc)
        if doc is None:
            return Response(status_code=status)
        return JSONResponse(doc, status_code=status)

    endpoint.__name__ = "_".join(h.__name__ for _op, h in handlers.values())
    return endpoint


def _allow(methods: Iterable[str]) -> str:
    """A path's ``Allow`` header: its methods, HEAD with GET, and OPTIONS."""
    given = set(methods)
    return ", ".join(sorted(given | {"OPTIONS"} | ({"HEAD"} if "GET" in given else set())))


def _options(allow: str) -> Response:
    """OPTIONS of a path, as the JAX-RS runtime Confluent's server runs on answers one
    (its WADL off): 200, the methods in ``Allow``, no body and no CORS grant."""
    return Response(status_code=200, headers={"Allow": allow})


class SlashMiddleware:
    """A path with a trailing ``/`` is served as the path without it (JAX-RS matches
    ``/links/`` as ``/links``), never redirected: a 307 would leave a script without
    redirects on with an empty answer and nothing done."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and len(path) > 1 and path.endswith("/"):
            scope = dict(scope, path=path[:-1])
            raw = scope.get("raw_path")
            if isinstance(raw, bytes) and raw.endswith(b"/"):
                scope["raw_path"] = raw[:-1]
        await self.app(scope, receive, send)


def _default_clock() -> Any:
    from jetlink.cli import common

    return common.make_clock()


def create_app(data_dir: Path, *, clock_factory: Callable[[], Any] | None = None,
               token: str | None = None) -> Starlette:
    """The REST API v3 of the links and mirror topics of ``data_dir``'s clusters.

    ``clock_factory()`` gives each request's engine clock (default: the CLI's,
    ``jetlink.cli.common.make_clock``); ``token``: every request needs
    ``Authorization: Bearer <token>`` (None: none is asked, but only loopback Host headers
    are served)."""
    from starlette.middleware import Middleware

    from jetlink.cli.rest.schemas import OPERATIONS

    clocks = clock_factory or _default_clock
    # path -> method -> (operation, handler), in OPERATIONS' (route) order
    table: dict[str, dict[str, tuple[Any, Handler]]] = {}
    for op_id, op in OPERATIONS.items():
        if op_id in HANDLERS:
            table.setdefault(op.path, {})[op.method] = (op, HANDLERS[op_id])
    routes = [Route("/kafka/v3" + path, _endpoint(handlers, Path(data_dir), clocks),
                    methods=[*handlers, "OPTIONS"])
              for path, handlers in table.items()]
    routes.insert(0, Route(BASE_PATH, _clusters_endpoint(Path(data_dir),
                                                         OPERATIONS["listKafkaClusters"]),
                           methods=["GET", "OPTIONS"]))
    app = Starlette(
        routes=routes,
        middleware=[Middleware(FaultMiddleware), Middleware(GuardMiddleware, token=token),
                    Middleware(BodyLimitMiddleware, max_bytes=MAX_BODY_BYTES),
                    Middleware(SlashMiddleware)],
        exception_handlers={HTTPException: _http_exception},
    )
    app.router.redirect_slashes = False
    # every request's engine work and the replication steps: one thread (cli/rest/worker.py);
    # app.state.engine.close() when the server stops
    anchor = Anchor(Path(data_dir))
    app.state.engine = EngineWorker(
        lambda: _step(Path(data_dir), clocks),
        links_step=lambda links: _links_step(Path(data_dir), clocks, links),
        on_busy=anchor.hold, on_idle=anchor.release)
    app.state.anchor = anchor
    return app
