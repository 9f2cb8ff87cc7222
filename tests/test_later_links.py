"""Forward links set on stored rows live in ``msg_next`` (store/schema.py): a row's next is
its entry there, else ``msgs.next``. Every chain stays whole through what reads and rewrites
those links (limits, deletes, purges, mirrors and sources on the SQL path, a repair), and an
entry never outlives its row (a stream deleted and another made with its id reused)."""

from __future__ import annotations

import sqlite3

import pytest

from jetlink.core import replication as R
from jetlink.core.clock import ManualClock
from jetlink.core.jetstream import JetStream
from jetlink.core.repair import repair
from jetlink.core.store import DataDir
from jetlink.core.store.schema import MIGRATIONS
from jetlink.core.streams import key_range, recount

MASK = (1 << 40) - 1


def _js(path) -> JetStream:
    return JetStream(DataDir(path).open("local"), ManualClock(1_700_000_000_000_000_000))


def _sid(js: JetStream, name: str) -> int:
    return js.cluster.conn.execute("SELECT id FROM streams WHERE name = ?",
                                   (name,)).fetchone()[0]


def _whole(js: JetStream, name: str) -> None:
    """Every subject's chain walks exactly its messages, in order; counters from the rows."""
    conn = js.cluster.conn
    sid = _sid(js, name)
    rc = recount(conn, sid)
    assert rc["chain_errors"] == [], rc["chain_errors"]
    assert rc["subjects"] == rc["subjects_table"]
    msgs, = conn.execute("SELECT msgs FROM streams WHERE id = ?", (sid,)).fetchone()
    assert rc["msgs"] == msgs


def _entries(js: JetStream, name: str) -> int:
    lo, hi = key_range(_sid(js, name))
    return js.cluster.conn.execute("SELECT count(*) FROM msg_next WHERE id BETWEEN ? AND ?",
                                   (lo, hi)).fetchone()[0]


def _batches(js: JetStream, n: int, subjects: int, size: int = 500, prefix: str = "o") -> None:
    for start in range(0, n, size):
        js.publish_batch([(f"{prefix}.s{i % subjects}", str(i).encode(), None)
                          for i in range(start, min(n, start + size))])


def _payloads(js: JetStream, name: str) -> dict[str, list[bytes]]:
    out: dict[str, list[bytes]] = {}
    for m in js.messages(name):
        out.setdefault(m.subject, []).append(m.data)
    return out


def test_links_across_transactions_are_entries_and_chains_stay_whole(tmp_path):
    js = _js(tmp_path / "d")
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    _batches(js, 3_000, 7)
    # one link per subject per later transaction: 5 later batches of 500 over 7 subjects
    assert _entries(js, "O") == 5 * 7
    _whole(js, "O")
    for seq in (2, 700, 1_501, 2_999):  # inside chains: the neighbours relinked
        js.delete_msg("O", seq)
        _whole(js, "O")
    js.update_stream({"name": "O", "subjects": ["o.>"], "max_msgs_per_subject": 100})
    _whole(js, "O")
    assert js.stream_info("O").state.messages == 700
    js.purge_stream("O", subject="o.s3", keep=10)
    _whole(js, "O")
    js.purge_stream("O", seq=2_600)  # the oldest of every subject: first moves along next
    _whole(js, "O")
    _batches(js, 1_000, 7, size=1)  # a transaction per message: every link an entry
    _whole(js, "O")
    want = _payloads(js, "O")
    js.purge_stream("O", subject="o.s1")
    want.pop("o.s1")
    _whole(js, "O")
    assert _payloads(js, "O") == want


def test_an_entry_goes_with_its_row(tmp_path):
    js = _js(tmp_path / "d")
    js.add_stream({"name": "A", "subjects": ["a.>"]})
    _batches(js, 2_000, 3, prefix="a")
    sid = _sid(js, "A")
    assert _entries(js, "A") > 0
    js.purge_stream("A", seq=1_000)
    lo = key_range(sid)[0]
    assert js.cluster.conn.execute("SELECT count(*) FROM msg_next WHERE id < ?",
                                   (lo | 1_000,)).fetchone()[0] == 0
    js.delete_stream("A")
    assert js.cluster.conn.execute("SELECT count(*) FROM msg_next").fetchone()[0] == 0
    js.add_stream({"name": "B", "subjects": ["b.>"]})
    assert _sid(js, "B") == sid  # the id is used again: no old entry may steer its chains
    _batches(js, 1_000, 3, prefix="b")
    _whole(js, "B")


@pytest.mark.parametrize("mirror", [
    {"name": "O"},
    {"name": "O", "filter_subject": "o.s2"},
], ids=["whole", "filtered"])
def test_sql_catch_up_copies_the_origins_entries(tmp_path, mirror):
    clock = ManualClock(1_700_000_000_000_000_000)
    dd = DataDir(tmp_path / "d")
    js = JetStream(dd.open("local"), clock)
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    _batches(js, 2_000, 5)
    js.add_stream({"name": "M", "mirror": mirror})
    source = [{"name": "O", "subject_transforms": [{"src": "o.>", "dest": "arch.o.>"}]}]
    js.add_stream({"name": "S", "sources": source})
    R.pump(dd, clock, batch=700, bulk=True)
    _batches(js, 1_000, 5)  # the targets' last rows get their next in a later step
    R.pump_until_idle(dd, clock, batch=700, bulk=True)
    for name in ("M", "S"):
        _whole(js, name)
        assert _entries(js, name) > 0
    assert _payloads(js, "M") == {k: v for k, v in _payloads(js, "O").items()
                                  if "filter_subject" not in mirror or k == "o.s2"}
    js.update_stream({"name": "S", "max_msgs_per_subject": 3, "sources": source})
    _whole(js, "S")
    dd.close()


def test_repair_folds_the_entries_into_the_rows(tmp_path):
    js = _js(tmp_path / "d")
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    _batches(js, 2_000, 4)
    before = _payloads(js, "O")
    assert _entries(js, "O") > 0
    js.cluster.conn.close()
    repair(DataDir(tmp_path / "d"), "local")
    js = _js(tmp_path / "d")
    assert _entries(js, "O") == 0
    _whole(js, "O")
    assert _payloads(js, "O") == before


def test_a_database_of_the_schema_before_is_brought_up_with_its_chains(tmp_path):
    """A cluster written before ``msg_next`` (schema 2, every next in its row) opens with an
    empty table and the same chains."""
    js = _js(tmp_path / "d")
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    _batches(js, 1_000, 4)
    path = js.cluster.path
    js.cluster.conn.close()
    conn = sqlite3.connect(path)
    conn.execute(  # what schema 2 stored: every next in msgs.next
        "UPDATE msgs SET next = (SELECT x.next FROM msg_next x WHERE x.id = msgs.id) "
        "WHERE id IN (SELECT id FROM msg_next)")
    conn.execute("DROP TABLE msg_next")
    conn.execute(f"PRAGMA user_version={len(MIGRATIONS) - 1}")
    conn.commit()
    conn.close()
    js = _js(tmp_path / "d")
    assert _entries(js, "O") == 0
    _whole(js, "O")
    _batches(js, 400, 4)
    assert _entries(js, "O") == 4
    _whole(js, "O")

