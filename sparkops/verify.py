"""``jetlink spark verify``: compare two streams or topics message by message.

Both inputs are rows of the lake schema (core/lake.py). Rows are matched on
``(partition, seq)`` (a stream's sequence, a record's offset) by a full outer join, so a
mirror and its origin (which keep sequences) compare equal exactly when they hold the same
messages. A matched pair is the same message when its subject, key, headers and payload (and
its time, unless ``ignore_time``) are the same: the subject and the time are compared as they
are, key, headers and payload through 64-bit xxhash digests of each field (a null and an
empty value differ). The stream (topic) name is not compared: a mirror has its own name.

Beside the rows, each group (the subject of a stream message, the partition of a topic
record) gets a count, its first and last sequence and an order-independent checksum (the sum,
modulo 2**64, of the rows' xxhash64 digests of sequence, subject, key, headers, payload and
time); the groups whose figures differ are listed.

Everything runs as Spark SQL expressions (no Python UDF): one job when the inputs are equal
(the totals), three more when not (the groups that differ: their number and the first
``limit``; the first ``limit`` differences of each kind).
"""

from __future__ import annotations

from typing import Any

from jetlink.core import lake
from jetlink.core.errors import JetlinkError

from . import io

BY = ("subject", "partition")
KINDS = ("missing_in_a", "missing_in_b", "different")
# the compared fields, in the order a "different" entry lists them
FIELDS = ("subject", "key", "headers", "data", "ts")
_MOD64 = 1 << 64


class VerifyError(ValueError):
    """Inputs that cannot be compared (the message says why)."""


def _side(df: Any, tag: str, ignore_time: bool) -> Any:
    """The narrow columns of one side: join keys, subject, time, field digests, row digest
    (``xxhash64(isnull(x), x)``: never null, and a null differs from every value)."""
    ts = "" if ignore_time else f", {tag}_ts"
    return df.selectExpr(
        "partition", "seq",
        f"true AS {tag}_in",
        f"subject AS {tag}_subject",
        f"ts AS {tag}_ts",
        f"xxhash64(isnull(key), key) AS {tag}_hk",
        f"xxhash64(isnull(headers), headers) AS {tag}_hh",
        f"xxhash64(isnull(data), data) AS {tag}_hd",
    ).selectExpr(
        "*",
        f"xxhash64(partition, seq, isnull({tag}_subject), {tag}_subject, {tag}_hk, "
        f"{tag}_hh, {tag}_hd{ts}) AS {tag}_row")


def _joined(df_a: Any, df_b: Any, ignore_time: bool) -> Any:
    """The full outer join on (partition, seq) with each row's kind and differing fields."""
    j = _side(df_a, "a", ignore_time).join(_side(df_b, "b", ignore_time),
                                             on=["partition", "seq"], how="full_outer")
    flags = {
        "subject": "NOT (a_subject <=> b_subject)",
        "key": "a_hk <> b_hk",
        "headers": "a_hh <> b_hh",
        "data": "a_hd <> b_hd",
        "ts": "false" if ignore_time else "a_ts <> b_ts",
    }
    j = j.selectExpr("*", *(f"coalesce({e}, false) AS d_{f}" for f, e in flags.items()))
    differs = " OR ".join(f"d_{f}" for f in FIELDS)
    return j.selectExpr(
        "*",
        "CASE WHEN a_in IS NULL THEN 'missing_in_a' WHEN b_in IS NULL THEN 'missing_in_b' "
        f"WHEN {differs} THEN 'different' ELSE 'same' END AS kind")


def _each_key_once(t: dict[str, Any], df_a: Any, df_b: Any) -> None:
    """VerifyError when a side holds a (partition, sequence) more than once (a stream or a
    topic holds each once; the join would count such rows as often as they pair, and call
    two inflated sides identical): seen as a side the join counts more rows of than it
    has, then the first key held twice named."""
    counts = {"A": df_a.count(), "B": df_b.count()}
    if t["a_messages"] == counts["A"] and t["b_messages"] == counts["B"]:
        return
    for label, df in (("A", df_a), ("B", df_b)):
        dup = (df.groupBy("partition", "seq").count().where("count > 1")
               .orderBy("partition", "seq").first())
        if dup is not None:
            where = f"partition {dup['partition']} " if dup["partition"] else ""
            raise VerifyError(f"{label} holds {where}sequence {dup['seq']} {dup['count']} "
                              "times (a stream or a topic holds each once): not compared")


