"""How a replication agreement copies a message: the copy rules, defined once.

Every copy path reads this module (docs/replication.md, "The copy paths"): the pump's
per-message path (core/replication.py ``_store_all``) and its SQL path
(``_sql_copy_range``), the Spark-planned bulk jobs (sparkops/jobs.py ``mirror``, ``source``,
``_source_fast``, with the Spark forms of these rules in sparkops/rules.py) and the
driver-planned source job (sparkops/planned.py). The rules are nats-server 2.15's
(``stream.go``: ``processInboundMirrorMsg``, ``processInboundSourceMsg``,
``genSourceHeader``):

- Header lines stripped: a mirror drops the lines whose name starts ``Nats-Expected-`` or
  ``Nats-Batch-`` (``MIRROR_STRIP``); a source drops those and any ``Nats-Stream-Source``
  line (``SOURCE_STRIP``). A block left with no line is no header (``strip_lines``).
- Header added, sources only: ``Nats-Stream-Source: <value>`` as the block's last line, the
  value ``<origin> <origin seq> <filters> <dests> <origin subject> <identity>`` where
  ``<origin> <filters> <dests>`` is the agreement's iname (``source_value``). A message
  without headers gets the block ``NATS/1.0``, that line, and the blank line.
- Target subject (``target_subject``): the first of the agreement's transforms that matches
  (an empty result keeps the subject), then the target stream's own transform.
- Position: a mirror keeps the origin's sequences (gaps become deleted placeholders) and
  times (never going back); a source's messages take the target's next sequences and the
  copying step's time, several origins merged by ``merge_key``.
- Dedupe (``CopyRules.dedupe``): a sourced message whose ``Nats-Msg-Id`` (``dedupe_id``) the
  target saw within its duplicate window is skipped (it still moves the cursor); mirrors
  never dedupe (the server's ``!isMirror``). A bulk job runs at one instant: the first
  message of each id in the merge order is kept.
- Per-subject limit (``CopyRules.max_per``): per target subject, the newest
  ``max_msgs_per_subject`` stored messages stay. The pump's store applies it message by
  message; the bulk jobs cut each subject at once; the SQL path leaves a target with limits
  to the per-message path.
- Refusals: the pump stalls at a message the target refuses (the publish path's error) and
  retries it later, except a mirror's own DiscardNew limits: those drop the message
  (core/replication.py, as nats-server's processInboundMirrorMsg). A bulk job carries no
  per-message state: it refuses up front the targets whose rules need it
  (``bulk_target_refusal``) and the messages the pump would stall on or keep state for,
  naming the first one: ``message <seq> of <origin> <why>`` with ``REFUSED_TTL``,
  ``REFUSED_HEADERS``, ``REFUSED_ROLLUP``, ``refused_size``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from . import headers as H
from .agreements import iname_of, source_filters
from .errors import ApiError, nats_error
from .transform import compile_transform

if TYPE_CHECKING:
    from .config.stream import StreamConfig, StreamSource
    from .streams import StreamDef

__all__ = [
    "BULK_TARGET_REFUSED",
    "CopyRules",
    "Kind",
    "MIRROR_STRIP",
    "origin_read_refusal",
    "reads_through_durable",
    "REFUSED_HEADERS",
    "REFUSED_ROLLUP",
    "REFUSED_TTL",
    "SOURCE_BLOCK",
    "SOURCE_LINE",
    "SOURCE_STRIP",
    "bulk_target_refusal",
    "copy_rules",
    "dedupe_id",
    "merge_key",
    "parse_source_value",
    "refused_size",
    "source_header",
    "source_value",
    "source_value_parts",
    "strip_lines",
    "target_subject",
]

Kind = Literal["mirror", "source"]

# --- header lines ---------------------------------------------------------------------------
# A line is stripped when it starts with one of these (a name prefix, or a name and its ":").
MIRROR_STRIP: tuple[str, ...] = ("Nats-Expected-", "Nats-Batch-")
SOURCE_STRIP: tuple[str, ...] = (f"{H.STREAM_SOURCE}:", *MIRROR_STRIP)
_MIRROR_STRIP_B = tuple(p.encode() for p in MIRROR_STRIP)
_SOURCE_STRIP_B = tuple(p.encode() for p in SOURCE_STRIP)

# The line a source adds: this, the value, CRLF (the block's blank line follows).
SOURCE_LINE = f"{H.STREAM_SOURCE}: "
# The whole block of a sourced message that had no headers: this, the value, two CRLF.
SOURCE_BLOCK = H.HDR_LINE.decode() + SOURCE_LINE


def strip_lines(hdr: bytes | None, prefixes: Sequence[bytes]) -> bytes | None:
    """``hdr`` without the lines whose name starts with one of ``prefixes`` (every prefix
    starts ``Nats-``); None when no line remains, ``hdr`` itself when none was dropped."""
    if not hdr or b"Nats-" not in hdr:
        return hdr
    lines = hdr.split(b"\r\n")
    kept = [lines[0]] + [ln for ln in lines[1:] if not ln.startswith(tuple(prefixes))]
    if len(kept) == len(lines):
        return hdr
    out = b"\r\n".join(kept)
    return None if len(out) <= len(H.HDR_LINE) + 2 else out


def source_value_parts(iname: str, identity: str) -> tuple[str, str, str]:
    """The ``Nats-Stream-Source`` value of agreement ``iname`` around the origin sequence and
    subject: ``parts[0] + str(seq) + parts[1] + subject + parts[2]``."""
    name, filters, dests = iname.split(" ")
    return f"{name} ", f" {filters} {dests} ", f" {identity}"


def source_value(iname: str, seq: int | str, subject: str, identity: str) -> str:
    """``genSourceHeader``'s value: ``<origin> <seq> <filters> <dests> <subject> <identity>``
    (the origin's sequence and subject before any transform)."""
    head, mid, tail = source_value_parts(iname, identity)
    return f"{head}{seq}{mid}{subject}{tail}"


def parse_source_value(value: str) -> tuple[str, str] | None:
    """``(iname, origin sequence as text)`` of a ``Nats-Stream-Source`` value (the server's
    ``streamAndSeq``); None when it has fewer than five fields."""
    tokens = value.split(" ")
    if len(tokens) < 5:
        return None
    return f"{tokens[0]} {tokens[2]} {tokens[3]}", tokens[1]


def source_header(hdr: bytes | None, value: str) -> bytes:
    """The header block a sourced message is stored with: ``hdr`` without the
    ``SOURCE_STRIP`` lines, then ``Nats-Stream-Source: value`` last."""
    return H.append_header(strip_lines(hdr, _SOURCE_STRIP_B), H.STREAM_SOURCE, value)


def dedupe_id(hdr: bytes | None) -> str | None:
    """The id a sourced message is deduplicated by: its first ``Nats-Msg-Id`` value (the
    server's ``sliceHeader``); None when it has none or an empty one."""
    return H.header_value(hdr, H.MSG_ID) or None


def merge_key(ts: int, origin: str, iname: str, seq: int) -> tuple[int, str, str, int]:
    """The order several origins of one target are stored in: origin time, origin stream
    name, iname, origin sequence."""
    return (ts, origin, iname, seq)


def target_subject(subject: str, transforms: Sequence[Any], stream_transform: Any) -> str:
    """The subject a mirrored or sourced message is stored under: the first of the
    agreement's ``transforms`` (compiled, core.transform) that matches (an empty result keeps
    the subject), then the target stream's own transform (``stream_transform``, None: none).
    sparkops/rules.py ``apply_like_pump`` is its Spark form."""
    t = subject
    for tr in transforms:
        if tr.matches(subject):
            t = tr.apply(subject) or subject
            break
    if stream_transform is not None:
        t = stream_transform.apply(t) or t
    return t


# --- refusals -------------------------------------------------------------------------------
BULK_TARGET_REFUSED = "bulk jobs cannot fill this target: {why}; use `jetlink replicate`"
# Why a bulk job refuses a message: "message <seq> of <origin> <why>".
REFUSED_TTL = "carries Nats-TTL (per-message TTLs are not carried by bulk jobs)"
REFUSED_HEADERS = "has headers over 65535 bytes"
REFUSED_ROLLUP = "has an invalid Nats-Rollup value"


def refused_size(max_msg_size: int) -> str:
    """Why a bulk job refuses a message over the target's ``max_msg_size``."""
    return f"exceeds the target's max_msg_size {max_msg_size}"


def bulk_target_refusal(d: StreamDef) -> str | None:
    """Why a bulk job cannot fill target ``d`` (its rules need the pump's per-message
    state), as ``BULK_TARGET_REFUSED``; None when it can."""
    why = None
    if d.sealed:
        why = "the target is sealed"
    elif d.discard_new and (d.max_msgs or d.max_bytes or (d.max_per and d.discard_new_per)):
        why = "the target's limits discard new messages (the pump applies them one by one)"
    elif d.retention != "limits":
        why = f"the target's retention is {d.retention} (consumer interest decides storage)"
    elif d.allow_counter:
        why = "the target is a counter stream"
    elif d.sdm_ttl_s:
        why = "the target writes subject delete markers"
    return BULK_TARGET_REFUSED.format(why=why) if why else None


def reads_through_durable(src: StreamSource, retention: str) -> bool:
    """Whether an agreement reads its origin through a durable consumer (flow-control
    acked): one of the user's (``src.consumer``), or the one the server makes on a
    WorkQueue or Interest origin (the sourcing consumer "upgraded" to a durable); else it
    reads through the server's own push AckNone consumer."""
    return src.consumer is not None or retention in ("workqueue", "interest")


def origin_read_refusal(origin: StreamConfig, src: StreamSource) -> ApiError | None:
    """Why the server can not read agreement ``src``'s ``origin`` at all, else None. A
    mirror or source reads its origin through a consumer the server makes there, push and
    AckNone (stream.go ``setupMirrorConsumer`` / ``setupSourceConsumer``) unless it reads a
    durable one (:func:`reads_through_durable`). The origin's
    ``consumer_limits.max_ack_pending`` is that consumer's default (consumer.go
    ``setConsumerConfigDefaults``), and a push AckNone consumer may not have one
    (``checkConsumerCfg``): the create fails with 10082, and nothing is ever copied, the
    mirror's or source's error saying why."""
    if not reads_through_durable(src, origin.retention) \
            and origin.consumer_limits.max_ack_pending > 0:
        return nats_error("ConsumerMaxPendingAckPolicyRequired")
    return None


# --- one agreement --------------------------------------------------------------------------
@dataclass(frozen=True)
class CopyRules:
    """How one agreement copies into its target (build it with ``copy_rules``)."""

    kind: Kind
    iname: str
    filters: tuple[str, ...]  # the origin subjects selected (none, or ">": every subject)
    transforms: tuple[Any, ...]  # compiled (core.transform), first match wins
    stream_transform: Any  # the target's own transform (None: none)
    dedupe: bool  # Nats-Msg-Id duplicates skipped: a source into a target with a window
    max_per: int  # per target subject, the newest max_per stay (0: no limit)

    @property
    def strip(self) -> tuple[str, ...]:
        """The header line prefixes stripped (``MIRROR_STRIP`` / ``SOURCE_STRIP``)."""
        return MIRROR_STRIP if self.kind == "mirror" else SOURCE_STRIP

    @property
    def strip_bytes(self) -> tuple[bytes, ...]:
        return _MIRROR_STRIP_B if self.kind == "mirror" else _SOURCE_STRIP_B

    def target_subject(self, subject: str) -> str:
        return target_subject(subject, self.transforms, self.stream_transform)

    def source_value_parts(self, identity: str) -> tuple[str, str, str]:
        return source_value_parts(self.iname, identity)

    def source_value(self, seq: int | str, subject: str, identity: str) -> str:
        return source_value(self.iname, seq, subject, identity)


def copy_rules(kind: Kind, src: StreamSource, target: StreamDef, *,
               transforms: Sequence[Any] | None = None) -> CopyRules:
    """The copy rules of agreement ``(kind, src)`` into ``target`` (the target's compiled
    config). ``transforms``: the agreement's transforms already compiled (else compiled
    here)."""
    if transforms is None:
        transforms = [compile_transform(t.src or ">", t.dest) for t in src.subject_transforms]
    return CopyRules(
        kind=kind, iname=iname_of(src), filters=tuple(source_filters(src)),
        transforms=tuple(transforms), stream_transform=target.transform,
        dedupe=kind == "source" and bool(target.dup_window), max_per=target.max_per)
