"""Streams to and from a lake: jetlink.core.lake's Parquet export / import and row writer,
and ``jetlink stream export / import``.

The round trip must give back the stream exactly: sequences (gaps of deleted messages
included), subjects, times, headers, payloads, and the state counters.
"""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import data_dir_bytes, doc, ok

from jetlink.core import lake
from jetlink.core.clock import format_rfc3339_nano
from jetlink.core.replication import identity

MS = 1_000_000


# -- helpers ----------------------------------------------------------------------------------


def msgs(js, name):
    return [(m.seq, m.subject, m.ts, m.hdr, m.data) for m in js.messages(name)]


def counters(js, name):
    st = js.stream_info(name).state
    return (st.messages, st.bytes, st.first_seq, st.last_seq, st.num_deleted)


def fill(js, clock, name="ORDERS"):
    """A stream with headers, empty payloads and gaps: 1 and 4 deleted, 8 deleted last."""
    js.add_stream({"name": name, "subjects": ["orders.>"], "duplicate_window": 60_000 * MS})
    for i in range(1, 9):
        clock.advance(7 * MS)
        headers = {"Nats-Msg-Id": f"id-{i}", "X-Trace": [f"t{i}", "again"]} if i % 3 == 0 else None
        data = b"" if i == 5 else bytes([i]) * (i * 10)
        js.publish(f"orders.{i % 2}.new", data, headers=headers)
    for seq in (1, 4, 8):
        js.delete_msg(name, seq)


def rows(seqs, *, stream="S", subject="s.a", partition=0, key=None, headers=None):
    n = len(seqs)
    return pa.Table.from_pydict({
        "stream": [stream] * n,
        "partition": [partition] * n,
        "seq": list(seqs),
        "subject": [subject] * n,
        "key": [key] * n,
        "ts": [1_767_225_600_000_000_000 + s for s in seqs],
        "headers": [headers] * n,
        "data": [f"m{s}".encode() for s in seqs],
    }, schema=lake.arrow_schema())


def write_dataset(path, *tables, meta=None):
    path.mkdir(parents=True, exist_ok=True)
    for i, table in enumerate(tables):
        pq.write_table(table, path / f"part-{i:05d}.parquet")
    if meta is not None:
        lake.write_meta(str(path), meta)
    return str(path)


# -- round trip ---------------------------------------------------------------------------------


def test_round_trip_keeps_sequences_gaps_times_headers_payloads(js, clock, other, tmp_path):
    fill(js, clock)
    out = tmp_path / "lake"
    summary = lake.export_stream(js, "ORDERS", str(out), file_rows=2, row_group_rows=1)
    assert summary == {
        "stream": "ORDERS", "path": str(out), "messages": 5,
        "bytes_written": summary["bytes_written"], "first_seq": 2, "last_seq": 7,
        "files": ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"],
    }
    assert summary["bytes_written"] == sum(
        (out / f).stat().st_size for f in summary["files"])
    assert sorted(p.name for p in out.iterdir()) == ["_jetlink.json", *summary["files"]]
    assert [pq.ParquetFile(out / f).metadata.num_row_groups for f in summary["files"]] == [2, 2, 1]

    clock.advance(3600 * 1000 * MS)  # the import happens later: times stay the origin's
    result = lake.import_stream(other, "COPY", str(out), txn_rows=2)
    assert result == {"stream": "COPY", "path": str(out), "messages": 5, "first_seq": 2,
                      "last_seq": 7, "created": True, "transactions": 3, "duplicates": 0}
    assert msgs(other, "COPY") == msgs(js, "ORDERS")
    assert [m[0] for m in msgs(other, "COPY")] == [2, 3, 5, 6, 7]
    assert counters(other, "COPY") == counters(js, "ORDERS") == (5, counters(js, "ORDERS")[1],
                                                                    2, 8, 2)
    origin, copy = js.stream_info("ORDERS").config, other.stream_info("COPY").config
    copy.name = "ORDERS"
    assert copy.to_json() == origin.to_json()
    # the next message goes where it would have gone in the origin
    assert other.publish("orders.x", b"next").seq == js.publish("orders.x", b"next").seq == 9


def test_dictionary_encoded_columns_are_read_as_their_values(js, clock, other, tmp_path):
    """Another writer's dataset may keep a string or binary column dictionary-encoded (as
    Spark reads it, a job takes it): imported as its values, the same messages."""
    import pyarrow.compute as pc

    fill(js, clock)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    table = pq.read_table(out, schema=pq.read_schema(next(out.glob("*.parquet"))))
    for name in ("stream", "subject", "headers", "data"):
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pc.dictionary_encode(table.column(name)))
    encoded = tmp_path / "encoded"
    encoded.mkdir()
    pq.write_table(table, encoded / "part-0.parquet")
    (encoded / "_jetlink.json").write_bytes((out / "_jetlink.json").read_bytes())
    assert pq.read_schema(encoded / "part-0.parquet").field("subject").type.id == \
        pa.dictionary(pa.int32(), pa.string()).id
    lake.import_stream(other, "COPY", str(encoded))
    assert msgs(other, "COPY") == msgs(js, "ORDERS")


