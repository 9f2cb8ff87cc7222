"""Live data in the lake, on real nats-servers: `jetlink -s URL stream export` keeps what the
server stores (sequences, times, header blocks, subjects; the config and state it reports),
resumes after an interruption (an injected failure, a SIGKILLed process), reads streams
without direct gets; `stream import` publishes a dataset with Nats-Msg-Id so a re-run stores
nothing twice; errors are one line; `spark verify` compares a live mirror with its origin."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys

import pytest
from helpers import WAIT_TIMEOUT, runner, wait_until

from jetlink.cli.main import app
from jetlink.core import lake
from jetlink.core.clock import parse_rfc3339_nano
from jetlink.core.live.client import connect
from jetlink.core.live.jetstream import LiveJetStream
from jetlink.core.live.target import ServerTarget
from live.clihelp import doc, ok


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)


@pytest.fixture
def js(live):
    j = LiveJetStream(connect(ServerTarget((live.url,))))
    yield j
    j.close()


def jl(server, *args):
    return runner.invoke(app, ["--server", server, *args], prog_name="jetlink")


def one_line_error(res, text):
    assert res.exit_code == 1, (res.exit_code, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr + res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert text in lines[0], lines[0]
    return lines[0]


def rows_of(path) -> list[dict]:
    import pyarrow.dataset as ds

    table = ds.dataset(str(path), format="parquet").to_table()
    return sorted(table.to_pylist(), key=lambda r: r["seq"])


def server_msg(live, stream: str, seq: int) -> dict:
    m = live.api(f"STREAM.MSG.GET.{stream}", {"seq": seq})["message"]
    return {"seq": m["seq"], "subject": m["subject"], "ts": parse_rfc3339_nano(m["time"]),
            "headers": base64.b64decode(m["hdrs"]) if m.get("hdrs") else None,
            "data": base64.b64decode(m.get("data") or "")}


def fill_orders(live, **cfg) -> None:
    """ORDERS (orders.>): 12 messages, headers on every third, seq 4 deleted."""
    c = live.client()
    assert "error" not in c.stream_create({"name": "ORDERS", "subjects": ["orders.>"], **cfg})
    for i in range(12):
        headers = {"X-N": str(i), "Nats-Msg-Id": f"id-{i}"} if i % 3 == 0 else None
        ack = c.js_publish(f"orders.{'ab'[i % 2]}.{i}", f"body {i}".encode(), headers=headers)
        assert ack.get("seq") == i + 1, ack
    assert live.api("STREAM.MSG.DELETE.ORDERS", {"seq": 4}).get("success")


# -- export ------------------------------------------------------------------------------------


@pytest.mark.parametrize("direct", [True, False])
def test_export_keeps_what_the_server_stores(live, tmp_path, direct):
    fill_orders(live, allow_direct=direct)
    out = tmp_path / "lake"
    summary = doc(jl(live.url, "stream", "export", "ORDERS", f"parquet:{out}", "--json"))
    assert summary == {"stream": "ORDERS", "path": str(out), "messages": 11,
                       "bytes_written": (out / "part-00000.parquet").stat().st_size,
                       "first_seq": 1, "last_seq": 12, "files": ["part-00000.parquet"],
                       "resumed_from": None}
    assert sorted(p.name for p in out.iterdir()) == ["_jetlink.json", "part-00000.parquet"]
    rows = rows_of(out)
    assert [r["seq"] for r in rows] == [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12]
    for r in rows:
        assert (r["stream"], r["partition"], r["key"]) == ("ORDERS", 0, None)
        want = server_msg(live, "ORDERS", r["seq"])
        assert {k: r[k] for k in want} == want
    assert rows[0]["headers"].startswith(b"NATS/1.0\r\n")
    assert b"Nats-Msg-Id: id-0\r\n" in rows[0]["headers"]
    assert rows[1]["headers"] is None
    info = live.client().stream_info("ORDERS")
    meta = json.loads((out / "_jetlink.json").read_text())
    assert meta["kind"] == "stream" and meta["name"] == "ORDERS" and meta["server"] == live.url
    assert meta["config"] == info["config"]
    assert meta["created"] == info["created"]
    assert meta["state"] == {"messages": 11, "bytes": info["state"]["bytes"], "first_seq": 1,
                             "last_seq": 12}


def test_export_is_one_cut_and_reads_past_file_boundaries(live, js, tmp_path):
    """Messages published while the export runs are not in it; many small part files."""
    js.add_stream({"name": "BIG", "subjects": ["big.>"]})
    acks = js.publish_batch([(f"big.{i % 7}", b"x" * (i % 50), None) for i in range(3000)])
    assert all(a.seq for a in acks)
    out = tmp_path / "lake"
    seen = []

    def publish_more(progress):
        seen.append(progress["through"])
        js.publish("big.late", b"after the cut")

    res = lake.export_stream(js, "BIG", str(out), file_rows=400, batch_rows=256,
                             row_group_rows=100, on_file=publish_more)
    assert res["messages"] == 3000 and res["last_seq"] == 3000
    assert len(res["files"]) == 8 and seen[:2] == [400, 800]
    rows = rows_of(out)
    assert [r["seq"] for r in rows] == list(range(1, 3001))
    assert js.stream_info("BIG").state.last_seq == 3008
    assert json.loads((out / "_jetlink.json").read_text())["state"]["last_seq"] == 3000


def test_export_of_an_empty_stream_and_of_a_workqueue(live, js, tmp_path):
    js.add_stream({"name": "E", "subjects": ["e.>"]})
    res = lake.export_stream(js, "E", str(tmp_path / "e"))
    assert (res["messages"], res["files"]) == (0, ["part-00000.parquet"])
    assert rows_of(tmp_path / "e") == []
    for direct in (True, False):  # direct gets; else one STREAM.MSG.GET each (no consumer)
        wq = f"WQ{int(direct)}"
        js.add_stream({"name": wq, "subjects": [f"{wq}.>"], "retention": "workqueue",
                       "allow_direct": direct})
        js.publish_batch([(f"{wq}.a", b"1", None), (f"{wq}.b", b"2", {"H": "v"}),
                          (f"{wq}.c", b"3", None)])
        js.delete_msg(wq, 2)
        res = lake.export_stream(js, wq, str(tmp_path / wq))
        assert res["messages"] == 2
        rows = rows_of(tmp_path / wq)
        assert [(r["seq"], r["subject"], r["data"]) for r in rows] == [(1, f"{wq}.a", b"1"),
                                                                        (3, f"{wq}.c", b"3")]
        assert js.stream_info(wq).state.messages == 2  # reading took nothing away


def test_export_errors_are_one_line(live, tmp_path):
    res = jl(live.url, "stream", "export", "NOPE", f"parquet:{tmp_path / 'x'}")
    assert one_line_error(res, "stream not found (10059)")
    assert not (tmp_path / "x").exists()
    fill_orders(live)
    out = tmp_path / "lake"
    ok(jl(live.url, "stream", "export", "ORDERS", f"parquet:{out}"))
    res = jl(live.url, "stream", "export", "ORDERS", f"parquet:{out}")
    assert res.exit_code == 2 and "pass -f/--force to replace the dataset in" in res.stderr
    res = ok(jl(live.url, "stream", "export", "ORDERS", f"parquet:{out}", "-f"))
    assert res.stdout.startswith("Exported 11 messages of stream ORDERS (sequences 1 to 12) "
                                 f"to {out}: 1 file, ")


# -- resuming ------------------------------------------------------------------------------------


class Stop(Exception):
    pass


def test_an_interrupted_export_resumes_after_its_last_part(live, js, tmp_path):
    js.add_stream({"name": "R", "subjects": ["r.>"], "allow_direct": False})
    js.publish_batch([(f"r.{i % 3}", str(i).encode(), {"I": str(i)} if i % 5 == 0 else None)
                      for i in range(1000)])
    out = tmp_path / "lake"

    def fail_after_three(progress):
        if len(progress["files"]) == 3:
            raise Stop

    with pytest.raises(Stop):
        lake.export_stream(js, "R", str(out), file_rows=150, batch_rows=64,
                           on_file=fail_after_three)
    names = sorted(p.name for p in out.iterdir())
    assert "_jetlink.json" not in names and "_jetlink_progress.json" in names
    progress = json.loads((out / "_jetlink_progress.json").read_text())
    assert (progress["through"], progress["cut"], len(progress["files"])) == (450, 1000, 3)
    (out / "_tmp-part-00003.parquet").write_bytes(b"torn")  # as a killed run leaves it
    js.publish_batch([("r.late", b"after the cut", None)])

    res = jl(live.url, "stream", "export", "R", f"parquet:{out}", "--json")
    summary = doc(res)
    assert "Resuming the export of stream R to" in res.stderr
    assert "450 messages in 3 files were written, up to sequence 450 of 1,000" in res.stderr
    assert summary["resumed_from"] == 450
    assert (summary["messages"], summary["first_seq"], summary["last_seq"]) == (1000, 1, 1000)
    # the rest in one file (the CLI's default size), numbered after the three kept
    assert summary["files"] == [f"part-{i:05d}.parquet" for i in range(4)]
    assert sorted(p.name for p in out.iterdir()) == ["_jetlink.json"] + summary["files"]
    rows = rows_of(out)
    assert [r["seq"] for r in rows] == list(range(1, 1001))
    assert [r["data"] for r in rows] == [str(i).encode() for i in range(1000)]
    assert json.loads((out / "_jetlink.json").read_text())["state"]["last_seq"] == 1000
    res = jl(live.url, "stream", "export", "R", f"parquet:{out}")  # finished: needs --force
    assert res.exit_code == 2



def _aside_crash(monkeypatch, when: str) -> None:
    """Make the swap of a replacing export stop once: after deleting the old files, before
    recording it ("deleted"), or after moving the first new part in place ("moved")."""
    real_write, real_swap = lake._write_json_atomically, lake._swap_aside
    armed = [True]

    def write(fs, base, fname, doc):
        if (when == "deleted" and armed[0] and fname == lake.PROGRESS_FILE
                and doc.get("replacing") == []):
            armed[0] = False
            raise Stop
        real_write(fs, base, fname, doc)

    class Fs:
        def __init__(self, fs):
            self._fs = fs

        def __getattr__(self, name):
            return getattr(self._fs, name)

        def move(self, src, dst):
            self._fs.move(src, dst)
            if when == "moved" and armed[0] and src.rsplit("/", 1)[-1].startswith(
                    lake.NEW_PREFIX):
                armed[0] = False
                raise Stop

    monkeypatch.setattr(lake, "_write_json_atomically", write)
    monkeypatch.setattr(lake, "_swap_aside",
                        lambda fs, base, progress: real_swap(Fs(fs), base, progress))


@pytest.mark.parametrize("crash", ["parts", "deleted", "moved"])
def test_a_replacing_export_keeps_the_old_dataset_until_the_new_one_is_whole(
        live, js, tmp_path, monkeypatch, crash):
    """-f over a finished dataset: the new part files are committed aside (``_new-``,
    skipped by readers) and renamed over the old dataset only once all are written; stopped
    while writing them, the old dataset is whole and readable; stopped in the swap, the run
    again finishes it; every message once either way."""
    js.add_stream({"name": "W", "subjects": ["w.>"]})
    js.publish_batch([(f"w.{i % 3}", str(i).encode(), None) for i in range(1000)])
    out = tmp_path / "lake"
    lake.export_stream(js, "W", str(out), file_rows=300)
    old_meta = (out / "_jetlink.json").read_bytes()
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    js.publish_batch([(f"w.{i % 3}", str(i).encode(), None) for i in range(1000, 1500)])

    def stop_after_two(progress):
        if len(progress["files"]) == 2:
            raise Stop

    with monkeypatch.context() as m:
        if crash != "parts":
            _aside_crash(m, crash)
        with pytest.raises(Stop):
            lake.export_stream(js, "W", str(out), file_rows=300, force=True,
                               on_file=stop_after_two if crash == "parts" else None)
    names = {p.name for p in out.iterdir()}
    if crash == "parts":
        assert {n: (out / n).read_bytes() for n in old} == old  # every old file as it was
        assert names - set(old) == {"_jetlink_progress.json", "_new-part-00000.parquet",
                                    "_new-part-00001.parquet"}
        assert [r["seq"] for r in rows_of(out)] == list(range(1, 1001))  # readers: the old
    else:
        assert "_jetlink.json" not in names  # the old one went first: import refuses
        res = jl(live.url, "stream", "import", "X", f"parquet:{out}")
        assert res.exit_code == 1 and "an export that was interrupted" in res.stderr
    res = jl(live.url, "stream", "export", "W", f"parquet:{out}", "--json")
    summary = doc(res)
    assert "Resuming the export of stream W to" in res.stderr
    assert (summary["messages"], summary["first_seq"], summary["last_seq"]) == (1500, 1, 1500)
    assert sorted(p.name for p in out.iterdir()) == ["_jetlink.json"] + summary["files"]
    assert (out / "_jetlink.json").read_bytes() != old_meta
    assert [r["seq"] for r in rows_of(out)] == list(range(1, 1501))

# `jetlink ...` with small part files, each taking 0.15 s more to close: time to kill it
KILLABLE = r"""
import sys, time
import pyarrow.parquet as pq
from jetlink.core import lake
lake.API_FILE_ROWS = 200

