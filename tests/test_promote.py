"""Promote / fail over a mirror (core/dr: the rules and the embedded site).

Server behaviour the tests rely on, checked on nats-server 2.15.1: an update without
``mirror`` promotes a mirror (messages kept, the next publish gets last_seq + 1); without
subjects the stream gets ``[<name>]``; duplicate_window becomes 2m; mirror_direct is kept;
subjects overlapping another stream: 10065; a consumer created on the mirror with
opt_start_seq past the end keeps delivered 99 after promotion (hence jetlink's clamps).

The mirror is filled here by copying the origin's messages through the store's sourced append
(the replication pump does the same with the origin's sequences), so these tests do not
depend on core/replication.py.
"""

from __future__ import annotations

import json

import pytest

from jetlink.core.dr import PromoteRefused
from jetlink.core.dr import promote as promote_at
from jetlink.core.dr.embedded import EmbeddedSite
from jetlink.core.errors import ApiError, JetlinkError, NotFoundError
from jetlink.core.jetstream import JetStream

SEC = 1_000_000_000


def promote(dd, cluster, stream, clock, **kw):
    """core/dr ``promote`` at the embedded site of ``cluster``."""
    return promote_at(EmbeddedSite(dd, cluster, clock), stream, **kw)


@pytest.fixture
def env(dd, clock):
    """Clusters west (origin O on o.>, 5 messages) and east (mirror M of O, caught up)."""
    dd.add_cluster("west")
    dd.add_cluster("east")
    west, east = JetStream(dd.open("west"), clock), JetStream(dd.open("east"), clock)
    west.add_stream({"name": "O", "subjects": ["o.>"]})
    for i in range(5):
        west.publish(f"o.{i % 2}", b"x%d" % i)
    east.add_stream({"name": "M", "mirror": {"name": "O", "external": {"api": "$JS.west.API"}}})
    copy(west, "O", east, "M")
    return west, east


def copy(src: JetStream, sname: str, dst: JetStream, dname: str, upto: int | None = None,
         flt: str | None = None) -> None:
    """The pump's job for a gap-free origin: append origin messages after the mirror's last."""
    last = dst.state(dname).last_seq
    with dst.write() as txn:
        st = txn.stream(txn.catalog.by_name[dname])
        for m in src.messages(sname, start_seq=last + 1):
            if upto is not None and m.seq > upto:
                break
            if flt is None or m.subject == flt:
                st.append(m.subject, m.hdr, m.data, sourced=True)


def test_promote_caught_up_mirror(dd, clock, env):
    west, east = env
    report = promote(dd, "east", "M", clock)
    assert report.to_json() == {
        "stream": "M", "cluster": "east", "action": "promote", "dry_run": False,
        "forced": False,
        "origin": {"stream": "O", "cluster": "west", "reachable": True},
        "mirror_last_seq": 5, "origin_last_seq": 5, "lag": 0,
        "origin_pending": 0, "subjects": ["o.>"], "subjects_from": "origin", "clamps": [],
        "consumers": [],
        "positions": {"source": "origin"}, "complete": True, "resumed": False,
        "already_done": False, "promoted_at": None, "subjects_before": None,
    }
    json.dumps(report.to_json())
    cfg = east.stream_info("M").config
    assert cfg.mirror is None and cfg.subjects == ["o.>"]
    assert cfg.duplicate_window == 120 * SEC  # the server's default, as on 2.15.1
    assert east.publish("o.new", b"n").seq == 6  # takes the origin's role in its cluster
    assert east.state("M").messages == 6


@pytest.mark.parametrize("kw,outcome", [
    ({}, "refused"),
    ({"failover": True}, ("failover", True)),
])
def test_lag_with_a_reachable_origin(dd, clock, env, kw, outcome):
    west, east = env
    west.publish("o.1", b"late")
    west.publish("o.2", b"later")
    if outcome == "refused":
        with pytest.raises(PromoteRefused) as exc:
            promote(dd, "east", "M", clock, **kw)
        err = exc.value
        assert (err.pending, err.mirror_last_seq, err.origin_last_seq) == (2, 5, 7)
        assert "mirror M is 2 messages behind its origin O" in err.description
        assert east.stream_info("M").config.mirror is not None  # unchanged
        return
    report = promote(dd, "east", "M", clock, **kw)
    assert (report.action, report.forced) == outcome
    assert (report.mirror_last_seq, report.origin_last_seq, report.origin_pending) == (5, 7, 2)
    assert east.stream_info("M").config.mirror is None


