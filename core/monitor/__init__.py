"""Monitoring checks (natscli's ``nats server check`` for streams, consumers and KV buckets):
the Result model and its exit codes (result.py), the four renderings (render.py), where the
thresholds come from (thresholds.py) and the three checks (stream.py, consumer.py, kv.py),
each a function over the JetStream or KV API of either backend.
"""

from __future__ import annotations

from .consumer import check_consumer
from .kv import check_kv
from .render import FORMATS, render
from .result import DEFAULT_NAMESPACE, EXIT_CODES, PerfDataItem, Result, Status
from .stream import check_stream
from .thresholds import META_PREFIX, ConsumerThresholds, StreamThresholds

__all__ = ["DEFAULT_NAMESPACE", "EXIT_CODES", "FORMATS", "META_PREFIX", "ConsumerThresholds",
           "PerfDataItem", "Result", "Status", "StreamThresholds", "check_consumer", "check_kv",
           "check_stream", "render"]
