"""What an engine or a server stores, as a topology document: the tables a file writes for it.

A stored stream is written as a KV table (``[kv]``, ``[kv_mirrors]``, ``[kv_aggregates]``)
when that table makes exactly this stream, else as a stream table (the shortest one with
``minimal``: every field the server's defaults fill with the same value left out, so an
exported file reads like one written by hand and apply makes the same stream). A
:class:`_Document` gathers the tables of many clusters and normalizes the whole through
:class:`~jetlink.core.topology.load.Topology` (what ``export -> apply -> export`` keeps
equal). The data directory's reader is core/topology/embedded.py, the live servers' is
core/topology/live.py.
"""

from __future__ import annotations

from typing import Any

from ..errors import JetlinkError
from .export import kv_table, stream_table
from .load import Topology


def _user_config(cfg: Any) -> Any:
    """``cfg`` as a file declares it: without the metadata the server manages, and a
    mirror without a duplicate window (no setting of a mirror: nats.go sends KV mirrors
    one, and a server clears it when it restarts, fixCfgMirrorWithDedupWindow; compared,
    it would be a change after every restart)."""
    from ..config.codec import user_metadata

    mine = user_metadata(cfg.metadata)
    window = cfg.mirror is not None and bool(cfg.duplicate_window)
    if mine == cfg.metadata and not window:
        return cfg
    out = cfg.copy()
    out.metadata = mine
    if window:
        out.duplicate_window = 0
    return out


def consumer_limits(js: Any, stream: str) -> list[tuple[str, int, int]]:
    """``(name, max_ack_pending, inactive_threshold)`` of each consumer of ``stream`` on
    ``js`` (the engine's or a server's): what a change of its consumer limits is checked
    against (config/validate.py ``check_consumer_limits``)."""
    return [(i.name, i.config.max_ack_pending, i.config.inactive_threshold)
            for i in js.consumers(stream)]


def _kv_table(cfg: Any) -> tuple[str, str, dict[str, Any]] | None:
    """A KV stream as (table, name, its [kv] / [kv_aggregates] / [kv_mirrors] table) when
    that table makes exactly this stream (else None: the stream is exported as a stream,
    which apply recreates as it is)."""
    from ..config.kv import KeyValueConfig, bucket_of_stream
    from ..config.validate import check_stream_config

    def same(spec: Any) -> bool:
        try:
            made = _user_config(check_stream_config(spec.to_stream_config()))
        except JetlinkError:
            return False
        return made.to_json() == cfg.to_json()

    bucket = bucket_of_stream(cfg.name)
    candidates: list[tuple[str, str, Any]] = []
    try:
        if bucket is not None and cfg.mirror is None:
            if cfg.sources:
                candidates.append(("kv_aggregates", bucket, _aggregate_spec(cfg, bucket)))
            candidates.append(("kv", bucket, KeyValueConfig.from_stream_config(cfg)))
        elif cfg.mirror is not None and bucket_of_stream(cfg.mirror.name) is not None:
            spec = _kv_mirror_spec(cfg)
            candidates.append(("kv_mirrors", spec.name, spec))
            if bucket is not None:  # a mirror bucket with settings [kv_mirrors] lacks
                candidates.append(("kv", bucket, KeyValueConfig.from_stream_config(cfg)))
    except (JetlinkError, ValueError, TypeError):
        return None
    for table, name, spec in candidates:
        if same(spec):
            return table, name, kv_table(spec)
    return None


def _domain(src: Any) -> tuple[Any, str]:
    """(external, domain) of a StreamSource: ``$JS.<d>.API`` without deliver is a domain."""
    if src.domain and not src.external.deliver:
        return None, src.domain
    return src.external, ""


def _keys(src: Any, bucket: str) -> list[str]:
    prefix = f"$KV.{bucket}."
    subjects = [src.filter_subject] if src.filter_subject else [
        t.src for t in src.subject_transforms]
    keys = [s[len(prefix):] for s in subjects if s and s.startswith(prefix)]
    return [] if keys == [">"] else keys


def _mapped_bucket(src: Any) -> str | None:
    """The bucket an aggregate's source maps keys of (its transforms' ``$KV.<bucket>.``),
    None without one."""
    for t in src.subject_transforms or []:
        parts = (t.src or "").split(".")
        if len(parts) >= 3 and parts[0] == "$KV":
            return parts[1]
    return None


def _kv_mirror_spec(cfg: Any) -> Any:
    from ..config.kv import KVMirrorConfig, bucket_of_stream

    origin = bucket_of_stream(cfg.mirror.name)
    assert origin is not None, "only a mirror of a KV_ stream is a KV mirror"
    external, domain = _domain(cfg.mirror)
    return KVMirrorConfig(
        name=bucket_of_stream(cfg.name) or cfg.name, origin_bucket=origin,
        description=cfg.description,
        replicas=cfg.num_replicas or 1, history=max(cfg.max_msgs_per_subject, 0),
        ttl=cfg.max_age, max_bytes=max(cfg.max_bytes, 0),
        max_value_size=max(cfg.max_msg_size, 0), storage=cfg.storage,
        placement=cfg.placement, keys=_keys(cfg.mirror, origin), external=external,
        domain=domain, metadata=dict(cfg.metadata), compression=cfg.compression == "s2")