def test_promote_needs_the_origin_reachable(dd, clock, env):
    """Confluent's promote: an origin that does not answer refuses it, pointing to failover;
    nothing changes."""
    west, east = env
    dd.open("west").set_down(True)
    with pytest.raises(PromoteRefused) as exc:
        promote(dd, "east", "M", clock)
    assert exc.value.description == (
        "mirror M cannot be promoted: its origin O (cluster west) is not reachable (cluster "
        "west is down); promote needs the origin reachable and caught up: fail over instead")
    assert exc.value.pending is None
    assert east.stream_info("M").config.mirror is not None


def test_origin_cluster_down_fails_over_with_the_subjects_given(dd, clock, env):
    west, east = env
    from jetlink.core.replication import pump_until_idle

    west.publish("o.1", b"late")
    pump_until_idle(dd, clock)  # (the mirror hears from its origin: it reports a lag)
    west.publish("o.2", b"later")
    dd.open("west").set_down(True)
    reported = east.stream_info("M").mirror["lag"]
    report = promote(dd, "east", "M", clock, failover=True, subjects=["o.>"])
    doc = report.to_json()
    assert doc["origin"] == {"stream": "O", "cluster": "west", "reachable": False,
                             "error": "cluster west is down"}
    # a down origin is not looked into: what it holds is unknown (no positions were synced);
    # the lag is the mirror's own, as stream info reports it
    assert (doc["mirror_last_seq"], doc["origin_last_seq"], doc["origin_pending"]) == \
        (6, None, None)
    assert doc["lag"] == reported
    assert doc["forced"] is False and doc["action"] == "failover"
    assert (doc["subjects"], doc["subjects_from"]) == (["o.>"], "given")


def test_a_lag_never_reported_is_no_figure_while_the_origin_is_down(dd, clock, env):
    """A mirror that never heard from its origin (``active`` -1: copied by hand here; on a
    server restarted during the outage, its 0) has no lag, as dr check says "Lag unknown
    (never reported)": the failover's report says unknown, never 0."""
    west, east = env
    dd.open("west").set_down(True)
    assert east.stream_info("M").mirror["active"] == -1
    doc = promote(dd, "east", "M", clock, failover=True, subjects=["o.>"],
                  dry_run=True).to_json()
    assert doc["lag"] is None


def test_unknown_subjects_refuse_the_failover_naming_the_flag(dd, clock, env):
    """Nothing knows the origin's subjects (down, no positions synced, no topology file):
    the promoted stream never takes its own name silently."""
    from jetlink.core.errors import UsageError

    west, east = env
    dd.open("west").set_down(True)
    for dry_run in (True, False):
        with pytest.raises(UsageError) as exc:
            promote(dd, "east", "M", clock, failover=True, dry_run=dry_run)
        assert exc.value.field == "subjects" and exc.value.exit_code == 2
        assert exc.value.description.startswith(
            "the subjects of the promoted stream M are unknown: its origin O (cluster west) "
            "is not reachable and no positions were synced (jetlink positions sync): give "
            "them with --subjects")
    assert east.stream_info("M").config.mirror is not None  # unchanged
    # an origin that is not there is said so, not "not reachable"
    dd.open("west").set_down(False)
    west.delete_stream("O")
    with pytest.raises(UsageError) as exc:
        promote(dd, "east", "M", clock, failover=True, dry_run=True)
    assert exc.value.description.startswith(
        "the subjects of the promoted stream M are unknown: its origin O (cluster west) is "
        "not there (stream O not found in cluster west) and no positions were synced")


