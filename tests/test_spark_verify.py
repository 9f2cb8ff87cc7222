"""``jetlink spark verify``: a stream and its mirror compare equal; a deleted, an extra, a
changed or a re-timed message is listed (exit status 1); topics compare per partition.

Origin ``O`` (subjects o.a / o.b, some headers, a gap at 4) and its mirror ``M`` filled by
the engine's pump; the changed copies are Parquet exports of ``M`` edited with pyarrow.
"""

from __future__ import annotations

import json
import re

import pytest

from jetlink.core import lake
from jetlink.core import replication as RP

pytestmark = pytest.mark.spark

TOP_KEYS = ["equal", "by", "ignore_time", "a", "b", "groups", "missing_in_a", "missing_in_b",
            "different", "totals"]
HEX16 = re.compile(r"^[0-9a-f]{16}$")


@pytest.fixture
def pair(spark, dd, js, cli_clock):
    """O: 11 messages at seqs 1..12 without 4 (o.a at odd seqs, o.b at even); M its mirror."""
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    for i in range(12):
        js.publish(f"o.{'ab'[i % 2]}", f"m{i}".encode(),
                   headers={"X-N": str(i)} if i % 3 == 0 else None)
        cli_clock.advance(1_000_000)
    js.delete_msg("O", 4)
    js.add_stream({"name": "M", "mirror": {"name": "O"}})
    RP.pump_until_idle(dd, cli_clock)
    return js