def test_round_trip_through_pyarrow_dataset_reader(js, clock, tmp_path):
    fill(js, clock)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out), file_rows=2)
    table = pq.read_table(out).sort_by("seq")  # _jetlink.json is skipped by readers
    assert table.schema == lake.arrow_schema()
    assert table.column("seq").to_pylist() == [2, 3, 5, 6, 7]
    assert set(table.column("stream").to_pylist()) == {"ORDERS"}
    assert table.column("key").null_count == 5


def test_meta_document(js, clock, tmp_path):
    fill(js, clock)
    info = js.stream_info("ORDERS")
    meta = lake.stream_meta(js, "ORDERS")
    assert meta == {
        "kind": "stream",
        "name": "ORDERS",
        "cluster": "local",
        "config": info.to_json()["config"],
        "created": format_rfc3339_nano(info.created_ns),
        "created_ns": info.created_ns,
        "identity": identity(info.created_ns),
        "state": {"messages": 5, "bytes": info.state.bytes, "first_seq": 2, "last_seq": 8},
    }
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    assert lake.read_meta(str(out)) == meta
    assert json.loads((out / "_jetlink.json").read_text()) == meta
    assert lake.read_meta(f"file://{out}") == meta
    assert lake.read_meta(str(tmp_path)) is None


def test_empty_stream_exports_one_empty_file(js, clock, other, tmp_path):
    js.add_stream({"name": "E", "subjects": ["e"]})
    js.publish("e", b"gone")
    js.purge_stream("E")
    out = tmp_path / "lake"
    summary = lake.export_stream(js, "E", str(out))
    assert (summary["messages"], summary["first_seq"], summary["last_seq"]) == (0, 0, 0)
    assert summary["files"] == ["part-00000.parquet"]
    assert pq.read_table(out / "part-00000.parquet").schema == lake.arrow_schema()
    result = lake.import_stream(other, "E", f"file://{out}")
    assert (result["messages"], result["transactions"], result["created"]) == (0, 0, True)
    assert counters(other, "E") == counters(js, "E") == (0, 0, 2, 1, 0)


def test_import_into_an_existing_empty_stream_without_metadata(other, tmp_path):
    path = write_dataset(tmp_path / "lake", rows([3, 4]), rows([9]))
    other.add_stream({"name": "S", "subjects": ["s.>"]})
    result = lake.import_stream(other, "S", path)
    assert (result["messages"], result["first_seq"], result["last_seq"], result["created"]) == (
        3, 3, 9, False)
    assert [m[0] for m in msgs(other, "S")] == [3, 4, 9]
    assert counters(other, "S")[2:4] == (3, 9)


def test_unsorted_files_are_imported_in_sequence_order(other, tmp_path):
    path = write_dataset(tmp_path / "lake", rows([5, 6]), rows([1, 2]))
    other.add_stream({"name": "S", "subjects": ["s.>"]})
    lake.import_stream(other, "S", path)
    assert [m[0] for m in msgs(other, "S")] == [1, 2, 5, 6]


# -- refusals -------------------------------------------------------------------------------------


def test_import_refuses_a_stream_that_stored_messages_and_leaves_it_alone(js, clock, other,
                                                                            tmp_path):
    fill(js, clock)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    other.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
    other.publish("orders.mine", b"keep")
    before = (msgs(other, "ORDERS"), counters(other, "ORDERS"))
    with pytest.raises(lake.LakeError, match="stream ORDERS has stored messages"):
        lake.import_stream(other, "ORDERS", str(out))
    assert (msgs(other, "ORDERS"), counters(other, "ORDERS")) == before
    other.delete_msg("ORDERS", 1)  # empty again, but it did store something
    with pytest.raises(lake.LakeError, match="last sequence 1"):
        lake.import_stream(other, "ORDERS", str(out))
    assert counters(other, "ORDERS") == (0, 0, 2, 1, 0)


def test_an_import_run_again_stores_nothing_and_succeeds(js, clock, other, tmp_path):
    """The same dataset imported whole into this stream already: the run again stores
    nothing and says every row was there (as an import over the interface skips each as a
    duplicate); the stream made again under the name is another one: refused."""
    fill(js, clock)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    first = lake.import_stream(other, "ORDERS", str(out))
    before = (msgs(other, "ORDERS"), counters(other, "ORDERS"))
    again = lake.import_stream(other, "ORDERS", str(out))
    assert (again["messages"], again["duplicates"], again["created"]) == (
        0, first["messages"], False)
    assert (msgs(other, "ORDERS"), counters(other, "ORDERS")) == before
    other.delete_stream("ORDERS")
    clock.advance(1)  # (a stream's identity is its creation time)
    other.add_stream({"name": "ORDERS", "subjects": ["orders.>"]})
    other.publish("orders.mine", b"keep")
    with pytest.raises(lake.LakeError, match="stream ORDERS has stored messages"):
        lake.import_stream(other, "ORDERS", str(out))


def test_a_re_run_spelled_as_a_file_uri_is_the_same_dataset(js, clock, other, tmp_path):
    """A path and its file:// URI name one dataset: a re-run (or the resume of a cut-short
    import) spelled the other way stores nothing and succeeds."""
    fill(js, clock)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    first = lake.import_stream(other, "ORDERS", str(out))
    again = lake.import_stream(other, "ORDERS", out.resolve().as_uri())
    assert (again["messages"], again["duplicates"]) == (0, first["messages"])