def test_subjects_from_the_topology_file(dd, clock, env, tmp_path):
    from jetlink.core.topology import Topology

    west, east = env
    dd.open("west").set_down(True)
    path = tmp_path / "topo.toml"
    path.write_text('[clusters.west]\n[clusters.east]\n'
                    '[streams.O]\ncluster = "west"\nsubjects = ["o.>"]\n')
    topo = Topology()
    topo.add_file(str(path))
    report = promote(dd, "east", "M", clock, failover=True, topology=topo)
    assert (report.subjects, report.subjects_from) == (["o.>"], "topology")
    assert east.stream_info("M").config.subjects == ["o.>"]


def test_origin_cluster_removed(dd, clock, env):
    dd.remove_cluster("west")
    report = promote(dd, "east", "M", clock, failover=True, subjects=[])
    doc = report.to_json()
    assert doc["origin"] == {"stream": "O", "cluster": "west", "reachable": False,
                             "error": "cluster west not found"}
    assert (doc["origin_last_seq"], doc["origin_pending"]) == (None, None)
    assert doc["subjects"] == ["M"]  # '' given: the server's default, the stream's name


def test_origin_stream_deleted(dd, clock, env):
    west, east = env
    west.delete_stream("O")
    report = promote(dd, "east", "M", clock, subjects=["m.>"], failover=True)
    assert report.origin.error == "stream O not found in cluster west"
    assert report.subjects == ["m.>"]


def test_an_invalid_subject_given_is_named_with_the_rule(dd, clock, env):
    with pytest.raises(ApiError) as exc:
        promote(dd, "east", "M", clock, subjects=["orders.*.>.x"], failover=True, dry_run=True)
    assert (exc.value.err_code, exc.value.detail) == (
        10052, "--subjects 'orders.*.>.x' (tokens separated by '.', none empty, no spaces or "
               "tabs, '>' only as the last token)")


@pytest.mark.parametrize("subjects,expected", [
    (None, ["o.>"]),
    ([], ["M"]),
    (["m.>", "n.*"], ["m.>", "n.*"]),
])
def test_subjects(dd, clock, env, subjects, expected):
    report = promote(dd, "east", "M", clock, subjects=subjects)
    assert report.subjects == expected
    assert env[1].stream_info("M").config.subjects == expected


def test_same_cluster_origin(dd, clock, js):
    js.add_stream({"name": "O", "subjects": ["o.>"], "allow_direct": True})
    js.publish("o.a", b"1")
    js.add_stream({"name": "M", "mirror": {"name": "O"}})
    copy(js, "O", js, "M")
    assert js.stream_info("M").config.mirror_direct is True
    for dry_run in (True, False):  # the dry run sees it too, before anything is changed
        with pytest.raises(JetlinkError) as exc:  # the origin's subjects: taken by the origin
            promote(dd, "local", "M", clock, dry_run=dry_run)
        assert exc.value.description == (
            'the origin\'s subjects o.> overlap with another stream of local ("o.>" overlaps '
            '"o.>" of stream O): give the promoted stream\'s subjects with --subjects')
    assert js.stream_info("M").config.mirror is not None  # nothing changed
    with pytest.raises(ApiError) as exc:
        promote(dd, "local", "M", clock, subjects=["o.a"], dry_run=True)
    assert (exc.value.err_code, exc.value.detail) == (10065, '"o.a" overlaps "o.>" of stream O')
    report = promote(dd, "local", "M", clock, subjects=["m.>"])
    assert report.origin.reachable and report.origin_pending == 0
    assert report.origin.cluster == "local"
    cfg = js.stream_info("M").config
    assert cfg.mirror is None and cfg.mirror_direct is True  # kept, as on the server


def test_filtered_mirror_lag_counts_matching_messages(dd, clock, js):
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    js.add_stream({"name": "M", "mirror": {"name": "O", "filter_subject": "o.a"}})
    js.publish("o.a", b"1")
    copy(js, "O", js, "M", flt="o.a")
    js.publish("o.b", b"2")  # not mirrored: no lag
    assert promote(dd, "local", "M", clock, subjects=["x.>"]).origin_pending == 0


