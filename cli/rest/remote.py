"""The links / mirrors verbs over a REST API v3 endpoint (``--rest-url``).

:class:`RestLinks` and :class:`RestMirrors` have the methods of the engine's ``Links`` and
``Mirrors`` that cli/links.py and cli/mirrors.py call, and return the engine's own result
objects (``LinkInfo``, ``MirrorInfo`` with ``PartitionLag``, ``AlterResult`` with ``OffsetClamp``),
built from the REST documents by the adapters below: the verbs keep ONE rendering path, and
print the same lines, tables and JSON whichever side answered.

What REST v3 data does not carry, and what the adapters put in its place (docs/serve.md, "Driving a
REST endpoint"):

- a mirror partition's local log end offset (``LocalLogEndOffset`` of ``mirrors describe``):
  its ``last_source_fetch_offset`` (the same while the mirror mirrors: a mirror topic takes no
  other writes; a stopped mirror that took writes since shows where mirroring ended);
- the source's high watermark at the last fetch (``LastFetchSourceHighWatermark``):
  ``last_source_fetch_offset + lag``, the source's log end now;
- the time of the last fetch (``TimeSinceLastFetchMs``): REST v3's ``mirror_lags`` do not
  carry it, so the field is left out of the line, as Confluent leaves it out of its data
  (a -1 would read as "never fetched");
- ``StoppedSequenceNumber``: 0 (jetlink's engine numbers stopped mirrors; REST does not say);
- ``remote cluster available`` of ``links ls``: derived from ``link_error``
  (SOURCE_CLUSTER_NOT_FOUND / SOURCE_CLUSTER_UNAVAILABLE mean not available), as the engine
  derives it;
- the clamps of promote / failover: read from each result's ``clamps`` (``jetlink serve`` sends
  them; a Confluent server does not, and then none are printed);
- jetlink's warnings about its own engine (``link.mode`` other than DESTINATION) are not
  printed: the remote server is not necessarily jetlink.

Promote and failover are asynchronous in REST (PENDING_STOPPED, then STOPPED): after the
request, each accepted mirror is polled every :data:`POLL_SECONDS` until STOPPED (or FAILED,
reported as that topic's error), with a spinner on stderr when it is a terminal, for at most
the ``--timeout`` (then an error naming each mirror's last state).

reverse-and-start and reverse-and-pause are REST v3's ``mirrors:reverse-and-start-mirror`` /
``:reverse-and-pause-mirror``, one topic per request: the answer's entry gives the stop (lags,
clamps) and the truncation of the old source (``partition_level_truncation_data``; a server that
leaves it out shows no partition lines); the new mirror's status is the answer's
``restored_mirror_status`` (``jetlink serve``) or the verb's own (ACTIVE, PAUSED). A refused
topic is the error of the command, with the server's text. Those two paths are Cloud's
description's; the Platform's names the same actions ``mirrors:promote-local-and-start-remote-
mirror`` / ``:promote-local-and-pause-remote-mirror``: when the server answers 404 for Cloud's
path while the link exists (GET /links/{link} answers), the Platform's path is sent instead.
truncate-and-restore is Cloud's ``mirrors:truncate-and-restore`` (with
``include_partition_level_truncation_data=true``); the Platform's description has no such
operation, and a server that does not know the path gets an error saying so.

``mirrors create --validate-only`` is refused before any request: createKafkaMirrorTopic
declares no ``validate_only`` (neither description; Confluent's CLI has no dry run for
``kafka mirror create`` either), so a server that follows the description would create the
mirror topic.

Link configurations are read in either description's field names: Cloud's ``is_default``,
``is_read_only``, ``is_sensitive`` and the Platform's ``default``, ``read_only``,
``sensitive`` (:func:`config_entry`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jetlink.core.errors import JetlinkError, UsageError
from jetlink.core.kafka.errors import KafkaError
from jetlink.core.kafka.links import (
    LINK_CONFIG_DEFAULTS,
    PREFIX_KEY,
    UNAVAILABLE_ERRORS,
    LinkConfig,
    LinkInfo,
    TaskInfo,
    compute_tasks,
)
from jetlink.core.kafka.mirror_model import REST_STATUSES
from jetlink.core.kafka.mirrors import (
    ACTIVE,
    PAUSED,
    AlterResult,
    MirrorInfo,
    OffsetClamp,
    PartitionLag,
    TruncateResult,
    already_stopped_message,
    mirror_source_topic,
    not_mirrored_message,
)

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.cli.app import App
    from jetlink.cli.common import RestSettings
    from jetlink.cli.rest.client import RestClient

__all__ = [
    "DEFAULT_WAIT_SECONDS",
    "POLL_SECONDS",
    "RemoteConfig",
    "RestLinks",
    "RestMirrors",
    "alter_result",
    "link_info",
    "mirror_info",
    "open_client",
]

POLL_SECONDS = 0.5
DEFAULT_WAIT_SECONDS = 60.0
STOPPED, FAILED = "STOPPED", "FAILED"


# -- opening ---------------------------------------------------------------------------------


def open_client(app: App, settings: RestSettings) -> RestClient:
    """A RestClient for ``settings`` and the cluster of ``--cluster`` (or the one the URL
    names: ``.../v3/clusters/C``), closed when the command ends."""
    from jetlink.cli.common import parameter_source, rest_url_cluster
    from jetlink.cli.rest.client import RestClient
    from jetlink.core.errors import UsageError

    named = rest_url_cluster(settings.url or "")
    source = parameter_source(app.ctx.find_root(), "cluster") if app.ctx is not None else None
    if named and named != app.cluster and source == "COMMANDLINE":
        # two selectors of one command line naming two clusters: neither is guessed (a
        # failover or an ACL removal made on the other cluster is not undone by a notice),
        # as the Kafka tools refuse a --bootstrap-server and a --cluster that differ
        raise UsageError(f"the REST URL names cluster {named}, --cluster {app.cluster} "
                         "another: give one of them (or both naming the same)",
                         field="cluster")
    if named and named != app.cluster and source == "ENVIRONMENT":
        from jetlink.cli.output import notice

        notice(app, f"jetlink: notice: the REST URL names cluster {named}: JETLINK_CLUSTER "
                    f"{app.cluster} is not used")
    try:
        client = RestClient(
            settings.url or "",
            cluster_id=named or app.cluster,
            token=settings.token,
            api_key=settings.api_key,
            api_secret=settings.api_secret,
            verify=not settings.insecure,
        )
    except UsageError as err:  # a URL from the environment: say which variable gave it
        if settings.url_from:
            err.description = f"{settings.url_from}: {err.description}"
        raise
    if app.ctx is not None:
        app.ctx.call_on_close(client.close)
    return client


# -- adapters: REST v3 documents -> the engine's objects -------------------------------------


def _flag_of(doc: Mapping[str, Any], cloud: str, platform: str) -> bool | None:
    """A link config flag under Cloud's name or the Platform's; None when neither is there."""
    for key in (cloud, platform):
        if isinstance(doc.get(key), bool):
            return bool(doc[key])
    return None


def config_entry(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """One REST v3 link config document (getKafkaLinkConfigs, or an entry of
    listKafkaLinkConfigs) as jetlink's ``{name, value, is_default, is_read_only,
    is_sensitive, source}``, reading Cloud's field names (``is_default``, ``is_read_only``,
    ``is_sensitive``) or the Platform's (``default``, ``read_only``, ``sensitive``); a
    missing ``is_default`` is derived from ``source``. None: not a config document."""
    name = doc.get("name")
    if not isinstance(name, str):
        return None
    default = _flag_of(doc, "is_default", "default")
    if default is None:
        default = doc.get("source") in (None, "DEFAULT_CONFIG")
    read_only = _flag_of(doc, "is_read_only", "read_only")
    sensitive = _flag_of(doc, "is_sensitive", "sensitive")
    return {
        "name": name,
        "value": doc.get("value"),
        "is_default": default,
        "is_read_only": name == PREFIX_KEY if read_only is None else read_only,
        "is_sensitive": bool(sensitive),
        "source": doc.get("source") or ("DEFAULT_CONFIG" if default
                                        else "DYNAMIC_CLUSTER_LINK_CONFIG"),
    }


class RemoteConfig(LinkConfig):
    """A link's configuration as REST v3 lists it (``GET /links/L/configs``): a
    :class:`LinkConfig` (``to_json``, ``is_default``, ``prefix``, ``paused`` are its own)
    whose ``get`` and ``entries`` (every configuration, by name) read the listed entries and
    whose ``warnings`` are none (see the module docstring). Keys jetlink does not know (a
    Confluent server has more) are kept."""

    # Compared and printed as an object (LinkConfig compares its values).
    __eq__ = object.__eq__
    __hash__ = object.__hash__
    __repr__ = object.__repr__

    def __init__(self, entries: Iterable[Mapping[str, Any]] = ()) -> None:
        # Not LinkConfig.__init__: that one keeps only the keys jetlink knows.
        rows = [r for r in (config_entry(e) for e in entries) if r is not None]
        self._entries = sorted(rows, key=lambda r: r["name"])
        self.values = {r["name"]: r["value"] for r in self._entries if not r["is_default"]}

    def get(self, key: str) -> str:
        for row in self._entries:
            if row["name"] == key:
                return "" if row["value"] is None else str(row["value"])
        return LINK_CONFIG_DEFAULTS.get(key, "")

    def entries(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._entries]

    def warnings(self) -> list[str]:
        return []


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def link_info(data: Mapping[str, Any], configs: Iterable[Mapping[str, Any]] | None = None
              ) -> LinkInfo:
    """The LinkInfo of REST v3 link data (and its configs, when given)."""
    error = data.get("link_error") or "NO_ERROR"
    tasks = [
        TaskInfo(
            str(t.get("task_name", "")),
            str(t.get("state", "")),
            tuple({"error_code": str(e.get("error_code", "")),
                   "error_message": str(e.get("error_message", ""))}
                  for e in (t.get("errors") or []) if isinstance(e, Mapping)),
        )
        for t in (data.get("tasks") or []) if isinstance(t, Mapping)
    ]
    return LinkInfo(
        name=str(data.get("link_name", "")),
        link_id=str(data.get("cluster_link_id") or data.get("link_id") or ""),
        source_cluster=str(data.get("source_cluster_id") or data.get("remote_cluster_id")
                           or ""),
        destination_cluster=str(data.get("destination_cluster_id") or ""),
        config=RemoteConfig(configs or ()),
        created_ms=0,
        updated_ms=0,
        state=str(data.get("link_state") or "ACTIVE"),
        link_error=str(error),
        link_error_message=data.get("link_error_message"),
        tasks=tasks,
        topic_names=[str(t) for t in data.get("topic_names") or []],
        source_available=error not in UNAVAILABLE_ERRORS,
    )


def partition_lag(data: Mapping[str, Any]) -> PartitionLag:
    """A PartitionLag of REST ``mirror_lags[]`` (module docstring: log end and source high
    watermark derived, last fetch time unknown)."""
    fetched = _int(data.get("last_source_fetch_offset"))
    lag = _int(data.get("lag"))
    return PartitionLag(partition=_int(data.get("partition")), lag=lag,
                        last_source_fetch_offset=fetched, log_end=fetched,
                        source_hw=fetched + max(lag, 0), last_fetch_ms=None)


def mirror_info(data: Mapping[str, Any]) -> MirrorInfo:
    """The MirrorInfo of REST v3 mirror data."""
    lags = [partition_lag(p) for p in data.get("mirror_lags") or [] if isinstance(p, Mapping)]
    return MirrorInfo(
        link_name=str(data.get("link_name", "")),
        mirror_topic_name=str(data.get("mirror_topic_name", "")),
        source_topic_name=str(data.get("source_topic_name") or ""),
        mirror_status=str(data.get("mirror_status") or ""),
        mirror_topic_error=str(data.get("mirror_topic_error") or "NO_ERROR"),
        status_time_ms=_int(data.get("state_time_ms", data.get("status_time_ms"))),
        num_partitions=_int(data.get("num_partitions"), len(lags)),
        mirror_lags=lags,
    )


def alter_result(data: Mapping[str, Any], link: str) -> AlterResult:
    """The AlterResult of one ``data[]`` entry of a mirrors:promote / :failover / :pause /
    :resume answer. ``not_mirrored`` and ``already_stopped`` are recognised by the engine's
    messages (Confluent's own texts are printed as they come)."""
    name = str(data.get("mirror_topic_name", ""))
    code = _int(data.get("error_code"))
    message = str(data.get("error_message") or "")
    clamps = [
        OffsetClamp(str(c.get("group", "")), str(c.get("topic", name)), _int(c.get("partition")),
              _int(c.get("from")), _int(c.get("to")))
        for c in data.get("clamps") or [] if isinstance(c, Mapping)
    ]
    return AlterResult(
        mirror_topic_name=name,
        error_code=code,
        error_message=message,
        mirror_lags=[partition_lag(p) for p in data.get("mirror_lags") or []
                     if isinstance(p, Mapping)],
        clamps=clamps,
        already_stopped=bool(code) and message == already_stopped_message(name, link),
        not_mirrored=bool(code) and message == not_mirrored_message(name),
    )


# -- links -----------------------------------------------------------------------------------


class RestLinks:
    """``Links`` over REST v3 (what cli/links.py calls)."""

    def __init__(self, client: RestClient) -> None:
        self.client = client

    def list(self, *, with_topics: bool = True) -> list[LinkInfo]:
        return [link_info(d) for d in self.client.list_links()]

    def get(self, name: str, *, with_topics: bool = True) -> LinkInfo:
        """The link and its configurations (two requests)."""
        data = self.client.get_link(name)
        return link_info(data, self.client.link_configs(name))

    def create(self, name: str, source_cluster: str, configs: Mapping[str, Any] | None = None,
               *, validate_only: bool = False) -> LinkInfo:
        doc = self.client.create_link(name, source_cluster, dict(configs or {}),
                                      validate_only=validate_only)
        if isinstance(doc, Mapping) and doc.get("link_name") == name:
            return link_info(doc)
        if not validate_only:
            return link_info(self.client.get_link(name))
        # Nothing to read back: the link as it would be (the server validated it).
        try:
            cfg = LinkConfig.build(configs, creating=True)
        except KafkaError:
            cfg = LinkConfig()
        return LinkInfo(name=name, link_id="", source_cluster=source_cluster,
                        destination_cluster=self.client.cluster_id, config=cfg,
                        created_ms=0, updated_ms=0, tasks=compute_tasks(cfg, "ACTIVE"))

    def alter(self, name: str, configs: Mapping[str, Any] | None = None, *,
              delete: Iterable[str] = ()) -> LinkInfo:
        self.client.alter_link_configs(name, dict(configs or {}), list(delete))
        return self.get(name)

    def get_config(self, name: str, key: str) -> dict[str, Any]:
        """One configuration of the link (getKafkaLinkConfigs), as :func:`config_entry`."""
        from jetlink.cli.rest.client import RestError

        entry = config_entry(self.client.get_link_config(name, key))
        if entry is None:
            raise RestError(f"REST API at {self.client.base_url}: config {key} of link "
                            f"{name}: not a REST v3 link config")
        return entry

    def set_config(self, name: str, key: str, value: str) -> dict[str, Any]:
        """Set one configuration (updateKafkaLinkConfig); returns it as read back."""
        self.client.update_link_config(name, key, value)
        return self.get_config(name, key)

    def delete_config(self, name: str, key: str) -> dict[str, Any]:
        """Revert one configuration to its default (deleteKafkaLinkConfig); returns it as
        read back."""
        self.client.delete_link_config(name, key)
        return self.get_config(name, key)

    def in_use(self, name: str) -> list[str]:
        """The mirror topics of the link that are not STOPPED (what keeps it from being
        deleted without force), sorted."""
        return sorted(str(m.get("mirror_topic_name")) for m in self.client.list_mirrors(name)
                      if m.get("mirror_status") != STOPPED)

    def delete(self, name: str, *, force: bool = False) -> list[str]:
        """DELETE the link; returns the mirror topics that were in use (with ``force``: they
        stop mirroring, as locally)."""
        topics = self.in_use(name) if force else []
        self.client.delete_link(name, force=force)
        return topics


# -- mirrors ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _no_progress(_text: str) -> Iterator[Callable[[str], None]]:
    yield lambda _t: None


class RestMirrors:
    """``Mirrors`` over REST v3 (what cli/mirrors.py calls).

    ``wait_seconds``: how long promote / failover wait for STOPPED; ``progress(text)``: a
    context manager giving an ``update(text)`` function (a spinner on stderr), none by
    default; ``sleep`` / ``monotonic``: for tests."""

    statuses: tuple[str, ...] = REST_STATUSES  # REST v3's MirrorTopicStatus enum

    def __init__(
        self,
        client: RestClient,
        *,
        wait_seconds: float = DEFAULT_WAIT_SECONDS,
        progress: Callable[[str], contextlib.AbstractContextManager[Callable[[str], None]]]
        | None = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.links = RestLinks(client)
        self.wait_seconds = wait_seconds
        self.progress = progress or _no_progress
        self._sleep = sleep
        self._monotonic = monotonic

    # -- create / read ---------------------------------------------------------------------

    def create(self, topic: str, link: str, *, source_topic: str | None = None,
               configs: Mapping[str, str] | None = None, validate_only: bool = False,
               replication_factor: int | None = None) -> MirrorInfo:
        if validate_only:
            raise UsageError(
                "mirrors create --validate-only cannot be sent to a REST API: "
                "createKafkaMirrorTopic (POST /links/{link}/mirrors) declares no validate_only "
                "parameter, so a Confluent server would create the mirror topic; check it on "
                "the data directory instead (without --rest-url)")
        if source_topic is None:
            prefix = RemoteConfig(self.client.link_configs(link)).prefix
            source_topic = mirror_source_topic(topic, prefix)
        doc = self.client.create_mirror(link, source_topic, topic, dict(configs or {}),
                                        replication_factor=replication_factor)
        if isinstance(doc, Mapping) and doc.get("mirror_topic_name") == topic:
            return mirror_info(doc)
        return mirror_info(self.client.get_mirror(link, topic))

    def describe(self, topic: str, link: str | None = None) -> MirrorInfo:
        if link is not None:
            return mirror_info(self.client.get_mirror(link, topic))
        for data in self.client.list_mirrors():
            if data.get("mirror_topic_name") == topic:
                return mirror_info(data)
        # found by listing every link's mirrors (GET /links/-/mirrors): the API answered no
        # error, so none is made up (no Kafka error name or code, no HTTP status)
        raise JetlinkError(f"{not_mirrored_message(topic)}: no link of cluster "
                           f"{self.client.cluster_id} has a mirror topic of that name",
                           field="topic")

    def list(self, link: str | None = None, status: str | None = None,
             pending_stopped_only: bool = False) -> list[MirrorInfo]:
        infos = [mirror_info(d) for d in self.client.list_mirrors(link, status)]
        if status is not None:
            infos = [i for i in infos if i.mirror_status == status.upper()]
        if pending_stopped_only:
            infos = [i for i in infos if i.mirror_status == "PENDING_STOPPED"]
        return sorted(infos, key=lambda i: (i.link_name, i.mirror_topic_name))

    # -- promote / failover / pause / resume -----------------------------------------------

    def promote(self, topics: Sequence[str], link: str, *, dry_run: bool = False
                ) -> list[AlterResult]:
        return self._alter("promote", topics, link, dry_run)

    def failover(self, topics: Sequence[str], link: str, *, dry_run: bool = False
                 ) -> list[AlterResult]:
        return self._alter("failover", topics, link, dry_run)

    def pause(self, topics: Sequence[str], link: str, *, dry_run: bool = False
              ) -> list[AlterResult]:
        return self._alter("pause", topics, link, dry_run)

    def resume(self, topics: Sequence[str], link: str, *, dry_run: bool = False
               ) -> list[AlterResult]:
        return self._alter("resume", topics, link, dry_run)

    def _alter(self, action: str, topics: Sequence[str], link: str, dry_run: bool
               ) -> list[AlterResult]:
        names = list(topics)
        if not names:  # --link alone: every mirror of the link (as the engine does)
            names = sorted(str(m.get("mirror_topic_name"))
                           for m in self.client.list_mirrors(link))
            if not names:
                return []
        data = self.client.alter_mirrors(link, action, names, validate_only=dry_run)
        results = [alter_result(d, link) for d in data]
        if action in ("promote", "failover") and not dry_run:
            self.wait_stopped(link, [r for r in results if r.ok])
        return results

    def wait_stopped(self, link: str, results: Sequence[AlterResult]) -> None:
        """Poll each mirror of ``results`` until it is STOPPED; one that ends FAILED becomes
        an error of its result; past ``wait_seconds`` a JetlinkError names the last
        states."""
        if not results:
            return
        by_name = {r.mirror_topic_name: r for r in results}
        last: dict[str, str] = {}
        pending = list(by_name)
        deadline = self._monotonic() + self.wait_seconds
        names = ", ".join(pending)
        with self.progress(f"Waiting for mirror topics to stop: {names}") as update:
            while True:
                for name in list(pending):
                    data = self.client.get_mirror(link, name)
                    status = str(data.get("mirror_status") or "")
                    last[name] = status
                    if status in (STOPPED, FAILED):
                        pending.remove(name)
                    if status == FAILED:
                        res = by_name[name]
                        res.error_code = KafkaError("UNKNOWN_SERVER_ERROR").error_code
                        error = data.get("mirror_topic_error") or "NO_ERROR"
                        res.error_message = (f"Topic '{name}' ended FAILED ({error}) instead "
                                             "of STOPPED")
                if not pending:
                    return
                if self._monotonic() >= deadline:
                    states = ", ".join(f"{n}: {last.get(n, '?')}" for n in by_name)
                    raise JetlinkError(
                        f"mirror topics did not reach STOPPED within "
                        f"{self.wait_seconds:g}s; last states: {states}"
                    )
                update("Waiting for mirror topics to stop: " + ", ".join(
                    f"{n} {last.get(n, '?')}" for n in pending))
                self._sleep(POLL_SECONDS)

    # -- failing back ----------------------------------------------------------------------

    def truncate_and_restore(self, topic: str, link: str, *, dry_run: bool = False
                             ) -> TruncateResult:
        """mirrors:truncate-and-restore (Cloud's description; the Platform's has none)."""
        entry, res = self._one(("truncate-and-restore",), topic, link, dry_run)
        return TruncateResult(topic, _truncation(entry), clamps=res.clamps)

    def reverse_and_start(self, topic: str, link: str, *, dry_run: bool = False
                          ) -> tuple[AlterResult, TruncateResult]:
        return self._reverse(("reverse-and-start-mirror",
                              "promote-local-and-start-remote-mirror"),
                             topic, link, dry_run, ACTIVE)

    def reverse_and_pause(self, topic: str, link: str, *, dry_run: bool = False
                          ) -> tuple[AlterResult, TruncateResult]:
        return self._reverse(("reverse-and-pause-mirror",
                              "promote-local-and-pause-remote-mirror"),
                             topic, link, dry_run, PAUSED)

    def _one(self, actions: tuple[str, ...], topic: str, link: str, dry_run: bool
             ) -> tuple[Mapping[str, Any], AlterResult]:
        """The answer's entry for ``topic`` of the first of ``actions`` the server has: on a
        404 while the link exists (the server does not know that path), the next one; a
        refused topic is the error of the command."""
        from jetlink.cli.rest.client import RestApiError, RestError

        for i, action in enumerate(actions):
            try:
                data = self.client.alter_mirrors(link, action, [topic], validate_only=dry_run)
            except RestApiError as err:
                if err.status != 404:
                    raise
                self.client.get_link(link)  # the link's own 404 is the error, if it is that
                if i + 1 < len(actions):
                    continue
                names = " or ".join(f"mirrors:{a}" for a in actions)
                why = ("; Confluent Cloud's REST API declares it, Confluent Platform's does not"
                       if actions == ("truncate-and-restore",) else "")
                raise RestError(
                    f"REST API at {self.client.base_url} has no {names} (it answered 404: "
                    f"{err.description}, while link '{link}' exists){why}",
                    status=404) from None
            break
        entry = next((d for d in data if d.get("mirror_topic_name") == topic), None)
        if entry is None:
            raise RestError(f"REST API at {self.client.base_url}: mirrors:{action} answered "
                            f"no result for topic '{topic}'")
        res = alter_result(entry, link)
        if not res.ok:
            raise RestApiError(res.error_code, res.error_code, res.error_message)
        return entry, res

    def _reverse(self, actions: tuple[str, ...], topic: str, link: str, dry_run: bool,
                 status: str) -> tuple[AlterResult, TruncateResult]:
        entry, res = self._one(actions, topic, link, dry_run)
        # Reversing needs the same name on both sides (no link prefix): the old source
        # topic, now the mirror, is named as this one.
        restored = alter_result({"mirror_topic_name": topic,
                                 "clamps": entry.get("restored_clamps")}, link)
        return res, TruncateResult(topic, _truncation(entry),
                                   str(entry.get("restored_mirror_status") or status),
                                   clamps=restored.clamps)


def _truncation(entry: Mapping[str, Any]) -> list[dict[str, int]]:
    """``partition_level_truncation_data`` of an alter result as TruncateResult partitions
    (none when the server leaves it out)."""
    return [{"partition": _int(p.get("partition_id")),
             "messages_truncated": _int(p.get("messages_truncated")),
             "offset_truncated_to": _int(p.get("offset_truncated_to"))}
            for p in entry.get("partition_level_truncation_data") or []
            if isinstance(p, Mapping)]


def spinner(app: App) -> Callable[[str], contextlib.AbstractContextManager[Callable[[str], None]]]:
    """Progress for :class:`RestMirrors`: a Rich status line on stderr when stderr is a
    terminal, nothing otherwise."""

    @contextlib.contextmanager
    def progress(text: str) -> Iterator[Callable[[str], None]]:
        console = app.err
        if not console.is_terminal:
            yield lambda _t: None
            return
        from rich.text import Text

        with console.status(Text(text)) as status:
            yield lambda t: status.update(Text(t))

    return progress
