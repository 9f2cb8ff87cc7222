"""Filtered mirrors and sources with subject ids reused (core/subjectcache.py, the filtered
reads of core/replication.py; docs/replication.md "Filters and subject ids").

The ``subjects`` table has no AUTOINCREMENT: a new subject takes ``max(id) + 1``, so the id
of the subject with the highest id, once deleted (its last message purged), is given to the
next new subject. These tests make that happen (and check it did), in this process and in
another one, between the steps of filtered mirrors and sources, and compare what the targets
hold with what the filters select, on both copy paths.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from jetlink.core import replication as R
from jetlink.core import subjectcache
from jetlink.core.clock import ManualClock
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir

EAST = {"api": "$JS.east.API"}
ORIGIN = {"name": "O", "subjects": ["keep.>", "skip.>"]}


class Drill:
    """Origin O in cluster east; filtered targets in cluster local (their subjects take ids
    of their own database, so only the origin's own deletes free ids in east)."""

    def __init__(self, path, bulk: bool, wide: int) -> None:
        self.clock = ManualClock()
        self.path = path
        self.dd = DataDir(path)
        self.bulk = bulk
        self.dd.add_cluster("east", now_ns=self.clock.now_ns())
        self.east = JetStream(self.dd.open("east"), self.clock)
        self.local = JetStream(self.dd.open("local"), self.clock)
        self.east.add_stream(ORIGIN)
        self.sent: list[tuple[int, str, str]] = []  # (origin seq, subject, data) published
        self.n = 0
        self.copied = 0  # messages of ``sent`` a pump has seen
        # ``wide`` subjects of each verdict: more than the reads' few-subjects threshold
        # walks chains; fewer is the scan (both ways are exercised)
        for i in range(wide):
            self.pub(f"keep.{i}")
            self.pub(f"skip.{i}")
        self.local.add_stream({"name": "M", "mirror": {"name": "O", "external": EAST,
                                                      "filter_subject": "keep.*"}})
        self.local.add_stream({"name": "S", "sources": [
            {"name": "O", "external": EAST, "filter_subject": "keep.*"}]})
        self.local.add_stream({"name": "T", "sources": [{
            "name": "O", "external": EAST, "subject_transforms": [
                {"src": "keep.*", "dest": "t.{{wildcard(1)}}"}]}]})

    def pub(self, subject: str) -> None:
        self.n += 1
        data = f"m{self.n}"
        ack = self.east.publish(subject, data.encode())
        assert ack is not None
        self.sent.append((ack.seq, subject, data))

    def pump(self) -> None:
        R.pump_until_idle(self.dd, self.clock, bulk=self.bulk)
        self.copied = len(self.sent)

    def top_subject(self) -> tuple[int, str]:
        with self.east.cluster.read() as conn:
            return conn.execute("SELECT id, subject FROM subjects ORDER BY id DESC "
                                "LIMIT 1").fetchone()

    def subject_id(self, subject: str) -> int:
        with self.east.cluster.read() as conn:
            return conn.execute("SELECT id FROM subjects WHERE subject = ?",
                                (subject,)).fetchone()[0]

    def reuse(self, tag: str) -> int:
        """Purge the subject holding the highest id, publish one of the other verdict; the
        new subject must take the freed id (returned)."""
        sid, subject = self.top_subject()
        self.east.purge_stream("O", subject=subject)
        # what the purge removed before any step saw it was never copied
        self.sent[self.copied:] = [m for m in self.sent[self.copied:] if m[1] != subject]
        new = f"skip.{tag}" if subject.startswith("keep.") else f"keep.{tag}"
        self.pub(new)
        assert self.subject_id(new) == sid, f"{new} did not take the freed id {sid}"
        return sid

    def check(self) -> None:
        want = [(seq, subject, data) for seq, subject, data in self.sent
                if subject.startswith("keep.")]
        got_m = [(m.seq, m.subject, m.data.decode()) for m in self.local.messages("M")]
        assert got_m == want, f"mirror M holds {got_m[-5:]}, expected {want[-5:]}"
        got_s = [(m.subject, m.data.decode()) for m in self.local.messages("S")]
        assert got_s == [(s, d) for _q, s, d in want], f"source S holds {got_s[-5:]}"
        got_t = [(m.subject, m.data.decode()) for m in self.local.messages("T")]
        assert got_t == [("t." + s.split(".", 1)[1], d) for _q, s, d in want], \
            f"source T holds {got_t[-5:]}"


@pytest.fixture(params=[(True, 3), (False, 3), (True, 80), (False, 80)],
                ids=["sql-few", "per-message-few", "sql-many", "per-message-many"])
def drill(request, tmp_path):
    bulk, wide = request.param
    d = Drill(tmp_path / "data", bulk, wide)
    yield d
    d.dd.close()


def test_reused_subject_ids_never_keep_the_old_subjects_verdict(drill):
    drill.pump()
    drill.check()
    reused = []
    for i in range(6):  # keep -> skip -> keep ... on one id, a step between each
        reused.append(drill.reuse(f"r{i}"))
        drill.pump()
        drill.check()
        drill.pub(f"keep.x{i}")  # a fresh id above: the next round frees this one
        drill.pump()
        drill.check()
    assert len(reused) == 6


def test_reuse_without_a_step_between_delete_and_create(drill):
    drill.pump()
    for i in range(4):
        drill.reuse(f"a{i}")
        drill.reuse(f"b{i}")  # the id of the subject just created, reused again
    drill.pump()
    drill.check()


_OTHER = textwrap.dedent("""
    import sys
    from jetlink.core import replication as R
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    path, start_ns, bulk, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
    clock = ManualClock(start_ns)
    dd = DataDir(path)
    east = JetStream(dd.open("east"), clock)
    with east.cluster.read() as conn:
        sid, subject = conn.execute(
            "SELECT id, subject FROM subjects ORDER BY id DESC LIMIT 1").fetchone()
    east.purge_stream("O", subject=subject)
    new = f"skip.{tag}" if subject.startswith("keep.") else f"keep.{tag}"
    ack = east.publish(new, b"other")
    with east.cluster.read() as conn:
        (got,) = conn.execute("SELECT id FROM subjects WHERE subject = ?", (new,)).fetchone()
    for i in range(100):  # more subjects selected than the few-subjects threshold
        east.publish(f"keep.{tag}x{i}", b"o%d" % i)
    R.pump_until_idle(dd, clock, bulk=bulk)
    print(sid, got, new, ack.seq)
    dd.close()
""")


def test_other_processes_reuse_ids_and_add_subjects_between_steps(drill, tmp_path):
    drill.pump()
    drill.check()
    for round_ in range(2):
        drill.reuse(f"p{round_}")  # this process's memo has seen both verdicts
        drill.pump()
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(
            [sys.executable, "-c", _OTHER, str(drill.path), str(drill.clock.now_ns()),
             "1" if drill.bulk else "0", f"o{round_}"], capture_output=True, text=True, env=env,
            timeout=300)
        assert done.returncode == 0, done.stderr
        freed, took, new, seq = done.stdout.split()
        assert freed == took, f"the other process's {new} took id {took}, not {freed}"
        # what the other process published, as this process's record
        drill.sent.append((int(seq), new, "other"))
        drill.sent.extend((int(seq) + 1 + i, f"keep.o{round_}x{i}", f"o{i}") for i in range(100))
        drill.n += 101
        drill.pump()
        drill.check()
        drill.reuse(f"q{round_}")  # reuse the other process's last id here
        drill.pump()
        drill.check()


def test_memo_is_the_subject_filter():
    from jetlink.core.subjects import SubjectFilter

    flt = ["a.*", "b.>", "c"]
    fm = subjectcache.memo(flt)
    assert subjectcache.memo(["c", "b.>", "a.*", "a.*"]) is fm
    ref = SubjectFilter(flt)
    names = ["a.1", "a.1.2", "b", "b.1", "b.1.2", "c", "c.1", "a", "x"]
    assert [fm(n) for n in names * 2] == [ref.matches(n) for n in names * 2]


def test_matched_hint_counts_new_subjects_and_recounts_after_the_top_is_deleted(js):
    js.add_stream(ORIGIN)
    for i in range(3):
        js.publish(f"keep.{i}", b"x")
        js.publish(f"skip.{i}", b"x")
    with js.cluster.read() as conn:
        sid = conn.execute("SELECT id FROM streams WHERE name = 'O'").fetchone()[0]
    hint = subjectcache.matched_hint
    with js.cluster.read() as conn:
        assert hint(conn, sid, ["keep.*"]) == 3
    for i in range(3, 70):
        js.publish(f"keep.{i}", b"x")
    with js.cluster.read() as conn:
        assert hint(conn, sid, ["keep.*"]) == 70  # only the new rows were read
    js.purge_stream("O", subject="keep.69")
    js.purge_stream("O", subject="keep.68")
    with js.cluster.read() as conn:
        assert hint(conn, sid, ["keep.*"]) == 68  # the highest ids gone: counted again


def test_memo_stays_bounded_and_right(monkeypatch):
    monkeypatch.setattr(subjectcache, "MAX_NAMES", 50)
    a, b = subjectcache.memo(["bound.a.*"]), subjectcache.memo(["bound.>"])
    for i in range(400):
        assert a(f"bound.a.{i}") and b(f"bound.a.{i}") and not a(f"bound.b.{i}")
        assert subjectcache._remembered[0] <= 50
    assert len(a._seen) + len(b._seen) <= 50