@pytest.mark.parametrize("column", ["seq", "partition"])
def test_a_number_column_of_another_type_is_one_error_naming_it(js, clock, other, tmp_path,
                                                               column):
    """seq / partition stored as text: one LakeError naming the column, its type and the
    schema's (it was pyarrow's traceback from a subtraction), nothing stored."""
    import pyarrow.compute as pc

    fill(js, clock)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    table = pq.read_table(str(out))
    table = table.set_column(table.schema.get_field_index(column), column,
                             pc.cast(table[column], pa.string()))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "_jetlink.json").write_bytes((out / "_jetlink.json").read_bytes())
    pq.write_table(table, str(bad / "part-00000.parquet"))
    want = "int64" if column == "seq" else "int32"
    with pytest.raises(lake.LakeError) as err:
        lake.import_stream(other, "ORDERS", str(bad))
    assert err.value.description == (f"{bad}: column {column} is string, not an integer: not "
                                     f"the lake message schema ({column} {want})")
    assert "ORDERS" not in [i.config.name for i in other.streams()]


def test_a_transforming_stream_comes_back_from_its_own_export(js, clock, other, tmp_path):
    """A stream with a subject transform stores the transformed subjects: its export
    imports again (the subject check of an import is for streams that store what they
    listen on)."""
    js.add_stream({"name": "T", "subjects": ["orders.>"],
                   "subject_transform": {"src": "orders.>", "dest": "archive.orders.>"}})
    js.publish("orders.a", b"1")
    js.publish("orders.b", b"2")
    out = tmp_path / "lake"
    lake.export_stream(js, "T", str(out))
    res = lake.import_stream(other, "T", str(out))
    assert res["messages"] == 2
    assert [m[1] for m in msgs(other, "T")] == ["archive.orders.a", "archive.orders.b"]


def test_import_without_metadata_or_stream_is_refused(other, tmp_path):
    path = write_dataset(tmp_path / "lake", rows([1]))
    with pytest.raises(lake.LakeError, match="does not exist and .* has no _jetlink.json"):
        lake.import_stream(other, "S", path)
    assert other.stream_names() == []


@pytest.mark.parametrize(
    ("table", "why"),
    [
        (rows([1, 2], partition=1), "partition != 0"),
        (rows([1, 2], key=b"k"), "a key"),
        (rows([1, 2], subject=None), "no subject"),
    ],
    ids=["partition", "key", "no-subject"],
)
def test_topic_rows_are_refused_before_anything_is_written(other, tmp_path, table, why):
    meta = {"kind": "stream", "name": "S", "config": {"name": "S", "subjects": ["s.>"]}}
    path = write_dataset(tmp_path / "lake", rows([1]).slice(0, 0), table, meta=meta)
    with pytest.raises(lake.LakeError, match=f"rows of a topic \\({why}\\)"):
        lake.import_stream(other, "S", path)
    assert other.stream_names() == []


def test_duplicate_sequences_are_refused(other, tmp_path):
    other.add_stream({"name": "S", "subjects": ["s.>"]})
    for tables in ([rows([1, 2, 2, 3])], [rows([1, 2]), rows([2, 3])], [rows([3, 1]), rows([3])]):
        path = write_dataset(tmp_path / f"lake{len(list(tmp_path.iterdir()))}", *tables)
        with pytest.raises(lake.LakeError, match="sequence [23] appears more than once"):
            lake.import_stream(other, "S", path)
    assert counters(other, "S") == (0, 0, 0, 0, 0)


@pytest.mark.parametrize(("tables", "max_rows", "said"), [
    ([rows([1, 2, 2, 3])], 100, 2),
    ([rows([1, 2]), rows([2, 3])], 100, 2),  # across files
    ([rows([3, 1]), rows([3])], 100, 3),  # out of order: sorted
    ([rows([5, 1]), rows([2, 3])], 100, None),  # out of order, each once
    ([rows([1, 2, 4]), rows([7, 9])], 100, None),  # gaps
    ([rows([1, 2]), rows([3, 3])], 2, 3),  # in order: one pass, whatever the size
    ([rows([3, 1]), rows([3])], 2, None),  # out of order beyond max_rows: not read
])
def test_seq_twice_problem_reads_the_seq_column_as_import_does(tmp_path, tables, max_rows, said):
    path = write_dataset(tmp_path / "lake", *tables)
    assert lake.seq_twice_problem(path, max_rows=max_rows) == (
        None if said is None else
        f"sequence {said} appears more than once (a stream holds one message per sequence)")


def test_rows_of_another_stream_name_are_fine(other, tmp_path):
    path = write_dataset(tmp_path / "lake", rows([1], stream="ELSEWHERE"))
    other.add_stream({"name": "S", "subjects": ["s.>"]})
    assert lake.import_stream(other, "S", path)["messages"] == 1


def test_a_failed_import_removes_the_stream_it_created(other, tmp_path):
    meta = {"kind": "stream", "name": "S",
            "config": {"name": "S", "subjects": ["s.>"], "max_msg_size": 1}}
    path = write_dataset(tmp_path / "lake", rows([1, 2]), meta=meta)
    with pytest.raises(lake.LakeError, match="message 1 on s.a refused by stream S"):
        lake.import_stream(other, "S", path)
    assert other.stream_names() == []


