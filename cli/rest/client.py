"""An httpx client of Confluent's REST API v3: cluster links and mirror topics.

What ``--rest-url`` drives (cli/rest/remote.py turns its plain dicts into the engine's
objects). One :class:`RestClient` per command, on one ``httpx.Client``:

- the API root: ``URL/kafka/v3`` (Confluent Server's embedded REST, Confluent Cloud, ``jetlink
  serve``), or ``URL`` itself when its path already ends with ``/v3`` (a standalone REST
  Proxy: ``http://proxy:8082/v3``); every path is under ``/clusters/{cluster_id}``;
- authentication: ``Authorization: Bearer TOKEN``, or HTTP Basic with an API key and secret
  (as Confluent Cloud takes them), or none;
- TLS certificates are verified unless ``verify=False`` (``--insecure``);
- each request has ``timeout`` seconds (connect, read, write); a connection that cannot be
  made (``ConnectError``, ``ConnectTimeout``; for GET also a server that closed the connection
  without an answer, ``RemoteProtocolError``) is retried ``retries`` times with exponential
  backoff (0.2 s, 0.4 s, 0.8 s, ...). Nothing else is retried: a POST that may have reached
  the server is never sent twice;
- answers: 2xx -> the JSON document (None for an empty body); a list follows
  ``metadata.next``; an error document ``{"error_code": N, "message": "..."}`` becomes
  a :class:`KafkaError` when N is a Kafka / Confluent error number (or the document names one
  in ``error_name``), so the error reads as the local engine's; 401 / 403 / 5xx and a server
  that cannot be reached are a :class:`RestError` naming the URL. Every failure is a
  JetlinkError: the CLI prints it and exits 1, never with a traceback.

Imported only when a command runs with a REST URL: httpx stays out of ``jetlink --help``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from jetlink.core.durations import seconds_text
from jetlink.core.errors import JetlinkError, UsageError
from jetlink.core.kafka.errors import ERROR_CODES, KafkaError, error_name
from jetlink.core.kafka.mirror_model import REST_STATUSES

__all__ = [
    "BACKOFF_SECONDS",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "RestApiError",
    "RestClient",
    "RestError",
    "api_root",
]

DEFAULT_TIMEOUT = 10.0
DEFAULT_RETRIES = 3
BACKOFF_SECONDS = 0.2  # first wait between attempts; doubles each time
MAX_PAGES = 1000  # a list that keeps naming a next page is cut here

_KAFKA_CODES = {code for name, code in ERROR_CODES.items() if name != "NONE"}

# The POST /links/{link}/mirrors:{action} operations of REST v3 that alter_mirrors sends:
# promote, failover, pause, resume (Cloud and Platform); reverse-and-start-mirror,
# reverse-and-pause-mirror, truncate-and-restore (Cloud's description only);
# promote-local-and-start-remote-mirror, promote-local-and-pause-remote-mirror (the Platform's
# description only). Every one declares validate_only; truncate-and-restore also
# include_partition_level_truncation_data.
MIRROR_ACTIONS = ("promote", "failover", "pause", "resume", "reverse-and-start-mirror",
                  "reverse-and-pause-mirror", "truncate-and-restore",
                  "promote-local-and-start-remote-mirror",
                  "promote-local-and-pause-remote-mirror")

# mirror_status values of listKafkaMirrorTopics / listKafkaMirrorTopicsUnderLink: Cloud's
# MirrorTopicStatus enum (the Platform's is a subset of it).
MIRROR_STATUSES = REST_STATUSES


class RestError(JetlinkError):
    """The REST API could not be used: unreachable, authentication, a server error, an answer
    that is not REST v3. Exit status 1."""

    title = "REST API error"

    def __init__(self, description: str, *, status: int | None = None) -> None:
        super().__init__(description)
        self.status = status


class RestApiError(JetlinkError):
    """An error document of the REST API that names no Kafka error:
    ``{"error_code": N, "message": "..."}`` as the server sent it."""

    title = "REST API error"

    def __init__(self, status: int, error_code: Any, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.rest_error_code = error_code

    @property
    def err_code(self) -> str:
        # cli/output.py format_error appends "(<err_code>)": "(HTTP 404)", or with a
        # Confluent error code of its own "(HTTP 400, error_code 40002)"
        if self.rest_error_code in (None, self.status):
            return f"HTTP {self.status}"
        return f"HTTP {self.status}, error_code {self.rest_error_code}"

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"error_code": self.rest_error_code, "message": self.description}}


def api_root(url: str) -> str:
    """The REST v3 root of ``url`` (cli/common.py ``rest_api_root``)."""
    from jetlink.cli.common import rest_api_root

    return rest_api_root(url)


def _seg(name: str) -> str:
    """One path segment (a link or topic name), percent-encoded."""
    return quote(str(name), safe="")


def _flag(value: bool) -> str:
    return "true" if value else "false"


class RestClient:
    """Confluent REST API v3 for cluster ``cluster_id`` at ``base_url`` (module docstring).

    ``transport`` and ``sleep`` are for tests (an ``httpx.MockTransport``, a recording
    sleep)."""

    def __init__(
        self,
        base_url: str,
        *,
        cluster_id: str,
        token: str | None = None,
        api_key: str | None = None,
        api_secret: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        verify: bool = True,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if token and (api_key or api_secret):
            raise UsageError("give either a REST token or an API key and secret, not both")
        if bool(api_key) != bool(api_secret):
            raise UsageError("a REST API key needs its secret (and a secret its key)")
        if not cluster_id:
            raise UsageError("the REST API needs a cluster ID (--cluster)")
        self.base_url = (base_url or "").strip().rstrip("/")
        self.root = api_root(base_url)
        self.cluster_id = cluster_id
        self.timeout = float(timeout)
        self.retries = max(int(retries), 0)
        self.verify = verify
        self._sleep = sleep
        self._credentials = "a token" if token else "an API key" if api_key else None
        headers = {"Accept": "application/json", "User-Agent": "jetlink"}
        auth: httpx.Auth | None = None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif api_key:
            auth = httpx.BasicAuth(api_key, api_secret or "")
        self._http = httpx.Client(
            headers=headers,
            auth=auth,
            timeout=httpx.Timeout(self.timeout),
            verify=verify,
            transport=transport,
            follow_redirects=False,
        )

    # -- plumbing --------------------------------------------------------------------------

    @property
    def cluster_url(self) -> str:
        return f"{self.root}/clusters/{_seg(self.cluster_id)}"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RestClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _unreachable(self, exc: Exception) -> RestError:
        reason = str(exc) or type(exc).__name__
        return RestError(f"cannot reach the REST API at {self.base_url}: {reason}")

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        """``method`` on ``path`` (under the cluster's URL, or an absolute URL): the JSON
        answer, None when empty; errors as in the module docstring."""
        url = path if path.startswith(("http://", "https://")) else self.cluster_url + path
        attempt = 0
        while True:
            try:
                resp = self._http.request(
                    method, url, params=dict(params) if params else None, json=body
                )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                failure: Exception = exc
            except httpx.RemoteProtocolError as exc:
                if method.upper() != "GET":  # it may have been done: never sent twice
                    raise self._unreachable(exc) from None
                failure = exc
            except httpx.TimeoutException:
                raise RestError(
                    f"REST API at {self.base_url}: no answer within {seconds_text(self.timeout)} "
                    f"({method.upper()} {urlsplit(url).path})"
                ) from None
            except httpx.HTTPError as exc:
                raise self._unreachable(exc) from None
            else:
                return self._answer(resp)
            if attempt >= self.retries:
                raise self._unreachable(failure) from None
            self._sleep(BACKOFF_SECONDS * 2**attempt)
            attempt += 1

    def _answer(self, resp: httpx.Response) -> Any:
        status = resp.status_code
        doc: Any = None
        if resp.content:
            try:
                doc = resp.json()
            except ValueError:
                doc = None
                if status < 400:
                    raise RestError(
                        f"REST API at {self.base_url}: the answer to "
                        f"{resp.request.method} {resp.request.url.path} is not JSON "
                        f"({status}, {resp.headers.get('content-type', 'no content type')})",
                        status=status,
                    ) from None
        if status < 300:
            return doc
        message = ""
        if isinstance(doc, Mapping):
            message = str(doc.get("message") or "")
        if not message:
            message = resp.reason_phrase or "no message"
        if status == 401:
            hint = (f" (with {self._credentials})" if self._credentials else
                    ": no credentials were sent: give --rest-token TOKEN (JETLINK_REST_TOKEN), "
                    "or --rest-api-key KEY with --rest-api-secret SECRET")
            raise RestError(
                f"REST API at {self.base_url}: authentication failed (401): {message}{hint}",
                status=status,
            )
        if status == 403:
            raise RestError(
                f"REST API at {self.base_url}: not authorized (403): {message}", status=status
            )
        if status >= 500:
            raise RestError(
                f"REST API at {self.base_url}: server error ({status}): {message}",
                status=status,
            )
        if 300 <= status < 400:
            raise RestError(
                f"REST API at {self.base_url}: unexpected redirect ({status}) to "
                f"{resp.headers.get('location', '?')}",
                status=status,
            )
        raise error_of(status, doc if isinstance(doc, Mapping) else {}, message)

    def _list(self, path: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """The ``data`` of a list answer, following ``metadata.next``."""
        out: list[dict[str, Any]] = []
        doc = self.request("GET", path, params=params)
        for _ in range(MAX_PAGES):
            if not isinstance(doc, Mapping) or not isinstance(doc.get("data"), list):
                raise RestError(
                    f"REST API at {self.base_url}: GET {path} did not answer a REST v3 list"
                )
            out.extend(d for d in doc["data"] if isinstance(d, dict))
            nxt = (doc.get("metadata") or {}).get("next")
            if not nxt:
                break
            doc = self.request("GET", str(nxt))
        return out

    def _object(self, doc: Any, what: str) -> dict[str, Any]:
        if not isinstance(doc, dict):
            raise RestError(f"REST API at {self.base_url}: {what}: not a REST v3 object")
        return doc

    # -- cluster links ---------------------------------------------------------------------

    def list_links(self) -> list[dict[str, Any]]:
        """GET /links."""
        return self._list("/links")

    def get_link(self, link: str) -> dict[str, Any]:
        """GET /links/{link}."""
        return self._object(self.request("GET", f"/links/{_seg(link)}"), f"link {link}")

    def link_configs(self, link: str) -> list[dict[str, Any]]:
        """GET /links/{link}/configs."""
        return self._list(f"/links/{_seg(link)}/configs")

    def create_link(
        self,
        link: str,
        source_cluster_id: str,
        configs: Mapping[str, str] | None = None,
        *,
        validate_only: bool = False,
    ) -> Any:
        """POST /links?link_name=L&validate_only=...: the answer's document, if any."""
        body = {
            "source_cluster_id": source_cluster_id,
            "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
        }
        return self.request(
            "POST",
            "/links",
            params={"link_name": link, "validate_only": _flag(validate_only)},
            body=body,
        )

    def get_link_config(self, link: str, name: str) -> dict[str, Any]:
        """GET /links/{link}/configs/{name} (getKafkaLinkConfigs)."""
        return self._object(
            self.request("GET", f"/links/{_seg(link)}/configs/{_seg(name)}"),
            f"config {name} of link {link}",
        )

    def update_link_config(self, link: str, name: str, value: str) -> Any:
        """PUT /links/{link}/configs/{name} with ``{"value": V}`` (updateKafkaLinkConfig)."""
        return self.request("PUT", f"/links/{_seg(link)}/configs/{_seg(name)}",
                            body={"value": value})

    def delete_link_config(self, link: str, name: str) -> Any:
        """DELETE /links/{link}/configs/{name} (deleteKafkaLinkConfig): back to the
        default."""
        return self.request("DELETE", f"/links/{_seg(link)}/configs/{_seg(name)}")

    def alter_link_configs(
        self, link: str, configs: Mapping[str, str] | None = None, delete: Iterable[str] = ()
    ) -> Any:
        """PUT /links/{link}/configs:alter with ``{"data": [{name, value} | {name,
        operation: DELETE}]}``."""
        data: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in (configs or {}).items()]
        data += [{"name": k, "operation": "DELETE"} for k in delete]
        return self.request("PUT", f"/links/{_seg(link)}/configs:alter", body={"data": data})

    def delete_link(self, link: str, *, force: bool = False) -> Any:
        """DELETE /links/{link}?force=..."""
        return self.request("DELETE", f"/links/{_seg(link)}", params={"force": _flag(force)})

    # -- mirror topics ---------------------------------------------------------------------

    def list_mirrors(
        self, link: str | None = None, mirror_status: str | None = None
    ) -> list[dict[str, Any]]:
        """GET /links/{link}/mirrors, or /links/-/mirrors (every link), ?mirror_status=
        (upper case, one of :data:`MIRROR_STATUSES`: the parameter is an enum)."""
        params = None
        if mirror_status:
            status = mirror_status.upper()
            if status not in MIRROR_STATUSES:
                raise KafkaError("INVALID_REQUEST", f"Unknown mirror status {mirror_status}: "
                                 f"one of {', '.join(MIRROR_STATUSES)}", field="mirror_status")
            params = {"mirror_status": status}
        return self._list(f"/links/{_seg(link) if link else '-'}/mirrors", params)

    def get_mirror(self, link: str, topic: str) -> dict[str, Any]:
        """GET /links/{link}/mirrors/{topic}."""
        return self._object(
            self.request("GET", f"/links/{_seg(link)}/mirrors/{_seg(topic)}"),
            f"mirror topic {topic}",
        )

    def create_mirror(
        self,
        link: str,
        source_topic_name: str,
        mirror_topic_name: str | None = None,
        configs: Mapping[str, str] | None = None,
        replication_factor: int | None = None,
    ) -> Any:
        """POST /links/{link}/mirrors with ``{source_topic_name, mirror_topic_name,
        configs, replication_factor}`` (createKafkaMirrorTopic): the answer's document, if
        any. The operation declares no query parameter: there is no validate-only form of
        it."""
        body: dict[str, Any] = {"source_topic_name": source_topic_name}
        if mirror_topic_name is not None:
            body["mirror_topic_name"] = mirror_topic_name
        if replication_factor is not None:
            body["replication_factor"] = replication_factor
        if configs:
            body["configs"] = [{"name": k, "value": v} for k, v in configs.items()]
        return self.request("POST", f"/links/{_seg(link)}/mirrors", body=body)

    def alter_mirrors(
        self, link: str, action: str, topics: Iterable[str], *, validate_only: bool = False
    ) -> list[dict[str, Any]]:
        """POST /links/{link}/mirrors:{action} (one of :data:`MIRROR_ACTIONS`) with
        ``{"mirror_topic_names": [...]}`` (the body both descriptions accept):
        the ``data`` of the answer. truncate-and-restore also asks for the per-partition
        truncation data."""
        if action not in MIRROR_ACTIONS:
            raise ValueError(f"unknown mirror action {action!r}")
        params = {"validate_only": _flag(validate_only)}
        if action == "truncate-and-restore":
            params["include_partition_level_truncation_data"] = "true"
        doc = self.request(
            "POST",
            f"/links/{_seg(link)}/mirrors:{action}",
            params=params,
            body={"mirror_topic_names": list(topics)},
        )
        if doc is None:
            return []
        if not isinstance(doc, Mapping) or not isinstance(doc.get("data"), list):
            raise RestError(
                f"REST API at {self.base_url}: mirrors:{action} did not answer a REST v3 list"
            )
        return [d for d in doc["data"] if isinstance(d, dict)]

    # -- ACLs ------------------------------------------------------------------------------

    def list_acls(self, params: Mapping[str, str]) -> list[dict[str, Any]]:
        """GET /acls?resource_type=...&... (getKafkaAcls): the AclData of the filter."""
        return self._list("/acls", params)

    def create_acl(self, acl: Mapping[str, str]) -> Any:
        """POST /acls with one CreateAclRequestData (createKafkaAcls)."""
        return self.request("POST", "/acls", body=dict(acl))

    def create_acls(self, acls: Iterable[Mapping[str, str]]) -> Any:
        """POST /acls:batch with ``{"data": [CreateAclRequestData]}`` (batchCreateKafkaAcls:
        Cloud's and kafka-rest's descriptions; the Platform's has no such operation)."""
        return self.request("POST", "/acls:batch", body={"data": [dict(a) for a in acls]})

    def delete_acls(self, params: Mapping[str, str]) -> list[dict[str, Any]]:
        """DELETE /acls?resource_type=...&... (deleteKafkaAcls): the AclData deleted."""
        doc = self.request("DELETE", "/acls", params=params)
        if doc is None:
            return []
        if not isinstance(doc, Mapping) or not isinstance(doc.get("data"), list):
            raise RestError(f"REST API at {self.base_url}: DELETE /acls did not answer "
                            "a list of the ACLs deleted")
        return [d for d in doc["data"] if isinstance(d, dict)]


def error_of(status: int, doc: Mapping[str, Any], message: str) -> JetlinkError:
    """The error of a 4xx answer: a KafkaError when the document names a Kafka error
    (``error_name``, or an ``error_code`` that is a Kafka / Confluent error number), else a
    :class:`RestApiError` with the server's code and message."""
    name = doc.get("error_name")
    if isinstance(name, str):
        try:
            return KafkaError(error_name(name), message)
        except KeyError:
            pass
    code = doc.get("error_code")
    if isinstance(code, int) and not isinstance(code, bool) and code in _KAFKA_CODES:
        return KafkaError.from_code(code, message)
    return RestApiError(status, code if code is not None else status, message)