class Slow(pq.ParquetWriter):
    def close(self, *a, **k):
        super().close(*a, **k)
        time.sleep(0.15)

pq.ParquetWriter = Slow
from jetlink.cli.main import run
sys.argv = ["jetlink", *sys.argv[1:]]
run()
"""


def test_a_killed_export_resumes_with_every_message_once(live, js, tmp_path):
    js.add_stream({"name": "K", "subjects": ["k.>"]})
    n = 6000
    for start in range(0, n, 2000):
        js.publish_batch([(f"k.{i % 4}", str(i).encode(), None) for i in range(start,
                                                                                start + 2000)])
    out = tmp_path / "lake"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    argv = [sys.executable, "-c", KILLABLE, "--server", live.url, "stream", "export", "K",
            f"parquet:{out}", "--json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)
    progress_file = out / "_jetlink_progress.json"

    def files_written() -> int:  # the file may be absent or half written: retried
        return len(json.loads(progress_file.read_text())["files"])

    try:
        wait_until(lambda: proc.poll() is not None or files_written() >= 4, interval=0.02,
                   message="the export's first 4 part files recorded")
        assert proc.poll() is None, proc.communicate()
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(WAIT_TIMEOUT)
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "_jetlink.json").exists()
    done = json.loads(progress_file.read_text())["through"]
    assert 800 <= done < n

    res = subprocess.run(argv, capture_output=True, env=env, timeout=WAIT_TIMEOUT)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["resumed_from"] >= done
    assert summary["messages"] == n
    assert b"Resuming the export of stream K" in res.stderr
    seqs = [r["seq"] for r in rows_of(out)]
    assert seqs == list(range(1, n + 1))  # every message, exactly once


# -- import ------------------------------------------------------------------------------------


def test_round_trip_into_another_stream_and_a_rerun_stores_nothing(live, tmp_path):
    fill_orders(live)
    out = tmp_path / "lake"
    ok(jl(live.url, "stream", "export", "ORDERS", f"parquet:{out}"))
    meta = json.loads((out / "_jetlink.json").read_text())
    # the copy is made from the origin's config (orders.>): move the origin out of its way
    cfg = dict(live.client().stream_info("ORDERS")["config"])
    cfg["subjects"] = ["old.>"]
    assert "error" not in live.api("STREAM.UPDATE.ORDERS", cfg)

    imported = doc(jl(live.url, "stream", "import", "COPY", f"parquet:{out}", "--json"))
    assert imported == {"stream": "COPY", "path": str(out), "messages": 11, "duplicates": 0,
                        "first_seq": 1, "last_seq": 11, "created": True, "transactions": 1}
    copy_cfg = live.client().stream_info("COPY")["config"]
    assert copy_cfg["subjects"] == ["orders.>"]
    origin_rows = rows_of(out)
    for new_seq, row in enumerate(origin_rows, start=1):
        got = server_msg(live, "COPY", new_seq)
        assert (got["subject"], got["data"]) == (row["subject"], row["data"])
        want_id = f"ORDERS:{meta['identity']}:{row['seq']}"
        hdrs = got["headers"].decode()
        assert f"Nats-Msg-Id: {want_id}\r\n" in hdrs
        if row["headers"] is not None:
            assert f"X-N: {int(row['data'][5:])}\r\n" in hdrs
            assert "id-" not in hdrs  # the row's own Nats-Msg-Id was replaced

    again = jl(live.url, "stream", "import", "COPY", f"parquet:{out}")
    assert ok(again).stdout == (f"Imported 0 messages into stream COPY (no messages) from "
                                f"{out}; 11 duplicates skipped\n")
    assert live.client().stream_info("COPY")["state"]["messages"] == 11


def test_import_into_an_existing_stream_appends(live, js, tmp_path):
    fill_orders(live)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    js.delete_stream("ORDERS")
    js.add_stream({"name": "ORDERS2", "subjects": ["orders.>"]})
    js.publish("orders.first", b"was here")
    res = lake.import_stream(js, "ORDERS2", str(out))
    assert (res["messages"], res["duplicates"], res["first_seq"], res["last_seq"],
            res["created"]) == (11, 0, 2, 12, False)


def test_import_refusals_are_one_line(live, js, tmp_path):
    fill_orders(live)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    js.add_stream({"name": "OTHER", "subjects": ["other.>"]})
    res = jl(live.url, "stream", "import", "OTHER", f"parquet:{out}")
    line = one_line_error(res, "subject orders.a.0 is not one of stream OTHER's subjects "
                               "(other.>): nothing was published")
    assert line.startswith("jetlink: error: ")
    assert js.stream_info("OTHER").state.messages == 0
    js.add_stream({"name": "M", "mirror": {"name": "ORDERS"}})
    one_line_error(jl(live.url, "stream", "import", "M", f"parquet:{out}"),
                   "stream M is a mirror: it takes no publishes")
    # a new stream from the config: the origin still holds orders.> on this server
    one_line_error(jl(live.url, "stream", "import", "NEW", f"parquet:{out}"),
                   "cannot create stream NEW from the config in")
    assert "NEW" not in js.stream_names()
    one_line_error(jl(live.url, "stream", "import", "NEW", f"parquet:{tmp_path / 'nothing'}"),
                   "no such file or directory")


def test_a_rerun_after_a_refusal_continues_without_duplicates(live, js, tmp_path):
    fill_orders(live)
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    js.delete_stream("ORDERS")
    js.add_stream({"name": "SMALL", "subjects": ["orders.>"], "max_msgs": 5,
                   "discard": "new"})
    with pytest.raises(lake.LakeError, match=r"message 7 on orders.a.6 of .* refused by stream "
                       r"SMALL: maximum messages exceeded \(10077\) \(5 messages stored and 0 "
                       r"duplicates before it"):
        lake.import_stream(js, "SMALL", str(out))
    info = js.stream_info("SMALL").config.to_json()
    info["max_msgs"] = -1
    js.update_stream(info)
    res = lake.import_stream(js, "SMALL", str(out))
    assert (res["messages"], res["duplicates"]) == (6, 5)
    assert js.stream_info("SMALL").state.messages == 11


# -- spark verify of a live mirror and its origin -------------------------------------------------


@pytest.mark.spark
def test_spark_verify_a_live_mirror_with_its_origin(live, js, spark):
    fill_orders(live)
    js.add_stream({"name": "M", "mirror": {"name": "ORDERS"}})

    def caught_up():
        return js.stream_info("M").state.last_seq == 12

    wait_until(caught_up, message=lambda: f"the mirror caught up ({js.stream_info('M').state})")
    res = jl(live.url, "spark", "verify", "ORDERS", "M")
    assert res.exit_code == 0, (res.stdout, res.stderr)
    assert res.stdout == (f"ORDERS@{live.url} and M@{live.url} are identical: 11 messages\n")
    # the mirror loses a message the origin keeps
    assert live.api("STREAM.MSG.DELETE.M", {"seq": 5}).get("success")
    res = jl(live.url, "spark", "verify", "ORDERS", "M", "--json")
    assert res.exit_code == 1, (res.stdout, res.stderr)
    report = json.loads(res.stdout)
    assert report["equal"] is False
    assert report["a"]["address"] == f"ORDERS@{live.url}"
    assert report["missing_in_b"] == [{"seq": 5, "subject": "orders.a.4"}]
    assert report["totals"]["missing_in_b"] == 1 and report["totals"]["matching"] == 10

    # refused before a driver starts: a store: address (a usage error), a missing stream
    import jetlink.sparkops.session as S

    def no_driver(*_a, **_k):
        raise AssertionError("a Spark driver was started for a refused comparison")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "get_session", no_driver)
        res = jl(live.url, "spark", "verify", "store:ORDERS", "M")
        assert res.exit_code == 2 and res.stderr.startswith(
            "jetlink: error: A 'store:ORDERS': with a live server in force"), res.stderr
        res = jl(live.url, "spark", "verify", "ORDERS", "NOPE")
        one_line_error(res, f"stream not found (10059): B NOPE@{live.url}")


@pytest.mark.parametrize("lost", [100, 500])  # inside a batch; the very last message
def test_a_message_lost_on_the_way_is_read_again(live, js, tmp_path, monkeypatch, lost):
    """A delivery gap (seen in the consumer sequences, or at the end in the idle heartbeat's
    Nats-Last-Consumer) restarts the ordered consumer after the last message received."""
    from jetlink.core.live import jetstream as LJ

    js.add_stream({"name": "G", "subjects": ["g.>"]})
    js.publish_batch([(f"g.{i % 3}", str(i).encode(), None) for i in range(500)])
    real = LJ._ColumnReader._on_msg
    seen = {"data": 0, "dropped": 0}

    def lossy(self, subject, reply, data, hdr):
        if hdr is None or hdr[8:9] != b" ":
            seen["data"] += 1
            if seen["data"] == lost and not seen["dropped"]:
                seen["dropped"] += 1
                return
        real(self, subject, reply, data, hdr)

    monkeypatch.setattr(LJ._ColumnReader, "_on_msg", lossy)
    res = lake.export_stream(js, "G", str(tmp_path / "lake"), batch_rows=64)
    assert seen["dropped"] == 1
    assert res["messages"] == 500
    assert [r["seq"] for r in rows_of(tmp_path / "lake")] == list(range(1, 501))
    assert js.stream_info("G").state.consumer_count == 0  # every reader's consumer deleted


def test_an_interrupted_reader_deletes_its_consumer_at_once(live, js, tmp_path):
    js.add_stream({"name": "C", "subjects": ["c.>"]})
    js.publish_batch([("c.x", b"1", None)] * 300)

    def stop(progress):
        assert js.stream_info("C").state.consumer_count == 1  # the reader's, while it reads
        raise Stop

    with pytest.raises(Stop):
        lake.export_stream(js, "C", str(tmp_path / "lake"), file_rows=100, batch_rows=50,
                           on_file=stop)
    assert js.stream_info("C").state.consumer_count == 0


def test_a_live_export_imports_into_the_embedded_engine_unchanged(live, tmp_path):
    """The disaster-recovery path the other way: the live stream's dataset, stored by the
    embedded engine at the same sequences and times with the same header blocks."""
    fill_orders(live)
    out = tmp_path / "lake"
    ok(jl(live.url, "stream", "export", "ORDERS", f"parquet:{out}"))
    data = str(tmp_path / "data")
    ok(runner.invoke(app, ["--data-dir", data, "stream", "import", "ORDERS", f"parquet:{out}"],
                     prog_name="jetlink"))
    for seq in (1, 3, 7, 12):
        here = doc(runner.invoke(app, ["--data-dir", data, "stream", "get", "ORDERS", str(seq),
                                       "-j"], prog_name="jetlink"))
        there = doc(jl(live.url, "stream", "get", "ORDERS", str(seq), "-j"))
        assert here == there


def test_an_import_keeps_a_header_block_byte_for_byte(live, tmp_path):
    """A stored header block is republished as it is (a value that is not UTF-8, repeated
    names, their order and spacing), its own Nats-Msg-Id and the publish preconditions
    dropped, the import's Nats-Msg-Id added."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jetlink.core import lake as core_lake

    block = (b"NATS/1.0\r\nA: 1\r\nX-Bin: caf\xe9\r\nNats-Msg-Id: old\r\nA: 2\r\nTab:\tv\t\r\n"
             b"Nats-Expected-Last-Sequence: 9\r\n\r\n")
    out = tmp_path / "hdr"
    out.mkdir()
    pq.write_table(pa.table({
        "stream": ["HDR"], "partition": pa.array([0], pa.int32()), "seq": pa.array([1]),
        "subject": ["hdr.1"], "key": pa.nulls(1, pa.binary()),
        "ts": pa.array([1_700_000_000_000_000_000]), "headers": pa.array([block]),
        "data": pa.array([b"\xff\x00data"])}, schema=core_lake.arrow_schema()),
        out / "part-00000.parquet")
    ok(jl(live.url, "stream", "add", "HDR", "--subjects", "hdr.>", "--defaults"))
    ok(jl(live.url, "stream", "import", "HDR", f"parquet:{out}"))
    got = server_msg(live, "HDR", 1)
    assert got["headers"] == (b"NATS/1.0\r\nA: 1\r\nX-Bin: caf\xe9\r\nA: 2\r\nTab:\tv\t\r\n"
                              b"Nats-Msg-Id: HDR:1\r\n\r\n")
    assert got["data"] == b"\xff\x00data"


