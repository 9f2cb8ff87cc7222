"""Failback's second dataset: the old origin's messages at or below the promoted sequence that
the promoted stream does not hold.

A failback makes the old origin O a mirror of the promoted stream P: what O keeps is P's
copy (a mirror keeps its origin's sequences), so O's messages that P does not hold at their
sequence are removed with O, and held nowhere else. Above P's last sequence at the
promotion (L) they are the divergent tail (core/dr/failback.py). At or below L they are:

- O's messages older than P's first sequence: P's limits dropped them (a smaller
  ``max_msgs``, ``max_age``, ``max_bytes``), or it never copied them;
- O's messages at sequences inside P's range that P no longer holds: a KV mirror with a
  smaller history than its origin keeps one revision of a key where the origin keeps
  several; a message removed from P by hand.

They are selected by sequence from both streams' states (their first and last sequences
and the ``deleted`` lists of ``deleted_details``: the same request on nats-server and on the
embedded engine), over the range O will lose: from O's first sequence, or after the
messages the embedded engine keeps (core/dr/reuse.py, up to the divergence point), up to L.
A sequence both hold is P's copy of O's message and is not saved. They are written whole
(sequence, subject, headers, data, time) in the lake schema, as the tail is, to their own
dataset beside the tail's (:func:`unmatched_path`), and counted there before anything of O
is removed: rows, distinct sequences and the range must be exactly the selection.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..errors import JetlinkError
from .fence import unfenced_config

__all__ = ["SUFFIX", "Selection", "count_messages", "count_selection", "dataset_rows",
           "save_selection", "select", "unmatched_path"]

SUFFIX = "-unmatched"  # the dataset beside the tail's: <tail>-unmatched


def unmatched_path(tail: str) -> str:
    """Where the messages P does not hold go, beside the tail's dataset ``tail``:
    ``<tail>-unmatched``; a region's partition ``DIR/object=<name>`` has its own in
    ``DIR-unmatched/object=<name>`` (each directory one dataset, partitioned alike)."""
    tail = tail.rstrip("/")
    head, sep, base = tail.rpartition("/")
    if sep and base.startswith("object="):
        return f"{head}{SUFFIX}/{base}"
    return tail + SUFFIX


@dataclass(frozen=True)
class Selection:
    """O's messages in ``lo..hi`` that P does not hold: every one below ``first`` (P's first
    sequence) and those at the sequences ``gaps``; ``messages`` of them; ``older``: how many
    are below ``first``. ``origin`` and ``identity``: O's name and identity (its creation).
    ``key``: the selection named (a dataset of another stream, another incarnation of it or
    another selection is not this one: a resumed export must be the same)."""

    lo: int
    hi: int
    first: int
    gaps: frozenset[int]
    messages: int
    older: int
    origin: str = ""
    identity: str = ""

    @property
    def key(self) -> str:
        digest = hashlib.sha256(",".join(map(str, sorted(self.gaps))).encode()).hexdigest()
        return (f"not-held:{self.origin}:{self.identity}:{self.lo}-{self.hi}:"
                f"below-{self.first}:gaps-{digest[:16]}:messages-{self.messages}")

    def keep(self, seqs: Any) -> Any:
        """The mask of the selected rows of a batch's ``seq`` column."""
        import pyarrow as pa
        import pyarrow.compute as pc

        below = pc.less(seqs, pa.scalar(self.first, seqs.type))
        if not self.gaps:
            return below
        return pc.or_(below, pc.is_in(seqs, value_set=pa.array(sorted(self.gaps),
                                                               seqs.type)))

    def why(self, here: str) -> str:
        """Which of them, in words."""
        parts = []
        if self.older:
            parts.append(f"{self.older} older than {here}'s first sequence {self.first}")
        if self.gaps:
            parts.append(f"{len(self.gaps)} at sequences {here} no longer holds")
        return ", ".join(parts)


def select(ojs: Any, origin: str, pjs: Any, promoted: str, last: int, upto: int
           ) -> Selection | None:
    """The messages of ``origin`` (of ``ojs``) after ``upto`` and at most ``last`` that
    ``promoted`` (of ``pjs``) does not hold (the module's opening); None when there are
    none."""
    from ..agreements import identity

    oinfo = ojs.stream_info(origin, deleted_details=True)
    o = oinfo.state
    p = pjs.stream_info(promoted, deleted_details=True).state
    lo, hi = max(int(o.first_seq), upto + 1), min(last, int(o.last_seq))
    if not o.messages or lo > hi:
        return None
    # P holds s when first <= s <= its last sequence and s is not in its deleted list; an
    # empty P holds nothing
    first = int(p.first_seq) if p.messages else int(p.last_seq) + 1
    odel = {int(s) for s in (o.deleted or ()) if lo <= int(s) <= hi}
    top = min(hi, first - 1)
    older = (top - lo + 1) - sum(1 for s in odel if s <= top) if top >= lo else 0
    gaps = frozenset(int(s) for s in (p.deleted or ())
                     if max(lo, first) <= int(s) <= hi and int(s) not in odel)
    if not older and not gaps:
        return None
    return Selection(lo, hi, first, gaps, older + len(gaps), older, origin,
                     identity(oinfo.created_ns))