def test_export_refuses_a_non_empty_directory_unless_forced(js, clock, tmp_path):
    fill(js, clock)
    out = tmp_path / "lake"
    first = lake.export_stream(js, "ORDERS", str(out), file_rows=1)
    assert len(first["files"]) == 5
    with pytest.raises(lake.LakeExistsError, match="is not empty"):
        lake.export_stream(js, "ORDERS", str(out))
    again = lake.export_stream(js, "ORDERS", str(out), force=True)
    assert again["files"] == ["part-00000.parquet"]  # the old parts are gone
    assert sorted(p.name for p in out.iterdir()) == ["_jetlink.json", "part-00000.parquet"]
    (out / "notes.txt").write_text("mine")
    with pytest.raises(lake.LakeError, match="holds more than a Parquet dataset \\(notes.txt\\)"):
        lake.export_stream(js, "ORDERS", str(out), force=True)
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "part-00000.parquet").exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(lake.LakeError, match="is not a directory"):
        lake.export_stream(js, "ORDERS", str(afile))


def test_an_export_killed_inside_leaves_no_part_readers_take(js, clock, tmp_path,
                                                             monkeypatch):
    """A part file is written under a "_" name and renamed once complete: an export that
    dies inside a part leaves a name Parquet readers skip, and the next run calls it an
    unfinished export (replaced with force)."""
    import pyarrow.parquet as pq

    fill(js, clock)
    out = tmp_path / "lake"
    seen = []
    real = pq.ParquetWriter.write_table

    def dying(self, table, **kw):
        seen.append(sorted(p.name for p in out.iterdir()))
        if len(seen) == 2:
            raise KeyboardInterrupt  # as if killed while writing the second part
        return real(self, table, **kw)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", dying)
    with pytest.raises(KeyboardInterrupt):
        lake.export_stream(js, "ORDERS", str(out), file_rows=2, row_group_rows=2)
    assert seen[0] == ["_tmp-part-00000.parquet"]  # a part being written: not a part's name
    assert sorted(p.name for p in out.iterdir()) == ["_tmp-part-00001.parquet",
                                                     "part-00000.parquet"]
    monkeypatch.setattr(pq.ParquetWriter, "write_table", real)
    with pytest.raises(lake.LakeExistsError, match="holds Parquet files without "
                                                   "_jetlink.json \\(an export that was "
                                                   "interrupted"):
        lake.export_stream(js, "ORDERS", str(out))
    done = lake.export_stream(js, "ORDERS", str(out), force=True, file_rows=2)
    assert sorted(p.name for p in out.iterdir()) == ["_jetlink.json", *done["files"]]


# -- write_stream_rows -----------------------------------------------------------------------------


def test_write_stream_rows_rolls_back_the_transaction_of_a_bad_row(js):
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    with pytest.raises(lake.LakeError, match=r"^message 2: comes after message 3 \(rows in "
                                             r"sequence order\)$"):
        lake.write_stream_rows(js, "S", [rows([1, 3]), rows([2])])
    assert counters(js, "S") == (0, 0, 0, 0, 0)
    # with two rows a transaction, the first transaction stays
    with pytest.raises(lake.LakeError, match=r"^message 3: sequence 3 appears more than once "
                                             r"\(a stream holds one message per sequence\)$"):
        lake.write_stream_rows(js, "S", [rows([1, 2, 3, 3])], txn_rows=2)
    assert [m[0] for m in msgs(js, "S")] == [1, 2]
    assert counters(js, "S")[3] == 2
    # a row at or below what the stream held before this write
    with pytest.raises(lake.LakeError, match=r"^message 2: stream S is already at sequence 2 "
                                             r"\(rows must come after it, in order\)$"):
        lake.write_stream_rows(js, "S", [rows([2, 3])])
    assert [m[0] for m in msgs(js, "S")] == [1, 2]


def test_write_stream_rows_refusals_name_the_sequence(js):
    js.add_stream({"name": "S", "subjects": ["s.>"], "max_msg_size": 1})
    with pytest.raises(lake.LakeError, match=r"message 7 on s.a refused by stream S: .*\(10054\)"):
        lake.write_stream_rows(js, "S", [rows([7])])
    with pytest.raises(lake.LakeError, match="message 1: invalid subject 's.\\*'"):
        lake.write_stream_rows(js, "S", [rows([1], subject="s.*")])
    assert counters(js, "S") == (0, 0, 0, 0, 0)
    # as an import writes (as_published): a subject the stream does not take, headers that
    # are no header block; a job seeding the pump's way writes what the pump would
    js.add_stream({"name": "A", "subjects": ["a.>"]})
    with pytest.raises(lake.LakeError, match="message 1: subject 'zzz.b' is not one of "
                                             "stream A's subjects \\(a.>\\), as a publish "
                                             "there would be refused"):
        lake.write_stream_rows(js, "A", [rows([1], subject="zzz.b")], as_published=True)
    with pytest.raises(lake.LakeError, match="message 1: headers b'garbage' are not a NATS "
                                             "header block"):
        lake.write_stream_rows(js, "A", [rows([1], subject="a.b", headers=b"garbage")],
                               as_published=True)
    assert counters(js, "A") == (0, 0, 0, 0, 0)
    assert lake.write_stream_rows(js, "A", [rows([1], subject="zzz.b")])["rows"] == 1
    js.add_stream({"name": "D", "subjects": ["d.>"], "duplicate_window": 60_000 * MS})
    hdr = b"NATS/1.0\r\nNats-Msg-Id: same\r\n\r\n"
    with pytest.raises(lake.LakeError, match="message 2 on d.a: .* duplicate of message 1"):
        lake.write_stream_rows(js, "D", [rows([1, 2], subject="d.a", headers=hdr)])
    assert counters(js, "D") == (0, 0, 0, 0, 0)