def test_filtered_mirror_refused_when_matching_messages_pending(dd, clock, js):
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    js.add_stream({"name": "M", "mirror": {"name": "O", "filter_subject": "o.a"}})
    for s in ("o.a", "o.b", "o.a", "o.b"):
        js.publish(s, b"1")
    with pytest.raises(PromoteRefused) as exc:
        promote(dd, "local", "M", clock, subjects=["x.>"])
    assert exc.value.pending == 2


def test_empty_mirror_with_opt_start_seq(dd, clock, js):
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    for _ in range(5):
        js.publish("o.a", b"1")
    js.add_stream({"name": "M", "mirror": {"name": "O", "opt_start_seq": 4}})
    with pytest.raises(PromoteRefused) as exc:
        promote(dd, "local", "M", clock, subjects=["x.>"])
    assert exc.value.pending == 2


def test_mirror_with_transforms_needs_subjects(dd, clock, js):
    js.add_stream({"name": "O", "subjects": ["o.>"]})
    js.add_stream({"name": "M", "mirror": {"name": "O", "subject_transforms": [
        {"src": "o.>", "dest": "m.>"}]}})
    with pytest.raises(JetlinkError) as exc:
        promote(dd, "local", "M", clock)
    assert exc.value.field == "subjects"
    assert promote(dd, "local", "M", clock, subjects=["m.>"]).subjects == ["m.>"]


@pytest.mark.parametrize("cluster,stream,error,text", [
    ("nope", "M", NotFoundError, "cluster nope not found"),
    ("east", "NOPE", ApiError, "stream not found"),
    ("west", "O", JetlinkError, "stream O is not a mirror"),
])
def test_errors(dd, clock, env, cluster, stream, error, text):
    with pytest.raises(error) as exc:
        promote(dd, cluster, stream, clock)
    assert exc.value.description == text


# --- consumer clamps ---------------------------------------------------------------------------
def test_consumer_clamps(dd, clock, env):
    west, east = env
    east.add_consumer("M", {"durable_name": "far", "deliver_policy": "by_start_sequence",
                            "opt_start_seq": 100, "ack_policy": "explicit"})
    east.add_consumer("M", {"durable_name": "near", "ack_policy": "explicit"})
    east.fetch("M", "near", 3)
    east.ack("M", "near", 1)
    # a consumer whose state was copied from the origin's (ack floor 40, one pending past L)
    east.add_consumer("M", {"durable_name": "copied", "ack_policy": "explicit"})
    with east.cluster.transaction() as conn:
        from jetlink.core.consumers import ConsumerState

        st = ConsumerState(sseq=43, dseq=43, adflr=40, asflr=40, delivered_c=42,
                           delivered_s=42, ack_floor_c=40, ack_floor_s=40,
                           pending={41: [41, clock.now_ns(), 41], 42: [42, clock.now_ns(), 42]})
        conn.execute("UPDATE consumers SET state = ? WHERE name = 'copied'", (st.dumps(),))
    before = {n: east.consumer_info("M", n).to_json() for n in ("far", "near", "copied")}
    preview = promote(dd, "east", "M", clock, dry_run=True)
    expected = [
        {"stream": "M", "consumer": "far", "from": 99, "to": 5},
        {"stream": "M", "consumer": "copied", "from": 42, "to": 5},
    ]
    assert preview.dry_run and preview.to_json()["dry_run"] is True
    assert [c.to_json() for c in preview.clamps] == expected
    # the dry run changed nothing: still a mirror, consumers where they were
    assert east.stream_info("M").config.mirror is not None
    assert {n: east.consumer_info("M", n).to_json() for n in before} == before
    report = promote(dd, "east", "M", clock)
    assert [c.to_json() for c in report.clamps] == expected
    far = east.consumer_info("M", "far").to_json()
    assert far["delivered"]["stream_seq"] == 5 and far["ack_floor"]["stream_seq"] == 5
    near = east.consumer_info("M", "near").to_json()
    assert near["delivered"]["stream_seq"] == 3 and near["ack_floor"]["stream_seq"] == 1
    east.publish("o.x", b"new")
    assert [m.seq for m in east.fetch("M", "far", 10)] == [6]
    assert [m.seq for m in east.fetch("M", "copied", 10)] == [6]
    assert [m.seq for m in east.fetch("M", "near", 10)] == [4, 5, 6]