def dataset_rows(path: str, stream: str | None = None
                 ) -> tuple[int, int, int, int, dict[str, int]]:
    """(rows, distinct sequences, first, last, per-subject counts) of a dataset failback
    wrote, read back from its Parquet files; ``stream``: every row must be that stream's
    (a JetlinkError naming the other otherwise)."""
    import pyarrow.compute as pc

    from .. import lake

    fragments, schema = lake._dataset(path)
    rows = 0
    seqs: set[int] = set()
    subjects: dict[str, int] = {}
    batches = (b for frag in fragments
               for b in frag.to_batches(schema=schema, columns=["seq", "subject", "stream"]))
    for batch in batches:
        rows += batch.num_rows
        if stream is not None and batch.num_rows:
            others = set(pc.unique(batch.column(2)).to_pylist()) - {stream}
            if others:
                raise JetlinkError(f"the dataset {path} holds messages of stream "
                                   f"{sorted(others)[0]}, not of {stream}: nothing was "
                                   "deleted; run again with another --tail parquet:PATH",
                                   field="tail")
        seqs.update(batch.column(0).to_pylist())
        if batch.num_rows:
            counts = pc.value_counts(batch.column(1))
            for item in counts.to_pylist():
                subj = item["values"] or ""
                subjects[subj] = subjects.get(subj, 0) + int(item["counts"])
    return rows, len(seqs), min(seqs, default=0), max(seqs, default=0), subjects


def count_messages(js: Any, stream: str, lo: int, hi: int, keep: Any = None
                   ) -> tuple[int, int, int, dict[str, int]]:
    """(messages, first, last, per-subject counts) of ``stream``'s messages ``lo..hi`` as it
    holds them now, those ``keep`` masks when given (a dry run: read, nothing written)."""
    from .. import lake

    n = first = last = 0
    subjects: dict[str, int] = {}
    for batch in lake.iter_api_batches(js, stream, lo, hi):
        if keep is not None:
            batch = batch.filter(keep(batch.column("seq")))
        if not batch.num_rows:
            continue
        seqs = batch.column("seq").to_pylist()
        first, last, n = first or seqs[0], seqs[-1], n + len(seqs)
        for subj in batch.column("subject").to_pylist():
            subjects[subj or ""] = subjects.get(subj or "", 0) + 1
    return n, first, last, subjects


def count_selection(js: Any, origin: str, sel: Selection
                    ) -> tuple[int, int, int, dict[str, int]]:
    """:func:`count_messages` of the selection."""
    return count_messages(js, origin, sel.lo, sel.hi, sel.keep)


def save_selection(js: Any, origin: str, sel: Selection, path: str, ours: bool
                   ) -> tuple[int, int, int, dict[str, int]]:
    """The selection of ``origin`` written to ``path`` and counted there: (messages, first,
    last, per-subject counts). A dataset of the same selection already there (an earlier
    run's) is counted again, not written again; ``ours``: an earlier run wrote there (its
    dataset of another selection is replaced; anything else there is refused)."""
    from .. import lake

    way_out = (f": nothing of {origin} was deleted; run again with another --tail "
               "parquet:PATH (this dataset goes beside it, to PATH-unmatched)")

    def export(force: bool) -> None:
        try:
            lake.export_stream_api(js, origin, path, start_seq=sel.lo, last_seq=sel.hi,
                                   keep=sel.keep, selection=sel.key, force=force,
                                   config=unfenced_config)
        except OSError as exc:
            err = lake._os_error(exc, path, "cannot write")
            err.description += way_out
            raise err from None
        except lake.LakeError as err:  # another dataset, or other files, there
            err.description += way_out
            raise

    def selection_of() -> str | None:
        meta = lake.read_meta(path)
        return None if meta is None else str(meta.get("selection") or "")

    if selection_of() != sel.key:
        export(force=ours)  # an unfinished export of an earlier run resumes
        if selection_of() != sel.key:  # a finished one of another selection: replaced
            export(force=True)
    rows, distinct, first, last, subjects = dataset_rows(path, origin)
    if not (rows == distinct == sel.messages and sel.lo <= first and last <= sel.hi):
        raise JetlinkError(
            f"the messages of {origin} saved to {path} are not the {sel.messages} selected "
            f"in sequences {sel.lo}..{sel.hi} ({rows} rows, {distinct} sequences): nothing "
            f"was deleted; {origin} changed meanwhile (a message expired or was removed): "
            "run again", field="tail")
    return rows, first, last, subjects