def test_write_stream_rows_keeps_sequences_and_times_and_calls_on_txn(js, clock):
    js.add_stream({"name": "S", "subjects": ["s.>"]})
    seen = []

    def on_txn(txn, d, last):
        assert txn.conn.in_transaction
        assert d.name == "S"
        stored = txn.conn.execute("SELECT last_seq FROM streams WHERE id = ?", (d.id,)).fetchone()
        seen.append((last, stored[0]))

    hdr = b"NATS/1.0\r\nX: y\r\n\r\n"
    batches = [rows([2, 3]), rows([10], headers=hdr).to_batches()[0], rows([11, 20])]
    result = lake.write_stream_rows(js, "S", batches, txn_rows=2, on_txn=on_txn)
    assert result == {"rows": 5, "first_seq": 2, "last_seq": 20, "transactions": 3}
    assert seen == [(3, 3), (11, 11), (20, 20)]
    assert [(m[0], m[2], m[3]) for m in msgs(js, "S")] == [
        (2, 1_767_225_600_000_000_002, None), (3, 1_767_225_600_000_000_003, None),
        (10, 1_767_225_600_000_000_010, hdr), (11, 1_767_225_600_000_000_011, None),
        (20, 1_767_225_600_000_000_020, None)]
    assert counters(js, "S") == (5, counters(js, "S")[1], 2, 20, 14)
    assert lake.write_stream_rows(js, "S", []) == {
        "rows": 0, "first_seq": 0, "last_seq": 0, "transactions": 0}


def test_an_on_txn_error_rolls_the_transaction_back(js):
    js.add_stream({"name": "S", "subjects": ["s.>"]})

    def on_txn(txn, d, last):
        if last > 2:
            raise RuntimeError("cursor write failed")

    with pytest.raises(RuntimeError):
        lake.write_stream_rows(js, "S", [rows([1, 2, 3, 4])], txn_rows=2, on_txn=on_txn)
    assert [m[0] for m in msgs(js, "S")] == [1, 2]


# -- the CLI ---------------------------------------------------------------------------------------


def _published(jl):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    for i in range(3):
        ok(jl("pub", f"orders.{i}", f"body {i}", "-H", f"X-N:{i}"))
    ok(jl("stream", "rmm", "ORDERS", "2", "-f"))


def test_cli_export_and_import_json(jl, cli_clock):
    _published(jl)
    out = jl.tmp / "lake"
    exported = doc(jl("stream", "export", "ORDERS", f"parquet:{out}", "--json"))
    assert exported == {
        "stream": "ORDERS",
        "path": str(out),
        "messages": 2,
        "bytes_written": (out / "part-00000.parquet").stat().st_size,
        "first_seq": 1,
        "last_seq": 3,
        "files": ["part-00000.parquet"],
    }
    other = jl.tmp / "other"
    imported = doc(jl("--data-dir", str(other), "stream", "import", "COPY", f"parquet:{out}",
                      "-j"))
    assert imported == {
        "stream": "COPY",
        "path": str(out),
        "messages": 2,
        "first_seq": 1,
        "last_seq": 3,
        "created": True,
        "transactions": 1,
        "duplicates": 0,
    }
    origin = [doc(jl("stream", "get", "ORDERS", s, "--json")) for s in ("1", "3")]
    copy = [doc(jl("--data-dir", str(other), "stream", "get", "COPY", s, "--json"))
            for s in ("1", "3")]
    assert copy == origin
    assert jl("--data-dir", str(other), "stream", "get", "COPY", "2", "-j").exit_code == 1


def test_cli_human_output(jl, cli_clock):
    _published(jl)
    out = jl.tmp / "lake"
    result = ok(jl("stream", "export", "ORDERS", f"parquet:{out}"))
    size = (out / "part-00000.parquet").stat().st_size
    assert result.stdout.startswith(
        f"Exported 2 messages of stream ORDERS (sequences 1 to 3) to {out}: 1 file, ")
    assert result.stdout.count("\n") == 1 and size > 0
    result = ok(jl("--data-dir", str(jl.tmp / "other"), "stream", "import", "COPY",
                   f"parquet:file://{out}"))
    assert result.stdout == (
        f"Imported 2 messages into new stream COPY (sequences 1 to 3) from file://{out}\n")
    # into a stream whose limits keep fewer: said under the count
    third = jl.tmp / "third"
    ok(jl("--data-dir", str(third), "stream", "add", "ONE", "--subjects", "orders.>",
          "--max-msgs", "1", "--defaults"))
    result = ok(jl("--data-dir", str(third), "stream", "import", "ONE", f"parquet:{out}"))
    assert result.stdout == (
        f"Imported 2 messages into stream ONE (sequences 1 to 3) from {out}\n"
        "The stream holds 1 of them: its limits removed the rest (jetlink stream info ONE "
        "shows its limits)\n")