def _totals(j: Any) -> dict[str, Any]:
    row = j.selectExpr(
        "count_if(kind = 'same') AS matching",
        *(f"count_if(kind = '{k}') AS {k}" for k in KINDS),
        *(f"count({s}_in) AS {s}_messages" for s in "ab"),
        *(f"min(CASE WHEN {s}_in THEN seq END) AS {s}_first" for s in "ab"),
        *(f"max(CASE WHEN {s}_in THEN seq END) AS {s}_last" for s in "ab"),
    ).first()
    return row.asDict()


def _groups(j: Any, by: str, limit: int) -> tuple[int, list[dict[str, Any]]]:
    """``(number of groups that differ, the first ``limit`` of them)``."""
    from pyspark.sql import functions as F

    def side(s: str) -> Any:
        key = f"{s}_subject" if by == "subject" else "partition"
        return j.where(f"{s}_in").groupBy(F.expr(key).alias(f"{s}_g")).agg(
            F.expr("count(1)").alias(f"{s}_messages"),
            F.expr("min(seq)").alias(f"{s}_first"),
            F.expr("max(seq)").alias(f"{s}_last"),
            F.expr(f"pmod(sum(CAST({s}_row AS DECIMAL(20, 0))), {_MOD64})").alias(f"{s}_sum"))

    ga, gb = side("a"), side("b")
    g = ga.join(gb, ga["a_g"].eqNullSafe(gb["b_g"]), "full_outer").selectExpr(
        "coalesce(a_g, b_g) AS g", "*").where(
        "NOT (a_messages <=> b_messages AND a_first <=> b_first AND a_last <=> b_last "
        "AND a_sum <=> b_sum)")
    g = g.persist()
    try:
        total = g.count()
        rows = g.orderBy("g").limit(limit).collect() if total and limit else []
    finally:
        g.unpersist()

    def figures(r: Any, s: str) -> dict[str, Any] | None:
        if r[f"{s}_messages"] is None:
            return None
        return {"messages": r[f"{s}_messages"], "first_seq": r[f"{s}_first"],
                "last_seq": r[f"{s}_last"], "checksum": f"{int(r[f'{s}_sum']):016x}"}

    return total, [{by: r["g"], "a": figures(r, "a"), "b": figures(r, "b")} for r in rows]


def _listings(j: Any, by: str, limit: int) -> dict[str, list[dict[str, Any]]]:
    """The first ``limit`` rows of each kind of difference (one job: a row_number filter,
    which Spark plans as a per-partition top-``limit`` before the shuffle)."""
    cols = ["kind", "partition", "seq", "a_subject", "b_subject", *(f"d_{f}" for f in FIELDS)]
    rows = (j.where("kind <> 'same'").select(*cols)
            .selectExpr("*", "row_number() OVER (PARTITION BY kind ORDER BY partition, seq) "
                        "AS rn")
            .where(f"rn <= {int(limit)}").drop("rn").collect())
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
    for r in sorted(rows, key=lambda r: (r["partition"], r["seq"])):
        kind = r["kind"]
        e: dict[str, Any] = {"partition": r["partition"]} if by == "partition" else {}
        e["seq"] = r["seq"]
        if kind == "different":
            if by == "subject":
                e["subject_a"], e["subject_b"] = r["a_subject"], r["b_subject"]
            e["fields"] = [f for f in FIELDS if r[f"d_{f}"]]
        elif by == "subject":
            e["subject"] = r["a_subject"] if kind == "missing_in_b" else r["b_subject"]
        out[kind].append(e)
    return out


