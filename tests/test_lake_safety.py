"""``stream export`` / ``stream import`` on the embedded engine never lose, skip or silently
change a message: a resumed import checks the stream still ends where the interrupted one
left it; an import refuses what an interrupted export leaves; ``export -f`` keeps the old
dataset until the new one is complete; columns of another type, damaged pages (page
checksums) and a ``_jetlink.json`` beyond jetlink's sequences are one error line naming the
file, nothing left behind."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import doc, ok

from jetlink.core import lake

BASE_TS = 1_767_225_600_000_000_000


def fill(js, n, name="ORDERS"):
    js.add_stream({"name": name, "subjects": ["orders.>"]})
    js.publish_batch([(f"orders.{i}", payload(i), None) for i in range(n)])


def payload(i):
    """A payload no compression shortens (a hash's hex digits)."""
    return hashlib.sha256(str(i).encode()).hexdigest().encode()


def msgs(js, name):
    return [(m.seq, m.subject, m.ts, m.hdr, m.data) for m in js.messages(name)]


def names(path):
    return sorted(p.name for p in path.iterdir())


def lake_table(seqs, **types):
    """Rows of the lake schema for ``seqs``; ``types``: columns given as other types, their
    values as ``types[name] = (type, values)``."""
    cols = {
        "stream": (pa.string(), ["S"] * len(seqs)),
        "partition": (pa.int32(), [0] * len(seqs)),
        "seq": (pa.int64(), list(seqs)),
        "subject": (pa.string(), ["orders.x"] * len(seqs)),
        "key": (pa.binary(), [None] * len(seqs)),
        "ts": (pa.int64(), [BASE_TS + s for s in seqs]),
        "headers": (pa.binary(), [None] * len(seqs)),
        "data": (pa.binary(), [f"m{s}".encode() for s in seqs]),
    }
    cols.update(types)
    return pa.table([pa.array(v, t) for t, v in cols.values()], names=list(cols))


META = {"kind": "stream", "name": "S",
        "config": {"name": "S", "subjects": ["orders.>"], "retention": "limits",
                   "storage": "file", "discard": "old"},
        "state": {}}


def foreign(path, table, meta=META):
    """A dataset another tool wrote: pyarrow's defaults (no page checksums)."""
    path.mkdir(parents=True)
    pq.write_table(table, path / "part-00000.parquet")
    if meta is not None:
        (path / "_jetlink.json").write_text(json.dumps(meta))
    return str(path)


# -- a resumed import ---------------------------------------------------------------------------


def _kill_import(jl, out, data, after_txns):
    """Run an embedded import of ``out`` into COPY of the data directory ``data`` in a
    subprocess killed with SIGKILL once ``after_txns`` transactions committed."""
    code = textwrap.dedent(f"""
        import os, signal
        from jetlink.core.clock import SystemClock
        from jetlink.core.jetstream import JetStream
        from jetlink.core.lake import import_stream
        from jetlink.core.store import DataDir
        js = JetStream(DataDir({str(data)!r}).open(), SystemClock())
        seen = []
        def on_rows(n):
            seen.append(n)
            if len(seen) == {after_txns}:
                os.kill(os.getpid(), signal.SIGKILL)
        import_stream(js, "COPY", {str(out)!r}, txn_rows=40, on_rows=on_rows)
    """)
    killed = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert killed.returncode == -9, killed.stderr


def _cli_dataset(jl, n):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.new", "m{{Count}}", "--count", str(n), "-j"))
    out = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{out}", "-j"))
    return out


def test_a_resumed_import_refuses_a_stream_written_to_since_it_was_killed(jl):
    """SIGKILL part-way through an import, a publish to the stream, the import run again:
    refused, naming the stream, where the import stopped and where the stream ends now, and
    the way on; nothing written (the row the publish took the sequence of is never
    skipped)."""
    out = _cli_dataset(jl, 200)
    other = jl.tmp / "killed"
    _kill_import(jl, out, other, after_txns=2)
    ok(jl("--data-dir", str(other), "pub", "orders.intruder", "hi"))  # stored as 81
    before = doc(jl("--data-dir", str(other), "stream", "info", "COPY", "-j"))["state"]
    assert (before["messages"], before["last_seq"]) == (81, 81)
    again = jl("--data-dir", str(other), "stream", "import", "COPY", f"parquet:{out}")
    assert (again.exit_code, again.stdout) == (1, "")
    assert again.stderr == (
        f"jetlink: error: stream COPY changed since an import of {out} into it was "
        "interrupted: the import had stored up to sequence 80, the stream now ends at "
        "sequence 81 (something else stored messages there, which take the dataset's "
        "sequences); nothing was imported: delete the stream (jetlink stream rm COPY -f) and "
        "run the import again\n")
    after = doc(jl("--data-dir", str(other), "stream", "info", "COPY", "-j"))["state"]
    assert after == before
    # the way on: a new stream, the whole dataset
    ok(jl("--data-dir", str(other), "stream", "rm", "COPY", "-f"))
    whole = doc(jl("--data-dir", str(other), "stream", "import", "COPY", f"parquet:{out}",
                   "-j"))
    assert (whole["messages"], whole["first_seq"], whole["last_seq"]) == (200, 1, 200)


def test_a_resumed_import_nobody_wrote_in_between_continues(js, other, tmp_path):
    """An import interrupted after two transactions into a stream that existed (it stays):
    run again it stores the rest, once; a write in between is refused instead."""
    fill(js, 10)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    calls = []

    def stop(n):
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt

    other.add_stream({"name": "A", "subjects": ["orders.>"]})
    with pytest.raises(KeyboardInterrupt):
        lake.import_stream(other, "A", str(out), txn_rows=3, on_rows=stop)
    assert other.stream_info("A").state.last_seq == 6
    rest = lake.import_stream(other, "A", str(out), txn_rows=3)
    assert (rest["messages"], rest["first_seq"], rest["last_seq"]) == (4, 7, 10)
    assert [m[1:] for m in msgs(other, "A")] == [m[1:] for m in msgs(js, "ORDERS")]
    # interrupted again, then a publish of its own: refused, nothing stored
    other.delete_stream("A")
    other.add_stream({"name": "A", "subjects": ["orders.>"]})
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        lake.import_stream(other, "A", str(out), txn_rows=3, on_rows=stop)
    other.publish("orders.intruder", b"hi")
    with pytest.raises(lake.LakeError, match="the import had stored up to sequence 6, the "
                                             "stream now ends at sequence 7"):
        lake.import_stream(other, "A", str(out), txn_rows=3)
    assert other.stream_info("A").state.last_seq == 7


def test_an_import_killed_before_its_first_rows_refuses_a_stream_written_since(
        js, other, tmp_path, monkeypatch):
    """The mark is set before the first transaction: a write after it is seen too."""
    fill(js, 5)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    other.add_stream({"name": "A", "subjects": ["orders.>"]})

    def dead(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(lake, "write_stream_rows", dead)
    with pytest.raises(KeyboardInterrupt):
        lake.import_stream(other, "A", str(out))
    monkeypatch.undo()
    other.publish("orders.intruder", b"hi")
    with pytest.raises(lake.LakeError, match="stored up to sequence 0, the stream now ends "
                                             "at sequence 1"):
        lake.import_stream(other, "A", str(out))


# -- what an interrupted export leaves -----------------------------------------------------------


def _interrupted_export(js, out, monkeypatch, at_call=2, **kw):
    """An export interrupted in its ``at_call``-th row group write."""
    real = pq.ParquetWriter.write_table
    seen = []

    def dying(self, table, **kwargs):
        seen.append(1)
        if len(seen) == at_call:
            raise KeyboardInterrupt
        return real(self, table, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", dying)
    with pytest.raises(lake.LakeInterrupted) as stop:
        lake.export_stream(js, "ORDERS", str(out), **kw)
    monkeypatch.setattr(pq.ParquetWriter, "write_table", real)
    return stop.value


def test_an_import_refuses_what_an_interrupted_export_left(js, other, tmp_path,
                                                           monkeypatch):
    fill(js, 6)
    out = tmp_path / "lake"
    stop = _interrupted_export(js, out, monkeypatch, file_rows=2, row_group_rows=2)
    assert names(out) == ["_tmp-part-00001.parquet", "part-00000.parquet"]
    assert "stream import refuses it" in stop.left
    other.add_stream({"name": "COPY", "subjects": ["orders.>"]})
    with pytest.raises(lake.LakeError) as err:
        lake.import_stream(other, "COPY", str(out))
    assert err.value.description == (
        f"{out} holds an export that was interrupted (_tmp-part-00001.parquet; no "
        "_jetlink.json): its messages are incomplete, nothing was imported; export the "
        f"stream again (jetlink stream export STREAM parquet:{out} -f) and import that")
    assert other.stream_info("COPY").state.messages == 0
    # an export's progress record (over the interface) without its _jetlink.json: the same
    (out / "_tmp-part-00001.parquet").unlink()
    (out / "_jetlink_progress.json").write_text("{}")
    with pytest.raises(lake.LakeError, match="holds an export that was interrupted "
                                             r"\(_jetlink_progress.json; no"):
        lake.import_stream(other, "COPY", str(out))


def test_an_export_always_holds_a_part_aside_until_it_is_complete(js, tmp_path):
    """Between one part file and the next, the directory still shows an unfinished export
    (a part is renamed once the next one exists aside): never complete-looking parts alone
    without ``_jetlink.json``."""
    fill(js, 7)
    out = tmp_path / "lake"
    seen = []
    lake.export_stream(js, "ORDERS", str(out), batch_rows=1, file_rows=2, row_group_rows=2,
                       on_rows=lambda _n: seen.append(names(out)))
    assert len(seen) == 7
    for listing in seen[1:]:
        assert any(n.startswith("_tmp-part-") for n in listing), listing
    assert names(out) == ["_jetlink.json", "part-00000.parquet", "part-00001.parquet",
                          "part-00002.parquet", "part-00003.parquet"]


def test_datasets_of_other_tools_still_import(other, tmp_path):
    """No ``_jetlink.json``, a ``_SUCCESS``, another file name: imported as before; a whole
    dataset beside part files a replacement left aside too."""
    path = tmp_path / "spark"
    foreign(path, lake_table([1, 2, 3]), meta=None)
    (path / "_SUCCESS").write_text("")
    (path / "part-00000.parquet").rename(path / "part-00000-abc.snappy.parquet")
    other.add_stream({"name": "S", "subjects": ["orders.>"]})
    assert lake.import_stream(other, "S", str(path))["messages"] == 3
    whole = tmp_path / "whole"
    foreign(whole, lake_table([1, 2]))
    pq.write_table(lake_table([7]), whole / "_tmp-part-00000.parquet")
    other.delete_stream("S")
    assert lake.import_stream(other, "T", str(whole))["messages"] == 2


# -- export -f ------------------------------------------------------------------------------------


def test_a_forced_export_interrupted_keeps_the_old_dataset(js, other, tmp_path, monkeypatch):
    fill(js, 4)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out), file_rows=3)
    old = {n: (out / n).read_bytes() for n in names(out)}
    js.publish_batch([(f"orders.{i}", b"new", None) for i in range(6)])
    stop = _interrupted_export(js, out, monkeypatch, force=True, file_rows=2,
                               row_group_rows=2)
    assert stop.left == (
        f"the export of stream ORDERS to {out} stopped before its new files were complete: "
        "the dataset already there is whole and unchanged (the new files written so far are "
        "left beside it as _tmp-part-*.parquet, which readers skip); run the export again "
        f"with -f (jetlink stream export ORDERS parquet:{out} -f) to replace it")
    assert {n: (out / n).read_bytes() for n in old} == old
    assert lake.import_stream(other, "COPY", str(out))["messages"] == 4
    # run again with -f: the new dataset, nothing of the old one left
    done = lake.export_stream(js, "ORDERS", str(out), force=True, file_rows=3)
    assert names(out) == ["_jetlink.json", *done["files"]]
    assert done["messages"] == 10 and len(done["files"]) == 4
    assert lake.read_meta(str(out))["state"]["last_seq"] == 10


def test_cli_a_forced_export_interrupted_says_what_it_left(jl, monkeypatch):
    """``stream export -f`` stopped by Ctrl-C: exit 130, one line on stderr saying the old
    dataset is whole and the way on."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.new", "m{{Count}}", "--count", "5", "-j"))
    out = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{out}"))
    before = names(out)

    def dying(self, table, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pq.ParquetWriter, "write_table", dying)
    r = jl("stream", "export", "ORDERS", f"parquet:{out}", "-f")
    assert r.exit_code == 130
    assert r.stderr.startswith(f"jetlink: interrupted: the export of stream ORDERS to {out} "
                               "stopped before its new files were complete: the dataset "
                               "already there is whole and unchanged")
    assert [n for n in names(out) if not n.startswith("_tmp-")] == before


# -- columns of another type ----------------------------------------------------------------------


@pytest.mark.parametrize(("column", "kind", "values", "found", "want"), [
    ("ts", pa.string(), ["x"], "string", "an integer or a timestamp"),
    ("data", pa.int64(), [5], "int64", "binary or a string"),
    ("ts", pa.list_(pa.int64()), [[1]], "list<element: int64>", "an integer or a timestamp"),
])
def test_a_column_of_a_type_that_does_not_convert_is_one_error(other, tmp_path, column, kind,
                                                               values, found, want):
    path = tmp_path / "bad"
    foreign(path, lake_table([1], **{column: (kind, values)}))
    with pytest.raises(lake.LakeError) as err:
        lake.import_stream(other, "S", str(path))
    expected = dict((n, t) for n, t, _ in lake.COLUMNS)[column]
    assert err.value.description == (
        f"{path}/part-00000.parquet: column {column} is {found}, not {want}: not the lake "
        f"message schema ({column} {expected})")
    assert "S" not in other.stream_names()


def test_an_unsigned_sequence_beyond_int64_is_one_error(jl, tmp_path):
    path = tmp_path / "bad"
    foreign(path, lake_table([1], seq=(pa.uint64(), [2**63 + 5])))
    r = jl("stream", "import", "S", f"parquet:{path}", "-j")
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {"error": {"description": (
        f"{path}/part-00000.parquet: column seq is uint64, not int64: Integer value "
        "9223372036854775813 not in range: 0 to 9223372036854775807")}}
    assert doc(jl("stream", "ls", "-j")) == []


def test_convertible_columns_still_import(other, tmp_path):
    """uint64 sequences in range, large strings, a timestamp ``ts`` (its unit's counts
    converted to nanoseconds), data as text."""
    path = tmp_path / "ok"
    foreign(path, lake_table(
        [1, 2], seq=(pa.uint64(), [1, 2]), subject=(pa.large_string(), ["orders.a"] * 2),
        ts=(pa.timestamp("us"), [1_700_000_000_000_000, 1_700_000_000_000_001]),
        data=(pa.string(), ["a", "b"])))
    assert lake.import_stream(other, "S", str(path))["messages"] == 2
    assert [(m[2], m[4]) for m in msgs(other, "S")] == [
        (1_700_000_000_000_000_000, b"a"), (1_700_000_000_000_001_000, b"b")]


# -- page checksums ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["embedded", "interface"])
def test_a_damaged_page_is_refused_naming_the_file(js, other, tmp_path, how):
    """Export writes page checksums (both writers); import verifies them: one flipped byte
    of a payload is one error naming the file, nothing stored."""
    fill(js, 3)
    out = tmp_path / "lake"
    export = lake.export_stream if how == "embedded" else lake.export_stream_api
    export(js, "ORDERS", str(out))
    part = out / "part-00000.parquet"
    raw = bytearray(part.read_bytes())
    at = raw.find(payload(1)[20:36])
    assert at > 0
    raw[at] ^= 0x01
    part.write_bytes(bytes(raw))
    with pytest.raises(lake.LakeError) as err:
        lake.import_stream(other, "COPY", str(out))
    assert err.value.description.startswith(f"{part}: cannot read it: ")
    assert "checksum" in err.value.description
    assert "COPY" not in other.stream_names()


# -- _jetlink.json ----------------------------------------------------------------------------


@pytest.mark.parametrize("last", [2**62, 2**70])
def test_a_last_sequence_beyond_jetlinks_limit_names_the_file_and_field(other, tmp_path, last):
    meta = json.loads(json.dumps(META))
    meta["state"]["last_seq"] = last
    path = tmp_path / "huge"
    foreign(path, lake_table([1]), meta=meta)
    with pytest.raises(lake.LakeError) as err:
        lake.import_stream(other, "S", str(path))
    assert err.value.description == (
        f"{path}/_jetlink.json: not a _jetlink.json document jetlink imports: "
        f"\"state.last_seq\" is {last}, beyond jetlink's limit 1099511627775 (the last "
        "sequence of a stream); nothing was imported")
    assert "S" not in other.stream_names()


# -- rows a publish would refuse ------------------------------------------------------------------


@pytest.mark.parametrize(("types", "error"), [
    ({"ts": (pa.int64(), [-5])},
     "message 1: time -5 is before the Unix epoch (column ts: the time stored, nanoseconds "
     "since 1970-01-01T00:00:00Z, never negative)"),
    ({"headers": (pa.binary(), [b"NATS/1.0 503\r\n\r\n"])},
     "message 1: headers b'NATS/1.0 503' are not a NATS header block (column headers: "
     "NATS/1.0 and one header per line)"),
    ({"headers": (pa.binary(), [b"NATS/1.0\r\nX-A: 1\r\nnocolon\r\n\r\n"])},
     "message 1: headers b'nocolon' are not a NATS header block (column headers: NATS/1.0 "
     "and one header per line)"),
])
def test_rows_a_publish_would_refuse_are_refused(other, tmp_path, types, error):
    path = tmp_path / "bad"
    foreign(path, lake_table([1], **types))
    with pytest.raises(lake.LakeError) as err:
        lake.import_stream(other, "S", str(path))
    assert err.value.description == f"{path}: {error}"
    assert "S" not in other.stream_names()
