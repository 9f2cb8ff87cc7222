"""The catalog of streams read again after one change reads only the changed stream's row
(core/streamdef.py ``Catalog.load`` / ``bump_config_gen``): after every kind of change, and
when a deleted stream's id is taken again, it equals a catalog read whole."""

from __future__ import annotations

import pytest

from jetlink.core.clock import ManualClock
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir
from jetlink.core.streamdef import Catalog

SUBJECTS = ["s0.a", "s1.a", "s2.a", "s3.a", "t.a", "u.a", "v.a", "w.a", "none.a"]


def _same(js: JetStream) -> None:
    cl = js.cluster
    with cl.read() as conn:
        cached = Catalog.load(conn, cl.cache)
        whole = Catalog.load(conn, {})
    # the routes the cached catalog kept across the change are those of a fresh one
    assert {s: getattr(cached.route(s), "id", None) for s in SUBJECTS} == \
        {s: getattr(whole.route(s), "id", None) for s in SUBJECTS}
    assert cached.gen == whole.gen
    assert {d.id: (d.name, d.config_json) for d in cached.by_id.values()} == \
        {d.id: (d.name, d.config_json) for d in whole.by_id.values()}
    assert [d.id for d in cached.by_name.values()] == [d.id for d in whole.by_name.values()]
    assert [d.id for d in cached.timed] == [d.id for d in whole.timed]


def test_one_change_at_a_time_reads_the_same_catalog(tmp_path):
    dd = DataDir(tmp_path / "d")
    js = JetStream(dd.open(), ManualClock())
    for i in range(4):
        _same(js)  # routes cached (to no stream) before the stream that captures them
        js.add_stream({"name": f"S{i}", "subjects": [f"s{i}.>"]})
        _same(js)
    js.update_stream({"name": "S1", "subjects": ["s1.>"], "max_age": 60_000_000_000})
    _same(js)
    js.update_stream({"name": "S2", "subjects": ["v.>"]})  # its subjects move
    _same(js)
    js.delete_stream("S3")  # the highest id: SQLite gives it to the next stream
    _same(js)
    js.add_stream({"name": "T", "subjects": ["t.>"]})
    _same(js)
    js.delete_stream("S0")
    _same(js)
    other = JetStream(DataDir(tmp_path / "d").open(), ManualClock())  # a second process
    other.add_stream({"name": "U", "subjects": ["u.>"]})
    other.update_stream({"name": "U", "subjects": ["u.>", "w.>"]})
    _same(js)  # two changes since its catalog: read whole
    assert sorted(js.stream_names()) == ["S1", "S2", "T", "U"]
    dd.close()


def _counting(monkeypatch, owner, name):
    """Count the calls of ``owner.name`` (still called)."""
    calls = [0]
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_change_updates_the_catalog_in_place_not_every_stream(tmp_path, monkeypatch):
    """A region's failover changes thousands of streams one by one: each change replaces
    its stream's entries, it does not rebuild the maps of every stream."""
    dd = DataDir(tmp_path / "d")
    js = JetStream(dd.open(), ManualClock())
    for i in range(30):
        js.add_stream({"name": f"S{i}", "subjects": [f"s{i}.>"]})
    with js.cluster.read() as conn:
        before = Catalog.load(conn, js.cluster.cache)
    built = _counting(monkeypatch, Catalog, "__init__")
    js.add_stream({"name": "T", "subjects": ["t.>"]})
    js.update_stream({"name": "S3", "subjects": ["s3.>", "x.>"]})
    js.delete_stream("S4")
    assert built[0] == 0  # no catalog made anew: the cached one changed in place
    with js.cluster.read() as conn:
        assert Catalog.load(conn, js.cluster.cache) is before
    _same(js)
    assert before.route("x.1").name == "S3" and before.route("s4.1") is None
    dd.close()


def test_route_and_overlap_check_look_at_the_streams_that_can_match_only(tmp_path,
                                                                          monkeypatch):
    """The route of a new subject and the overlap check of a stream's new subjects look at
    the streams their subjects' index gives (core/subjects.py ``KeyedSubjectIndex``), not at
    every stream; the answers stay those of the rule."""
    from jetlink.core.config import validate
    from jetlink.core.errors import ApiError
    from jetlink.core.subjects import SubjectFilter

    dd = DataDir(tmp_path / "d")
    js = JetStream(dd.open(), ManualClock())
    for i in range(40):
        js.add_stream({"name": f"S{i}", "subjects": [f"s{i}.>", f"k.b{i}.>"]})
    js.add_stream({"name": "ANY", "subjects": ["*"], "no_ack": True})  # (the API)
    js.add_stream({"name": "M", "mirror": {"name": "S1"}})
    matched = _counting(monkeypatch, SubjectFilter, "matches")
    compared = _counting(monkeypatch, validate, "overlaps")
    js.publish("s7.new", b"x")
    js.publish("k.b9.new", b"x")
    js.publish("q", b"x")
    assert matched[0] <= 3  # S7's, S9's, ANY's filter (a scan: every stream before the one)
    js.update_stream({"name": "M", "subjects": ["m.>", "k.c.>"]})  # a mirror promoted
    # its own two subjects with each other, and no stream's (no k.b<i>.> can overlap k.c.>,
    # nor ANY's "*" a longer subject); a scan compares both with each of the 42 streams
    assert compared[0] <= 4, compared
    with pytest.raises(ApiError) as err:
        js.add_stream({"name": "N", "subjects": ["k.*.x"]})
    assert err.value.err_code == 10065
    assert err.value.detail == '"k.*.x" overlaps "k.b0.>" of stream S0'  # the first by id
    assert js.stream_info("S7").state.messages == 1
    assert js.stream_info("S9").state.messages == 1
    assert js.stream_info("ANY").state.messages == 1
    dd.close()


def test_a_change_rolled_back_leaves_no_trace_in_the_catalog(tmp_path):
    """The cached catalog changed in place by a stream added in a transaction that then
    fails is read whole again: the stream is gone, routes and overlaps as before."""
    from jetlink.core.errors import ApiError

    dd = DataDir(tmp_path / "d")
    js = JetStream(dd.open(), ManualClock())
    js.add_stream({"name": "S0", "subjects": ["s0.>"]})
    _same(js)
    with pytest.raises(RuntimeError), js.write():
        js.add_stream({"name": "T", "subjects": ["t.>"]})
        js.update_stream({"name": "S0", "subjects": ["s0.>", "u.>"]})
        raise RuntimeError("the transaction fails")
    _same(js)
    assert js.stream_names() == ["S0"]
    js.add_stream({"name": "T2", "subjects": ["t.>"]})  # no overlap with the rolled-back T
    with pytest.raises(ApiError) as err:
        js.add_stream({"name": "X", "subjects": ["s0.a"]})
    assert err.value.detail == '"s0.a" overlaps "s0.>" of stream S0'
    _same(js)
    dd.close()