def compare(df_a: Any, df_b: Any, *, by: str = "subject", ignore_time: bool = False,
            limit: int = 20) -> dict[str, Any]:
    """Compare two DataFrames of the lake schema.

    Returns ``{"equal", "by", "ignore_time", "a", "b", "groups", "missing_in_a",
    "missing_in_b", "different", "totals"}``:

    - ``a`` / ``b``: ``{"messages", "first_seq", "last_seq"}`` (0 for an empty side);
    - ``groups``: the first ``limit`` groups (by ``by``: ``"subject"`` for streams,
      ``"partition"`` for topics) whose figures differ, in key order:
      ``{<by>: key, "a": {"messages", "first_seq", "last_seq", "checksum"} | null, "b": ...}``
      (null: the side has no message in the group; ``checksum``: 16 hex digits);
    - ``missing_in_a`` / ``missing_in_b``: the first ``limit`` rows only the other side holds,
      by (partition,) sequence: ``{"seq", "subject"}`` for streams, ``{"partition", "seq"}``
      for topics;
    - ``different``: the first ``limit`` rows both hold with other contents:
      ``{"seq", "subject_a", "subject_b", "fields"}`` (streams) or ``{"partition", "seq",
      "fields"}`` (topics), ``fields`` among subject, key, headers, data, ts;
    - ``totals``: ``{"matching", "missing_in_a", "missing_in_b", "different", "groups"}``.
    """
    if by not in BY:
        raise VerifyError(f"by: expected one of {', '.join(BY)}, got {by!r}")
    if limit < 0:
        raise VerifyError("limit must be at least 0")
    from pyspark import StorageLevel

    j = _joined(df_a, df_b, ignore_time).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        t = _totals(j)
        _each_key_once(t, df_a, df_b)
        equal = not any(t[k] for k in KINDS)
        n_groups, groups = (0, []) if equal else _groups(j, by, limit)
        lists = {k: [] for k in KINDS} if equal or not limit else _listings(j, by, limit)
    finally:
        j.unpersist()

    def side(s: str) -> dict[str, int]:
        return {"messages": t[f"{s}_messages"], "first_seq": t[f"{s}_first"] or 0,
                "last_seq": t[f"{s}_last"] or 0}

    return {"equal": equal, "by": by, "ignore_time": ignore_time, "a": side("a"),
            "b": side("b"), "groups": groups, **lists,
            "totals": {"matching": t["matching"], **{k: t[k] for k in KINDS},
                       "groups": n_groups}}


# --------------------------------------------------------------------------------------------
# reading two addresses
# --------------------------------------------------------------------------------------------
def _read(runner: Any, addr: io.Address) -> tuple[str, Any]:
    """``(kind, DataFrame)`` of an address: kind "stream" or "topic" (a Parquet dataset's
    from its ``_jetlink.json``; "" when it has none)."""
    from .run import SparkJobError

    if addr.kind == "stream":
        return "stream", runner.read(addr).df
    if addr.kind == "topic":
        from jetlink.core.errors import JetlinkError

        try:
            return "topic", io.read_topic(runner.spark, runner.dd, addr)
        except JetlinkError as e:
            raise SparkJobError(str(e)) from None
    if not io.path_exists(runner.spark, addr.path):
        raise SparkJobError(f"{addr}: no such dataset")
    meta = io.read_meta(runner.spark, addr.path) or {}
    kind = meta.get("kind", "")
    if kind not in ("", "stream", "topic"):
        raise SparkJobError(f"{addr}: {lake.META_FILE} names an unknown kind {kind!r}")
    empty = bool(meta) and not int((meta.get("state") or {}).get("messages", 0) or 0)
    if empty:
        return kind, io.read_parquet(runner.spark, addr.path)
    try:  # (an empty or foreign directory is not "0 messages": say so)
        return kind, io.read_lake(runner.spark, addr.path)
    except io.LakeColumnsError as e:
        raise SparkJobError(f"{addr} {e}") from None


def live_name_problem(js: Any, text: str, what: str) -> str | None:
    """Why ``text`` (not ``parquet:``) names no stream of the live server ``js`` can be
    asked for: a ``store:`` address or a path (they name the embedded engine's data
    directory); None for a NAME."""
    if text.startswith("store:") or "/" in text or not text:
        return (f"{what} {text!r}: with a live server in force ({js.where}) give a stream of "
                "that server by its NAME, or parquet:PATH (store: addresses name the "
                "embedded engine's data directory)")
    return None


