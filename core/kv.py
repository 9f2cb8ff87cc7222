"""Key-Value buckets on the engine: ADR-8 over the JetStream API of a cluster.

A bucket ``B`` is the stream ``KV_B`` with subjects ``$KV.B.>``, built by
``config.kv.KeyValueConfig`` exactly as the clients build it; every key operation is a
JetStream publish or get on that stream, so the stream engine's rules (history through
max_msgs_per_subject, rollups, per-message TTL, limit markers, expected-last-subject-sequence)
are the KV rules. Entry points:

- :class:`KV` (a data directory addressed from one cluster): ``create_bucket``,
  ``update_bucket``, ``delete_bucket``, ``create_mirror``, ``create_aggregate``,
  ``add_aggregate_origin``, ``statuses`` (the buckets of the cluster), ``status(name)``,
  ``open(name)`` -> :class:`KeyValue`; :func:`kv_statuses` (the same from StreamInfos read
  already).
- :class:`KeyValue`: ``put``, ``put_many`` (one transaction, like pipelined puts), ``create``,
  ``update``, ``delete``, ``purge``, ``purge_deletes``, ``get``, ``history``, ``keys``,
  ``watch``, ``revert``, ``status``.
- :class:`Entry` (``to_json``: ``{"bucket", "key", "value" (base64), "revision", "created",
  "delta", "operation"}``), :class:`KVStatus`, :class:`Watcher`, :data:`END_OF_INITIAL_DATA`.

What a name opens (``KV.open``), in order:

1. ``KV_<name>`` in the addressed cluster: the bucket itself. A read-only aggregate (sources,
   no subjects) refuses writes; a writable aggregate is a normal bucket with sources. When
   ``KV_<name>`` mirrors a bucket (``mirror.name`` = ``KV_<origin>``: a KV mirror named as
   nats.go's CreateKeyValue names it), the read-only handle of rule 2.
2. A stream ``<name>`` in the addressed cluster that mirrors a bucket (a KV mirror made
   before jetlink followed nats.go's ``KV_<name>``): the read-only handle of ADR-8's RoKV (get,
   history, keys, watch, status work; put, create, update, delete, purge and revert are
   refused).
3. A stream of the addressed cluster mirroring ``KV_<name>`` of another cluster (a KV read
   replica, for example after ``kv add MIRROR --mirror name --mirror-domain west``): the
   bucket ``<name>`` as seen from here (a mirror of a bucket of this cluster that was
   removed is not: rule 4). ``get`` is served by the mirror when the key is inside the mirror's
   key filter (``Entry.served_by`` names the stream that answered); writes, watches, history
   and keys go to the origin bucket in its own cluster (ADR-8: "Writes and Watchers are
   transparently sent to the origin bucket").
4. Otherwise: 404/10059 ``bucket not found``.

Operations (ADR-8):

- ``put``: a publish to ``$KV.<bucket>.<key>``. ``create``: expected last subject sequence 0;
  when that fails because the key exists, the latest entry is read and, if it is a DEL or
  PURGE, the put is retried expecting that revision; else the server's 400/10071
  ``wrong last sequence: N`` stands. ``create(ttl=)`` and ``purge(ttl=)`` add ``Nats-TTL``
  (the bucket needs limit markers: ``allow_msg_ttl``). ``update``: expected last subject
  sequence = the given revision (10071 when it is not the latest). ``delete``: an empty
  message with ``KV-Operation: DEL`` (history kept). ``purge``: ``KV-Operation: PURGE`` and
  ``Nats-Rollup: sub`` (one entry left).
- ``get``: the latest message of the key's subject (``revision=``: that sequence, which must
  be the key's); DEL and PURGE entries (and limit markers: ``Nats-Marker-Reason`` MaxAge and
  Purge read as PURGE, Remove as DEL) are 404/10037 ``key not found``. ``get`` has delta 0.
- ``history``: every stored entry of the key, oldest first, delta = the entries after it.
- ``keys(filters)``: last message per subject, keys whose latest entry is a PUT, sorted;
  filters are NATS wildcards over keys. ``latest(filters)``: the same keys' entries.
- ``watch``: an ordered consumer's view: first the latest entry of every matching key
  (``include_history``: every entry; ``updates_only``: none; ``revision``: every entry from
  that revision on, whatever else was asked: nats.go's ResumeFromRevision), each with delta =
  the initial entries still to come, then :data:`END_OF_INITIAL_DATA` (always, also for an
  empty bucket; first with ``updates_only``), then every new entry as it is stored (delta
  0). ``ignore_deletes`` drops DEL and PURGE entries; ``meta_only`` drops values.
- ``purge_deletes`` (natscli's ``kv compact``, nats.go's PurgeDeletes): every key whose
  latest entry is a DEL or PURGE loses its history, its marker too once older than 30
  minutes.

Errors are the server's ApiErrors where the server decides (10071, 10037, 10059, 10166 ...)
and :class:`ReadOnlyBucketError` (a JetlinkError) for writes to a read-only handle.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from . import headers as H
from . import limits as L
from .clock import Clock, SystemClock
from .config.kvnames import (
    KV_STREAM_PREFIX,
    bucket_of_stream,
    is_bucket_name,
    kv_stream_name,
    kv_subjects,
    validate_bucket_name,
    validate_key,
    validate_search_key,
)
from .config.stream import StreamConfig, StreamSource
from .errors import ApiError, JetlinkError, not_found
from .jetstream import JetStream
from .messages import StoredMsg, StreamInfo, format_rfc3339_nano
from .subjects import SubjectFilter

if TYPE_CHECKING:  # pragma: no cover
    from .config.kv import KeyValueConfig, KVAggregateConfig, KVAggregateOrigin, KVMirrorConfig
    from .store import DataDir

__all__ = [
    "DEL",
    "END_OF_INITIAL_DATA",
    "KV",
    "PURGE",
    "PUT",
    "Entry",
    "KVStatus",
    "KeyValue",
    "ReadOnlyBucketError",
    "Watcher",
    "key_not_found",
    "kv_statuses",
    "operation_of",
]

PUT, DEL, PURGE = "PUT", "DEL", "PURGE"
BACKING_STORE = "JetStream"
MARKER_REASON = "Nats-Marker-Reason"
EXPECTED_LAST_SUBJECT_SEQ = "Nats-Expected-Last-Subject-Sequence"
ROLLUP = "Nats-Rollup"
MSG_TTL = "Nats-TTL"
# nats.go's kvDefaultPurgeDeletesMarkerThreshold: PurgeDeletes keeps younger markers.
PURGE_DELETES_MARKER_AGE_NS = 30 * 60 * 1_000_000_000


# nats.go's ErrBadBucket: a KV_<name> stream that keeps no message per subject (its
# max_msgs_per_subject below 1) is no bucket, whatever its name says
ERR_BAD_BUCKET = "nats: bucket not valid key-value store"


def _not_a_bucket(cfg: StreamConfig, name: str) -> bool:
    """nats.go KeyValue's sanity check (max_msgs_per_subject below 1: ErrBadBucket), for a
    stream that is none of jetlink's KV objects either: one holding the bucket's own
    subjects (``$KV.<name>.>``) or mirroring or sourcing is kept (a KV mirror an older
    jetlink made, with -1, and the bucket its failover made of it)."""
    if cfg.max_msgs_per_subject >= 1 or cfg.mirror is not None or cfg.sources:
        return False
    return kv_subjects(name) not in (cfg.subjects or [])


class ReadOnlyBucketError(JetlinkError):
    """A write to a read-only bucket handle (a KV mirror, a read-only aggregate)."""


def key_not_found(key: str) -> ApiError:
    return ApiError(404, 10037, "key not found", field="key")


def bucket_not_found(name: str, streams: Iterable[str] = ()) -> ApiError:
    """404/10059 for bucket ``name``, with the closest bucket of ``streams`` (stream names:
    a bucket's is ``KV_<bucket>``) as its hint for people (core/errors.py ``not_found``)."""
    err = ApiError(404, 10059, "bucket not found", field="bucket")
    # the name (and the closest bucket) for people; the JSON document stays nats.go's
    # ErrBucketNotFound text, as a stream's is the server's "stream not found"
    not_found(err, name, [b for b in map(bucket_of_stream, streams) if b])
    return err


def operation_of(hdr: bytes | None) -> str:
    """PUT, DEL or PURGE: ``KV-Operation``, else a limit marker's ``Nats-Marker-Reason``."""
    if not hdr:
        return PUT
    op = H.header_value(hdr, H.KV_OPERATION)
    if op == DEL:
        return DEL
    if op == PURGE:
        return PURGE
    reason = H.header_value(hdr, MARKER_REASON)
    if reason in ("MaxAge", "Purge"):
        return PURGE
    if reason == "Remove":
        return DEL
    return PUT


@dataclass(frozen=True)
class Entry:
    """One revision of a key (ADR-8 "Entry"). ``created`` in ns since the epoch."""

    bucket: str
    key: str
    value: bytes
    revision: int
    created: int
    delta: int
    operation: str
    served_by: str = ""  # the stream that answered (gets only)

    def to_json(self) -> dict[str, Any]:
        return {
            "bucket": self.bucket,
            "key": self.key,
            "value": base64.b64encode(self.value).decode("ascii"),
            "revision": self.revision,
            "created": format_rfc3339_nano(self.created),
            "delta": self.delta,
            "operation": self.operation,
        }


class _EndOfInitialData:
    """The watcher's end-of-initial-data signal (nats-py yields None for it)."""

    def __repr__(self) -> str:
        return "END_OF_INITIAL_DATA"


END_OF_INITIAL_DATA = _EndOfInitialData()


@dataclass
class KVStatus:
    """A bucket's status (ADR-8 "Status"), with the stream behind it."""

    bucket: str
    values: int
    history: int
    ttl: int
    limit_marker_ttl: int
    is_compressed: bool
    bytes: int
    stream_info: StreamInfo
    kind: str = "bucket"  # bucket | aggregate | mirror
    read_only: bool = False
    backing_store: str = BACKING_STORE

    @property
    def config(self) -> StreamConfig:
        return self.stream_info.config

    def to_json(self) -> dict[str, Any]:
        return {
            "bucket": self.bucket,
            "values": self.values,
            "history": self.history,
            "ttl": self.ttl,
            "limit_marker_ttl": self.limit_marker_ttl,
            "is_compressed": self.is_compressed,
            "backing_store": self.backing_store,
            "bytes": self.bytes,
            "kind": self.kind,
            "read_only": self.read_only,
            "stream_info": self.stream_info.to_json(),
        }


# What makes an aggregate an aggregate: kept when its settings are edited.
_TOPOLOGY_FIELDS = ("sources", "subjects", "deny_delete", "deny_purge", "allow_rollup_hdrs")


def _kind(cfg: StreamConfig) -> tuple[str, bool]:
    """(kind, read_only) of a KV stream."""
    if cfg.mirror is not None:
        return "mirror", True
    if cfg.sources:
        return "aggregate", not cfg.subjects
    return "bucket", False


def _status(name: str, info: StreamInfo) -> KVStatus:
    cfg = info.config
    kind, ro = _kind(cfg)
    return KVStatus(
        bucket=name,
        values=info.state.messages,
        # nats.go / nats-py Status.History: the stream's max_msgs_per_subject as is (a
        # mirror keeping every revision reports -1).
        history=cfg.max_msgs_per_subject if kind == "mirror" else max(
            cfg.max_msgs_per_subject, 1),
        ttl=cfg.max_age,
        limit_marker_ttl=cfg.subject_delete_marker_ttl,
        is_compressed=cfg.compression == "s2",
        bytes=info.state.bytes,
        stream_info=info,
        kind=kind,
        read_only=ro,
    )


def kv_statuses(infos: Iterable[StreamInfo]) -> list[KVStatus]:
    """The buckets (``KV_*`` streams) and KV mirrors among the StreamInfos of one cluster
    (``JetStream.streams()``), by name: what ``KV.statuses`` returns for that cluster."""
    out = []
    for info in infos:
        name = bucket_of_stream(info.config.name)
        if name is not None:
            if _not_a_bucket(info.config, name):  # (nats.go lists it not, opens it not)
                continue
            out.append(_status(name, info))
        elif _mirrored_bucket(info.config) is not None:
            out.append(_status(info.config.name, info))
    return sorted(out, key=lambda s: s.bucket)


def _mirrored_bucket(cfg: StreamConfig) -> str | None:
    """The origin bucket a stream mirrors (``mirror.name`` = ``KV_<bucket>``), else None."""
    if cfg.mirror is None:
        return None
    return bucket_of_stream(cfg.mirror.name)


def _origin_cluster(src: StreamSource, here: str) -> str:
    """The cluster of a KV mirror's origin (replication's rule), or its error."""
    from .replication import origin_cluster

    name, err = origin_cluster(src, here)
    if err is not None:
        raise err
    return name


def _origin_place(cfg: Any, here: str) -> str | None:
    """The cluster of a KV mirror's origin when it is another than ``here`` (None: the same,
    or not known), for the words of a refused write."""
    from .replication import origin_cluster

    name, err = origin_cluster(cfg.mirror, here)
    return name if err is None and name != here else None


def _mirror_filter(src: StreamSource) -> SubjectFilter | None:
    """The subjects a mirror holds (None: all), as the replication agreement selects them."""
    from .replication import source_filters

    pats = source_filters(src)
    return SubjectFilter(pats) if pats else None


# --------------------------------------------------------------------------- management


class Clusters:
    """Where KV finds the JetStream API of a cluster: the addressed one and the others its
    mirrors and aggregates name. The embedded engine's clusters are the databases of a data
    directory; a live server's are its JetStream domains (jetlink.core.live.jetstream
    ``LiveDomains``)."""

    kind = "cluster"

    def __init__(self, datadir: DataDir, clock: Clock) -> None:
        self.datadir = datadir
        self.clock = clock

    def js(self, name: str, *, here: bool) -> Any:
        return JetStream(self.datadir.open(name, create_local=here), self.clock)

    def has_cluster(self, name: str) -> bool:
        return self.datadir.has_cluster(name)

    def names(self) -> list[str]:
        """The clusters of the data directory (what a misspelt one is compared with)."""
        return list(self.datadir.cluster_names())

    def is_down(self, name: str) -> bool:
        return self.datadir.is_down(name)


class KV:
    """The KV API of a data directory (or a live server: :meth:`over`), addressed from
    ``cluster``."""

    def __init__(self, datadir: DataDir | None, cluster: str, clock: Clock | None = None, *,
                 clusters: Any = None) -> None:
        self.datadir = datadir
        self.cluster = cluster
        self.clock: Clock = clock or SystemClock()
        if clusters is None:
            if datadir is None:
                raise TypeError("KV needs a data directory, or the clusters to act on (KV.over)")
            clusters = Clusters(datadir, self.clock)
        self.clusters = clusters
        self._js: dict[str, Any] = {}

    @classmethod
    def over(cls, clusters: Any, cluster: str) -> KV:
        """KV over another provider of clusters (a live server's domains)."""
        return cls(None, cluster, clusters=clusters)

    def js(self, cluster: str | None = None) -> Any:
        """The JetStream API of ``cluster`` (default: the addressed one). A cluster taken
        down refuses KV traffic that would cross into it."""
        name = cluster or self.cluster
        if name != self.cluster and self.clusters.is_down(name):
            raise JetlinkError(f"cluster {name} is down", field="cluster")
        js = self._js.get(name)
        if js is None:
            js = self.clusters.js(name, here=name == self.cluster)
            self._js[name] = js
        return js

    # -- buckets ---------------------------------------------------------------------------
    def create_bucket(self, cfg: KeyValueConfig) -> KVStatus:
        validate_bucket_name(cfg.bucket)
        return _status(cfg.bucket, self._created(cfg.to_stream_config()))

    def _created(self, cfg: StreamConfig) -> StreamInfo:
        """The bucket's stream created, then its info as a status reads it (nats.go's
        Status after CreateKeyValue: a server's create answer has no cluster section). A
        bucket there with other settings is the server's 10058, saying which differ."""
        try:
            info = self.js().add_stream(cfg)
        except ApiError as err:
            if err.err_code == 10058:
                err.detail = self._settings_differ(cfg) or err.detail
            raise
        return self.js().stream_info(info.config.name)

    def _settings_differ(self, cfg: StreamConfig) -> str | None:
        """Which of the bucket's settings ``cfg`` (a create's) gives otherwise than its
        stream holds: ``bucket CFG: history 1 given, 5 stored``; None when not readable."""
        from .config.codec import given_stored
        from .config.kv import KeyValueConfig

        try:
            stored = KeyValueConfig.from_stream_config(self.js().stream_info(cfg.name).config)
            given = KeyValueConfig.from_stream_config(cfg)
        except JetlinkError:
            return None
        out = given_stored(given, stored, durations=frozenset({"ttl", "limit_marker_ttl"}))
        if not out:
            return None
        return (f"bucket {given.bucket}: {'; '.join(out)} (kv edit changes a bucket's "
                "settings)")

    def update_bucket(self, cfg: KeyValueConfig) -> KVStatus:
        """Change a bucket's settings (history, TTL, sizes, ...). An aggregate keeps its
        origins and read-only rules; use :meth:`update_mirror` for a KV mirror."""
        _current, new = self.bucket_update(cfg)
        return _status(cfg.bucket, self._updated(new))

    def _updated(self, cfg: StreamConfig) -> Any:
        """``cfg``'s stream updated, and its info read afresh: natscli's kv edit shows the
        bucket's status (STREAM.INFO, its cluster's leader too), not the update's answer."""
        self.js().update_stream(cfg)
        return self.js().stream_info(cfg.name)

    def bucket_update(self, cfg: KeyValueConfig) -> tuple[StreamConfig, StreamConfig]:
        """The bucket's stream config now and as :meth:`update_bucket` would make it
        (nothing changed): what a caller compares before it asks."""
        validate_bucket_name(cfg.bucket)
        current = self._stream_of_bucket(cfg.bucket).config
        new = cfg.to_stream_config()
        if current.sources and current.mirror is None:  # an aggregate: keep its topology
            for name in _TOPOLOGY_FIELDS:
                setattr(new, name, getattr(current, name))
        return current, new

    def update_mirror(self, name: str, *, description: str | None = None,
                      history: int | None = None, ttl: int | None = None,
                      max_bytes: int | None = None, max_value_size: int | None = None,
                      metadata: dict[str, str] | None = None,
                      compression: bool | None = None) -> KVStatus:
        """Change a KV mirror's own settings (its origin and key filter stay)."""
        _current, cfg = self.mirror_update(
            name, description=description, history=history, ttl=ttl, max_bytes=max_bytes,
            max_value_size=max_value_size, metadata=metadata, compression=compression)
        return _status(name, self._updated(cfg))

    def mirror_update(self, name: str, *, description: str | None = None,
                      history: int | None = None, ttl: int | None = None,
                      max_bytes: int | None = None, max_value_size: int | None = None,
                      metadata: dict[str, str] | None = None,
                      compression: bool | None = None
                      ) -> tuple[StreamConfig, StreamConfig]:
        """The KV mirror's stream config now and as :meth:`update_mirror` would make it
        (nothing changed)."""
        current = self.js().stream_info(self._own_stream(name)).config
        cfg = current.copy()
        if _mirrored_bucket(cfg) is None:
            raise JetlinkError(f"{name} is not a KV mirror", field="name")
        if description is not None:
            cfg.description = description
        if history is not None:
            if not 1 <= int(history) <= 64:
                raise JetlinkError("history must be between 1 and 64", field="history")
            cfg.max_msgs_per_subject = int(history)
        if ttl is not None:
            from .config.kv import kv_duplicate_window

            cfg.max_age = int(ttl)
            # the window follows the TTL, as nats.go's prepareKeyValueConfig sends it with
            # every update (a TTL below 2m refused otherwise: no window above max age)
            cfg.duplicate_window = kv_duplicate_window(cfg.max_age, copies=True)
        if max_bytes is not None:
            cfg.max_bytes = int(max_bytes) if max_bytes > 0 else -1
        if max_value_size is not None:
            cfg.max_msg_size = int(max_value_size) if max_value_size > 0 else -1
        if metadata is not None:
            cfg.metadata = dict(metadata)
        if compression is not None:
            cfg.compression = "s2" if compression else "none"
        return current, cfg

    def bucket_config(self, bucket: str) -> KeyValueConfig:
        """The bucket's configuration, read back from its stream."""
        from .config.kv import KeyValueConfig

        return KeyValueConfig.from_stream_config(self._stream_of_bucket(bucket).config)

    def bucket_stream_config(self, bucket: str) -> StreamConfig:
        """The configuration of the bucket's stream (its mirror or sources as stored)."""
        return self._stream_of_bucket(bucket).config

    def check_bucket(self, name: str) -> None:
        """What :meth:`delete_bucket` refuses before it deletes anything (a name no bucket
        may have, a bucket that is not there): a caller asks its question after this."""
        validate_bucket_name(name)
        self._own_stream(name)

    def delete_bucket(self, name: str) -> None:
        """Destroy a bucket or a KV mirror (``KV_<name>``; a KV mirror made before jetlink followed
        nats.go's naming: ``<name>``). A name no bucket may have is refused first, as
        nats.go's ``DeleteKeyValue`` does (not "bucket not found")."""
        validate_bucket_name(name)
        stream = self._own_stream(name)
        self.js().delete_stream(stream)

    def create_mirror(self, cfg: KVMirrorConfig) -> KVStatus:
        """A read-only mirror of a bucket, after confirming the origin exists and has
        allow_direct (ADR-8 "Creation of Mirrors"). Its stream is ``KV_<name>`` (nats.go's
        CreateKeyValue); a KV mirror of that name made the old way (a stream ``<name>``) is
        refused, not doubled."""
        from .config.kv import check_kv_mirror

        src = cfg.filter_source()
        stream = cfg.stream_name
        js = self.js()
        if stream != cfg.name and cfg.name in set(js.stream_names()) and _mirrored_bucket(
                js.stream_info(cfg.name).config) is not None:
            raise ApiError(400, 10058, f"KV mirror {cfg.name} exists already (the stream "
                                       f"{cfg.name}, named the old way, before KV_<bucket>)",
                           field="name")
        ocluster = _origin_cluster(src, self.cluster)
        if not self.clusters.has_cluster(ocluster):  # (a data directory's: it has names)
            raise not_found(JetlinkError(f"cluster {ocluster} not found", field="mirror_domain"),
                            ocluster, self.clusters.names())
        try:
            origin = self.js(ocluster).stream_info(cfg.origin_stream).config
        except ApiError as err:
            if err.err_code != 10059:
                raise
            where = f"cluster {ocluster}" if ocluster else "the server's JetStream domain"
            raise ApiError(404, 10059, f"origin bucket {cfg.origin_bucket} not found in "
                                       f"{where}", field="origin_bucket") from None
        mirrored = _mirrored_bucket(origin)
        if mirrored is not None:
            # its stream stores $KV.<mirrored>.<key>: a mirror of it would hold keys that
            # no read under $KV.<origin bucket>. finds (nats.go's KV reads the same way)
            raise JetlinkError(
                f"origin bucket {cfg.origin_bucket} is itself a KV mirror (of bucket "
                f"{mirrored}: its keys are stored as $KV.{mirrored}.<key>): mirror bucket "
                f"{mirrored} instead (kv add {cfg.name} --mirror {mirrored} ...)",
                field="origin_bucket")
        info = self._created(check_kv_mirror(cfg, origin))
        return _status(cfg.name, info)

    def create_aggregate(self, cfg: KVAggregateConfig) -> KVStatus:
        """The aggregate as declared (its origins' streams and buckets as given: a
        topology file's, exported and applied again the same; the CLI resolves an origin
        named by a KV mirror first, :meth:`resolve_origin`)."""
        return _status(cfg.bucket, self._created(cfg.to_stream_config()))

    def resolve_origin(self, origin: KVAggregateOrigin, index: int = 0) -> KVAggregateOrigin:
        """An aggregate origin named by its bucket that is a KV mirror (ADR-8: an origin may
        be a mirror): its stream stores the keys of the bucket it mirrors
        (``$KV.<mirrored>.<key>``), so the keys are mapped from there, the stream kept
        (``{stream: KV_<named>, bucket: <mirrored>}``, what a topology file declares for
        it). Given as it is otherwise (a stream named, or an origin not found here: said
        elsewhere)."""
        if origin.stream:
            return origin
        stream, bucket = origin.resolved(index)
        src = StreamSource(name=stream, external=origin.external_stream())
        try:
            ocfg = self.js(_origin_cluster(src, self.cluster)).stream_info(stream).config
        except JetlinkError:
            return origin
        mirrored = _mirrored_bucket(ocfg)
        if mirrored is None or mirrored == bucket:
            return origin
        return replace(origin, stream=stream, bucket=mirrored)

    def add_aggregate_origin(self, bucket: str, origin: KVAggregateOrigin) -> KVStatus:
        """Add one origin to an aggregate (ADR-8 ``AddAggregateOrigin``)."""
        from .config.kv import KVAggregateConfig

        info = self._stream_of_bucket(bucket)
        cfg = info.config
        if not cfg.sources or cfg.mirror is not None:
            raise JetlinkError(f"bucket {bucket} is not an aggregate: only an aggregate takes "
                               "more origins", field="sources")
        new = KVAggregateConfig(bucket=bucket, origins=[origin]).sources()[0]
        if any(s.key() == new.key() for s in cfg.sources):
            raise JetlinkError(f"aggregate {bucket} already sources {new.name} with these "
                               "keys", field="sources")
        cfg = cfg.copy()
        cfg.sources = [*cfg.sources, new]
        return _status(bucket, self._updated(cfg))

    # -- listing ---------------------------------------------------------------------------
    def statuses(self) -> list[KVStatus]:
        """Every bucket (``KV_*`` stream) and KV mirror of the addressed cluster, by name."""
        return kv_statuses(self.js().streams())

    def status(self, name: str) -> KVStatus:
        return self.open(name).status()

    def _stream_of_bucket(self, bucket: str) -> StreamInfo:
        validate_bucket_name(bucket)
        try:
            return self.js().stream_info(kv_stream_name(bucket))
        except ApiError as err:
            if err.err_code == 10059:
                raise bucket_not_found(bucket, self.js().stream_names()) from None
            raise

    def _own_stream(self, name: str) -> str:
        js = self.js()
        names = set(js.stream_names())
        if name.startswith(KV_STREAM_PREFIX) and name in names:
            return name
        if kv_stream_name(name) in names:
            return kv_stream_name(name)
        if name in names and _mirrored_bucket(js.stream_info(name).config) is not None:
            return name
        raise bucket_not_found(name, names)

    # -- handles ---------------------------------------------------------------------------
    def open(self, name: str) -> KeyValue:
        """The handle for ``name`` (rules in the module doc)."""
        if not isinstance(name, str) or not name:
            raise JetlinkError("a bucket name is required", field="bucket")
        js = self.js()
        stream = kv_stream_name(name)
        cfg: StreamConfig | None = None
        if is_bucket_name(name):
            try:  # (STREAM.INFO of KV_<name> alone, as nats.go's KeyValue(): a user allowed
                #    only that bucket's API subjects opens it)
                cfg = js.stream_info(stream).config
            except ApiError as missing:
                if missing.err_code != 10059:
                    raise
        if cfg is not None:
            if _not_a_bucket(cfg, name):
                err = JetlinkError(ERR_BAD_BUCKET, field="bucket")
                subjects = ", ".join(cfg.subjects or []) or "none"
                err.detail = (f"stream {stream} (subjects {subjects}, max_msgs_per_subject "
                              f"{cfg.max_msgs_per_subject}) is no bucket: a bucket's stream "
                              f"holds {kv_subjects(name)} and keeps 1 or more values per key")
                raise err
            origin = _mirrored_bucket(cfg)
            if origin is not None:  # a KV mirror named KV_<name> (as nats.go names it)
                return KeyValue(self, origin, self.cluster, stream, kind="mirror",
                                read_only=True, display=name,
                                origin_place=_origin_place(cfg, self.cluster))
            kind, ro = _kind(cfg)
            handle = KeyValue(self, name, self.cluster, stream, kind=kind, read_only=ro)
            handle.direct = cfg.allow_direct  # (its gets direct, as nats.go's KV reads them)
            return handle
        names = set(js.stream_names())
        if name in names:
            cfg = js.stream_info(name).config
            origin = _mirrored_bucket(cfg)
            if origin is not None:
                return KeyValue(self, origin, self.cluster, name, kind="mirror",
                                read_only=True, display=name,
                                origin_place=_origin_place(cfg, self.cluster))
        validate_bucket_name(name)
        for cfg in js.stream_configs():
            if _mirrored_bucket(cfg) == name and cfg.mirror_direct:
                assert cfg.mirror is not None
                ocluster = _origin_cluster(cfg.mirror, self.cluster)
                if ocluster == self.cluster:
                    # its origin here is gone (KV_<name> is not among the streams): the
                    # bucket was removed, as nats.go's KeyValue() finds; a mirror of it left
                    # behind serves nothing in its name
                    continue
                return KeyValue(self, name, ocluster, stream, kind="bucket",
                                replica=(cfg.name, _mirror_filter(cfg.mirror)))
        raise bucket_not_found(name, names)


# --------------------------------------------------------------------------- key operations


class KeyValue:
    """A handle to one bucket (module doc: what a name opens)."""

    def __init__(self, kv: KV, bucket: str, cluster: str, stream: str, *, kind: str = "bucket",
                 read_only: bool = False, display: str | None = None,
                 replica: tuple[str, SubjectFilter | None] | None = None,
                 origin_place: str | None = None) -> None:
        self._kv = kv
        self.origin_place = origin_place  # a mirror's origin's cluster, when another one
        self.bucket = bucket  # the bucket whose subjects ($KV.<bucket>.<key>) hold the keys
        self.name = display or bucket  # the name the handle was opened with
        self.cluster = cluster  # where `stream` lives
        self.stream = stream
        # the bucket's stream allows direct gets: a user the server does not let ask
        # STREAM.MSG.GET reads a key by one, as nats.go's KV Get reads it (ADR-8)
        self.direct = False
        self.kind = kind
        self.read_only = read_only
        self.replica = replica  # (mirror stream in the addressed cluster, its filter)
        self.prefix = f"$KV.{bucket}."

    # -- helpers ---------------------------------------------------------------------------
    @property
    def js(self) -> JetStream:
        return self._kv.js(self.cluster)

    def subject(self, key: str) -> str:
        return self.prefix + validate_key(key)

    def _read_subject(self, key: str) -> str:
        """A read's subject: a ``_kv`` key (reserved for writes) another client wrote is
        read (nats.go refuses none)."""
        return self.prefix + validate_key(key, reserved=False)

    def _filter_subject(self, key: str) -> str:
        return self.prefix + validate_search_key(key)

    def _patterns(self, filters: Sequence[str]) -> list[str]:
        """The subjects of key filters; none, or an empty key, is the whole bucket (ADR-8:
        "using an empty key or a key with wildcard >")."""
        return [self.prefix + ">" if f == "" else self._filter_subject(f)
                for f in filters] or [self.prefix + ">"]

    def _writable(self) -> None:
        if not self.read_only:
            return
        if self.kind == "mirror":
            place = getattr(self._kv.clusters, "kind", "cluster")  # or a live server's domain
            where = f" of {place} {self.origin_place}" if self.origin_place else ""
            how = ""
            if self.origin_place:
                flag = "--js-domain" if place == "domain" else "--cluster"
                how = f" (jetlink {flag} {self.origin_place} kv put {self.bucket} ...)"
            raise ReadOnlyBucketError(
                f"KV {self.name} is a read-only mirror of bucket {self.bucket}{where}: "
                f"write to the bucket {self.bucket}{where} instead{how}", field="bucket")
        raise ReadOnlyBucketError(f"KV {self.name} is a read-only aggregate: writes are refused "
                                  "(an aggregate created with --writable accepts them)",
                                  field="bucket")

    def _entry(self, msg: StoredMsg, delta: int = 0, *, meta_only: bool = False,
               served_by: str = "") -> Entry:
        key = msg.subject[len(self.prefix):] if msg.subject.startswith(self.prefix) else \
            msg.subject
        return Entry(bucket=self.name, key=key, value=b"" if meta_only else bytes(msg.data),
                     revision=msg.seq, created=msg.ts, delta=delta,
                     operation=operation_of(msg.hdr), served_by=served_by)

    def _check_limits(self, key: str, subject: str, value: bytes, hdr_len: int = 0,
                      index: int = 0) -> None:
        """The server's limits on the publish of ``key`` (core/limits.py), named after the key:
        its subject ``$KV.<bucket>.<key>`` must fit the protocol line."""
        L.check_publish(subject, len(value), hdr_len=hdr_len, reply_len=L.js_reply_len(index),
                        field="key", field_len=len(key.encode("utf-8", "surrogateescape")))

    def _publish(self, key: str, value: bytes, headers: dict[str, str] | None = None, *,
                 marker: bool = False) -> int:
        """A write of ``key``; ``marker``: a DEL or PURGE, which may remove a reserved
        ``_kv`` key another client wrote (a value is never written under one)."""
        self._writable()
        js = self.js
        subject = js.kv_write_subject(  # the protocol line carries this one
            self._read_subject(key) if marker else self.subject(key))
        value = bytes(value)
        hdr = H.encode_headers(headers)
        self._check_limits(key, subject, value, len(hdr) if hdr else 0)
        ack = js.publish(subject, value, headers)
        if ack is None:  # pragma: no cover - KV streams always acknowledge
            raise JetlinkError("the bucket did not acknowledge the write")
        return ack.seq

    # -- writes ----------------------------------------------------------------------------
    def put(self, key: str, value: bytes) -> int:
        """Store ``value``; the new revision."""
        return self._publish(key, value)

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> list[int | JetlinkError]:
        """Many puts in ONE transaction, as a client pipelines puts with asynchronous
        publishes: per item its revision, or the error that refused it (the others are
        stored). Invalid keys refuse the whole call before anything is written."""
        self._writable()
        js = self.js
        pairs = list(items)
        keys = [validate_key(k) for k, _v in pairs]
        msgs = [(js.kv_write_subject(self.prefix + k), bytes(v), None)
                for k, (_k, v) in zip(keys, pairs, strict=True)]
        short = (L.MAX_CONTROL_LINE - 128) // 4  # fits a line whatever the reply and sizes
        for i, (subject, value, _h) in enumerate(msgs):
            if len(subject) > short or len(value) > L.MAX_PAYLOAD:
                self._check_limits(keys[i], subject, value, index=i)
        out: list[int | JetlinkError] = []
        for res in js.publish_batch(msgs):
            if isinstance(res, JetlinkError):
                out.append(res)
            elif res is None:  # pragma: no cover - KV streams always acknowledge
                out.append(JetlinkError("the bucket did not acknowledge the write"))
            else:
                out.append(res.seq)
        return out

    def create(self, key: str, value: bytes, *, ttl: int | None = None) -> int:
        """Store ``value`` only when the key is absent or its last entry is a DEL / PURGE."""
        hdrs = {EXPECTED_LAST_SUBJECT_SEQ: "0"}
        if ttl:
            from .durations import format_duration

            hdrs[MSG_TTL] = format_duration(ttl)
        try:
            return self._publish(key, value, hdrs)
        except ApiError as err:
            # a wrong last sequence, as nats.go's isWrongLastSeqErr reads it: 10071, or a
            # clustered server's 10164 (JSStreamWrongLastSequenceConstantErr)
            if err.err_code not in (10071, 10164):
                raise
            try:
                last = self._last(key)
            except ApiError:
                raise err from None
            if last is None or operation_of(last.hdr) == PUT:
                # nats.go's ErrKeyExists: the server's error code, the client's text
                raise ApiError(400, 10071, "key exists", field="key") from None
            hdrs[EXPECTED_LAST_SUBJECT_SEQ] = str(last.seq)
            return self._publish(key, value, hdrs)

    def update(self, key: str, value: bytes, last: int) -> int:
        """Store ``value`` only when the key's latest revision is ``last``."""
        return self._publish(key, value, {EXPECTED_LAST_SUBJECT_SEQ: str(int(last))})

    def delete(self, key: str, *, last: int | None = None) -> int:
        """A DEL entry (history kept); its revision."""
        hdrs = {H.KV_OPERATION: DEL}
        if last is not None:
            hdrs[EXPECTED_LAST_SUBJECT_SEQ] = str(int(last))
        return self._publish(key, b"", hdrs, marker=True)

    def purge(self, key: str, *, ttl: int | None = None) -> int:
        """A PURGE entry replacing the key's history (``Nats-Rollup: sub``); its revision."""
        hdrs = {H.KV_OPERATION: PURGE, ROLLUP: "sub"}
        if ttl:
            from .durations import format_duration

            hdrs[MSG_TTL] = format_duration(ttl)
        return self._publish(key, b"", hdrs, marker=True)

    def purge_deletes(self, older_than_ns: int = PURGE_DELETES_MARKER_AGE_NS
                      ) -> dict[str, int]:
        """nats.go's ``PurgeDeletes`` (natscli's ``kv compact``): every key whose latest entry
        is a DEL or PURGE loses its history; its marker goes too when it is older than
        ``older_than_ns`` (nats.go's DeleteMarkersOlderThan, 30 minutes by default; 0 or
        less: every marker goes), else it is kept (a subject purge keeping one). Returns
        ``{"keys": keys compacted, "purged": messages removed}``. A KV mirror is compacted
        too (nats.go purges its own stream: the server purges a mirror; only a read-only
        aggregate, deny_purge, refuses it)."""
        if self.kind != "mirror":
            self._writable()
        js = self.js
        limit = None
        if older_than_ns > 0:
            limit = self._kv.clock.now_ns() - older_than_ns
        markers = [m for m in self._last_per_subject([self.prefix + ">"])
                   if operation_of(m.hdr) != PUT]
        purged = 0
        for msg in markers:
            keep = 1 if limit is not None and msg.ts > limit else None
            purged += js.purge_stream(self.stream, subject=msg.subject, keep=keep)
        return {"keys": len(markers), "purged": purged}

    def revert(self, key: str, revision: int) -> int:
        """Put the value the key had at ``revision`` again; the new revision. As natscli's
        ``kv revert``: refused for a key with one entry ("history=1"), and written as an
        update on the key's latest revision (a write in between fails it: 10071)."""
        self._writable()
        history = self.history(key)
        if len(history) <= 1:
            kept = self.js.stream_info(self.stream).config.max_msgs_per_subject
            if kept == 1:  # natscli's words, where they are true
                raise JetlinkError("cannot revert key in a bucket where history=1",
                                   field="revision")
            raise JetlinkError(f"cannot revert key {key}: it has one revision in bucket "
                               f"{self.name} (history {kept}), nothing earlier to put back",
                               field="revision")
        old = self.get(key, revision=revision)
        return self.update(key, old.value, history[-1].revision)

    # -- reads -----------------------------------------------------------------------------
    def _last(self, key: str, js: JetStream | None = None, stream: str | None = None
              ) -> StoredMsg | None:
        own = stream in (None, self.stream) and (js is None or js is self.js)
        try:
            return (js if js is not None else self.js).get_msg(
                stream or self.stream, last_by_subj=self._read_subject(key),
                direct=own and self.direct)
        except ApiError as err:
            if err.err_code == 10037:
                return None
            raise

    def _revision(self, js: JetStream, stream: str, revision: int, subject: str
                  ) -> StoredMsg | None:
        """The entry at ``revision`` of ``stream`` when it is one of ``subject`` (a direct
        get of the bucket's own stream when it allows them, as nats.go reads it)."""
        own = stream == self.stream and js is self.js
        try:
            msg = js.get_msg(stream, revision, direct=own and self.direct)
        except ApiError as err:
            if err.err_code != 10037:
                raise
            return None
        return msg if msg.subject == subject else None

    def get(self, key: str, *, revision: int | None = None) -> Entry:
        """The key's latest value (or the one at ``revision``); 404/10037 ``key not found``
        when it has none or its latest entry is a DEL / PURGE."""
        subject = self._read_subject(key)
        js, stream = None, self.stream
        if self.replica is not None:
            mirror, flt = self.replica
            if flt is None or flt.matches(subject):
                js, stream = self._kv.js(), mirror
        js = js or self.js
        if revision is not None:
            if int(revision) <= 0:
                raise JetlinkError("a revision is a positive sequence number", field="revision")
            msg = self._revision(js, stream, int(revision), subject)
            if msg is None and stream != self.stream:
                # a mirror keeps its own history (one revision by default): one it no
                # longer holds is asked of the bucket itself, never a false "not found"
                js, stream = self.js, self.stream
                msg = self._revision(js, stream, int(revision), subject)
        else:
            msg = self._last(key, js, stream)
        if msg is None or operation_of(msg.hdr) != PUT:
            raise key_not_found(key)
        # (a server's direct get names the stream that answered: a mirror may answer for it)
        return self._entry(msg, served_by=getattr(msg, "answered_by", "") or stream)

    def history(self, key: str) -> list[Entry]:
        """Every stored entry of ``key``, oldest first (404/10037 when there is none); a key
        with wildcards is the entries of every key it matches, in revision order (nats.go's
        History: a watch with history, whose key filter takes ``*`` and ``>``), each one's
        delta the entries after it."""
        msgs = list(self.js.messages(self.stream, subject=self._filter_subject(key)))
        if not msgs:
            raise key_not_found(key)
        n = len(msgs)
        return [self._entry(m, n - 1 - i) for i, m in enumerate(msgs)]

    def keys(self, filters: Sequence[str] = ()) -> list[str]:
        """The keys whose latest entry is a PUT, sorted; ``filters`` are key wildcards."""
        return [e.key for e in self.latest(filters)]

    def latest(self, filters: Sequence[str] = ()) -> list[Entry]:
        """The latest entry of every key whose latest entry is a PUT (as ``get`` gives
        it, delta 0), sorted by key; ``filters`` are key wildcards."""
        pats = self._patterns(filters)
        out = [self._entry(msg) for msg in self._last_per_subject(pats)
               if operation_of(msg.hdr) == PUT]
        return sorted(out, key=lambda e: e.key)

    def _last_per_subject(self, patterns: Sequence[str]) -> list[StoredMsg]:
        """The latest message of every subject matching ``patterns``, in sequence order. A
        pattern with ``*`` or ``>`` inside a token (matching no valid key) is not asked for:
        nats-server's last-per-subject delivery takes such a token for a wildcard beside
        other filters (``a*`` delivers ``ab``) while counting it as nothing pending, so its
        answers crowded out the right ones; what comes back is kept by the subject rule."""
        from .config.kvnames import literal_wildcards

        asked = [p for p in patterns if not literal_wildcards(p)]
        if not asked:
            return []
        try:
            found = list(self.js.last_msgs(self.stream, asked))
        except ApiError as err:
            if err.err_code == 10059:
                raise bucket_not_found(self.name) from None
            raise
        flt = SubjectFilter(asked)
        return [m for m in found if flt.matches(m.subject)]

    def status(self) -> KVStatus:
        try:
            return _status(self.name, self.js.stream_info(self.stream))
        except ApiError as err:
            if err.err_code != 10059:
                raise
            # (the bucket as seen through a mirror of it, its origin removed: the bucket's
            # own error, its hint the buckets where it was looked for)
            raise bucket_not_found(self.name, self.js.stream_names()) from None

    def watch(self, keys: Sequence[str] | str = (), *, include_history: bool = False,
              ignore_deletes: bool = False, meta_only: bool = False,
              updates_only: bool = False, revision: int = 0) -> Watcher:
        """A watcher over ``keys`` (key wildcards; none: the whole bucket); ``revision``:
        nats.go's ResumeFromRevision (every entry from that revision on)."""
        if isinstance(keys, str):
            keys = [keys]
        if include_history and updates_only:
            raise JetlinkError("a watcher can not both include history and send only updates",
                               field="updates_only")
        pats = self._patterns(keys)
        if revision < 0:
            raise JetlinkError(f"revision {revision} is not a sequence number", field="revision")
        return Watcher(self, pats, include_history=include_history,
                       ignore_deletes=ignore_deletes, meta_only=meta_only,
                       updates_only=updates_only, revision=revision)


def _distinct_filters(patterns: list[str], whole: str) -> list[str]:
    """``patterns`` as a consumer's filters: themselves when a consumer takes them
    (core/config/consumer.py ``first_overlapping``), else ``whole`` (the caller filters)."""
    from .config.consumer import first_overlapping

    if first_overlapping(patterns) is not None:
        return [whole]
    return patterns


def _removed_while_watched(bucket: str) -> ApiError:
    gone = ApiError(404, 10059, "bucket not found", field="bucket")
    gone.detail = f"{bucket} (removed while watched)"
    return gone


class Watcher:
    """Entries of a bucket as an ordered consumer delivers them (module doc). ``next()``
    returns an :class:`Entry`, :data:`END_OF_INITIAL_DATA` (once), or None when ``timeout``
    passes with nothing new. Iterating yields the same until :meth:`stop`."""

    def __init__(self, kv: KeyValue, patterns: list[str], *, include_history: bool,
                 ignore_deletes: bool, meta_only: bool, updates_only: bool,
                 revision: int = 0) -> None:
        self._kv = kv
        self._flt = SubjectFilter(patterns)
        self._patterns = patterns
        self._ignore_deletes = ignore_deletes
        self._meta_only = meta_only
        self._queue: list[Entry | _EndOfInitialData] = []
        self._stopped = False
        try:
            self._cursor = kv.js.stream_info(kv.stream).state.last_seq
        except ApiError as err:
            if err.err_code == 10059:
                raise bucket_not_found(kv.name) from None
            raise
        initial: list[StoredMsg] = []
        try:
            if revision:  # a start sequence: it decides, whatever else was asked (nats.go)
                initial = [m for m in kv.js.messages(kv.stream, start_seq=revision)
                           if m.seq <= self._cursor and self._flt.matches(m.subject)]
            elif include_history:
                initial = [m for m in kv.js.messages(kv.stream, start_seq=1)
                           if m.seq <= self._cursor and self._flt.matches(m.subject)]
            elif not updates_only:
                initial = [m for m in kv._last_per_subject(patterns) if m.seq <= self._cursor]
        except ApiError as err:
            if err.err_code == 10059:  # removed while its initial data was read
                raise _removed_while_watched(kv.name) from None
            raise
        if updates_only:  # done at once (nats.go), even when a revision brings entries
            self._queue.append(END_OF_INITIAL_DATA)
        n = len(initial)
        for i, msg in enumerate(initial):
            self._offer(msg, n - 1 - i)
        if not updates_only:
            self._queue.append(END_OF_INITIAL_DATA)
        # what is stored from now on (the engine polls its store; a live server pushes). A
        # server refuses a consumer's filters that overlap (10138): such keys are watched
        # through the whole bucket's subjects, the entries taken by the keys' filter here.
        try:
            self._tail = kv.js.tail(kv.stream, _distinct_filters(patterns, kv.prefix + ">"),
                                    self._cursor)
        except ApiError as err:
            if err.err_code == 10059:
                raise _removed_while_watched(kv.name) from None
            raise

    def _offer(self, msg: StoredMsg, delta: int) -> None:
        entry = self._kv._entry(msg, delta, meta_only=self._meta_only)
        if self._ignore_deletes and entry.operation != PUT:
            return
        self._queue.append(entry)

    def next(self, timeout: float | None = 1.0) -> Entry | _EndOfInitialData | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._queue:
            if self._stopped:
                return None
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                msg = self._tail.next(left)
            except ApiError as err:
                if err.err_code == 10059:  # the bucket was removed while watched
                    raise _removed_while_watched(self._kv.name) from None
                raise
            if msg is not None:
                if self._flt.matches(msg.subject):  # (a tail of the whole bucket: overlaps)
                    self._offer(msg, 0)
            elif deadline is not None and time.monotonic() >= deadline:
                return None
        return self._queue.pop(0)

    def __iter__(self) -> Iterator[Entry | _EndOfInitialData]:
        while not self._stopped:
            item = self.next(timeout=None)
            if item is None:
                return
            yield item

    def stop(self) -> None:
        self._stopped = True
        self._tail.close()