def test_dry_run_is_refused_like_the_promotion(dd, clock, env):
    west, east = env
    west.publish("o.1", b"ahead")
    with pytest.raises(PromoteRefused):
        promote(dd, "east", "M", clock, dry_run=True)
    report = promote(dd, "east", "M", clock, dry_run=True, failover=True)
    assert report.to_json()["forced"] is True and report.origin_pending == 1
    assert east.stream_info("M").config.mirror is not None


def test_failed_update_changes_nothing(dd, clock, env):
    west, east = env
    east.add_stream({"name": "X", "subjects": ["x.>"]})
    east.add_consumer("M", {"durable_name": "far", "deliver_policy": "by_start_sequence",
                            "opt_start_seq": 100, "ack_policy": "explicit"})
    with pytest.raises(ApiError):
        promote(dd, "east", "M", clock, subjects=["x.a"])
    assert east.stream_info("M").config.mirror is not None
    assert east.consumer_info("M", "far").to_json()["delivered"]["stream_seq"] == 99


# --- the origin's consumers placed on the promoted stream (core/dr/rules.py) -----------------
def _acked(js: JetStream, stream: str, name: str, upto: int, **cfg) -> None:
    js.add_consumer(stream, {"durable_name": name, "ack_policy": "explicit", **cfg})
    for m in js.fetch(stream, name, upto):
        js.ack(stream, name, m.seq)


def test_origin_consumers_placed_after_their_ack_floor(dd, clock, env):
    west, east = env
    _acked(west, "O", "billing", 3)
    _acked(west, "O", "fresh", 0, filter_subject="o.1", description="d")
    west.add_consumer("O", {"name": "eph", "inactive_threshold": 5 * SEC})  # not durable
    plan = promote(dd, "east", "M", clock, dry_run=True)
    assert [p.to_json() for p in plan.consumers] == [
        {"consumer": "billing", "ack_floor": 3, "start_seq": 4, "clamped": False,
         "status": "planned"},
        {"consumer": "fresh", "ack_floor": 0, "start_seq": 1, "clamped": False,
         "status": "planned"}]
    assert east.consumer_names("M") == []
    report = promote(dd, "east", "M", clock)
    assert [(p.consumer, p.status) for p in report.consumers] == [
        ("billing", "created"), ("fresh", "created")]
    assert report.positions.to_json() == {"source": "origin"} and report.complete
    fresh = east.consumer_info("M", "fresh").config
    assert (fresh.filter_subject, fresh.description, fresh.deliver_policy,
            fresh.opt_start_seq) == ("o.1", "d", "by_start_sequence", 1)
    assert [m.seq for m in east.fetch("M", "billing", 10)] == [4, 5]
    assert [m.seq for m in east.fetch("M", "fresh", 10)] == [2, 4]


def test_ack_floor_beyond_the_mirror_is_clamped(dd, clock, env):
    west, east = env
    for i in range(3):  # the mirror does not have 6..8
        west.publish("o.0", b"late%d" % i)
    _acked(west, "O", "ahead", 7)
    _acked(west, "O", "behind", 2)
    report = promote(dd, "east", "M", clock, failover=True)
    assert report.forced and report.origin_pending == 3
    assert [c.to_json() for c in report.clamps] == [
        {"stream": "M", "consumer": "ahead", "from": 7, "to": 5}]
    assert [(p.consumer, p.start_seq, p.clamped) for p in report.consumers] == [
        ("ahead", 6, True), ("behind", 3, False)]
    east.publish("o.x", b"first after")
    assert [m.seq for m in east.fetch("M", "ahead", 10)] == [6]


