"""core/subjects.py ``KeyedSubjectIndex``: the candidates it gives for a subject hold every key a
plain scan with the one rule (``overlaps``, ``matches``) finds, so the catalog's route and
the overlap check (core/streamdef.py, core/config/validate.py ``overlapping_stream``) answer
exactly as a scan of every stream; and changes are incremental."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetlink.core.config.stream import StreamConfig
from jetlink.core.config.validate import overlapping_stream
from jetlink.core.streams import matching_subjects, next_msgs
from jetlink.core.subjects import KeyedSubjectIndex, literal_prefix, matches, overlaps

PROPS = settings(max_examples=300, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])

# few tokens so that subjects meet often; '*' and '>' whole tokens anywhere (also where a
# subject is invalid: '>' not last), and the server's quirk tokens starting with '*' / '>'
_token = st.sampled_from(["a", "b", "c", "*", ">", "*x", ">y", "a*", ""])
subject = st.lists(_token, min_size=1, max_size=4).map(".".join)
_held = st.lists(subject, min_size=0, max_size=3)


def _scan(index: dict[int, list[str]], q: str) -> set[int]:
    return {k for k, held in index.items()
            if any(overlaps(q, s) or matches(s, q) for s in held)}


@PROPS
@given(st.dictionaries(st.integers(0, 30), _held, max_size=12), st.lists(subject, max_size=6))
def test_candidates_hold_every_key_a_scan_finds(keys, queries):
    idx: KeyedSubjectIndex[int] = KeyedSubjectIndex()
    for k, held in keys.items():
        idx.put(k, held)
    for q in queries + ["a", "a.b", "*", ">", "*.>", "a.>"]:
        found = idx.candidates(q)
        assert _scan(keys, q) <= found, q
        assert found <= {k for k, held in keys.items() if held}
        # the rule applied to the candidates: the scan's answer, exactly
        assert {k for k in found if any(overlaps(q, s) for s in keys[k])} == \
            {k for k, held in keys.items() if any(overlaps(q, s) for s in held)}
        assert {k for k in found if any(matches(s, q) for s in keys[k])} == \
            {k for k, held in keys.items() if any(matches(s, q) for s in held)}


@PROPS
@given(st.lists(st.tuples(st.integers(0, 8), _held), max_size=25),
       st.lists(subject, max_size=6))
def test_incremental_changes_equal_an_index_built_whole(changes, queries):
    idx: KeyedSubjectIndex[int] = KeyedSubjectIndex()
    now: dict[int, list[str]] = {}
    for k, held in changes:  # put (an empty list: the key dropped)
        if held:
            idx.put(k, held)
            now[k] = held
        else:
            idx.discard(k)
            now.pop(k, None)
    whole: KeyedSubjectIndex[int] = KeyedSubjectIndex()
    for k, held in now.items():
        whole.put(k, held)
    assert len(idx) == len(now)
    for q in queries + [">"]:
        assert idx.candidates(q) == whole.candidates(q), q
    for k in list(now):
        idx.discard(k)
    assert idx._root.empty() and not idx._odd  # every branch dropped with its last subject


def _configs(streams: list[list[str]]) -> dict[str, StreamConfig]:
    return {f"S{i}": StreamConfig(name=f"S{i}", subjects=held) for i, held in enumerate(streams)}


class _Indexed(dict):
    """A name -> config mapping with its subjects indexed (as core/streamdef.py
    ``StreamConfigs``): the names that can overlap, in the mapping's order."""

    def __init__(self, configs: dict[str, StreamConfig]) -> None:
        super().__init__(configs)
        self.order = {name: i for i, name in enumerate(configs)}
        self.index: KeyedSubjectIndex[str] = KeyedSubjectIndex()
        for name, cfg in configs.items():
            self.index.put(name, cfg.subjects)

    def overlap_candidates(self, subjects: list[str]) -> list[str]:
        return sorted(self.index.candidates_of(subjects), key=self.order.__getitem__)


_valid_token = st.sampled_from(["a", "b", "c", "*", "*x", ">y"])


@st.composite
def valid_subject(draw):
    parts = draw(st.lists(_valid_token, min_size=0, max_size=3))
    if not parts or draw(st.booleans()):
        parts.append(draw(st.sampled_from([">", "a", "b"])))
    return ".".join(parts)


@PROPS
@given(st.lists(st.lists(valid_subject(), max_size=3), max_size=10),
       st.lists(valid_subject(), min_size=1, max_size=3), st.integers(0, 10))
def test_overlapping_stream_indexed_names_the_same_clash(streams, mine, skip):
    plain = _configs(streams)
    assert overlapping_stream(mine, _Indexed(plain), f"S{skip}") == \
        overlapping_stream(mine, plain, f"S{skip}")


# --- a stream's subjects matching a pattern: the index range under its literal tokens ------

_stored_token = st.sampled_from(["a", "b", "a*", "ab", "a/", "b.", "é", "-"])


@pytest.fixture(scope="module")
def subjects_db():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE subjects (id INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL, "
                  "subject TEXT NOT NULL, msgs INTEGER NOT NULL, first_seq INTEGER NOT NULL, "
                  "last_seq INTEGER NOT NULL)")
    conn.execute("CREATE UNIQUE INDEX subjects_by_name ON subjects(stream_id, subject)")
    yield conn
    conn.close()


@PROPS
@given(st.sets(st.lists(_stored_token, min_size=1, max_size=4).map(".".join), max_size=30),
       st.lists(st.sampled_from(["a", "b", "a*", "ab", "*", "é"]), min_size=0, max_size=3),
       st.sampled_from(["*", ">"]))
def test_matching_subjects_equals_the_filter_over_every_subject(subjects_db, stored, head,
                                                                 last):
    conn = subjects_db
    conn.execute("DELETE FROM subjects")
    conn.executemany("INSERT INTO subjects(stream_id, subject, msgs, first_seq, last_seq) "
                     "VALUES (?, ?, 1, 1, 1)", [(1, x) for x in stored] + [(2, "a.a")])
    pattern = ".".join([*head, last])
    plain = [r for r in conn.execute("SELECT id, msgs, first_seq, last_seq, subject FROM "
                                     "subjects WHERE stream_id = 1 ORDER BY subject")
             if matches(pattern, r[4])]
    assert list(matching_subjects(conn, 1, pattern)) == plain
    lit = head[:head.index("*")] if "*" in head else head
    assert literal_prefix(pattern) == "".join(t + "." for t in lit)


def test_matching_subjects_reads_only_the_subjects_under_the_literal_tokens(tmp_path,
                                                                          monkeypatch):
    """A filtered read of few subjects (core/streams.py ``next_msgs``) does not match every
    subject of the stream: only those under the filter's literal tokens are read."""
    from jetlink.core.clock import ManualClock
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir
    from jetlink.core.subjects import SubjectFilter

    dd = DataDir(tmp_path / "d")
    js = JetStream(dd.open(), ManualClock())
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    for i in range(200):
        js.publish(f"o.old.{i}", b"x")
    js.publish("o.new.1", b"y")
    js.publish("o.new.2", b"y")
    calls = [0]
    real = SubjectFilter.matches

    def counted(self, subject):
        calls[0] += 1
        return real(self, subject)

    monkeypatch.setattr(SubjectFilter, "matches", counted)
    with js.read() as (conn, catalog):
        sid = catalog.by_name["O"].id
        got = [m.subject for m in next_msgs(conn, sid, 1, ["o.new.*"], 10)]
    assert got == ["o.new.1", "o.new.2"]
    assert calls[0] == 2, calls  # the two subjects under "o.new.", not the 202 of O
    dd.close()
