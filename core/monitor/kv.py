"""``server check kv``: a Key-Value bucket, as natscli checks it (jsm.go
``CheckKVBucketAndKey``), over the KV API (core/kv.py) of either backend.

The bucket must exist ("bucket B" is OK); its number of values is measured against
``--values-warn`` / ``--values-critical`` (-1: off): at or above them when critical >= warn,
at or below them when critical < warn (natscli's inversion); ``--key`` requires the key to
hold a value (a deleted or purged key is not found). The bucket's bytes and replicas follow
as perf data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ApiError, JetlinkError
from .result import PerfDataItem, Result, reason

if TYPE_CHECKING:  # pragma: no cover
    from ..kv import KV, KVStatus

__all__ = ["check_kv"]

BUCKET_NOT_FOUND = 10059
KEY_NOT_FOUND = 10037


def check_kv(open_kv: Callable[[], KV], bucket: str, *, key: str = "",
             values_warn: int = -1, values_critical: int = -1) -> Result:
    """The KV check of ``bucket``: what ``open_kv`` raises (an unreachable server) is a
    failed connection, a missing bucket a critical."""
    result = Result(name=bucket, check="kv")
    try:
        kv = open_kv()
    except JetlinkError as err:
        if not result.missing_target(err, "could not load bucket"):
            result.critical(f"connection failed: {reason(err)}")
        return result
    try:
        handle = kv.open(bucket)
    except ApiError as err:
        if err.err_code == BUCKET_NOT_FOUND:
            result.critical(f"bucket {bucket} not found")
        else:
            result.critical(f"could not load bucket: {reason(err)}")
        return result
    except JetlinkError as err:
        result.critical(f"could not load bucket: {reason(err)}")
        return result
    try:
        status = handle.status()
    except JetlinkError as err:
        result.ok(f"bucket {bucket}")
        result.critical(f"could not obtain bucket status: {reason(err)}")
        return result
    from ..kv import ERR_BAD_BUCKET

    if handle.kind == "bucket" and status.config.max_msgs_per_subject < 1:
        # (a bucket jetlink's own failover of an older KV mirror kept open: nats.go's
        # KeyValue, which natscli's check opens, refuses it, and so does every client of it)
        result.critical(f"could not load bucket: {ERR_BAD_BUCKET}")
        return result
    result.ok(f"bucket {bucket}")
    result.pd(PerfDataItem("values", status.values, max(values_warn, 0), max(values_critical, 0),
                           help="How many values are stored in the bucket"))
    if key:
        try:
            handle.get(key)
            result.ok(f"key {key} found")
        except ApiError as err:
            if err.err_code == KEY_NOT_FOUND:
                result.critical(f"key {key} not found")
            else:
                result.critical(f"key {key} not loaded: {reason(err)}")
        except JetlinkError as err:
            result.critical(f"key {key} not loaded: {reason(err)}")
    _values(result, status, values_warn, values_critical)
    if status.backing_store == "JetStream":
        result.pd(PerfDataItem("bytes", status.bytes, unit="B",
                               help="Bytes stored in the bucket"),
                  PerfDataItem("replicas", max(status.config.num_replicas, 1)))
    return result


def _values(result: Result, status: KVStatus, warn: int, crit: int) -> None:
    if warn <= -1 and crit <= -1:
        return
    values = status.values
    if crit < warn:  # fewer values is worse
        critical = crit > -1 and values <= crit
        warning = warn > -1 and values <= warn
    else:
        critical = crit > -1 and values >= crit
        warning = warn > -1 and values >= warn
    if critical:
        result.critical(f"{values} values")
    elif warning:
        result.warn(f"{values} values")
    else:
        result.ok(f"{values} values")