def test_failover_with_the_origin_down_uses_synced_positions(dd, clock, env):
    from jetlink.core.dr.positions import PositionStore, sync
    from jetlink.core.kv import KV

    west, east = env
    _acked(west, "O", "billing", 4)
    store = PositionStore(KV(dd, "east", clock))
    site = EmbeddedSite(dd, "east", clock)
    assert [r.to_json()["status"] for r in sync(site, store)] == ["synced"]
    rec = store.read("M")
    assert (rec.origin_stream, rec.origin_where, rec.origin_last_seq, rec.origin_subjects) == (
        "O", {"cluster": "west"}, 5, ["o.>"])
    assert [(p.consumer, p.ack_floor) for p in rec.positions] == [("billing", 4)]
    _acked(west, "O", "later", 1)  # created after the last sync: unknown on east
    dd.set_down("west", True)
    clock.advance(90 * SEC)
    skipped = sync(site, store)[0].to_json()
    assert skipped["status"] == "skipped" and skipped["error"] == "cluster west is down"
    report = promote(dd, "east", "M", clock, failover=True, positions=store)
    assert report.positions.to_json()["source"] == "synced"
    assert report.positions.age_ns == 90 * SEC
    assert [(p.consumer, p.start_seq, p.status) for p in report.consumers] == [
        ("billing", 5, "created")]


def test_no_positions_no_consumers_and_said_so(dd, clock, env):
    from jetlink.core.dr.positions import PositionStore
    from jetlink.core.kv import KV

    west, east = env
    _acked(west, "O", "billing", 4)
    dd.set_down("west", True)
    report = promote(dd, "east", "M", clock, failover=True, subjects=["o.>"],
                     positions=PositionStore(KV(dd, "east", clock)))
    assert report.consumers == [] and report.positions.source == "none"
    assert "no consumer positions were synced" in report.positions.note


def test_a_consumer_the_promoted_stream_refuses_is_reported_and_the_rerun_finishes(
        dd, clock, env):
    from jetlink.core.dr import PartialPromotion

    west, east = env
    east.add_stream({"name": "M1", "max_consumers": 1, "mirror": {
        "name": "O", "external": {"api": "$JS.west.API"}}})
    copy(west, "O", east, "M1")
    _acked(west, "O", "all", 2)
    _acked(west, "O", "more", 1)
    with pytest.raises(PartialPromotion) as exc:
        promote(dd, "east", "M1", clock, subjects=["m1.>"])
    rep = exc.value.report
    assert rep.promoted and not rep.complete
    assert [(p.consumer, p.status) for p in rep.consumers] == [("all", "created"),
                                                                ("more", "failed")]
    assert rep.consumers[1].error == "maximum consumers limit reached"
    assert exc.value.description == (
        "stream M1 was promoted, but 1 consumer was not placed (more): maximum consumers "
        "limit reached. Run the same command again once what the server refused is fixed: "
        "it places what is missing and leaves the consumers already placed as they are")
    assert east.stream_info("M1").config.mirror is None
    # run again as it is: the placed one is left alone, the other refused again
    with pytest.raises(PartialPromotion) as exc:
        promote(dd, "east", "M1", clock)
    again = exc.value.report
    assert again.resumed and again.subjects == ["m1.>"]
    assert [(p.consumer, p.status) for p in again.consumers] == [("all", "exists"),
                                                                  ("more", "failed")]
    assert again.consumers[0].error == ""  # the earlier run's placement: nothing to say


def test_a_consumer_of_the_origins_name_made_on_the_mirror_is_kept_and_said(dd, clock, env):
    """The mirror holds a consumer of the origin consumer's name (made by hand, its own
    config): the promotion keeps it as it is, and the report says it does not start where
    the origin's was, and how to make it (it never claims the placement)."""
    west, east = env
    east.add_stream({"name": "M2", "mirror": {
        "name": "O", "external": {"api": "$JS.west.API"}}})
    copy(west, "O", east, "M2")
    _acked(west, "O", "all", 2)
    east.add_consumer("M2", {"durable_name": "all", "ack_policy": "none"})
    rep = promote(dd, "east", "M2", clock, subjects=["m2.>"])
    [p] = rep.consumers
    assert (p.consumer, p.status, p.start_seq) == ("all", "exists", 3)
    assert p.error == ("a consumer of that name was on the mirror already, kept as it is "
                       "(deliver all, ack none): it does not start at 3 (consumer rm it, then "
                       "consumer add it with --deliver 3, to start where the origin's was)")
    cfg = east.consumer_info("M2", "all").config
    assert (cfg.deliver_policy, cfg.ack_policy) == ("all", "none")  # untouched


