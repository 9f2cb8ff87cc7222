"""Consumer positions of a mirror's origin, kept on the mirror's side.

NATS replicates a stream's messages to its mirror, never its consumers. To place the
origin's consumers on a promoted mirror after the origin is gone, their configs and
positions must have been copied before: :func:`sync` reads every durable consumer of each
mirror's origin and writes them, with the time of the reading, to the Key-Value bucket
:data:`BUCKET` of the mirror's side (one key per mirror: the mirror's name, or ``=`` and
its URL-safe base64 for a name a key cannot hold). core/dr/rules.py uses the newest record
when the origin does not answer, and reports its age.

One document per mirror (JSON)::

    {"mirror": "ORDERS_EAST", "origin": {"stream": "ORDERS", "domain": "west"},
     "origin_last_seq": 1200, "origin_subjects": ["orders.>"],
     "synced": "2026-11-25T06:00:00.123Z",
     "consumers": [{"name": "billing", "config": {...}, "ack_floor": 1180,
                    "delivered": 1195, "num_pending": 5}]}

A mirror whose origin does not answer is skipped (its last record stays: it is what a
failover needs). A consumer removed from the origin disappears from the next record. Works
over the KV rules of core/kv.py, on the embedded engine and on live servers alike.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..clock import format_rfc3339_nano, parse_rfc3339_nano
from ..errors import ApiError, JetlinkError
from .rules import Position, is_durable, one_line

if TYPE_CHECKING:  # pragma: no cover
    from ..kv import KV, KeyValue

__all__ = ["BUCKET", "OWN_STREAMS", "MirrorPositions", "PositionStore", "SyncResult",
           "is_jetlink_own", "key_for", "open_own_bucket", "sync"]

BUCKET = "JETLINK_POSITIONS"
# jetlink's own streams on a server or in a data directory: the record a failover needs, not
# the user's; never exported, planned, pruned or diffed as a user object
# (core/topology/stored.py)
# (KV_JETLINK_FAILBACK: core/dr/failback.py's record of failbacks in progress;
# KV_JETLINK_REGIONS: core/dr/region.py's journal of region failovers and failbacks)
OWN_STREAMS = frozenset({f"KV_{BUCKET}", "KV_JETLINK_FAILBACK", "KV_JETLINK_REGIONS"})


def is_jetlink_own(stream: str) -> bool:
    """Whether ``stream`` is one of jetlink's own (:data:`OWN_STREAMS`)."""
    return stream in OWN_STREAMS
_PLAIN = re.compile(r"^[-_=A-Za-z0-9]+$")


def key_for(mirror: str) -> str:
    """The bucket key of ``mirror``'s record."""
    if _PLAIN.match(mirror) and not mirror.startswith("="):
        return mirror
    return "=" + base64.urlsafe_b64encode(mirror.encode()).decode().rstrip("=")


@dataclass
class MirrorPositions:
    """One mirror's record: its origin's consumers when they were last read."""

    mirror: str
    origin_stream: str
    origin_where: dict[str, str]  # {"domain": "west"} or {"cluster": "west"}
    origin_last_seq: int | None
    origin_subjects: list[str] | None
    synced_ns: int
    positions: list[Position] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "mirror": self.mirror,
            "origin": {"stream": self.origin_stream, **self.origin_where},
            "origin_last_seq": self.origin_last_seq,
            "origin_subjects": self.origin_subjects,
            "synced": format_rfc3339_nano(self.synced_ns),
            "consumers": [{"name": p.consumer, "config": p.config, "ack_floor": p.ack_floor,
                           "delivered": p.delivered, "num_pending": p.num_pending}
                          for p in self.positions],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> MirrorPositions:
        """The record jetlink wrote; ValueError or TypeError for any field of another kind
        (a sequence that is no whole number from 0 to 2^63-1, a subject that is no string),
        which the readers say is not a record jetlink wrote."""
        from .fencing import record_seq

        synced = parse_rfc3339_nano(doc["synced"])
        origin = dict(doc.get("origin") or {})
        stream = str(origin.pop("stream", ""))
        last = doc.get("origin_last_seq")
        subjects = doc.get("origin_subjects")
        if subjects is not None and (not isinstance(subjects, list)
                                     or not all(isinstance(x, str) for x in subjects)):
            raise TypeError("origin_subjects")
        return cls(
            mirror=str(doc["mirror"]), origin_stream=stream,
            origin_where={k: str(v) for k, v in origin.items()},
            origin_last_seq=None if last is None else record_seq(last),
            origin_subjects=subjects, synced_ns=synced,
            positions=[Position(str(c["name"]), dict(c["config"]), record_seq(c["ack_floor"]),
                                record_seq(c["delivered"]),
                                record_seq(c.get("num_pending", 0)), synced)
                       for c in doc.get("consumers", [])])


def open_own_bucket(kv: KV, bucket: str, description: str, *, create: bool) -> KeyValue:
    """One of jetlink's own buckets (:data:`OWN_STREAMS`, history 1) of a side, made on first
    use when ``create`` (else the KV's not-found error is raised)."""
    try:
        return kv.open(bucket)
    except ApiError as err:
        if not create or err.err_code not in (10059, 10058):
            raise
    from ..config.kv import KeyValueConfig

    kv.create_bucket(KeyValueConfig(bucket=bucket, description=description, history=1))
    return kv.open(bucket)


