"""A source job planned on the driver from the origins' Parquet columns: one Spark pass.

When every origin of a source job is a Parquet dataset on the local filesystem (``parquet:``
with a ``file:`` path) and the target's limits need only whether a message dies (the targets
``jobs._source_fast`` takes), the driver reads the narrow columns the rules look at (seq, ts,
subject, headers; the payload's lengths only under max_msg_size) with pyarrow, partition by
partition as Spark will read them, and decides every row with core's own definitions (the
agreement's copy rules, core/copyrules.py):

- the agreement's start options and subject filters (core ``SubjectFilter``), the target
  subject (core.copyrules ``target_subject``, once per distinct subject);
- the ``Nats-Msg-Id`` duplicates (core.copyrules ``dedupe_id``: the first line named
  ``Nats-Msg-Id``; the first message of each id in the merge order is kept);
- the refusals (``Nats-TTL``, headers over 64 KiB, max_msg_size: the first offending message
  in the merge order is named, as ``_source_fast`` does; the written header's length from
  core.copyrules ``source_header`` where a line is stripped);
- the per-subject limit: per target subject, all but the newest ``max_msgs_per_subject``
  stored messages die.

Spark then reads the whole rows once and needs, per row, one byte (0 stored, 1 never stored,
2 stored then removed by the per-subject limit), per partition the count of stored messages
before it (its rows' sequences follow from their order inside the partition), and the subject
map: no grouped pass, no join, no sort. The sequences hold only when each partition holds a
contiguous run of the merge order (origin time, origin, agreement, origin sequence), as a
dataset written in sequence order does; a guard fails the job rather than write a row outside
the range its partition was counted on.

Which rows a partition reads is Spark's split planning: its file splits (from the query plan)
and, inside a split, the row groups whose midpoint falls in it (Parquet's rule). Anything else
(another filesystem, a plan that is not a bare file scan, partitions out of order, over
``MAX_ROWS`` rows, a subject that is not UTF-8) returns None: the caller plans with Spark.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jetlink.core import copyrules as C
from jetlink.core import headers as H
from jetlink.core.clock import parse_rfc3339_nano
from jetlink.core.streams import MAX_HEADER_SIZE, StreamDef
from jetlink.core.subjects import SubjectFilter

from .limits import _SHIFT, LimitError

MAX_ROWS = 32_000_000  # rows planned on the driver at most (one byte each goes into the plan)
KEEP, GONE, CUT = 0, 1, 2  # a row: stored / never stored / stored, then cut by the limit
_MSG_ID = f"\r\n{H.MSG_ID}:".encode()
_TTL = f"\r\n{H.MSG_TTL}:".encode()
_STRIP = tuple(f"\r\n{p}".encode() for p in C.SOURCE_STRIP)
_SS_LINE = len(C.SOURCE_LINE.encode()) + 2  # the line's name and its CRLF


# --------------------------------------------------------------------------------------------
# which rows each Spark partition reads
# --------------------------------------------------------------------------------------------
def scan_splits(df: Any) -> list[list[tuple[str, int, int]]] | None:
    """Per partition of ``df`` (a bare Parquet scan), its file splits as (local path, start,
    length), in the order the partition reads them; None when ``df`` is anything else."""
    try:
        plan = df._jdf.queryExecution().sparkPlan()
        if plan.getClass().getSimpleName() != "FileSourceScanExec":
            return None
        if plan.dataFilters().size() or plan.partitionFilters().size():
            return None
        out = []
        for part in plan.inputRDD().partitions():
            files = []
            for f in part.files():
                uri = f.toPath().toUri()
                if uri.getScheme() not in (None, "file"):
                    return None
                files.append((str(uri.getPath()), int(f.start()), int(f.length())))
            out.append(files)
        return out
    except Exception:  # noqa: BLE001 - not a plan this module knows: Spark plans instead
        return None


def split_row_groups(meta: Any, start: int, length: int) -> list[int]:
    """The row groups of a Parquet file (pyarrow FileMetaData) a split [start, start+length)
    reads: those whose midpoint (first page's offset + half the compressed size) is in it."""
    out = []
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        c0 = rg.column(0)
        at = c0.data_page_offset
        if c0.has_dictionary_page and 0 < c0.dictionary_page_offset < at:
            at = c0.dictionary_page_offset
        size = sum(rg.column(i).total_compressed_size for i in range(rg.num_columns))
        if start <= at + size // 2 < start + length:
            out.append(g)
    return out


# --------------------------------------------------------------------------------------------
# the plan
# --------------------------------------------------------------------------------------------
@dataclass
class _Origin:
    """One origin as planned: its agreement and what its rows map to."""

    k: int
    name: str
    identity: str
    rules: C.CopyRules  # the agreement's copy rules into the target
    pairs: dict[str, str] = field(default_factory=dict)  # kept origin subject -> target

    @property
    def iname(self) -> str:
        return self.rules.iname

    @property
    def transforms(self) -> list[Any]:
        return list(self.rules.transforms)


@dataclass
class Plan:
    """What the Spark pass needs (see the module doc)."""

    codes: bytes | None  # a byte per row, partitions one after the other (None: all KEEP)
    bases: list[int]  # per partition: its first row's index in ``codes``
    offsets: list[int]  # per partition: stored messages before it in the merge order
    ranges: list[tuple[int, int, int]]  # per partition: (origin index, lowest, highest seq)
    in_order: bool  # the partitions, in index order, are in the merge order
    strip: bool  # a stored message's header holds a line the source rules remove
    origins: list[_Origin]
    rows_out: int  # messages written
    stored: int  # messages given a sequence (written, or cut by the per-subject limit)
    gone: bool  # some rows are never stored
    cut: bool  # some rows are cut by the per-subject limit


def _read(splits: list[list[tuple[str, int, int]]], columns: list[str]) -> list[Any] | None:
    """Per partition, its rows' ``columns`` as one pyarrow table (None: over MAX_ROWS)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files: dict[str, Any] = {}
    want: list[list[tuple[Any, list[int]]]] = []
    total = 0
    for part in splits:
        segs = []
        for path, start, length in part:
            pf = files.get(path)
            if pf is None:
                pf = files[path] = pq.ParquetFile(path, read_dictionary=["subject"])
            groups = split_row_groups(pf.metadata, start, length)
            if groups:
                segs.append((pf, groups))
                total += sum(pf.metadata.row_group(g).num_rows for g in groups)
        want.append(segs)
    if total > MAX_ROWS:
        return None
    schema = None
    out = []
    for segs in want:
        tables = [pf.read_row_groups(groups, columns=columns) for pf, groups in segs]
        if tables:
            schema = tables[0].schema
        out.append(tables)
    if schema is None:  # no rows anywhere
        return [None] * len(out)
    return [pa.concat_tables(t).combine_chunks() if t else schema.empty_table() for t in out]


def _core_msg_id(hdr: bytes) -> bytes | None:
    """core.copyrules' ``dedupe_id`` of a block, as bytes (None: none, or empty)."""
    v = C.dedupe_id(hdr)
    return v.encode("utf-8", "surrogateescape") if v else None


_ID_BLOCK = f"{H.HDR_LINE.decode()}{H.MSG_ID}: "
_ID_RE = f"\r\n{H.MSG_ID}: *(?P<v>[^\r\n]*)"


def msg_ids(hdrs: Any) -> Any:
    """The ``Nats-Msg-Id`` of each header block (pyarrow binary array) as a binary array
    (null: none, or empty), by core.headers' rule (the first line named so, spaces before
    the value skipped, to the end of the line). Blocks of that one line (``NATS/1.0``, the id
    line, the blank line) are cut by pyarrow; blocks whose CR and LF come only as line ends
    go through one regular expression (the first match is the first such line); only the
    others (a CR or LF inside a value) through core itself."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    count = pc.count_substring
    n = len(_ID_BLOCK)
    lone = pc.fill_null(pc.and_(pc.and_(
        pc.starts_with(hdrs, _ID_BLOCK), pc.ends_with(hdrs, "\r\n\r\n")), pc.and_(
        pc.equal(count(hdrs, "\r\n"), 3),
        pc.invert(pc.starts_with(pc.binary_slice(hdrs, n, n + 1), " ")))), True)
    vals = pc.binary_slice(hdrs, n, -4)
    rest = np.nonzero(~lone.to_numpy(zero_copy_only=False))[0]
    if len(rest):
        others = hdrs.take(pa.array(rest))
        lines = count(others, "\r\n")
        clean = pc.and_(pc.equal(count(others, "\r"), lines),
                        pc.equal(count(others, "\n"), lines)).to_numpy(zero_copy_only=False)
        got = np.empty(len(rest), object)
        got[clean] = pc.extract_regex(others.filter(pa.array(clean)), _ID_RE).field(
            "v").to_pylist()
        odd = np.nonzero(~clean)[0]
        got[odd] = [_core_msg_id(h) for h in others.take(pa.array(odd)).to_pylist()]
        mask = np.zeros(len(hdrs), bool)
        mask[rest] = True
        filled = np.empty(len(hdrs), object)
        filled[rest] = got
        vals = pc.if_else(pa.array(mask), pa.array(filled, pa.binary()), vals)
    return pc.if_else(pc.equal(pc.binary_length(vals), 0), pa.scalar(None, pa.binary()), vals)


def plan_source(origins: Sequence[Any], splits: list[list[list[tuple[str, int, int]]]],
                d: StreamDef, *, max_msg_size: bool) -> Plan | None:
    """The plan of a source job over ``origins`` (jobs.Origin) whose partitions read
    ``splits`` (per origin, ``scan_splits``); raises ``LimitError`` for a
    message the pump would stall on. None: not plannable here (see the module doc)."""
    import numpy as np

    columns = ["seq", "ts", "subject", "headers"] + (["data"] if max_msg_size else [])
    read = _read_origins(origins, splits, d, columns)
    if read is None:
        return None
    planned, parts = read
    porder = _merge_order(parts, planned)
    if porder is None:
        return None
    rows = _Rows(parts, porder)
    hdrs = _HeaderBlocks(parts, rows)
    if planned[0].rules.dedupe:  # (every origin's: the target's duplicate window)
        _drop_duplicates(rows, hdrs)
    idx, _hs = hdrs.stored_with(_TTL)
    if len(idx):
        _refuse(parts, rows, planned, idx, C.REFUSED_TTL)
    odd, _h = hdrs.stored_with(_STRIP)  # stored messages with a line the source rules remove
    _check_header_sizes(parts, rows, planned, odd, d, max_msg_size)
    stored = rows.codes == KEEP
    offsets, n_stored = _offsets(parts, stored, porder)
    cut = _cut_per_subject(rows, stored, planned[0].rules.max_per, len(parts.tnames))
    gone = bool((rows.codes == GONE).any())
    rows_out = n_stored - int(np.count_nonzero(rows.codes == CUT))
    return Plan(rows.codes.tobytes() if (gone or cut) else None, parts.bases, offsets,
                _ranges(parts), porder == sorted(porder), bool(len(odd)), planned, rows_out,
                n_stored, gone, cut)


@dataclass
class _Parts:
    """The partitions of the union (the origins' partitions one after the other), as read."""

    tables: list[Any] = field(default_factory=list)  # per partition: its columns (None: empty)
    origin: list[int] = field(default_factory=list)  # per partition: its origin's index
    # per partition: target subject id per row (-1: not kept)
    tid: list[Any] = field(default_factory=list)
    tnames: dict[str, int] = field(default_factory=dict)  # target subject -> id
    sizes: list[int] = field(default_factory=list)  # per partition: its rows
    bases: list[int] = field(default_factory=list)  # per partition: its first row's index
    total: int = 0  # rows of the union

    def lay_out(self) -> None:
        """Each partition's size and first row's index, once every origin is read."""
        self.sizes = [0 if tb is None else tb.num_rows for tb in self.tables]
        self.bases = [0] * len(self.tables)
        at = 0
        for p, size in enumerate(self.sizes):
            self.bases[p] = at
            at += size
        self.total = at


def _read_origins(origins: Sequence[Any], splits: list[list[list[tuple[str, int, int]]]],
                  d: StreamDef, columns: list[str]) -> tuple[list[_Origin], _Parts] | None:
    """Each origin's agreement, and the partitions' rows with their target subjects (the
    filters and the start options applied); None: a split over MAX_ROWS or a subject that
    is not UTF-8."""
    import numpy as np

    planned: list[_Origin] = []
    parts = _Parts()
    for k, o in enumerate(origins):
        src = o.src
        tables = _read(splits[k], columns)
        if tables is None:
            return None
        rules = C.copy_rules("source", src, d)
        og = _Origin(k, src.name, o.identity, rules)
        planned.append(og)
        filters = list(rules.filters)
        match = None if not filters or ">" in filters else SubjectFilter(filters).matches
        start_seq = _start_seq(src, tables)
        subjects = _SubjectIds(og, match, parts.tnames)
        for tb in tables:
            parts.origin.append(k)
            if tb is None or not tb.num_rows:
                parts.tables.append(None)
                parts.tid.append(np.empty(0, np.int32))
                continue
            tid = _target_ids(tb, subjects)
            if tid is None:
                return None
            if start_seq:
                seq = tb.column("seq").to_numpy()
                tid = np.where(seq >= start_seq, tid, -1) if start_seq > 0 else np.full_like(
                    tid, -1)
            parts.tables.append(tb)
            parts.tid.append(tid)
    parts.lay_out()
    return planned, parts


def _start_seq(src: Any, tables: list[Any]) -> int:
    """The first origin sequence the agreement copies (0: from the first; -1: nothing, its
    start time is after every message)."""
    import pyarrow.compute as pc

    start_seq: int = src.opt_start_seq if src.opt_start_seq > 0 else 0
    if not start_seq and src.opt_start_time:
        t = parse_rfc3339_nano(src.opt_start_time)
        firsts = [pc.min(pc.filter(tb.column("seq"), pc.greater_equal(tb.column("ts"), t)))
                  .as_py() for tb in tables if tb is not None and tb.num_rows]
        firsts = [f for f in firsts if f is not None]
        start_seq = min(firsts) if firsts else -1  # -1: nothing at or after that time
    return start_seq


class _SubjectIds:
    """An origin's distinct subjects as mapped so far: each one's target subject id in
    ``tnames`` (-1: filtered out), each subject mapped once (``og.pairs``). A partition's
    dictionary is looked up in the subjects seen (pyarrow ``index_in``): only its new ones
    go through Python (the bench's 5 partitions of the same 10,000 subjects: one)."""

    def __init__(self, og: _Origin, match: Any, tnames: dict[str, int]) -> None:
        import numpy as np
        import pyarrow as pa

        self.og, self.match, self.tnames = og, match, tnames
        self.seen = pa.array([], pa.string())
        self.ids = np.empty(0, np.int32)

    def lut(self, dictionary: Any) -> Any:
        """Per entry of ``dictionary`` (a string array), its target subject id; None: a
        subject not UTF-8."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        dictionary = dictionary.cast(pa.string())
        at = pc.index_in(dictionary, value_set=self.seen).to_numpy(zero_copy_only=False)
        new = np.nonzero(np.isnan(at))[0] if at.dtype.kind == "f" else np.empty(0, np.int64)
        out = np.empty(len(dictionary), np.int32)
        known = np.setdiff1d(np.arange(len(dictionary)), new, assume_unique=True)
        out[known] = self.ids[at[known].astype(np.int64)]
        if len(new):
            fresh = dictionary.take(pa.array(new))
            try:
                names = fresh.to_pylist()
            except UnicodeDecodeError:
                return None
            mapped = np.empty(len(names), np.int32)
            for i, s in enumerate(names):
                if s is None or (self.match is not None and not self.match(s)):
                    mapped[i] = -1
                else:
                    tsubj = self.og.rules.target_subject(s)
                    self.og.pairs[s] = tsubj
                    mapped[i] = self.tnames.setdefault(tsubj, len(self.tnames))
            out[new] = mapped
            self.seen = pa.concat_arrays([self.seen, fresh.cast(pa.string())])
            self.ids = np.concatenate([self.ids, mapped])
        return out


def _target_ids(tb: Any, subjects: _SubjectIds) -> Any:
    """Per row of ``tb``, the id of its target subject (-1: filtered out); None: a subject
    not UTF-8."""
    import numpy as np

    col = tb.column("subject")
    if not col.num_chunks:
        return np.empty(0, np.int32)
    lut = subjects.lut(col.chunk(0).dictionary)
    if lut is None:
        return None
    sidx = col.chunk(0).indices.to_numpy(zero_copy_only=False)
    tid = lut[sidx] if len(sidx) else sidx.astype(np.int32)
    if col.null_count:
        tid = np.where(col.chunk(0).is_null().to_numpy(zero_copy_only=False), -1, tid)
    return tid


def _merge_order(parts: _Parts, planned: list[_Origin]) -> list[int] | None:
    """The partitions holding rows in the merge order: each sorted by (origin time, origin
    sequence) inside, and in sequence one after the other by (time, origin, agreement,
    sequence). None: a partition out of order inside, or two overlapping (Spark plans: a
    sort)."""
    import numpy as np

    keys = []
    for p, tb in enumerate(parts.tables):
        if not parts.sizes[p]:
            continue
        ts = tb.column("ts").to_numpy()
        seq = tb.column("seq").to_numpy()
        if tb.column("ts").null_count or tb.column("seq").null_count:
            return None
        if parts.sizes[p] > 1:
            step = ts[1:] - ts[:-1]
            if step.min() < 0:
                return None
            tie = np.nonzero(step == 0)[0]
            if len(tie) and not bool(np.all(seq[tie + 1] > seq[tie])):
                return None
        o = planned[parts.origin[p]]
        keys.append(((int(ts[0]), o.name, o.iname, int(seq[0])),
                     (int(ts[-1]), o.name, o.iname, int(seq[-1])), p))
    keys.sort()
    for a, b in zip(keys, keys[1:], strict=False):
        if not a[1] < b[0]:
            return None  # partitions overlap in the merge order: Spark plans (a sort)
    return [p for _lo, _hi, p in keys]


class _Rows:
    """Every row of the union by its index (partitions one after the other): its code
    (KEEP, GONE, CUT), its target subject id, its partition and its merge position."""

    def __init__(self, parts: _Parts, porder: list[int]) -> None:
        import numpy as np

        mstart = {}  # partition -> merge position of its first row
        at = 0
        for p in porder:
            mstart[p] = at
            at += parts.sizes[p]
        self.codes = np.zeros(parts.total, np.uint8)
        self.tid = np.full(parts.total, -1, np.int32)
        for p in range(len(parts.tables)):
            if parts.sizes[p]:
                self.tid[parts.bases[p]:parts.bases[p] + parts.sizes[p]] = parts.tid[p]
        self.codes[self.tid < 0] = GONE
        self.filled = [p for p in range(len(parts.tables)) if parts.sizes[p]]
        self.f_bases = np.array([parts.bases[p] for p in self.filled], np.int64)
        self.f_shift = np.array([mstart[p] - parts.bases[p] for p in self.filled], np.int64)

    def part_of(self, rows: Any) -> Any:
        """The index in ``filled`` of the partition of rows (indexes)."""
        import numpy as np

        return np.searchsorted(self.f_bases, rows, side="right") - 1

    def mpos_of(self, rows: Any) -> Any:
        """The merge position of rows (indexes): partitions are runs of the merge order."""
        return rows + self.f_shift[self.part_of(rows)]


class _HeaderBlocks:
    """The rows with a header block, and their blocks (few, usually): every header rule
    reads only these."""

    def __init__(self, parts: _Parts, rows: _Rows) -> None:
        import numpy as np
        import pyarrow as pa

        blocks = []
        for p, tb in enumerate(parts.tables):
            col = tb.column("headers") if parts.sizes[p] else None
            if col is None or col.null_count == parts.sizes[p]:
                continue
            w = np.nonzero(col.is_valid().to_numpy(zero_copy_only=False))[0]
            blocks.append((parts.bases[p] + w, col.take(pa.array(w)).combine_chunks()))
        self.rows = rows
        self.b_rows = np.concatenate([r for r, _h in blocks]) if blocks else np.empty(0, np.int64)
        self.b_hdrs = pa.concat_arrays([h for _r, h in blocks]) if blocks else pa.array(
            [], pa.binary())

    def stored_with(self, needle: bytes | tuple[bytes, ...]) -> tuple[Any, Any]:
        """The rows stored (indexes) whose header holds ``needle`` (or one of them), and
        their headers."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        hit = pa.array(np.zeros(len(self.b_hdrs), bool))
        for n in (needle,) if isinstance(needle, bytes) else needle:
            hit = pc.or_(hit, pc.match_substring(self.b_hdrs, n.decode()))  # (a regex: 10x slower)
        w = np.nonzero(hit.to_numpy(zero_copy_only=False))[0]
        w = w[self.rows.codes[self.b_rows[w]] == KEEP]
        return self.b_rows[w], self.b_hdrs.take(pa.array(w, pa.int64()))


def _drop_duplicates(rows: _Rows, hdrs: _HeaderBlocks) -> None:
    """Nats-Msg-Id duplicates: the first message of each id in the merge order is kept,
    the others never stored."""
    import numpy as np
    import pyarrow as pa

    idx, hs = hdrs.stored_with(_MSG_ID)
    if not len(idx):
        return
    order = np.argsort(rows.mpos_of(idx), kind="stable")
    idx = idx[order]
    ids = msg_ids(hs.take(pa.array(order)))
    has = ids.is_valid().to_numpy(zero_copy_only=False)
    idx = idx[has]
    n = ids.filter(pa.array(has)).dictionary_encode().indices.to_numpy(zero_copy_only=False)
    # dictionary_encode numbers values as they first appear: a row repeats an id when its
    # number is not above every number before it
    if len(n):
        seen = np.concatenate([[-1], np.maximum.accumulate(n)[:-1]])
        rows.codes[idx[n <= seen]] = GONE


def _refuse(parts: _Parts, rows: _Rows, planned: list[_Origin], idx: Any, what: str) -> None:
    """Raise the refusal ``what`` of the first of the messages ``idx`` in the merge order."""
    import numpy as np

    r = int(idx[np.argmin(rows.mpos_of(idx))])
    p = rows.filled[int(rows.part_of(np.array([r]))[0])]
    seq = int(parts.tables[p].column("seq")[r - parts.bases[p]].as_py())
    raise LimitError(f"message {seq} of {planned[parts.origin[p]].name} {what}")


def _check_header_sizes(parts: _Parts, rows: _Rows, planned: list[_Origin], odd: Any,
                        d: StreamDef, max_msg_size: bool) -> None:
    """Refuse a stored message whose written header is over 64 KiB, or (``max_msg_size``)
    whose header or message is over the target's max_msg_size. The written header's length:
    the origin's block without its last CRLF (or NATS/1.0 and CRLF), then
    "Nats-Stream-Source: <value>" and two CRLF; for the rows ``odd`` (a line the source rules
    remove), the exact block (core's rules)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    def value(o: _Origin, seq: Any, subj: Any) -> str:  # what Nats-Stream-Source says
        return o.rules.source_value(seq, subj, o.identity)

    fixed = [len(value(o, "", "").encode()) + _SS_LINE + 2 for o in planned]
    limit = min(MAX_HEADER_SIZE, d.max_msg_size) if max_msg_size else MAX_HEADER_SIZE
    powers = np.array([10 ** i for i in range(1, 19)], np.int64)
    big, bad = [], []
    for p, tb in enumerate(parts.tables):
        size, base = parts.sizes[p], parts.bases[p]
        if not size:
            continue
        hl = pc.fill_null(pc.binary_length(tb.column("headers")), 0).to_numpy(
            zero_copy_only=False)
        col = tb.column("subject").chunk(0)
        sl = pc.fill_null(pc.binary_length(col.dictionary), 0).to_numpy(zero_copy_only=False)
        if not max_msg_size and int(hl.max()) + int(sl.max(initial=0)) \
                + fixed[parts.origin[p]] + 20 <= limit:
            continue  # no header of this partition can come near the limit
        seq = tb.column("seq").to_numpy()
        hlen = np.where(hl > 2, hl - 2, 10) + fixed[parts.origin[p]] \
            + np.searchsorted(powers, seq, side="right") + 1 \
            + sl[col.indices.fill_null(0).to_numpy(zero_copy_only=False)]
        mine = odd[(odd >= base) & (odd < base + size)] - base
        if len(mine):
            o = planned[parts.origin[p]]
            sub = tb.take(pa.array(mine))
            for r, subj, hb, sq in zip(mine, sub.column("subject").to_pylist(),
                                       sub.column("headers").to_pylist(),
                                       sub.column("seq").to_pylist(), strict=True):
                hlen[r] = len(C.source_header(hb, value(o, sq, subj)))
        stored_here = rows.codes[base:base + size] == KEEP
        big.append(base + np.nonzero(stored_here & (hlen > MAX_HEADER_SIZE))[0])
        if max_msg_size:
            ml = pc.fill_null(pc.binary_length(tb.column("data")), 0).to_numpy(
                zero_copy_only=False)
            bad.append(base + np.nonzero(stored_here & (
                (hlen > d.max_msg_size) | (ml > d.max_msg_size - hlen)))[0])
    for what, found in ((C.REFUSED_HEADERS, big), (C.refused_size(d.max_msg_size), bad)):
        idx = np.concatenate(found) if found else np.empty(0, np.int64)
        if len(idx):
            _refuse(parts, rows, planned, idx, what)


def _offsets(parts: _Parts, stored: Any, porder: list[int]) -> tuple[list[int], int]:
    """Per partition, the stored messages before it in the merge order (its rows'
    sequences follow), and the messages stored in all."""
    import numpy as np

    offsets = [0] * len(parts.tables)
    at = 0
    for p in porder:
        offsets[p] = at
        at += int(np.count_nonzero(stored[parts.bases[p]:parts.bases[p] + parts.sizes[p]]))
    return offsets, at


def _cut_per_subject(rows: _Rows, stored: Any, max_per: int, nt: int) -> bool:
    """The per-subject limit: per target subject (``nt`` of them), all but its newest
    ``max_per`` stored messages are CUT; whether any is."""
    import numpy as np

    if not max_per:
        return False
    t_stored = np.where(stored, rows.tid, nt)  # nt: not stored
    counts = np.bincount(t_stored, minlength=nt + 1)[:nt]
    hot = counts > max_per
    if not hot.any():
        return False
    idx = np.nonzero(np.append(hot, False)[t_stored])[0]
    t = rows.tid[idx]
    order = np.lexsort((rows.mpos_of(idx), t))
    idx, t = idx[order], t[order]
    first = np.searchsorted(t, t, side="left")
    rank = np.arange(len(idx)) - first
    dies = rank < (counts[t] - max_per)
    rows.codes[idx[dies]] = CUT
    return bool(dies.any())


def _ranges(parts: _Parts) -> list[tuple[int, int, int]]:
    """Per partition: (origin index, lowest, highest origin sequence); (k, 1, 0) empty."""
    import pyarrow.compute as pc

    ranges = []
    for p in range(len(parts.tables)):
        if parts.sizes[p]:
            seq = parts.tables[p].column("seq")
            ranges.append((parts.origin[p], int(pc.min(seq).as_py()), int(pc.max(seq).as_py())))
        else:
            ranges.append((parts.origin[p], 1, 0))
    return ranges


# --------------------------------------------------------------------------------------------
# the Spark pass
# --------------------------------------------------------------------------------------------
def _per_partition(values: Sequence[int], pid: Any) -> Any:
    """The value of the row's partition (``pid``) in a literal array: no lookup table."""
    from pyspark.sql import functions as F

    arr = F.lit([int(v) for v in values]).cast("array<bigint>") if values else \
        F.array().cast("array<bigint>")
    return F.element_at(arr, pid + 1)


def subject_expr(col: Any, pairs: dict[str, str], transforms: Sequence[Any],
                 stream_transform: Any) -> Any:
    """The target subject of ``col`` for the subjects in ``pairs`` (each origin subject and
    its target, from ``target_subject``): the subject itself when every pair is equal, a
    prefix replaced when every pair is the same prefix replaced, else the compiled transform
    (sparkops.rules). The prefix is cut on the subject's UTF-8 bytes: every subject starts
    with it, so its byte length is the same on every row, and a byte cut spares Spark's
    character-counting substring its scan of each subject (a third of the copy's read time
    over 5M subjects)."""
    from pyspark.sql import functions as F

    from . import rules as R

    if all(s == t for s, t in pairs.items()):
        return col
    # the prefix the first pair replaces (what precedes their common end), checked on all
    s0, t0 = next(iter(pairs.items()))
    n = 0
    while n < min(len(s0), len(t0)) and s0[len(s0) - 1 - n] == t0[len(t0) - 1 - n]:
        n += 1
    old, new = s0[:len(s0) - n], t0[:len(t0) - n]
    if all(s.startswith(old) and t.startswith(new) and s[len(old):] == t[len(new):]
           for s, t in pairs.items()):
        return F.concat(F.lit(bytearray(new.encode())),
                        F.substring(col.cast("binary"), len(old.encode()) + 1, 1 << 30)) \
            .cast("string")
    return R.apply_like_pump(col, list(transforms), stream_transform)


def run_source(origins: Sequence[Any], d: StreamDef, name: str, *, now_ns: int,
               first_seq: int, ordered: bool, header: Any) -> tuple[Any, Plan] | None:
    """The planned source job (see the module doc): the output DataFrame (lake schema) and
    its plan, or None when it does not apply. ``header(k, seq, subject, hb, strip)`` is the
    header column an origin's message gets (jobs ``_source_header``)."""
    from pyspark.sql import functions as F

    dfs = [o.df for o in origins]
    splits = [scan_splits(df) for df in dfs]
    if any(s is None for s in splits):
        return None
    try:
        plan = plan_source(origins, splits, d, max_msg_size=d.max_msg_size >= 0)
    except LimitError:
        raise
    except Exception:  # noqa: BLE001 - files pyarrow cannot read as the lake schema (a
        return None  # column missing, another type, a damaged file): Spark plans and reads
    if plan is None:
        return None
    multi = len(origins) > 1
    rows = None
    for k, df in enumerate(dfs):
        part = df.select("seq", "subject", "headers", "data", F.lit(k).alias("_oi"))
        rows = part if rows is None else rows.unionByName(part)
    if multi and rows.rdd.getNumPartitions() != len(plan.bases):
        return None
    pid = F.spark_partition_id()
    local = F.monotonically_increasing_id() - F.shiftleft(pid.cast("long"), _SHIFT)
    if plan.codes is not None:  # each row's byte, at its partition's base + its place in it
        at = (_per_partition(plan.bases, pid) + local + 1).cast("int")
        rows = rows.select("*", pid.alias("_pid"), F.substring(
            F.lit(bytearray(plan.codes)), at, 1).alias("_c"))
        if plan.gone:
            rows = rows.where(F.col("_c") != F.lit(bytearray([GONE])))
        rows = rows.select("*", local.alias("_local"))
    else:
        rows = rows.select("*", pid.alias("_pid"), local.alias("_local"))
    pid = F.col("_pid")
    seq = (F.lit(first_seq) + _per_partition(plan.offsets, pid) + F.col("_local")).cast("long")
    same = (F.col("seq") >= _per_partition([r[1] for r in plan.ranges], pid)) \
        & (F.col("seq") <= _per_partition([r[2] for r in plan.ranges], pid))
    if multi:
        same = same & (F.col("_oi") == _per_partition([r[0] for r in plan.ranges], pid))
    seq = F.when(same, seq).otherwise(F.raise_error(F.lit(
        "source job: a partition differs from the one its sequences were counted on")))
    if plan.cut:
        rows = rows.where(F.col("_c") != F.lit(bytearray([CUT])))

    def per_origin(make: Any) -> Any:
        if not multi:
            return make(plan.origins[0])
        out = None
        for o in plan.origins:
            v = make(o)
            out = F.when(F.col("_oi") == o.k, v) if out is None else \
                out.when(F.col("_oi") == o.k, v)
        return out

    subj = F.col("subject")
    out = rows.select(
        F.lit(name).alias("stream"), F.lit(0).cast("int").alias("partition"),
        seq.alias("seq"),
        per_origin(lambda o: subject_expr(subj, o.pairs, o.transforms,
                                          o.rules.stream_transform))
        .alias("subject"),
        F.lit(None).cast("binary").alias("key"), F.lit(now_ns).cast("long").alias("ts"),
        per_origin(lambda o: header(o.k, F.col("seq"), subj, F.col("headers"), plan.strip))
        .alias("headers"),
        F.col("data"))
    if ordered and not plan.in_order:
        out = out.orderBy("seq")
    return out, plan