def _copy(js, tmp_path, name: str, change=None) -> str:
    """A Parquet export of ``name`` with ``change(rows)`` applied to its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / f"copy-{name}"
    lake.export_stream(js, name, str(path))
    if change is not None:
        part = path / "part-00000.parquet"
        rows = pq.read_table(part).to_pylist()
        change({r["seq"]: r for r in rows})
        pq.write_table(pa.Table.from_pylist(rows, lake.arrow_schema()), part)
    return f"parquet:{path}"


def _doc(res) -> dict:
    return json.loads(res.stdout)


def test_mirror_is_identical(jl, pair):
    res = jl("spark", "verify", "O", "store:local/M")
    assert res.exit_code == 0, res.output
    assert res.stdout == "store:local/O and store:local/M are identical: 11 messages\n"

    res = jl("spark", "verify", "M", "O", "--json")
    assert res.exit_code == 0, res.output
    assert _doc(res) == {
        "equal": True, "by": "subject", "ignore_time": False,
        "a": {"address": "store:local/M", "messages": 11, "first_seq": 1, "last_seq": 12},
        "b": {"address": "store:local/O", "messages": 11, "first_seq": 1, "last_seq": 12},
        "groups": [], "missing_in_a": [], "missing_in_b": [], "different": [],
        "totals": {"matching": 11, "missing_in_a": 0, "missing_in_b": 0, "different": 0,
                   "groups": 0}}


def test_deleted_and_extra_messages(jl, pair):
    pair.delete_msg("O", 5)  # after the pump: the mirror keeps it
    pair.publish("o.b", b"late")  # seq 13, not pumped yet
    res = jl("spark", "verify", "O", "M", "-j")
    assert res.exit_code == 1, res.output
    doc = _doc(res)
    assert list(doc) == TOP_KEYS
    assert doc["equal"] is False
    assert doc["a"] == {"address": "store:local/O", "messages": 11, "first_seq": 1,
                        "last_seq": 13}
    assert doc["b"] == {"address": "store:local/M", "messages": 11, "first_seq": 1,
                        "last_seq": 12}
    assert doc["missing_in_a"] == [{"seq": 5, "subject": "o.a"}]
    assert doc["missing_in_b"] == [{"seq": 13, "subject": "o.b"}]
    assert doc["different"] == []
    assert doc["totals"] == {"matching": 10, "missing_in_a": 1, "missing_in_b": 1,
                             "different": 0, "groups": 2}
    ga, gb = doc["groups"]
    assert [ga["subject"], gb["subject"]] == ["o.a", "o.b"]
    assert {k: v for k, v in ga["a"].items() if k != "checksum"} == {
        "messages": 5, "first_seq": 1, "last_seq": 11}
    assert {k: v for k, v in ga["b"].items() if k != "checksum"} == {
        "messages": 6, "first_seq": 1, "last_seq": 11}
    assert (gb["a"]["messages"], gb["a"]["last_seq"]) == (6, 13)
    assert (gb["b"]["messages"], gb["b"]["last_seq"]) == (5, 12)
    for g in (ga, gb):
        assert list(g) == ["subject", "a", "b"]
        assert list(g["a"]) == ["messages", "first_seq", "last_seq", "checksum"]
        assert HEX16.match(g["a"]["checksum"]) and HEX16.match(g["b"]["checksum"])
        assert g["a"]["checksum"] != g["b"]["checksum"]

    res = jl("spark", "verify", "O", "M")
    assert res.exit_code == 1, res.output
    out = res.stdout
    assert out.startswith("store:local/O and store:local/M differ\n")
    assert re.search(r"Missing in A:\s+1\n", out) and re.search(r"Differing subjects:\s+2\n",
                                                                 out)
    assert "Subjects that differ" in out
    assert "\nMissing in A (in B only)\n" in out and "\nMissing in B (in A only)\n" in out
    assert re.search(r"│ 13 +│ o\.b +│", out)


def test_changed_payload_headers_and_subject(jl, pair, tmp_path):
    def change(rows):
        rows[2]["data"] = b"changed"
        rows[6]["subject"] = "o.c"
        rows[7]["headers"] = None
        rows[10]["key"] = b""  # null and empty differ

    copy = _copy(pair, tmp_path, "M", change)
    res = jl("spark", "verify", "O", copy, "--json", "--limit", "3")
    assert res.exit_code == 1, res.output
    doc = _doc(res)
    assert doc["different"] == [
        {"seq": 2, "subject_a": "o.b", "subject_b": "o.b", "fields": ["data"]},
        {"seq": 6, "subject_a": "o.b", "subject_b": "o.c", "fields": ["subject"]},
        {"seq": 7, "subject_a": "o.a", "subject_b": "o.a", "fields": ["headers"]},
    ]
    assert doc["totals"] == {"matching": 7, "missing_in_a": 0, "missing_in_b": 0,
                             "different": 4, "groups": 3}
    assert [g["subject"] for g in doc["groups"]] == ["o.a", "o.b", "o.c"]
    assert doc["groups"][2]["a"] is None and doc["groups"][2]["b"]["messages"] == 1
    assert doc["b"]["address"] == copy

    res = jl("spark", "verify", "O", copy, "--limit", "1")
    assert res.exit_code == 1
    assert "Different (first 1 of 4)" in res.stdout
    assert "Subjects that differ (first 1 of 3)" in res.stdout


def test_time_differences(jl, pair, tmp_path):
    def change(rows):
        rows[9]["ts"] += 1

    copy = _copy(pair, tmp_path, "O", change)
    res = jl("spark", "verify", copy, "M", "-j")
    assert res.exit_code == 1, res.output
    doc = _doc(res)
    assert doc["different"] == [{"seq": 9, "subject_a": "o.a", "subject_b": "o.a",
                                 "fields": ["ts"]}]
    assert [g["subject"] for g in doc["groups"]] == ["o.a"]

    res = jl("spark", "verify", copy, "M", "--ignore-time")
    assert res.exit_code == 0, res.output
    assert res.stdout == (f"{copy} and store:local/M are identical: 11 messages "
                          "(times not compared)\n")


def test_topics_compare_by_partition(spark):
    from jetlink.sparkops.verify import compare

    def rows(changes=None):
        out = []
        for p in (0, 1):
            for off in range(4):
                out.append(["T", p, off, None, f"k{off}".encode(), 1000 + off, None,
                            None if (p, off) == (1, 3) else f"v{p}{off}".encode()])
        for fn in changes or []:
            fn(out)
        return spark.createDataFrame([tuple(r) for r in out], lake.spark_ddl())

    def drop(out):
        del out[1]  # partition 0, offset 1

    def rekey(out):
        out[5][4] = b"other"  # partition 1, offset 1

    def untombstone(out):
        out[7][7] = b""  # partition 1, offset 3: a tombstone becomes an empty value

    doc = compare(rows(), rows([rekey, untombstone, drop]), by="partition")
    assert doc["equal"] is False
    assert doc["missing_in_b"] == [{"partition": 0, "seq": 1}]
    assert doc["missing_in_a"] == []
    assert doc["different"] == [{"partition": 1, "seq": 1, "fields": ["key"]},
                                {"partition": 1, "seq": 3, "fields": ["data"]}]
    assert [g["partition"] for g in doc["groups"]] == [0, 1]
    assert doc["groups"][0]["a"]["messages"] == 4 and doc["groups"][0]["b"]["messages"] == 3
    assert doc["totals"] == {"matching": 5, "missing_in_a": 0, "missing_in_b": 1,
                             "different": 2, "groups": 2}


def test_a_side_holding_a_sequence_twice_is_refused_not_called_identical(jl, pair, tmp_path):
    """Copies of five rows added to a dataset: the join pairs them with each other, so both
    sides would count 2,005-like and look identical; refused, naming the first one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    copy = _copy(pair, tmp_path, "M")
    part = tmp_path / "copy-M" / "part-00000.parquet"
    rows = pq.read_table(part).to_pylist()
    rows += [dict(r) for r in rows if r["seq"] in (6, 7)]  # the same sequences again
    pq.write_table(pa.Table.from_pylist(rows, lake.arrow_schema()), part)
    for a, b, side in (("O", copy, "B"), (copy, "O", "A"), (copy, copy, "A")):
        res = jl("spark", "verify", a, b)
        assert (res.exit_code, res.stderr) == (1, (
            f"jetlink: error: {side} holds sequence 6 2 times (a stream or a topic holds "
            "each once): not compared\n")), (a, b, res.stderr)