def test_a_rerun_that_only_ends_the_record_says_it_resumed(dd, clock, env):
    """Stopped after its last consumer was placed and before its record ended (a kill then):
    the re-run has nothing to place but ends the record: it says it resumed (the earlier
    run had not finished), never "nothing left to do"; the run after it is already done."""
    import json

    from jetlink.core.dr.fencing import PROMOTED_KEY, promotion_doc

    west, east = env
    east.add_stream({"name": "M3", "mirror": {
        "name": "O", "external": {"api": "$JS.west.API"}}})
    copy(west, "O", east, "M3")
    _acked(west, "O", "all", 2)
    promote(dd, "east", "M3", clock, subjects=["m3.>"])
    cfg = east.stream_info("M3").config.copy()
    rec = promotion_doc(cfg)
    assert rec is not None and rec.pop("done")
    cfg.metadata = {**cfg.metadata, PROMOTED_KEY: json.dumps(rec)}
    east.update_stream(cfg)  # as a run killed just before it ended the record leaves it
    again = promote(dd, "east", "M3", clock)
    assert (again.resumed, again.already_done, again.complete) == (True, False, True)
    assert [(p.consumer, p.status) for p in again.consumers] == [("all", "exists")]
    assert "done" in promotion_doc(east.stream_info("M3").config)
    last = promote(dd, "east", "M3", clock)
    assert (last.resumed, last.already_done) == (False, True)


# --- a failover killed part-way (SIGKILL), finished by the rerun ------------------------------


