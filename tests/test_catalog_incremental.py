"""The catalog of streams read again after one change reads only the changed stream's row
(core/streamdef.py ``Catalog.load`` / ``bump_config_gen``): after every kind of change, and
when a deleted stream's id is taken again, it equals a catalog read whole."""

from __future__ import annotations

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