def test_an_import_of_a_sourcing_streams_dataset_says_what_its_config_is(live, tmp_path):
    """A stream that only sources has no subjects: the import into a new stream says so
    (not "a mirror's"), nothing created."""
    ok(jl(live.url, "stream", "add", "LT", "--subjects", "lt.>", "--defaults"))
    ok(jl(live.url, "pub", "lt.a", "x"))
    ok(jl(live.url, "stream", "add", "LS", "--source", "LT", "--defaults"))
    wait_until(lambda: live.client().stream_info("LS")["state"]["messages"] == 1,
               message="LS sourced LT's message")
    out = tmp_path / "ls"
    ok(jl(live.url, "stream", "export", "LS", f"parquet:{out}"))
    res = jl(live.url, "stream", "import", "LS2", f"parquet:{out}")
    one_line_error(res, f"stream LS2 does not exist and the config in {out} has no subjects (a "
                        "stream that only sources): create the stream with subjects that take "
                        "the rows (jetlink stream add) and import into it")
    assert "LS2" not in live.client().stream_names()


def test_a_sealed_streams_export_imports_into_a_new_sealed_stream_live(live, tmp_path):
    """Over a live server too: created unsealed from the dataset's config, its rows
    published, then sealed."""
    ok(jl(live.url, "stream", "add", "SEAL", "--subjects", "seal.>", "--defaults"))
    ok(jl(live.url, "pub", "seal.a", "x", "--count", "3"))
    ok(jl(live.url, "stream", "seal", "SEAL", "-f"))
    out = tmp_path / "seal"
    ok(jl(live.url, "stream", "export", "SEAL", f"parquet:{out}"))
    ok(jl(live.url, "stream", "rm", "SEAL", "-f"))
    got = doc(jl(live.url, "stream", "import", "SEAL", f"parquet:{out}", "--json"))
    assert (got["created"], got["messages"]) == (True, 3)
    info = live.client().stream_info("SEAL")
    assert info["config"]["sealed"] is True and info["state"]["messages"] == 3