def _aggregate_spec(cfg: Any, bucket: str) -> Any:
    from ..config.kv import KVAggregateConfig, KVAggregateOrigin, bucket_of_stream

    origins = []
    for src in cfg.sources:
        named = bucket_of_stream(src.name) or ""
        # the bucket whose keys it maps ($KV.<bucket>.<key>): another than the stream's
        # name when the origin is a KV mirror (its keys are its origin bucket's)
        origin = _mapped_bucket(src) or named
        external, domain = _domain(src)
        origins.append(KVAggregateOrigin(stream="" if origin == named else src.name,
                                         bucket=origin, keys=_keys(src, origin),
                                         external=external, domain=domain))
    return KVAggregateConfig(
        bucket=bucket, writable=bool(cfg.subjects), description=cfg.description,
        replicas=cfg.num_replicas or 1, max_value_size=max(cfg.max_msg_size, 0),
        history=max(cfg.max_msgs_per_subject, 1), ttl=cfg.max_age,
        max_bytes=max(cfg.max_bytes, 0), storage=cfg.storage, placement=cfg.placement,
        republish=cfg.republish, origins=origins, compression=cfg.compression == "s2",
        metadata=dict(cfg.metadata), limit_marker_ttl=cfg.subject_delete_marker_ttl)


def _decoded(table: dict[str, Any], name: str) -> Any:
    """The StreamConfig a ``[streams.<name>]`` table declares (None: it does not decode)."""
    topo = Topology()
    topo.add_document({"version": 1, "streams": {name: table}}, "<export>")
    return None if topo.problems or not topo.objects else topo.objects[0].config


def minimal_stream_table(cfg: Any) -> dict[str, Any]:
    """The shortest ``[streams]`` table that makes the stored ``cfg``: every field whose
    absence the server's defaults fill with the same value is left out (an exported file
    reads like one written by hand, and apply makes the same stream). A field an edit can
    never turn back (core/config/stream.py ``EDITABLE`` "once" or "no": ``allow_msg_ttl``
    that ``subject_delete_marker_ttl`` implies) stays when away from its default: a file
    that drops what implied it must still show it, not meet the server's refusal to turn
    it back for a field it does not hold."""
    from ..config.stream import EDITABLE, StreamConfig
    from ..config.validate import check_stream_config

    want = cfg.to_json()
    table = stream_table(cfg)
    filled = check_stream_config(StreamConfig(name=cfg.name)).to_json()  # a bare stream's
    kept = {k for k in table
            if EDITABLE.get(k) in ("once", "no") and filled.get(k) != want.get(k)}
    for key in [k for k in table if k not in ("mirror", "sources", *kept)]:
        trial = {k: v for k, v in table.items() if k != key}
        declared = _decoded(trial, cfg.name)
        if declared is None:
            continue
        try:
            made = _user_config(check_stream_config(declared))
        except JetlinkError:
            continue
        if made.to_json() == want:
            table = trial
    return table


class _Document:
    """An export document being built: cluster tables, object tables keyed by (cluster,
    name); :meth:`finish` names the tables (``NAME@cluster`` when two clusters hold one
    name) and normalizes the whole through :class:`Topology`."""

    def __init__(self) -> None:
        self.doc: dict[str, Any] = {"version": 1, "clusters": {}}
        self.tables: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self.names: dict[str, list[tuple[str, str]]] = {}  # table -> [(cluster, name)]

    def cluster(self, name: str, table: dict[str, Any]) -> None:
        self.doc["clusters"][name] = table

    def add(self, table: str, cluster: str, name: str, body: dict[str, Any]) -> None:
        body = dict(body)
        body["cluster"] = cluster
        self.tables.setdefault(table, {})[(cluster, name)] = body
        self.names.setdefault(table, []).append((cluster, name))

    def stream(self, cluster: str, stored: Any, *, minimal: bool = True) -> None:
        """A stream as the engine or server stores it: a KV table when it is exactly what
        one makes, else a stream table (the shortest one with ``minimal``: what export
        writes; the plain one reads back the same and is quicker, for a plan)."""
        from ..dr.fencing import without_fence, without_promotion
        from ..dr.positions import is_jetlink_own

        if is_jetlink_own(stored.name):
            return  # jetlink's own record (the positions bucket), not the user's
        # A stream dr fence took the subjects off is declared with them: the fence is
        # jetlink's own state, kept by a plan (core/topology/plan.py), undone by failback.
        # A promoted mirror is declared as the stream (or bucket) of its own it became: its
        # promotion record and the mirror_direct the server kept are jetlink's and the
        # server's marks, kept by a plan the same way.
        cfg = _user_config(without_promotion(without_fence(stored)))
        kv = _kv_table(cfg)
        if kv is not None:
            self.add(kv[0], cluster, kv[1], kv[2])
        else:
            self.add("streams", cluster, cfg.name,
                     minimal_stream_table(cfg) if minimal else stream_table(cfg))

    def finish(self) -> dict[str, Any]:
        doc = self.doc
        for table, entries in self.tables.items():
            counts: dict[str, int] = {}
            for _cluster, name in self.names[table]:
                counts[name] = counts.get(name, 0) + 1
            out = {}
            for (cluster, name), body in sorted(entries.items(),
                                                key=lambda kv: (kv[0][1], kv[0][0])):
                key = name if counts[name] == 1 else f"{name}@{cluster}"
                if key != name:
                    body = {"name" if table not in ("kv", "kv_aggregates") else "bucket": name,
                            **body}
                out[key] = body
            doc[table] = out
        topo = Topology()
        topo.add_document(doc, "<export>")
        return topo.to_document()