def _decoded(mirror: str, value: bytes) -> MirrorPositions:
    """A positions record as jetlink wrote it; anything else (a value put by hand: not JSON,
    another shape, numbers past any sequence, nested past reason) is one JetlinkError
    saying what to do, never a traceback."""
    try:
        doc = json.loads(value)
    except ValueError:
        why = "not JSON"
    except RecursionError:
        why = "nested deeper than any record"
    else:
        try:
            return MirrorPositions.from_json(doc)
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError,
                RecursionError):
            why = "not the fields jetlink writes"
    raise JetlinkError(
        f"the consumer positions of mirror {mirror} in bucket {BUCKET} are not a record "
        f"jetlink wrote ({why}): run jetlink positions sync again", field="positions")


class PositionStore:
    """The positions bucket of one side, over core/kv.py's KV (either backend)."""

    def __init__(self, kv: KV) -> None:
        self.kv = kv
        self._bucket: KeyValue | None = None

    def _open(self, create: bool) -> KeyValue:
        if self._bucket is None:
            self._bucket = open_own_bucket(
                self.kv, BUCKET, "jetlink: consumer positions of mirrors' origins (jetlink "
                "positions sync)", create=create)
        return self._bucket

    def read(self, mirror: str) -> MirrorPositions | None:
        """The last record of ``mirror``, or None (no bucket, no record)."""
        try:
            entry = self._open(False).get(key_for(mirror))
        except ApiError as err:
            if err.err_code in (10037, 10059, 10058):  # no key / no bucket
                return None
            raise
        return _decoded(mirror, entry.value)

    def records(self) -> list[MirrorPositions]:
        try:
            bucket = self._open(False)
        except ApiError as err:
            if err.err_code in (10059, 10058):
                return []
            raise
        out = []
        for key in bucket.keys():
            try:
                value = bucket.get(key).value
            except ApiError as err:
                if err.err_code != 10037:  # deleted meanwhile
                    raise
                continue
            out.append(_decoded(key, value))
        return sorted(out, key=lambda r: r.mirror)

    def write(self, rec: MirrorPositions) -> int:
        data = json.dumps(rec.to_json(), separators=(",", ":")).encode()
        revision: int = self._open(True).put(key_for(rec.mirror), data)
        return revision


@dataclass
class SyncResult:
    """One mirror's outcome of a :func:`sync` pass."""

    mirror: str
    origin: str  # "ORDERS in domain west"
    status: str  # "synced" | "skipped"
    consumers: int = 0
    error: str = ""
    synced_ns: int | None = None
    last_synced_ns: int | None = None  # the record kept (status "skipped")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mirror": self.mirror, "origin": self.origin,
                               "status": self.status, "consumers": self.consumers}
        if self.synced_ns is not None:
            out["synced"] = format_rfc3339_nano(self.synced_ns)
        if self.last_synced_ns is not None:
            out["last_synced"] = format_rfc3339_nano(self.last_synced_ns)
        if self.error:
            out["error"] = self.error
        return out


def sync(site: Any, store: PositionStore, mirrors: Sequence[str] = ()) -> list[SyncResult]:
    """Read the durable consumers of every mirror's origin (of ``mirrors``: only those) on
    ``site`` (core/dr/rules.py Site) and write them to ``store``."""
    js = site.js
    if mirrors:  # each named one read by itself (a failback syncs one among thousands)
        infos = []
        for name in mirrors:
            info = js.stream_info(name)  # the server's 10059 for a stream that is not there
            if info.config.mirror is None or name == f"KV_{BUCKET}":
                raise JetlinkError(f"stream {name} is not a mirror", field="mirror")
            infos.append(info)
    else:
        infos = [i for i in js.streams() if i.config.mirror is not None
                 and i.config.name != f"KV_{BUCKET}"]
    out: list[SyncResult] = []
    cut_off = site.cut_off()  # this side partitioned: it reads no origin
    for info in infos:
        cfg = info.config
        facts, origin_js = site.origin(cfg, int(info.state.last_seq), count_pending=False)
        where = f"{facts.stream} in {facts.where}"
        if cut_off or not facts.reachable or origin_js is None:
            kept = store.read(cfg.name)
            out.append(SyncResult(cfg.name, where, "skipped",
                                  error=cut_off or facts.error or "",
                                  last_synced_ns=kept.synced_ns if kept else None,
                                  consumers=len(kept.positions) if kept else 0))
            continue
        try:
            consumers = origin_js.consumers(facts.stream)
        except JetlinkError as err:
            kept = store.read(cfg.name)
            out.append(SyncResult(cfg.name, where, "skipped", error=one_line(err),
                                  last_synced_ns=kept.synced_ns if kept else None))
            continue
        now = site.now_ns()
        rec = MirrorPositions(
            mirror=cfg.name, origin_stream=facts.stream,
            origin_where={facts.kind: facts.cluster}, origin_last_seq=facts.last_seq,
            origin_subjects=facts.subjects, synced_ns=now,
            positions=[Position.of_info(c, now) for c in consumers
                       if is_durable(c.config.to_json())])
        store.write(rec)
        out.append(SyncResult(cfg.name, where, "synced", len(rec.positions), synced_ns=now))
    return out