def test_cli_export_overwrite_needs_force(jl, cli_clock):
    _published(jl)
    out = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{out}"))
    refused = jl("stream", "export", "ORDERS", f"parquet:{out}")
    assert refused.exit_code == 2
    assert "pass -f/--force to replace the dataset in" in refused.stderr
    ok(jl("stream", "export", "ORDERS", f"parquet:{out}", "-f"))
    # a directory holding other files: refused at once, no question about a "dataset"
    notes = jl.tmp / "notes"
    notes.mkdir()
    (notes / "notes.txt").write_text("mine")
    r = jl("stream", "export", "ORDERS", f"parquet:{notes}")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: {notes} holds more than a Parquet dataset (notes.txt): not replacing "
        "it; choose another directory or empty it yourself\n"))
    assert (notes / "notes.txt").read_text() == "mine"


def test_cli_a_location_no_filesystem_opens_is_a_usage_error(jl, cli_clock):
    _published(jl)
    for verb in ("export", "import"):
        r = jl("stream", verb, "ORDERS", "parquet:nosuchscheme://bucket/x")
        assert r.exit_code == 2, (verb, r.stderr)
        assert r.stderr.startswith("jetlink: error: nosuchscheme://bucket/x: unsupported "
                                   "dataset location: ")


def test_cli_import_into_a_new_stream_names_what_its_config_overlaps(jl, cli_clock):
    _published(jl)
    out = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{out}"))
    r = jl("stream", "import", "COPY", f"parquet:{out}")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: cannot create stream COPY from the config in {out}: subjects "
        'overlap with an existing stream (10065): "orders.>" overlaps "orders.>" of stream '
        "ORDERS; create the stream yourself (jetlink stream add) and import into it\n"))


def test_cli_import_refuses_a_non_empty_stream(jl, cli_clock):
    _published(jl)
    out = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{out}"))
    before = doc(jl("stream", "info", "ORDERS", "--json"))["state"]
    result = jl("stream", "import", "ORDERS", f"parquet:{out}", "--json")
    assert result.exit_code == 1
    assert "stream ORDERS has stored messages" in json.loads(result.stdout)["error"]["description"]
    assert doc(jl("stream", "info", "ORDERS", "--json"))["state"] == before


@pytest.mark.parametrize("verb", ["export", "import"])
@pytest.mark.parametrize("target", ["/tmp/lake", "parquet:", "csv:/tmp/lake"])
def test_cli_path_without_parquet_prefix_is_a_usage_error(jl, verb, target):
    result = jl("stream", verb, "ORDERS", target)
    assert result.exit_code == 2
    assert "Invalid value for 'parquet:PATH'" in result.stderr
    assert ("a dataset is given as parquet:PATH, PATH a directory or a URI "
            "(parquet:/data/orders, parquet:file:///data/orders)") in result.stderr
    assert ("did you mean parquet:/tmp/lake?" in result.stderr) == (target == "/tmp/lake")


@pytest.mark.parametrize("verb", ["export", "import"])
def test_cli_a_doubled_parquet_prefix_is_a_usage_error(jl, verb, tmp_path, monkeypatch):
    """parquet:parquet:/x would write ./parquet:/x (or name a filesystem "parquet"): refused,
    naming the dataset meant, nothing written."""
    monkeypatch.chdir(tmp_path)
    result = jl("stream", verb, "ORDERS", "parquet:parquet:/tmp/lake")
    assert result.exit_code == 2
    assert ("'parquet:parquet:/tmp/lake': the parquet: prefix is given twice: the dataset "
            "at /tmp/lake is parquet:/tmp/lake") in result.stderr
    assert not (tmp_path / "parquet:").exists()


@pytest.mark.parametrize("verb", ["export", "import"])
def test_cli_arguments_swapped_are_said_so(jl, verb):
    """The dataset first and the stream second: a usage error with the command that has
    them in order (it suggested parquet:ORDERS)."""
    before = data_dir_bytes(jl.data)
    result = jl("stream", verb, "parquet:/tmp/lake", "ORDERS")
    assert data_dir_bytes(jl.data) == before
    assert result.exit_code == 2 and (
        "Invalid value for 'parquet:PATH': 'ORDERS': the stream comes first, then the dataset "
        f"(jetlink stream {verb} ORDERS parquet:/tmp/lake)") in result.stderr, result.stderr


