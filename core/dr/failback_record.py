"""jetlink's own record of the failbacks in progress (core/dr/failback.py writes it): one
JSON document per promoted stream in the bucket :data:`BUCKET` of the promoted stream's
side. Read by the failback itself and by what must know a failback is under way (``dr
fence``, ``dr check``: core/dr/fence.py), below both."""

from __future__ import annotations

import json
from typing import Any

from ..errors import ApiError, JetlinkError
from .fencing import record_seq
from .positions import key_for, open_own_bucket

__all__ = ["BUCKET", "DONE", "FailbackStore", "stopped_without_stream", "under_way"]

BUCKET = "JETLINK_FAILBACK"
DONE = "done"  # the record's phase once the switch finished (what a re-run reports)


class FailbackStore:
    """jetlink's own record of failbacks in progress (bucket :data:`BUCKET`, one JSON
    document per promoted stream), over core/kv.py's KV of the promoted stream's side."""

    def __init__(self, kv: Any) -> None:
        self.kv = kv
        self._bucket: Any = None

    def _open(self, create: bool) -> Any:
        if self._bucket is None:
            self._bucket = open_own_bucket(
                self.kv, BUCKET, "jetlink: failbacks in progress (jetlink stream failback)",
                create=create)
        return self._bucket

    def read(self, stream: str) -> dict[str, Any] | None:
        try:
            entry = self._open(False).get(key_for(stream))
        except ApiError as err:
            if err.err_code in (10037, 10059, 10058):
                return None
            raise
        try:
            doc = json.loads(entry.value)
            if isinstance(doc, dict):
                if "promoted_last_seq" in doc:
                    record_seq(doc["promoted_last_seq"])
                if not isinstance(doc.get("mirror", {}), dict):
                    raise ValueError("mirror")
        except (ValueError, RecursionError):
            raise JetlinkError(f"the failback record of {stream} in bucket {BUCKET} is not a "
                               "record jetlink wrote", field="stream") from None
        return doc if isinstance(doc, dict) else None

    def write(self, stream: str, doc: dict[str, Any]) -> None:
        self._open(True).put(key_for(stream), json.dumps(doc, separators=(",", ":")).encode())


def under_way(kv: Any, stream: str) -> bool:
    """Whether a failback of the promoted stream ``stream`` began and did not finish (its
    record, in the KV ``kv`` of its side, not :data:`DONE`); a record jetlink did not
    write, or none: False."""
    try:
        rec = FailbackStore(kv).read(stream)
    except JetlinkError:
        return False
    return rec is not None and rec.get("phase") != DONE


def stopped_without_stream(kv: Any, present: set[str]) -> list[dict[str, Any]]:
    """The failbacks under way (records not :data:`DONE`) in the KV ``kv`` of a side whose
    promoted stream is not on that side now (``present``: its streams' names): a switch
    stopped between deleting it and creating it again as the mirror it was, so the side
    holds no copy of the origin. Their records; a record jetlink did not write is passed
    by (``dr check`` of the stream it names says so)."""
    try:
        bucket = open_own_bucket(kv, BUCKET, "", create=False)
        keys = bucket.keys()
    except JetlinkError:
        return []
    out = []
    for key in keys:
        try:
            doc = json.loads(bucket.get(key).value)
        except (JetlinkError, ValueError, RecursionError):
            continue
        if isinstance(doc, dict) and doc.get("phase") != DONE and \
                isinstance(doc.get("stream"), str) and doc["stream"] not in present:
            out.append(doc)
    return out