def test_refusals(jl, pair, tmp_path):
    res = jl("spark", "verify", "O", f"parquet:{tmp_path / 'nothing'}")
    assert res.exit_code == 1
    assert "no such dataset" in res.stderr
    res = jl("spark", "verify", "O", "NOPE", "-j")  # the server's document, as stream info's
    assert (res.exit_code, json.loads(res.stdout)) == (1, {"error": {
        "code": 404, "err_code": 10059, "description": "stream not found"}})
    res = jl("spark", "verify", "O", "NOPE")
    assert (res.exit_code, res.stderr) == (
        1, "jetlink: error: stream not found (10059): store:local/NOPE\n")
    res = jl("spark", "verify", "O", "M", "--limit", "-1")
    assert res.exit_code == 2
    res = jl("spark", "verify", "O", "M", "--limit", str(2**31))  # (Spark's limit: an Int)
    assert res.exit_code == 2 and "0<=x<=2147483647" in res.stderr, res.output

    copy = _copy(pair, tmp_path, "O")
    meta = tmp_path / "copy-O" / lake.META_FILE
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "kind": "topic"}))
    res = jl("spark", "verify", "O", copy)
    assert res.exit_code == 1
    assert f"cannot compare a stream (store:local/O) with a topic ({copy})" in res.stderr


def test_store_topics_a_mirror_topic_and_its_source(jl, spark, cli_clock):
    """A topic of the store and its mirror topic after the link's pump: identical by
    partition; a record produced after the last pump makes them differ."""
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.topics import Kafka
    from jetlink.core.store import DataDir

    ok = lambda r: (r.exit_code == 0) or pytest.fail(r.output)  # noqa: E731
    dd = DataDir(jl.data)
    dd.add_cluster("src", "kafka")
    dd.add_cluster("dst", "kafka")
    src = Kafka(dd.open("src"), cli_clock)
    src.create_topic("T", 3)
    for p in range(3):
        src.produce("T", [(f"k{i}".encode(), f"v{p}.{i}".encode()) for i in range(3)],
                    partition=p)
    Links(dd, "dst", cli_clock).create("L", "src", {})
    dd.close()
    ok(jl("--cluster", "dst", "mirrors", "create", "T", "--link", "L"))
    ok(jl("replicate"))
    res = jl("spark", "verify", "store:src/topic/T", "store:dst/topic/T", "-j")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["by"] == "partition" and report["a"]["messages"] == 9
    ok(jl("--cluster", "dst", "mirrors", "pause", "T", "--link", "L"))
    ok(jl("--cluster", "src", "topic", "produce", "T", "late", "--partition", "0"))
    res = jl("spark", "verify", "store:src/topic/T", "store:dst/topic/T", "-j")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["totals"]["missing_in_b"] == 1
    res = jl("spark", "verify", "store:src/topic/NOPE", "store:dst/topic/T")
    assert res.exit_code == 1 and "no such topic" in res.stderr