def _live_address(runner: Any, js: Any, text: str, what: str, tmp: str
                  ) -> tuple[io.Address, str]:
    """``(address read, address shown)`` of an input when a live server is in force: a
    stream NAME of the server is exported (core/lake.py ``export_stream_api``: one
    consistent cut) into a dataset under ``tmp`` and read from there, shown as
    ``NAME@URL``; ``parquet:PATH`` as it is; ``store:`` addresses are refused (they name the
    embedded engine's data directory)."""
    from .run import SparkJobError

    if text.startswith("parquet:"):
        addr = runner.address(text, what)
        return addr, str(addr)
    problem = live_name_problem(js, text, what)
    if problem is not None:
        raise SparkJobError(problem)
    import os

    path = os.path.join(tmp, what)
    try:
        lake.export_stream_api(js, text, path)
    except JetlinkError as e:
        code = getattr(e, "err_code", 0)
        raise SparkJobError(f"{what} {text}@{js.where}: {e}{f' ({code})' if code else ''}"
                            ) from None
    return io.Address("parquet", name=text, path=path), f"{text}@{js.where}"


def verify(runner: Any, a_text: str, b_text: str, *, ignore_time: bool = False,
           limit: int = 20, live: Any = None) -> dict[str, Any]:
    """Compare the inputs at the addresses ``a_text`` and ``b_text`` (store streams, store
    topics, Parquet datasets): :func:`compare`'s report, ``a`` and ``b`` with their
    ``address`` first. Streams are grouped by subject, topics by partition; a Parquet
    dataset without ``_jetlink.json`` is taken as the kind of the other input (a stream when
    neither says).

    ``live``: the JetStreamAPI of a live server in force; a bare NAME is then a stream of
    that server, exported to a temporary dataset on the driver's filesystem (a local master,
    or executors that share it) and compared from there (:func:`_live_address`); the
    datasets are removed at the end."""
    if live is None:
        return _verify(runner, runner.address(a_text, "A"), runner.address(b_text, "B"),
                       ignore_time=ignore_time, limit=limit)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="jetlink-verify-") as tmp:
        a, shown_a = _live_address(runner, live, a_text, "A", tmp)
        b, shown_b = _live_address(runner, live, b_text, "B", tmp)
        report = _verify(runner, a, b, ignore_time=ignore_time, limit=limit)
    report["a"]["address"], report["b"]["address"] = shown_a, shown_b
    return report


def kind_mismatch(ka: str, a: Any, kb: str, b: Any) -> str:
    return f"cannot compare a {ka} ({a}) with a {kb} ({b})"


def store_kind_mismatch(a: io.Address, b: io.Address) -> str | None:
    """The refusal of two store addresses of different kinds (a stream and a topic), known
    from the addresses alone (before a driver starts); None otherwise."""
    if a.kind != "parquet" and b.kind != "parquet" and a.kind != b.kind:
        return kind_mismatch(a.kind, a, b.kind, b)
    return None


def _verify(runner: Any, a: io.Address, b: io.Address, *, ignore_time: bool,
            limit: int) -> dict[str, Any]:
    from .run import SparkJobError

    early = store_kind_mismatch(a, b)
    if early:
        raise SparkJobError(early)
    (ka, da), (kb, db) = _read(runner, a), _read(runner, b)
    if ka and kb and ka != kb:
        raise SparkJobError(kind_mismatch(ka, a, kb, b))
    by = "partition" if "topic" in (ka, kb) else "subject"
    try:
        report = compare(da, db, by=by, ignore_time=ignore_time, limit=limit)
    except VerifyError as e:  # inputs that cannot be compared: the reason alone
        raise SparkJobError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - Spark's errors (unreadable files, ...)
        from .session import failure_text

        raise SparkJobError(failure_text(e)) from None
    report["a"] = {"address": str(a), **report["a"]}
    report["b"] = {"address": str(b), **report["b"]}
    return report
