"""A fenced stream's configuration (``jetlink dr fence``): the rule, defined once, for
the fence itself (core/dr/fence.py), the reports that recognise one and the topology
readers and planner that keep one (core/topology/stored.py, plan.py); and the same for a
promoted stream's marks (its promotion record, core/dr/rules.py, and the ``mirror_direct``
the server keeps from the mirror it was). It imports only the stream configuration, so
every layer that reads configs may use it."""

from __future__ import annotations

import json
from typing import Any

from ..config.stream import StreamConfig

__all__ = ["DIVERGENCE_KEY", "FENCE_KEY", "PROMOTED_KEY", "divergence", "fence_subject",
           "record_seq",
           "fenced_subjects", "promotion_doc", "with_fence", "with_promotion", "without_fence",
           "without_promotion"]

#: the metadata key of a fenced stream: the subjects it had (a JSON list)
FENCE_KEY = "jetlink.fenced_subjects"
#: the metadata key of a stream a promotion made from a mirror: the mirror it was (its
#: record, core/dr/rules.py ``_promoted_config``)
PROMOTED_KEY = "jetlink.promoted_mirror"
#: the metadata key of an old origin a failback created again: the sequences it held past
#: the divergence point, which it no longer holds (``{"after", "last", "at"}``): another
#: mirror that copied them keeps them, and ``dr check`` compares it there
DIVERGENCE_KEY = "jetlink.divergence"


def fence_subject(stream: str) -> str:
    """The one subject of a fenced stream: nobody publishes there, and it is the stream's
    own (a stream name is one token), so fenced streams never overlap."""
    return f"$JETLINK.fenced.{stream}"


def fenced_subjects(cfg: StreamConfig) -> list[str] | None:
    """The subjects a fenced stream had (None: not fenced: no record, or subjects other
    than :func:`fence_subject` since)."""
    text = (cfg.metadata or {}).get(FENCE_KEY)
    if not text or list(cfg.subjects) != [fence_subject(cfg.name)]:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, list) or not all(isinstance(s, str) for s in found):
        return None
    return found


def with_fence(cfg: StreamConfig) -> StreamConfig:
    """``cfg`` fenced: its subjects replaced by :func:`fence_subject`, the ones it had
    recorded under :data:`FENCE_KEY` (what ``dr fence`` stores; a failback gives them back)."""
    new = cfg.copy()
    new.metadata = {**(cfg.metadata or {}), FENCE_KEY: json.dumps(list(cfg.subjects))}
    new.subjects = [fence_subject(cfg.name)]
    return new


def without_fence(cfg: StreamConfig) -> StreamConfig:
    """``cfg`` with the fence undone (the recorded subjects back, the key dropped): what the
    stream is declared as; ``cfg`` itself when it is not fenced."""
    subjects = fenced_subjects(cfg)
    if subjects is None:
        return cfg
    new = cfg.copy()
    new.subjects = subjects
    new.metadata = {k: v for k, v in (cfg.metadata or {}).items() if k != FENCE_KEY}
    return new


def promotion_doc(cfg: StreamConfig) -> dict[str, Any] | None:
    """The promotion record under :data:`PROMOTED_KEY` as its JSON object (None: none, or
    not a JSON object): the one reading of it (core/dr/rules.py's records, the planner's
    hint)."""
    text = (cfg.metadata or {}).get(PROMOTED_KEY)
    if not text:
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def mirror_window(cfg: StreamConfig) -> int | None:
    """The duplicate_window the mirror had before its promotion, as the promotion record
    keeps it (None: a record from before it was kept, or none)."""
    doc = promotion_doc(cfg)
    window = None if doc is None else doc.get("duplicate_window")
    return window if isinstance(window, int) and not isinstance(window, bool) \
        and 0 <= window < 1 << 63 else None


def record_seq(value: Any) -> int:
    """A sequence of a record jetlink wrote (a whole number from 0 to 2^63-1, as SQLite and
    the server's int64 hold one); ValueError for anything else (a float, 1e400, a number
    past int64, text): the record is then not readable, never a crash further on."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise ValueError(f"not a sequence: {value!r:.40}")
    return value


def divergence(cfg: StreamConfig) -> tuple[int, int, str] | None:
    """The :data:`DIVERGENCE_KEY` record: (the divergence point, the last sequence the old
    origin held past it, when the failback replaced them); None: none, or not readable."""
    text = (cfg.metadata or {}).get(DIVERGENCE_KEY)
    if not text:
        return None
    try:
        doc = json.loads(text)
        after, last = record_seq(doc["after"]), record_seq(doc["last"])
        return (after, last, str(doc.get("at") or "")) if 0 <= after < last else None
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


def without_promotion(cfg: StreamConfig) -> StreamConfig:
    """``cfg`` as a stream of its own is declared: without jetlink's promotion record and
    without the ``mirror_direct`` the server keeps from the mirror it was (a create refuses
    it without a mirror: 10052), and without a failback's divergence record; ``cfg`` itself
    when it has none of them (a mirror keeps its ``mirror_direct``)."""
    meta = cfg.metadata or {}
    promoted = cfg.mirror is None and (PROMOTED_KEY in meta or cfg.mirror_direct)
    if not promoted and DIVERGENCE_KEY not in meta:
        return cfg
    new = cfg.copy()
    dropped = {DIVERGENCE_KEY}
    if promoted:
        new.mirror_direct = False
        dropped.add(PROMOTED_KEY)
    new.metadata = {k: v for k, v in meta.items() if k not in dropped}
    return new


def with_promotion(cfg: StreamConfig, stored: StreamConfig) -> StreamConfig:
    """An update ``cfg`` of the promoted stream ``stored`` that keeps its marks (the
    promotion record a failback reads, the ``mirror_direct`` the server kept, a failback's
    divergence record ``dr check`` reads): what a topology apply sends, as it keeps a
    fence. A mirror keeps only the divergence record."""
    meta = stored.metadata or {}
    promoted = cfg.mirror is None and stored.mirror is None
    keys = (DIVERGENCE_KEY, PROMOTED_KEY) if promoted else (DIVERGENCE_KEY,)
    kept = {k: meta[k] for k in keys if k in meta}
    if not kept and not (promoted and stored.mirror_direct):
        return cfg
    new = cfg.copy()
    if promoted:
        new.mirror_direct = stored.mirror_direct
    if kept:
        new.metadata = {**(cfg.metadata or {}), **kept}
    return new