@pytest.mark.parametrize("kill_after", [0, 10, 20])
def test_a_failover_killed_part_way_is_finished_by_the_rerun(tmp_path, kill_after):
    """The update and the own consumers' clamps are one transaction; the origin's consumers
    are placed one by one after it. `jetlink stream failover` (a real process) is killed
    right after the update and with part of them placed, observed in the store; the rerun
    places the rest and leaves the placed ones as they are."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from jetlink.core.clock import SystemClock
    from jetlink.core.store import DataDir

    path = tmp_path / "data"
    clock = SystemClock()
    dd = DataDir(path)
    dd.add_cluster("west")
    dd.add_cluster("east")
    west, east = JetStream(dd.open("west"), clock), JetStream(dd.open("east"), clock)
    west.add_stream({"name": "O", "subjects": ["o.>"]})
    for i in range(40):
        west.publish(f"o.{i % 2}", b"x%d" % i)
    east.add_stream({"name": "M", "mirror": {"name": "O", "external": {"api": "$JS.west.API"}}})
    copy(west, "O", east, "M")
    for i in range(30):
        _acked(west, "O", f"c{i:02d}", 1 + i % 40)
    for i in range(5):
        east.add_consumer("M", {"durable_name": f"own{i}", "ack_policy": "explicit",
                                "deliver_policy": "by_start_sequence", "opt_start_seq": 99})
    dd.close()

    def placed() -> set[str]:
        store = DataDir(path, create=False)
        try:
            js = JetStream(store.open("east"), clock)
            if js.stream_info("M").config.mirror is not None:
                return set()
            return {n for n in js.consumer_names("M") if n.startswith("c")} | {"updated"}
        finally:
            store.close()

    script = Path(sys.executable).with_name("jetlink")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "jetlink.cli.main"]
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    proc = subprocess.Popen([*cmd, "--data-dir", str(path), "--cluster", "east", "stream",
                             "failover", "M", "-f"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    killed = False
    try:
        while proc.poll() is None:
            now = placed()
            if "updated" in now and len(now) - 1 >= kill_after:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                break
    finally:
        proc.wait(timeout=30)
    before = placed()
    store = DataDir(path, create=False)
    try:  # whether the killed run had ended its promotion record
        from jetlink.core.dr.fencing import promotion_doc

        ended = "done" in (promotion_doc(JetStream(store.open("east"), clock).stream_info(
            "M").config) or {})
    finally:
        store.close()
    rerun = subprocess.run([*cmd, "--data-dir", str(path), "--cluster", "east", "stream",
                            "failover", "M", "-f", "-j"], capture_output=True, text=True,
                           env=env, timeout=60)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["complete"] is True
    if killed and "updated" in before:
        created = [p["consumer"] for p in report["consumers"] if p["status"] == "created"]
        assert sorted(created) == sorted({f"c{i:02d}" for i in range(30)} - before)
        # resumed: the rerun finished what the killed run had left (the consumers it had
        # not placed, or only its record's end); a kill after that end (the process
        # finishing, under load) left nothing: already done
        assert (report["resumed"], report["already_done"]) == (not ended, ended)
        assert not created or not ended
    store = DataDir(path, create=False)
    try:
        js = JetStream(store.open("east"), clock)
        names = set(js.consumer_names("M"))
        assert {f"c{i:02d}" for i in range(30)} <= names
        for i in range(30):  # each starts after its ack floor on the origin
            info = js.consumer_info("M", f"c{i:02d}")
            assert info.config.opt_start_seq == 2 + i % 40
        for i in range(5):  # the mirror's own consumers, moved back to its last sequence
            assert js.consumer_info("M", f"own{i}").delivered.stream_seq <= 40
    finally:
        store.close()


@pytest.mark.parametrize(("kind", "cluster", "error", "silence"), [
    ("cluster", "west", "cluster west is down", "cluster west is down"),
    ("domain", "west", "domain west does not answer (no responders)", "no responders"),
    ("domain", "", "the mirror's own domain does not answer (timeout)", "timeout"),
    ("domain", "west", "stream O not found in domain west", "stream O not found in domain west"),
])
def test_why_an_origin_is_silent_is_said_once(kind, cluster, error, silence):
    """``... does not answer (REASON)`` never says "does not answer" twice."""
    from jetlink.core.dr.rules import OriginFacts

    facts = OriginFacts(cluster, "O", False, error, None, None, None, kind=kind)
    assert facts.silence == silence


@pytest.mark.parametrize(("limits", "state", "at"), [
    ({"max_msgs": 5}, {"messages": 5, "bytes": 10}, True),
    ({"max_msgs": 5}, {"messages": 4, "bytes": 10}, False),
    ({"max_bytes": 100}, {"messages": 1, "bytes": 100}, True),
    ({"max_bytes": 100}, {"messages": 1, "bytes": 99}, False),
    ({}, {"messages": 10**6, "bytes": 10**9}, False),
])
def test_a_mirror_at_its_own_limit_never_catches_up_by_waiting(limits, state, at):
    """Discard new at max_msgs or max_bytes: what it reads next is refused, whatever lag it
    reports while it reads (a server still consuming the burst reports one above 0)."""
    from types import SimpleNamespace

    from jetlink.core.config.stream import StreamConfig
    from jetlink.core.dr.rules import _at_its_limit

    cfg = StreamConfig.from_json({"name": "M", "mirror": {"name": "O"}, "discard": "new",
                                  **limits})
    assert _at_its_limit(SimpleNamespace(config=cfg, state=SimpleNamespace(**state))) is at


def test_the_one_primary_rule_names_the_side_only_when_it_has_a_name():
    """Two mirrors of one origin on one side: "twice on east"; on a server without a
    JetStream domain (no side name) just "twice", never a blank."""
    from jetlink.core.dr.rules import Primary, two_primaries

    for side, where in (("east", "twice on east"), ("", "twice")):
        a = Primary("west", "stream", "ORDERS", side, "A")
        b = Primary("west", "stream", "ORDERS", side, "B")
        said = two_primaries([a, b])
        assert said[a] == (f"stream ORDERS@west is mirrored {where} (B): a failover of each "
                           "would make two primaries taking writes for one stream; --skip "
                           "the others")