def test_a_write_of_the_meta_file_cut_short_leaves_the_old_one_whole(tmp_path, monkeypatch):
    """A process killed while writing ``_jetlink.json`` (a failback's tail, an export) must
    not leave a torn file its re-run cannot read: the write goes to a temporary file moved
    into place. The cut is made half-way through the bytes."""
    path = str(tmp_path / "ds")
    (tmp_path / "ds").mkdir()
    lake.write_meta(path, {"kind": "stream", "name": "OLD"})
    real = lake.lake_filesystem

    class Cut(Exception):
        pass

    class HalfStream:
        def __init__(self, stream):
            self.stream = stream

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.stream.close()

        def write(self, data):
            self.stream.write(data[: len(data) // 2])
            raise Cut

    class CuttingFs:
        def __init__(self, fs):
            self.fs = fs

        def open_output_stream(self, where):
            return HalfStream(self.fs.open_output_stream(where))

        def __getattr__(self, name):
            return getattr(self.fs, name)

    monkeypatch.setattr(lake, "lake_filesystem",
                        lambda p: (CuttingFs(real(p)[0]), real(p)[1]))
    with pytest.raises(Cut):
        lake.write_meta(path, {"kind": "stream", "name": "NEW" * 1000})
    monkeypatch.setattr(lake, "lake_filesystem", real)
    assert lake.read_meta(path) == {"kind": "stream", "name": "OLD"}


@pytest.mark.parametrize(("uri", "bounded"), [
    ("gs://b/x", "gs://b/x?retry_limit_seconds=30"),
    ("gcs://b/x", "gcs://b/x?retry_limit_seconds=30"),
    ("GS://b/x", "GS://b/x?retry_limit_seconds=30"),
    ("gs://b/x?project_id=p", "gs://b/x?project_id=p&retry_limit_seconds=30"),
    ("gs://b/x?retry_limit_seconds=5", "gs://b/x?retry_limit_seconds=5"),  # the URI's own
    ("s3://b/x", "s3://b/x"),
    ("hdfs://nn:8020/x", "hdfs://nn:8020/x"),
])
def test_google_cloud_storage_retries_are_bounded(uri, bounded):
    """pyarrow retries a GCS request for 15 minutes by default: a location without
    credentials or network would hang the command that long; 30 s unless the URI says."""
    assert lake._bounded_retries(uri) == bounded


@pytest.mark.parametrize(("text", "line"), [
    ("Unable to load libjvm\ndlopen(/a) failed\ndlopen(/b) failed", "Unable to load libjvm"),
    ("google::cloud::Status(UNAVAILABLE: Retry policy exhausted, with a last message of X "
     "error_info={reason=, metadata={a=X}})", "UNAVAILABLE: Retry policy exhausted, with a "
     "last message of X"),
    ("", "OSError"),
])
def test_a_filesystem_error_is_one_line(text, line):
    assert lake._first_line(OSError(text)) == line


def test_an_import_stores_every_row_whatever_its_msg_id(other, tmp_path):
    """The origin held both (its window had passed between them): the import stores each,
    as a mirror stores its origin's; a publish after it within the window is a duplicate."""
    hdr = b"NATS/1.0\r\nNats-Msg-Id: X\r\n\r\n"
    path = write_dataset(tmp_path / "lake", rows([1, 2], headers=hdr))
    other.add_stream({"name": "S", "subjects": ["s.>"], "duplicate_window": 60_000 * MS})
    assert lake.import_stream(other, "S", path)["messages"] == 2
    assert [m[0] for m in msgs(other, "S")] == [1, 2]
    assert other.publish("s.a", b"x", headers={"Nats-Msg-Id": "X"}).duplicate


@pytest.mark.parametrize(("table", "said"), [
    (lambda: rows([1, 2, 3]).set_column(5, "ts", pa.array([1, None, 3], pa.int64())),
     "message 2: a row without a time (column ts null"),
    (lambda: pa.concat_tables([rows([1, 2]), rows([3], subject="zzz.b")]),
     "message 3: subject 'zzz.b' is not one of stream S's subjects (s.>), as a publish "
     "there would be refused"),
    (lambda: pa.concat_tables([rows([1, 2]), rows([3], subject="bad subj")]),
     "message 3: invalid subject 'bad subj' (column subject)"),
])
def test_a_row_the_write_would_refuse_is_refused_before_anything(other, tmp_path, table, said):
    """Into an existing stream: nothing stored (it kept what came before the row), the
    file named."""
    path = write_dataset(tmp_path / "lake", table())
    other.add_stream({"name": "S", "subjects": ["s.>"]})
    with pytest.raises(lake.LakeError, match=re.escape(said)):
        lake.import_stream(other, "S", path, txn_rows=1)
    assert counters(other, "S") == (0, 0, 0, 0, 0)


def test_an_interrupted_import_keeps_what_it_stored_and_continues(other, tmp_path):
    """Ctrl-C after a transaction: the stream it created keeps the rows committed (the
    LakeInterrupted says so), and the same import run again stores the rest."""
    meta = {"kind": "stream", "name": "S", "config": {"name": "S", "subjects": ["s.>"]},
            "state": {"messages": 4, "first_seq": 1, "last_seq": 4}}
    path = write_dataset(tmp_path / "lake", rows([1, 2, 3, 4]), meta=meta)

    def stop(_n):
        raise KeyboardInterrupt

    with pytest.raises(lake.LakeInterrupted) as stopped:
        lake.import_stream(other, "S", path, txn_rows=2, on_rows=stop)
    assert stopped.value.left == ("stream S keeps the messages imported so far up to "
                                  "sequence 2; the same import run again continues after them")
    assert [m[0] for m in msgs(other, "S")] == [1, 2]
    again = lake.import_stream(other, "S", path, txn_rows=2)
    assert (again["messages"], again["duplicates"]) == (2, 2)  # the 2 stored before: skipped
    assert [m[0] for m in msgs(other, "S")] == [1, 2, 3, 4]


def test_cli_an_interrupted_import_or_export_prints_its_one_document(jl, cli_clock,
                                                                     monkeypatch):
    """Ctrl-C of an import or an export with --json: one document saying what it left
    (the notice on stderr too), exit status 130."""
    _published(jl)
    out = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{out}"))
    real = lake.write_stream_rows

    def interrupted(*a, **kw):
        kw["on_rows"] = lambda _n: (_ for _ in ()).throw(KeyboardInterrupt)
        return real(*a, **kw)

    monkeypatch.setattr(lake, "write_stream_rows", interrupted)
    ok(jl("cluster", "add", "other"))
    r = jl("--cluster", "other", "stream", "import", "ORDERS", f"parquet:{out}", "--json")
    left = ("stream ORDERS keeps the messages imported so far up to sequence 3; the same "
            "import run again continues after them")
    assert (r.exit_code, json.loads(r.stdout), r.stderr) == (130, {
        "stream": "ORDERS", "path": str(out), "interrupted": True, "left": left},
        f"jetlink: interrupted: {left}\n")
    monkeypatch.setattr(lake, "export_stream", lambda *a, **kw: (_ for _ in ()).throw(
        lake.LakeInterrupted("an incomplete dataset")))
    r = jl("stream", "export", "ORDERS", f"parquet:{jl.tmp / 'b'}", "--json")
    assert (r.exit_code, json.loads(r.stdout)) == (130, {
        "stream": "ORDERS", "path": str(jl.tmp / "b"), "interrupted": True,
        "left": "an incomplete dataset"})


def test_a_resumed_import_of_a_sealed_streams_dataset_seals_the_stream_it_created(
        other, tmp_path):
    """The first run created the stream unsealed from a sealed stream's dataset and was
    cut short: the same import run again stores the rest, then seals it (as the first run
    would have); a stream the user made and an import filled is not sealed."""
    meta = {"kind": "stream", "name": "S",
            "config": {"name": "S", "subjects": ["s.>"], "sealed": True},
            "state": {"messages": 4, "first_seq": 1, "last_seq": 4}}
    path = write_dataset(tmp_path / "lake", rows([1, 2, 3, 4]), meta=meta)

    def stop(_n):
        raise KeyboardInterrupt

    with pytest.raises(lake.LakeInterrupted):
        lake.import_stream(other, "S", path, txn_rows=2, on_rows=stop)
    assert not other.stream_info("S").config.sealed
    lake.import_stream(other, "S", path, txn_rows=2)
    assert [m[0] for m in msgs(other, "S")] == [1, 2, 3, 4]
    assert other.stream_info("S").config.sealed
    assert other.cluster.meta_get(lake.IMPORT_MARK + "S" + lake.SEAL_MARK) is None
    other.add_stream({"name": "MINE", "subjects": ["m.>"]})
    lake.import_stream(other, "MINE", write_dataset(
        tmp_path / "mine", rows([1, 2], stream="MINE", subject="m.a"), meta={
            **meta, "name": "MINE", "config": {"name": "MINE", "subjects": ["m.>"],
                                               "sealed": True}}))
    assert not other.stream_info("MINE").config.sealed


def test_a_sealed_streams_export_imports_into_a_new_sealed_stream(js, clock, other, tmp_path):
    """A create can not be sealed (10052): the import creates the stream unsealed from the
    dataset's config, stores the rows, then seals it, as the origin was."""
    fill(js, clock)
    cfg = js.stream_info("ORDERS").config.copy()
    cfg.sealed = True
    js.update_stream(cfg)
    path = str(tmp_path / "lake")
    lake.export_stream(js, "ORDERS", path)
    res = lake.import_stream(other, "ORDERS", path)
    assert (res["created"], res["messages"]) == (True, 5)
    info = other.stream_info("ORDERS")
    assert info.config.sealed and counters(other, "ORDERS") == counters(js, "ORDERS")
    assert msgs(other, "ORDERS") == msgs(js, "ORDERS")


def test_a_mirror_through_its_own_clusters_api_is_not_imported_under_its_origins_name(jl):
    """A dataset of a mirror of ORDERS@local (external api $JS.local.API: what a Spark
    mirror job and an export of such a mirror record) imported as ORDERS into a cluster
    local would mirror itself: refused as the cycle it is (10052), nothing created; under
    another name it is the mirror it was."""
    _published(jl)
    ok(jl("stream", "add", "M", "--mirror", "ORDERS@local", "--defaults"))
    ok(jl("replicate"))
    out = jl.tmp / "m"
    ok(jl("stream", "export", "M", f"parquet:{out}"))
    other = str(jl.tmp / "other")
    r = jl("--data-dir", other, "stream", "import", "ORDERS", f"parquet:{out}")
    assert (r.exit_code, r.stderr) == (1, (
        f"jetlink: error: cannot create stream ORDERS from the config in {out}: detected "
        'cycle (10052): mirror.name = "ORDERS" (the dataset is a mirror of ORDERS: import it '
        "under another name, a mirror of it, or create stream ORDERS yourself with its "
        "subjects (jetlink stream add) and import into it)\n"))
    assert jl("--data-dir", other, "stream", "ls", "-j").exit_code != 0 or doc(
        jl("--data-dir", other, "stream", "ls", "-j")) == []
    ok(jl("--data-dir", other, "stream", "import", "BACKUP", f"parquet:{out}"))
    assert doc(jl("--data-dir", other, "stream", "info", "BACKUP", "-j"))["config"][
        "mirror"]["name"] == "ORDERS"
