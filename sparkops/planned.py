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
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = ["seq", "ts", "subject", "headers"] + (["data"] if max_msg_size else [])
    planned: list[_Origin] = []
    # per partition of the union (origins' partitions one after the other)
    p_tables: list[Any] = []
    p_origin: list[int] = []
    tnames: dict[str, int] = {}  # target subject -> id
    p_tid: list[Any] = []  # per partition: target subject id per row (-1: not kept)
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
        start_seq = src.opt_start_seq if src.opt_start_seq > 0 else 0
        if not start_seq and src.opt_start_time:
            t = parse_rfc3339_nano(src.opt_start_time)
            firsts = [pc.min(pc.filter(tb.column("seq"), pc.greater_equal(tb.column("ts"), t)))
                      .as_py() for tb in tables if tb is not None and tb.num_rows]
            firsts = [f for f in firsts if f is not None]
            start_seq = min(firsts) if firsts else -1  # -1: nothing at or after that time
        cache: dict[str, int] = {}
        for tb in tables:
            p_origin.append(k)
            if tb is None or not tb.num_rows:
                p_tables.append(None)
                p_tid.append(np.empty(0, np.int32))
                continue
            col = tb.column("subject")
            dictionary = col.chunk(0).dictionary if col.num_chunks else None
            sidx = (col.chunk(0).indices.to_numpy(zero_copy_only=False)
                    if col.num_chunks else np.empty(0, np.int32))
            try:
                names = dictionary.to_pylist()
            except UnicodeDecodeError:
                return None
            lut = np.empty(len(names), np.int32)
            for i, s in enumerate(names):
                t = cache.get(s)
                if t is None:
                    if s is None or (match is not None and not match(s)):
                        t = -1
                    else:
                        tsubj = rules.target_subject(s)
                        og.pairs[s] = tsubj
                        t = tnames.setdefault(tsubj, len(tnames))
                    cache[s] = t
                lut[i] = t
            tid = lut[sidx] if len(sidx) else sidx.astype(np.int32)
            if col.null_count:
                tid = np.where(col.chunk(0).is_null().to_numpy(zero_copy_only=False), -1, tid)
            if start_seq:
                seq = tb.column("seq").to_numpy()
                tid = np.where(seq >= start_seq, tid, -1) if start_seq > 0 else np.full_like(
                    tid, -1)
            p_tables.append(tb)
            p_tid.append(tid)

    nparts = len(p_tables)
    sizes = [0 if tb is None else tb.num_rows for tb in p_tables]
    bases = [0] * nparts
    at = 0
    for p in range(nparts):
        bases[p] = at
        at += sizes[p]
    total = at

    # the merge order: partitions each sorted by (origin time, origin sequence) inside, and
    # in sequence one after the other by (time, origin, agreement, sequence)
    keys = []
    for p, tb in enumerate(p_tables):
        if not sizes[p]:
            continue
        ts = tb.column("ts").to_numpy()
        seq = tb.column("seq").to_numpy()
        if tb.column("ts").null_count or tb.column("seq").null_count:
            return None
        if sizes[p] > 1:
            step = ts[1:] - ts[:-1]
            if step.min() < 0:
                return None
            tie = np.nonzero(step == 0)[0]
            if len(tie) and not bool(np.all(seq[tie + 1] > seq[tie])):
                return None
        o = planned[p_origin[p]]
        keys.append(((int(ts[0]), o.name, o.iname, int(seq[0])),
                     (int(ts[-1]), o.name, o.iname, int(seq[-1])), p))
    keys.sort()
    for a, b in zip(keys, keys[1:], strict=False):
        if not a[1] < b[0]:
            return None  # partitions overlap in the merge order: Spark plans (a sort)
    porder = [p for _lo, _hi, p in keys]
    in_order = porder == sorted(porder)
    mstart = {}  # partition -> merge position of its first row
    at = 0
    for p in porder:
        mstart[p] = at
        at += sizes[p]

    codes = np.zeros(total, np.uint8)
    tid_all = np.full(total, -1, np.int32)
    for p in range(nparts):
        if sizes[p]:
            tid_all[bases[p]:bases[p] + sizes[p]] = p_tid[p]
    codes[tid_all < 0] = GONE
    filled = [p for p in range(nparts) if sizes[p]]
    f_bases = np.array([bases[p] for p in filled], np.int64)
    f_shift = np.array([mstart[p] - bases[p] for p in filled], np.int64)

    def part_of(rows: Any) -> Any:
        return np.searchsorted(f_bases, rows, side="right") - 1

    def mpos_of(rows: Any) -> Any:
        """The merge position of rows (indexes): partitions are runs of the merge order."""
        return rows + f_shift[part_of(rows)]

    # the rows with a header block, and their blocks (few, usually): every header rule
    # below reads only these
    blocks = []
    for p, tb in enumerate(p_tables):
        col = tb.column("headers") if sizes[p] else None
        if col is None or col.null_count == sizes[p]:
            continue
        w = np.nonzero(col.is_valid().to_numpy(zero_copy_only=False))[0]
        blocks.append((bases[p] + w, col.take(pa.array(w)).combine_chunks()))
    b_rows = np.concatenate([r for r, _h in blocks]) if blocks else np.empty(0, np.int64)
    b_hdrs = pa.concat_arrays([h for _r, h in blocks]) if blocks else pa.array([], pa.binary())

    def hdr_rows(needle: bytes | tuple[bytes, ...]) -> tuple[Any, Any]:
        """The rows stored (indexes) whose header holds ``needle`` (or one of them), and
        their headers."""
        hit = pa.array(np.zeros(len(b_hdrs), bool))
        for n in (needle,) if isinstance(needle, bytes) else needle:
            hit = pc.or_(hit, pc.match_substring(b_hdrs, n.decode()))  # (a regex: 10x slower)
        w = np.nonzero(hit.to_numpy(zero_copy_only=False))[0]
        w = w[codes[b_rows[w]] == KEEP]
        return b_rows[w], b_hdrs.take(pa.array(w, pa.int64()))

    # duplicates: the first message of each id in the merge order is kept
    if planned[0].rules.dedupe:  # (every origin's: the target's duplicate window)
        idx, hs = hdr_rows(_MSG_ID)
        if len(idx):
            order = np.argsort(mpos_of(idx), kind="stable")
            idx = idx[order]
            ids = msg_ids(hs.take(pa.array(order)))
            has = ids.is_valid().to_numpy(zero_copy_only=False)
            idx = idx[has]
            n = ids.filter(pa.array(has)).dictionary_encode().indices.to_numpy(
                zero_copy_only=False)
            # dictionary_encode numbers values as they first appear: a row repeats an id
            # when its number is not above every number before it
            if len(n):
                seen = np.concatenate([[-1], np.maximum.accumulate(n)[:-1]])
                codes[idx[n <= seen]] = GONE

    # refusals, over the messages stored (the first in the merge order is named)
    def refuse(rows: Any, what: str) -> None:
        r = int(rows[np.argmin(mpos_of(rows))])
        p = filled[int(part_of(np.array([r]))[0])]
        seq = int(p_tables[p].column("seq")[r - bases[p]].as_py())
        raise LimitError(f"message {seq} of {planned[p_origin[p]].name} {what}")

    idx, _hs = hdr_rows(_TTL)
    if len(idx):
        refuse(idx, C.REFUSED_TTL)

    odd, _h = hdr_rows(_STRIP)  # stored messages with a line the source rules remove
    strip = bool(len(odd))
    # the written header's length: the origin's block without its last CRLF (or NATS/1.0 and
    # CRLF), then "Nats-Stream-Source: <value>" and two CRLF; where a line is removed, the
    # exact block (core's rules)
    def value(o: _Origin, seq: Any, subj: Any) -> str:  # what Nats-Stream-Source says
        return o.rules.source_value(seq, subj, o.identity)

    fixed = [len(value(o, "", "").encode()) + _SS_LINE + 2 for o in planned]
    limit = min(MAX_HEADER_SIZE, d.max_msg_size) if max_msg_size else MAX_HEADER_SIZE
    powers = np.array([10 ** i for i in range(1, 19)], np.int64)
    big, bad = [], []
    for p, tb in enumerate(p_tables):
        if not sizes[p]:
            continue
        hl = pc.fill_null(pc.binary_length(tb.column("headers")), 0).to_numpy(
            zero_copy_only=False)
        col = tb.column("subject").chunk(0)
        sl = pc.fill_null(pc.binary_length(col.dictionary), 0).to_numpy(zero_copy_only=False)
        if not max_msg_size and int(hl.max()) + int(sl.max(initial=0)) + fixed[p_origin[p]] \
                + 20 <= limit:
            continue  # no header of this partition can come near the limit
        seq = tb.column("seq").to_numpy()
        hlen = np.where(hl > 2, hl - 2, 10) + fixed[p_origin[p]] \
            + np.searchsorted(powers, seq, side="right") + 1 \
            + sl[col.indices.fill_null(0).to_numpy(zero_copy_only=False)]
        mine = odd[(odd >= bases[p]) & (odd < bases[p] + sizes[p])] - bases[p]
        if len(mine):
            o = planned[p_origin[p]]
            sub = tb.take(pa.array(mine))
            for r, subj, hb, sq in zip(mine, sub.column("subject").to_pylist(),
                                       sub.column("headers").to_pylist(),
                                       sub.column("seq").to_pylist(), strict=True):
                hlen[r] = len(C.source_header(hb, value(o, sq, subj)))
        stored_here = codes[bases[p]:bases[p] + sizes[p]] == KEEP
        big.append(bases[p] + np.nonzero(stored_here & (hlen > MAX_HEADER_SIZE))[0])
        if max_msg_size:
            ml = pc.fill_null(pc.binary_length(tb.column("data")), 0).to_numpy(
                zero_copy_only=False)
            bad.append(bases[p] + np.nonzero(stored_here & (
                (hlen > d.max_msg_size) | (ml > d.max_msg_size - hlen)))[0])
    for what, rows in ((C.REFUSED_HEADERS, big), (C.refused_size(d.max_msg_size), bad)):
        rows = np.concatenate(rows) if rows else np.empty(0, np.int64)
        if len(rows):
            refuse(rows, what)

    # sequences: stored messages before each partition in the merge order
    stored = codes == KEEP
    offsets = [0] * nparts
    at = 0
    for p in porder:
        offsets[p] = at
        at += int(np.count_nonzero(stored[bases[p]:bases[p] + sizes[p]]))
    n_stored = at

    # the per-subject limit: per target subject, all but its newest max_per stored messages
    cut = False
    max_per = planned[0].rules.max_per
    if max_per:
        nt = len(tnames)
        t_stored = np.where(stored, tid_all, nt)  # nt: not stored
        counts = np.bincount(t_stored, minlength=nt + 1)[:nt]
        hot = counts > max_per
        if hot.any():
            rows = np.nonzero(np.append(hot, False)[t_stored])[0]
            t = tid_all[rows]
            order = np.lexsort((mpos_of(rows), t))
            rows, t = rows[order], t[order]
            first = np.searchsorted(t, t, side="left")
            rank = np.arange(len(rows)) - first
            dies = rank < (counts[t] - max_per)
            codes[rows[dies]] = CUT
            cut = bool(dies.any())
    gone = bool((codes == GONE).any())
    ranges = []
    for p in range(nparts):
        if sizes[p]:
            seq = p_tables[p].column("seq")
            ranges.append((p_origin[p], int(pc.min(seq).as_py()), int(pc.max(seq).as_py())))
        else:
            ranges.append((p_origin[p], 1, 0))
    rows_out = n_stored - int(np.count_nonzero(codes == CUT))
    return Plan(codes.tobytes() if (gone or cut) else None, bases, offsets, ranges,
                in_order, strip, planned, rows_out, n_stored, gone, cut)


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
    prefix replaced when every pair is the same prefix replaced (read as characters, as
    Spark's substring counts: the subjects are valid UTF-8), else the compiled transform
    (sparkops.rules)."""
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
        return F.concat(F.lit(new), F.substring(col, len(old) + 1, 1 << 30))
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
