"""`jetlink dr check`: every mirror's readiness for a failover now, on the embedded engine
(core/dr/readiness.py): the four formats (Prometheus read by prometheus_client's parser, the
Nagios line by its grammar), exit codes, thresholds from flags and from io.nats.monitor.*
metadata, unknown subjects, positions age, clamps, a stalled mirror, KV mirrors and Kafka
mirror topics. The clock is a manual one: ages are exact."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from helpers import doc, ok
from prometheus_client.parser import text_string_to_metric_families

from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir

SECOND = 1_000_000_000


@pytest.fixture
def jl(jl, cli_clock, utc):
    jl.clock = cli_clock
    stores: list[DataDir] = []

    def js(cluster: str = "east") -> JetStream:
        store = DataDir(jl.data)
        stores.append(store)
        return JetStream(store.open(cluster), cli_clock)

    jl.js = js
    yield jl
    for store in stores:
        store.close()


def east(jl, *args):
    return jl("--cluster", "east", *args)


@pytest.fixture
def world(jl):
    """west: ORDERS on orders.> with 2 messages and the durable consumer billing (acked up
    to 2); east: BACKUP, a mirror of it, caught up. The clock stands 5s later."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(east(jl, "stream", "add", "BACKUP", "--mirror", "ORDERS@west", "--defaults"))
    ok(jl("--cluster", "west", "pub", "orders.new", "one"))
    ok(jl("--cluster", "west", "pub", "orders.new", "two"))
    ok(jl("--cluster", "west", "consumer", "add", "ORDERS", "billing", "--defaults"))
    jl.clock.advance(5 * SECOND)
    return jl


NAGIOS = re.compile(  # a plugin's first line: TEXT [| PERFDATA]
    r"^(OK|WARNING|CRITICAL|UNKNOWN) [^|\n]*( \| (('[^'=]+'|[^' =]+)=-?[0-9.]+[a-zA-Z%]*"
    r"(;-?[0-9.]*){0,4} ?)+)?$")


def nagios(result, code):
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    line = result.stdout.rstrip("\n")
    assert "\n" not in line and NAGIOS.match(line), line
    return line


def test_no_mirror_is_unknown_and_creates_nothing(jl):
    assert nagios(jl("dr", "check"), 3) == (
        f"UNKNOWN dr no mirrors in {jl.data} | mirrors=0 mirrors_critical=0 "
        "mirrors_warning=0")
    assert list(jl.data.iterdir()) == []
    # JSON: the sentence is jsm.go's Result ``output`` (no OK message: UNKNOWN is no OK)
    assert json.loads(jl("dr", "check", "-j").stdout) == {
        "output": f"no mirrors in {jl.data}", "status": "UNKNOWN", "check_suite": "dr",
        "check_name": "dr",
        "perf_data": [{"name": "mirrors", "value": 0, "warning": 0, "critical": 0},
                      {"name": "mirrors_critical", "value": 0, "warning": 0, "critical": 0},
                      {"name": "mirrors_warning", "value": 0, "warning": 0, "critical": 0}],
        "mirrors": []}


def test_a_down_cluster_addressed_says_the_region_and_the_side_may_be_swapped(jl):
    """--cluster naming the region that is out (down, holding origins): no mirrors there,
    and the sentence says the cluster is down and where the mirrors are checked."""
    ok(jl("cluster", "add", "west"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "o.>", "--defaults"))
    ok(jl("cluster", "down", "west"))
    assert nagios(jl("--cluster", "west", "dr", "check"), 3) == (
        "UNKNOWN dr no mirrors in cluster west (cluster west is down: a region that is out "
        "holds the origins, not their mirrors; check the cluster that holds them with "
        "--cluster NAME, or every cluster without --cluster) | mirrors=0 mirrors_critical=0 "
        "mirrors_warning=0")
    ok(jl("cluster", "up", "west"))
    assert nagios(jl("--cluster", "west", "dr", "check"), 3).startswith(
        "UNKNOWN dr no mirrors in cluster west | ")

def test_a_mirror_whose_failover_cannot_be_prepared_keeps_its_lag_series(jl):
    """A mirror beside its origin in one cluster: a failover would be refused (the
    subjects overlap), CRITICAL; its lag and time since last contact, as its StreamInfo
    reports them, stay in every format (a graph of its lag does not stop)."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("stream", "add", "COPY", "--mirror", "ORDERS", "--defaults"))
    ok(jl("pub", "orders.new", "one"))
    jl.clock.advance(3 * SECOND)
    line = nagios(jl("dr", "check"), 2)
    assert line.startswith("CRITICAL dr Crit:COPY@local: could not prepare a failover: "
                           "the origin's subjects orders.> overlap"), line
    assert line.split(" | ")[1].startswith("COPY@local.lag=0 COPY@local.active=3.0000s "), line
    [mirror] = json.loads(jl("dr", "check", "-j").stdout)["mirrors"]
    assert [p["name"] for p in mirror["perf_data"]] == ["lag", "active"]
    assert "recovery_point" not in mirror["readiness"]  # (it needs the origin read)
    prom = ok(jl("dr", "check", "--format", "prometheus"))
    families = {f.name: f for f in text_string_to_metric_families(prom.stdout)}
    assert [(x.labels, x.value) for x in families["jetlink_dr_lag"].samples] == [
        ({"item": "COPY@local"}, 0)]
    assert [(x.labels, x.value) for x in families["jetlink_dr_active"].samples] == [
        ({"item": "COPY@local"}, 3)]


def test_a_mirror_without_synced_positions_warns(world):
    assert nagios(world("dr", "check"), 1) == (
        "WARNING dr Warn:BACKUP@east: No positions synced (jetlink positions sync) "
        "Warn:BACKUP@east: 1 consumer of the origin without a synced position: billing "
        "Warn:BACKUP@east: Subjects known only from the origin: once it is gone a failover "
        "needs --subjects (jetlink positions sync, or --topology FILE) "
        "OK:BACKUP@east: Origin ORDERS in cluster west answers OK:BACKUP@east: Lag 0 "
        "OK:BACKUP@east: Last seen 5s ago OK:BACKUP@east: Recovery point 0 messages, 0s "
        "OK:BACKUP@east: Subjects orders.> (from origin) "
        "| BACKUP@east.lag=0 BACKUP@east.active=5.0000s "
        "BACKUP@east.recovery_point_seconds=0.0000s BACKUP@east.consumers_unsynced=1 "
        "BACKUP@east.clamps=0 mirrors=1 mirrors_critical=0 mirrors_warning=1 "
        "worst_recovery_point_seconds=0.0000s worst_recovery_point_messages=0")


def test_a_ready_mirror_in_every_format(world):
    ok(east(world, "positions", "sync"))
    world.clock.advance(2 * SECOND)
    assert nagios(world("dr", "check"), 0) == (
        "OK dr OK:BACKUP@east: Origin ORDERS in cluster west answers OK:BACKUP@east: Lag 0 "
        "OK:BACKUP@east: Last seen 2s ago OK:BACKUP@east: Recovery point 0 messages, 0s "
        "OK:BACKUP@east: Positions synced 2s ago "
        "(1 consumer) OK:BACKUP@east: Subjects orders.> (from origin) | BACKUP@east.lag=0 "
        "BACKUP@east.active=2.0000s BACKUP@east.recovery_point_seconds=0.0000s "
        "BACKUP@east.positions_age=2.0000s "
        "BACKUP@east.consumers_unsynced=0 BACKUP@east.clamps=0 mirrors=1 mirrors_critical=0 "
        "mirrors_warning=0 worst_recovery_point_seconds=0.0000s "
        "worst_recovery_point_messages=0")
    # JSON (also -j): natscli's Result fields for the whole, one document per mirror
    got = doc(world("dr", "check", "-j"))
    assert got == doc(world("dr", "check", "--format", "json"))
    assert {k: got[k] for k in ("status", "check_suite", "check_name")} == {
        "status": "OK", "check_suite": "dr", "check_name": "dr"}
    [mirror] = got["mirrors"]
    facts = mirror.pop("readiness")
    assert mirror == {
        "status": "OK", "check_suite": "dr", "check_name": "BACKUP@east",
        "ok": ["Origin ORDERS in cluster west answers", "Lag 0", "Last seen 2s ago",
               "Recovery point 0 messages, 0s", "Positions synced 2s ago (1 consumer)",
               "Subjects orders.> (from origin)"],
        "perf_data": [
            {"name": "lag", "value": 0, "warning": 0, "critical": 0},
            {"name": "active", "value": 2, "warning": 0, "critical": 0, "unit": "s"},
            {"name": "recovery_point_seconds", "value": 0, "warning": 0, "critical": 0,
             "unit": "s"},
            {"name": "positions_age", "value": 2, "warning": 0, "critical": 0, "unit": "s"},
            {"name": "consumers_unsynced", "value": 0, "warning": 0, "critical": 0},
            {"name": "clamps", "value": 0, "warning": 0, "critical": 0}],
        "kind": "stream", "cluster": "east"}
    assert facts["origin"] == {"stream": "ORDERS", "cluster": "west", "reachable": True}
    assert facts["recovery_point"] == {
        "messages": 0, "lag": 0, "stale": False, "lag_age_ms": 0, "origin_pending": 0,
        "last_seen_ms": 2000,
        "mirror_last_seq": 2, "origin_last_seq": 2, "known_from": "origin",
        "seconds": 0, "seconds_from": "origin", "oldest": None}
    assert facts["positions"] == {"synced": "2026-01-01T00:00:05Z", "age_ms": 2000,
                                  "consumers": 1, "unsynced": []}
    assert (facts["subjects"], facts["subjects_from"], facts["subjects_if_origin_lost"],
            facts["subjects_if_origin_lost_from"]) == (
        ["orders.>"], "origin", ["orders.>"], "positions")
    assert facts["consumers"] == [{"consumer": "billing", "ack_floor": 0, "start_seq": 1,
                                   "clamped": False, "status": "planned"}]
    assert facts["failover"]["action"] == "failover" and facts["failover"]["dry_run"]
    # Prometheus: exit 0 whatever the status (natscli), read by a real parser
    prom = ok(world("dr", "check", "--format", "prometheus", "--namespace", "ops"))
    families = {f.name: f for f in text_string_to_metric_families(prom.stdout)}
    assert sorted(families) == [
        "ops_dr_active", "ops_dr_clamps", "ops_dr_consumers_unsynced", "ops_dr_lag",
        "ops_dr_lag_stale", "ops_dr_mirrors", "ops_dr_overall_status_code",
        "ops_dr_positions_age",
        "ops_dr_recovery_point_seconds", "ops_dr_status_code",
        "ops_dr_worst_recovery_point_messages", "ops_dr_worst_recovery_point_seconds"]
    [status] = families["ops_dr_status_code"].samples
    assert (status.labels, status.value) == ({"item": "BACKUP@east", "status": "OK"}, 0)
    assert families["ops_dr_active"].samples[0].value == 2
    # the lag is current (the origin answers): not stale
    assert [(x.labels, x.value) for x in families["ops_dr_lag_stale"].samples] == [
        ({"item": "BACKUP@east"}, 0)]
    assert {s.labels["status"]: s.value for s in families["ops_dr_mirrors"].samples} == {
        "OK": 1, "WARNING": 0, "CRITICAL": 0}
    # text: a summary, then natscli's text of each mirror
    text = ok(world("dr", "check", "--format", "text")).stdout
    assert text.startswith("dr: OK (1 mirror: 1 ok, 0 warning, 0 critical; worst recovery "
                           "point: 0s, 0 messages)\n\n"
                           "BACKUP@east: OK\n\nStatus Detail\n")
    assert "│ OK     │ Positions synced 2s ago (1 consumer)" in text


def test_outfile_and_names(world, tmp_path):
    out = tmp_path / "dr.prom"
    result = world("dr", "check", "BACKUP", "--format", "prometheus", "--outfile", str(out))
    assert (result.exit_code, result.stdout) == (0, "")
    assert 'jetlink_dr_status_code{item="BACKUP@east",status="WARNING"} 1' in out.read_text()
    assert doc_status(world("dr", "check", "BACKUP@east", "-j")) == ("WARNING", ["BACKUP@east"])


def doc_status(result):
    got = json.loads(result.stdout)
    return got["status"], [m["check_name"] for m in got["mirrors"]]


def test_a_name_that_is_no_mirror_is_critical_as_natscli_reports_a_missing_stream(world):
    assert nagios(world("dr", "check", "ORDERS", "NOPE"), 2) == (
        "CRITICAL dr Crit:ORDERS: not mirrored Crit:NOPE: no mirror named NOPE (no mirror "
        "stream, KV mirror bucket or mirror topic of that name) | mirrors=0 "
        "mirrors_critical=0 mirrors_warning=0")  # (names that are no mirror are not counted)


def test_lag_thresholds_from_flags_and_from_metadata(world):
    ok(east(world, "positions", "sync"))
    world.js("west").publish("orders.new", b"three")  # not copied: no replication step
    world.js("west").publish("orders.new", b"four")
    assert "BACKUP@east.lag=2;1;3 " in nagios(
        world("dr", "check", "--lag-warn", "1", "--lag-critical", "3"), 1)
    line = nagios(world("dr", "check", "--lag-critical", "2"), 2)
    assert "Crit:BACKUP@east: Lag 2 " in line
    # read as server check reads its counts (natscli's uint64: base 0, digit separators)
    for warn, crit in (("0x1", "0b11"), ("1", "0_3"), ("0o1", "3")):
        assert "BACKUP@east.lag=2;1;3 " in nagios(
            world("dr", "check", "--lag-warn", warn, "--lag-critical", crit), 1)
    # the mirror's metadata, as natscli reads it; a flag overrides it (the mirror's stream
    # is edited in place: no replication step runs)
    meta = {"io.nats.monitor.lag-critical": "2", "io.nats.monitor.seen-warn": "1s"}
    mirror = world.js("east")
    cfg = mirror.stream_info("BACKUP").config
    cfg.metadata = {**(cfg.metadata or {}), **meta}
    mirror.update_stream(cfg)
    world.clock.advance(3 * SECOND)
    line = nagios(world("dr", "check"), 2)
    assert "Crit:BACKUP@east: Lag 2 " in line and "Warn:BACKUP@east: Last seen 3s ago" in line
    assert "BACKUP@east.lag=2;;2 " in line and "BACKUP@east.active=3.0000s;1.0000 " in line
    line = nagios(world("dr", "check", "--lag-critical", "5", "--seen-warn", "1h"), 0)
    assert "BACKUP@east.lag=2;;5 " in line
    cfg.metadata["io.nats.monitor.lag-critical"] = "x"
    mirror.update_stream(cfg)
    line = nagios(world("dr", "check"), 2)
    assert line.startswith(
        "CRITICAL dr Crit:BACKUP@east: could not configure based on metadata: "
        "io.nats.monitor.lag-critical: 'x' is not a whole number of 0 or more ")


def test_origin_down_seen_and_positions_age(world):
    ok(east(world, "positions", "sync"))
    ok(world("cluster", "down", "west"))
    world.clock.advance(2 * 3600 * SECOND)
    line = nagios(world("dr", "check", "--seen-critical", "1h", "--positions-warn", "1h"), 2)
    assert line.startswith(
        "CRITICAL dr Crit:BACKUP@east: Last seen 2h0m0s ago Warn:BACKUP@east: Origin ORDERS "
        "in cluster west does not answer (cluster west is down): promote would be refused, "
        "failover would go ahead Warn:BACKUP@east: Lag 0 (last reported 2h0m0s ago) "
        "Warn:BACKUP@east: Positions synced 2h0m0s ago OK:BACKUP@east: Recovery point "
        "2h0m0s since the origin was last heard (0 messages as last reported) "
        "OK:BACKUP@east: Subjects orders.> (from positions) |")
    assert "Crit:BACKUP@east: Positions synced 2h0m0s ago" in nagios(
        world("dr", "check", "--positions-critical", "2h"), 2)
    assert nagios(world("dr", "check"), 1).startswith("WARNING dr Warn:BACKUP@east: Origin")


def test_a_mirror_never_heard_from_has_no_worst_figure(jl):
    """A mirror made while its origin was down has no recovery point: the summary's worst
    figures are left out (not a 0 a dashboard reads as nothing at risk), the text says
    unknown."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("cluster", "down", "west"))
    ok(east(jl, "stream", "add", "BACKUP", "--mirror", "ORDERS@west", "--defaults"))
    line = nagios(jl("dr", "check"), 2)
    assert "worst_recovery_point" not in line, line
    assert "Recovery point unknown: never heard from the origin" in line
    text = jl("dr", "check", "--format", "text").stdout
    assert "worst recovery point: unknown" in text, text


def test_a_mirror_whose_own_cluster_is_down_is_critical(world):
    """The mirrors' side marked down is a region that is out itself: a failover there is
    refused (the region's plan takes nothing over from a side that is down), so the check
    says so, however well the origin answers."""
    ok(east(world, "positions", "sync"))
    ok(world("cluster", "down", "east"))
    crit = ("Crit:BACKUP@east: Cluster east is down: a region failover there (dr failover) "
            "would be refused (jetlink cluster up east once it answers)")
    assert nagios(east(world, "dr", "check"), 2).startswith(f"CRITICAL dr {crit} OK:")
    assert nagios(world("dr", "check"), 2).startswith(f"CRITICAL dr {crit} OK:")
    ok(world("cluster", "up", "east"))
    nagios(east(world, "dr", "check"), 0)


def test_unknown_subjects_are_critical_and_a_topology_file_knows_them(world, tmp_path):
    ok(world("cluster", "down", "west"))  # and no positions were ever synced
    line = nagios(world("dr", "check"), 2)
    assert line.startswith(
        "CRITICAL dr Crit:BACKUP@east: Subjects unknown: a failover now would be refused "
        "(give --topology FILE naming the origin's stream, or --subjects to its failover) "
        "Warn:BACKUP@east: Origin ORDERS in cluster west does not answer "
        "(cluster west is down): promote would be refused, failover would go ahead "
        "Warn:BACKUP@east: Lag 0 (last reported 5s ago) "
        "Warn:BACKUP@east: No positions synced (jetlink positions sync) ")
    facts = json.loads(world("dr", "check", "-j").stdout)["mirrors"][0]["readiness"]
    assert (facts["subjects"], facts["subjects_from"]) == (None, "unknown")
    assert facts["subjects_why"].startswith("the subjects of the promoted stream BACKUP are "
                                            "unknown")
    topo = tmp_path / "topo.toml"
    topo.write_text('[clusters.west]\n[clusters.east]\n'
                    '[streams.ORDERS]\ncluster = "west"\nsubjects = ["orders.>"]\n')
    line = nagios(world("dr", "check", "--topology", str(topo)), 1)
    assert "OK:BACKUP@east: Subjects orders.> (from topology)" in line


def test_the_clamps_a_failover_would_make_are_listed(world):
    ok(east(world, "consumer", "add", "BACKUP", "far", "--deliver", "99", "--defaults"))
    ok(east(world, "positions", "sync"))
    got = json.loads(world("dr", "check", "-j").stdout)["mirrors"][0]
    assert "Clamp far: 98 -> 2" in got["ok"]
    assert got["readiness"]["clamps"] == [{"stream": "BACKUP", "consumer": "far", "from": 98,
                                           "to": 2}]
    assert {"name": "clamps", "value": 1, "warning": 0, "critical": 0} in got["perf_data"]
    # nothing changed: the consumer is where it was
    assert doc(east(world, "consumer", "info", "BACKUP", "far", "-j"))["delivered"][
        "stream_seq"] == 98


def test_a_stalled_mirror_is_critical_with_its_error(world):
    ok(east(world, "stream", "add", "SMALL", "--mirror", "ORDERS@west", "--defaults"))
    ok(east(world, "stream", "seal", "SMALL", "-f"))
    ok(world("--cluster", "west", "pub", "orders.new", "three"))
    line = nagios(world("dr", "check", "SMALL"), 2)
    assert line.startswith("CRITICAL dr Crit:SMALL@east: Mirror failing: invalid operation on "
                           "sealed stream Warn:")
    assert "OK:SMALL@east: Origin ORDERS in cluster west answers" in line


def test_a_mirror_at_its_own_discard_new_limit_is_not_failing(world):
    """As nats-server (stream.go processInboundMirrorMsg): a mirror whose own max_msgs with
    discard new refuses the origin's messages drops them, with no error; dr check grades
    the messages it lacks as its lag, not as a failing mirror."""
    ok(east(world, "stream", "add", "SMALL", "--mirror", "ORDERS@west", "--defaults",
            "--max-msgs", "1", "--discard", "new"))
    ok(world("--cluster", "west", "pub", "orders.new", "three"))
    info = doc(east(world, "stream", "info", "SMALL", "-j"))
    assert info["state"]["messages"] == 1
    assert info["mirror"]["lag"] == 0 and "error" not in info["mirror"]
    line = nagios(world("dr", "check", "SMALL", "--lag-critical", "1"), 2)
    assert line.startswith("CRITICAL dr Crit:SMALL@east: Lag 2 Warn:"), line
    assert "Mirror failing" not in line


@pytest.fixture
def buckets(jl):
    """west: the bucket CONFIG with a = 1; east: KV_CONFIG, its mirror, caught up."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "kv", "add", "CONFIG"))
    ok(jl("--cluster", "west", "kv", "put", "CONFIG", "a", "1"))
    ok(east(jl, "kv", "add", "KV_CONFIG", "--mirror", "CONFIG@west"))
    return jl


def test_kv_mirrors_by_their_bucket_names(buckets):
    jl = buckets
    ok(east(jl, "kv", "add", "OTHER", "--mirror", "CONFIG@west"))
    ok(east(jl, "positions", "sync"))
    got = json.loads(jl("dr", "check", "CONFIG", "-j").stdout)
    [m] = got["mirrors"]
    assert (got["status"], m["check_name"], m["kind"], m["readiness"]["stream"]) == (
        "OK", "CONFIG@east", "kv", "KV_CONFIG")
    assert "Subjects $KV.CONFIG.> (from bucket)" in m["ok"]
    # a KV mirror under another name: kv failover would refuse it
    line = nagios(jl("dr", "check", "OTHER"), 2)
    assert line.startswith(
        "CRITICAL dr Crit:OTHER@east: Not promotable: KV mirror KV_OTHER mirrors bucket CONFIG "
        "under another name")


def test_a_kv_mirror_knows_its_subjects_with_its_origin_gone_and_nothing_synced(buckets):
    """A KV mirror becomes its origin bucket: it takes $KV.<bucket>.>, as kv failover does,
    with no positions synced and the origin down (not "Subjects unknown")."""
    jl = buckets
    ok(jl("cluster", "down", "west"))
    got = json.loads(jl("dr", "check", "CONFIG", "-j").stdout)
    [m] = got["mirrors"]
    assert m["readiness"]["subjects"] == ["$KV.CONFIG.>"]
    assert m["readiness"]["subjects_from"] == "bucket"
    assert "Subjects $KV.CONFIG.> (from bucket)" in m["ok"]
    assert "critical" not in m  # (omitted when empty, as natscli's check result)
    assert not [w for w in m["warning"] if w.startswith("Subjects")]
    assert got["status"] == "WARNING"  # the origin does not answer, no positions synced


@pytest.fixture
def links(jl):
    """Kafka: west holds topic orders (5 records), group G at 4; east holds link L
    (west -> east, offset sync for every group) and the mirror topic orders, caught up."""
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.topics import Kafka

    dd = DataDir(jl.data)
    dd.add_cluster("west", "kafka")
    dd.add_cluster("east", "kafka")
    west = Kafka(dd.open("west"), jl.clock)
    west.create_topic("orders", 1)
    west.produce("orders", [(None, f"a{i}".encode()) for i in range(5)], partition=0)
    west.commit("G", {("orders", 0): 4})
    Links(dd, "east", jl.clock).create("L", "west", {
        "consumer.offset.sync.enable": "true",
        "consumer.offset.group.filters": json.dumps({"groupFilters": [
            {"name": "*", "patternType": "LITERAL", "filterType": "INCLUDE"}]})})
    ok(east(jl, "mirrors", "create", "orders", "--link", "L"))
    ok(east(jl, "replicate"))
    yield dd, west
    dd.close()


def test_kafka_mirror_topics(jl, links):
    dd, west = links
    jl.clock.advance(3 * SECOND)
    assert nagios(jl("dr", "check"), 0) == (
        "OK dr OK:L/orders@east: Source orders in cluster west answers OK:L/orders@east: "
        "Lag 0 OK:L/orders@east: Last seen 3s ago OK:L/orders@east: Recovery point 0 "
        "messages, 0s OK:L/orders@east: Consumer offsets synced "
        "3s ago | L/orders@east.lag=0 L/orders@east.active=3.0000s "
        "L/orders@east.recovery_point_seconds=0.0000s "
        "L/orders@east.positions_age=3.0000s L/orders@east.consumers_unsynced=0 "
        "L/orders@east.clamps=0 mirrors=1 mirrors_critical=0 mirrors_warning=0 "
        "worst_recovery_point_seconds=0.0000s worst_recovery_point_messages=0")
    # the source moves on: new records and G at 7, then west goes away
    west.produce("orders", [(None, b"x"), (None, b"y")], partition=0)
    west.commit("G", {("orders", 0): 7})
    from jetlink.core.kafka.mirrors import Mirrors

    Mirrors(dd, "east", jl.clock).sync_offsets("L")  # only the offset moved
    ok(jl("cluster", "down", "west"))
    got = json.loads(jl("dr", "check", "orders", "--lag-critical", "1", "-j").stdout)
    [m] = got["mirrors"]
    assert (got["status"], m["status"]) == ("WARNING", "WARNING")
    # the lag is the one last reported (the source has 2 more records since): never OK while
    # the source does not answer, marked with its age
    assert m["warning"] == ["Source orders in cluster west does not answer: promote would be "
                            "refused, failover would go ahead", "Lag 0 (last reported 3s ago)"]
    assert {k: m["readiness"]["recovery_point"][k] for k in ("messages", "stale",
                                                               "lag_age_ms")} == {
        "messages": 0, "stale": True, "lag_age_ms": 3000}
    assert {"name": "lag", "value": 0, "warning": 0, "critical": 1, "stale": True} in \
        m["perf_data"]
    assert "Clamp G partition 0: 7 -> 5" in m["ok"]
    assert m["readiness"]["clamps"] == [{"group": "G", "topic": "orders", "partition": 0,
                                         "from": 7, "to": 5}]
    assert m["readiness"]["source"] == {"topic": "orders", "cluster": "west",
                                        "reachable": False}
    ok(jl("cluster", "up", "west"))
    ok(east(jl, "mirrors", "pause", "orders", "--link", "L"))
    west.produce("orders", [(None, b"z"), (None, b"w")], partition=0)
    line = nagios(jl("dr", "check", "L/orders", "--lag-critical", "1"), 2)
    assert "Crit:L/orders@east: Lag 2 Warn:L/orders@east: Mirror paused" in line
    # a paused mirror's state never says its source went away (it fetches nothing): the
    # link's view of the source does; the lag is then the one last reported, not current
    ok(jl("cluster", "down", "west"))
    got = json.loads(jl("dr", "check", "L/orders", "-j").stdout)
    [m] = got["mirrors"]
    assert m["readiness"]["source"]["reachable"] is False
    assert "Source orders in cluster west does not answer: promote would be refused, " \
        "failover would go ahead" in m["warning"]
    assert m["readiness"]["recovery_point"]["stale"] is True
    assert not any(o.endswith("answers") for o in m.get("ok", []))


def test_a_misspelt_mirror_name_gets_a_suggestion(world):
    """``dr check ORDERS_ESAT`` names the mirror it was probably meant for, with the one
    suggestion rule of the tool (core/errors.py did_you_mean)."""
    ok(east(world, "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west", "--defaults"))
    assert nagios(world("dr", "check", "ORDERS_ESAT"), 2) == (
        "CRITICAL dr Crit:ORDERS_ESAT: no mirror named ORDERS_ESAT (no mirror stream, KV "
        "mirror bucket or mirror topic of that name); did you mean ORDERS_EAST? | mirrors=0 "
        "mirrors_critical=0 mirrors_warning=0")


def test_a_failed_over_bucket_answers_to_its_bucket_name(world):
    """After kv failover the bucket's stream KV_CFG is promoted: dr check CFG (or KV_CFG)
    says so with the kv command and the bucket's name, and kv failback of a misspelt bucket
    is "bucket not found" as kv failover says it."""
    ok(world("--cluster", "west", "kv", "add", "CFG"))
    ok(east(world, "kv", "add", "CFG", "--mirror", "CFG@west"))
    ok(world("replicate"))
    ok(east(world, "positions", "sync"))
    ok(world("cluster", "down", "west"))
    ok(east(world, "kv", "failover", "CFG", "-f"))
    for name in ("CFG", "KV_CFG", "CFG@east"):
        line = nagios(world("dr", "check", name), 2)
        assert line.startswith(f"CRITICAL dr Crit:{name}: not mirrored: promoted at "), line
        assert "(jetlink kv failback CFG makes it a mirror again)" in line
    for verb in ("failover", "failback"):
        bad = east(world, "kv", verb, "CGF", "-f")
        assert (bad.exit_code, bad.stderr) == (
            1, "jetlink: error: bucket not found (10059): CGF; did you mean CFG?\n")


def test_a_lag_as_last_reported_is_marked_and_never_ok_while_the_origin_is_down(world):
    """BACKUP caught up at 2 (positions synced, a step with them); west goes down and takes
    3 more messages: the mirror's lag is still the 0 it last reported. It is shown as that,
    with its age, and is a warning (the real lag is unknown), in every format."""
    ok(east(world, "positions", "sync"))
    ok(world("cluster", "down", "west"))
    for n in range(3):
        ok(world("--cluster", "west", "pub", "orders.new", str(n)))
    world.clock.advance(180 * SECOND)
    assert nagios(world("dr", "check"), 1) == (
        "WARNING dr Warn:BACKUP@east: Origin ORDERS in cluster west does not answer (cluster "
        "west is down): promote would be refused, failover would go ahead "
        "Warn:BACKUP@east: Lag 0 (last reported 3m0s ago) OK:BACKUP@east: Last seen 3m0s ago "
        "OK:BACKUP@east: Recovery point 3m0s since the origin was last heard (0 messages as "
        "last reported) "
        "OK:BACKUP@east: Positions synced 3m0s ago (1 consumer) OK:BACKUP@east: Subjects "
        "orders.> (from positions) | BACKUP@east.lag=0 BACKUP@east.active=180.0000s "
        "BACKUP@east.recovery_point_seconds=180.0000s "
        "BACKUP@east.positions_age=180.0000s BACKUP@east.clamps=0 mirrors=1 "
        "mirrors_critical=0 mirrors_warning=1 worst_recovery_point_seconds=180.0000s "
        "worst_recovery_point_messages=0")
    # a threshold the last figure reaches is critical; one it does not cannot make it OK
    assert "Warn:BACKUP@east: Lag 0 (last reported 3m0s ago)" in nagios(
        world("dr", "check", "--lag-critical", "1"), 1)
    res = world("dr", "check", "-j")
    assert res.exit_code == 1
    [m] = json.loads(res.stdout)["mirrors"]
    assert m["warning"][1] == "Lag 0 (last reported 3m0s ago)"
    assert "Lag 0" not in " ".join(m["ok"])
    assert m["perf_data"][0] == {"name": "lag", "value": 0, "warning": 0, "critical": 0,
                                 "stale": True}
    rp = m["readiness"]["recovery_point"]
    assert (rp["messages"], rp["stale"], rp["lag_age_ms"], rp["origin_pending"]) == (
        0, True, 180_000, None)
    text = world("dr", "check", "--format", "text")
    assert text.exit_code == 1
    assert "│ Warning │ Lag 0 (last reported 3m0s ago)" in text.stdout
    prom = ok(world("dr", "check", "--format", "prometheus"))
    families = {f.name: f for f in text_string_to_metric_families(prom.stdout)}
    [status] = families["jetlink_dr_status_code"].samples
    assert (status.labels, status.value) == ({"item": "BACKUP@east", "status": "WARNING"}, 1)
    # the origin back: counted there, current, OK
    ok(world("cluster", "up", "west"))
    ok(east(world, "replicate"))
    line = nagios(world("dr", "check"), 0)
    assert "OK:BACKUP@east: Lag 0 OK:BACKUP@east: Last seen 0s ago" in line
    rp = doc(world("dr", "check", "-j"))["mirrors"][0]["readiness"]["recovery_point"]
    assert (rp["messages"], rp["stale"], rp["lag_age_ms"]) == (0, False, 0)


def test_a_server_that_refuses_the_connection_is_critical_in_every_format(jl):
    import socket

    with socket.socket() as s:  # bound, never listening: a connection is refused
        s.bind(("127.0.0.1", 0))
        url = f"nats://127.0.0.1:{s.getsockname()[1]}"
        why = f"could not list mirrors: connecting: could not connect to {url}: " \
            "connection refused"

        def check(*args):
            return jl("-s", url, "dr", "check", *args)

        # the mirrors could not be listed: their counts are unknown, no perf item
        assert nagios(check(), 2) == f"CRITICAL dr Crit:{why}"
        prom = check("--format", "prometheus").stdout
        assert "jetlink_dr_mirrors" not in prom and \
            'jetlink_dr_overall_status_code{status="CRITICAL"} 2' in prom
        res = check("-j")
        assert res.exit_code == 2
        assert json.loads(res.stdout) == {
            "status": "CRITICAL", "check_suite": "dr", "check_name": "dr", "critical": [why],
            "perf_data": [], "mirrors": []}
        res = check("--format", "prometheus")
        assert res.exit_code == 0  # a scrape reads the status gauge
        families = {f.name: f for f in text_string_to_metric_families(res.stdout)}
        [overall] = families["jetlink_dr_overall_status_code"].samples
        assert (overall.labels, overall.value) == ({"status": "CRITICAL"}, 2)
        res = check("--format", "text")
        assert (res.exit_code, res.stdout) == (2, (
            f"dr: CRITICAL (the mirrors could not be listed)\n\n{why}\n\n"))
        assert res.stderr == ""


# --- the recovery point in seconds (core/dr/recovery.py) ---------------------------------------
@pytest.fixture
def behind(world):
    """world, positions synced at 5s; then west takes orders.new "three" at 5s and
    orders.paid "four" at 8s with no replication step (BACKUP copies neither), and a
    mirror PAID of west's orders.paid only (caught up at 5s, a step of its own). The clock
    stands at 10s."""
    ok(east(world, "stream", "add", "PAID", "--mirror", json.dumps(
        {"name": "ORDERS", "filter_subject": "orders.paid",
         "external": {"api": "$JS.west.API"}}), "--defaults"))
    ok(east(world, "positions", "sync"))
    west = world.js("west")
    west.publish("orders.new", b"three")
    world.clock.advance(3 * SECOND)
    west.publish("orders.paid", b"four")
    world.clock.advance(2 * SECOND)
    return world



def test_the_recovery_point_in_seconds_in_every_format(behind):
    """The age of the oldest message a failover now would lose, read at the origin: BACKUP's
    is "three" (seq 3, 5s old), PAID's (orders.paid only) "four" (seq 4, 2s old); the
    summary carries the worst of both."""
    # (two mirrors of ORDERS on east: a failover of the region takes one, --skip the other)
    twice = ("A failover of region west refuses it: stream ORDERS@west is mirrored twice on "
             "east ({}): a failover of each would make two primaries taking writes for one "
             "stream; --skip the others (jetlink dr failover --from west --skip NAME)")
    assert nagios(behind("dr", "check"), 1) == (
        f"WARNING dr Warn:BACKUP@east: {twice.format('PAID@east')} Warn:PAID@east: "
        f"{twice.format('BACKUP@east')} "
        "OK:BACKUP@east: Origin ORDERS in cluster west answers OK:BACKUP@east: Lag 2 "
        "OK:BACKUP@east: Last seen 5s ago OK:BACKUP@east: Recovery point 2 messages, 5s "
        "OK:BACKUP@east: Positions synced 5s ago (1 consumer) OK:BACKUP@east: Subjects "
        "orders.> (from origin) OK:PAID@east: Origin ORDERS in cluster west answers "
        "OK:PAID@east: Lag 1 OK:PAID@east: Last seen 5s ago OK:PAID@east: Recovery point "
        "1 message, 2s OK:PAID@east: Positions synced 5s ago (1 consumer) OK:PAID@east: "
        "Subjects orders.> (from origin) | BACKUP@east.lag=2 BACKUP@east.active=5.0000s "
        "BACKUP@east.recovery_point_seconds=5.0000s BACKUP@east.positions_age=5.0000s "
        "BACKUP@east.consumers_unsynced=0 BACKUP@east.clamps=0 PAID@east.lag=1 "
        "PAID@east.active=5.0000s PAID@east.recovery_point_seconds=2.0000s "
        "PAID@east.positions_age=5.0000s PAID@east.consumers_unsynced=0 PAID@east.clamps=0 "
        "mirrors=2 mirrors_critical=0 mirrors_warning=2 worst_recovery_point_seconds=5.0000s "
        "worst_recovery_point_messages=2")
    got = json.loads(behind("dr", "check", "-j").stdout)
    assert got["perf_data"][-2:] == [
        {"name": "worst_recovery_point_seconds", "value": 5, "warning": 0, "critical": 0,
         "unit": "s"},
        {"name": "worst_recovery_point_messages", "value": 2, "warning": 0, "critical": 0}]
    backup, paid = got["mirrors"]
    assert {"name": "recovery_point_seconds", "value": 5, "warning": 0, "critical": 0,
            "unit": "s"} in backup["perf_data"]
    assert backup["readiness"]["recovery_point"] == {
        "messages": 2, "lag": 0, "stale": False, "lag_age_ms": 0, "origin_pending": 2,
        "last_seen_ms": 5000, "mirror_last_seq": 2, "origin_last_seq": 4,
        "known_from": "origin", "seconds": 5, "seconds_from": "origin",
        "oldest": {"seq": 3, "time": "2026-01-01T00:00:05Z"}}
    rp = paid["readiness"]["recovery_point"]
    assert (rp["messages"], rp["seconds"], rp["seconds_from"], rp["oldest"]) == (
        1, 2, "origin", {"seq": 4, "time": "2026-01-01T00:00:08Z"})
    prom = ok(behind("dr", "check", "--format", "prometheus"))
    families = {f.name: f for f in text_string_to_metric_families(prom.stdout)}
    assert {s.labels["item"]: s.value for s in
            families["jetlink_dr_recovery_point_seconds"].samples} == {
        "BACKUP@east": 5, "PAID@east": 2}
    [worst] = families["jetlink_dr_worst_recovery_point_seconds"].samples
    assert (worst.labels, worst.value) == ({}, 5)
    [worst] = families["jetlink_dr_worst_recovery_point_messages"].samples
    assert (worst.labels, worst.value) == ({}, 2)
    assert "# TYPE jetlink_dr_recovery_point_seconds gauge\n" in prom.stdout
    text = behind("dr", "check", "--format", "text").stdout
    assert text.startswith("dr: WARNING (2 mirrors: 0 ok, 2 warning, 0 critical; worst "
                           "recovery point: 5s, 2 messages)\n\nBACKUP@east: WARNING\n")
    assert re.search(r"│ OK +│ Recovery point 2 messages, 5s +│", text)
    assert re.search(r"│ OK +│ Recovery point 1 message, 2s +│", text)
    assert re.search(r"│ recovery_point_seconds │ 2 +│ s +│ 0 +│ 0 +│ Age in seconds of the "
                     r"oldest message a failover now would lose │", text)
    # the mirror catches up: nothing behind is 0 s
    ok(east(behind, "replicate"))
    line = nagios(behind("dr", "check", "BACKUP"), 0)
    assert "OK:BACKUP@east: Recovery point 0 messages, 0s " in line
    assert line.endswith(" worst_recovery_point_seconds=0.0000s "
                         "worst_recovery_point_messages=0")


def test_recovery_point_thresholds_from_flags_and_from_metadata(behind):
    line = nagios(behind("dr", "check", "BACKUP", "--rpo-warn", "4s"), 1)
    assert "Warn:BACKUP@east: Recovery point 2 messages, 5s " in line
    assert "BACKUP@east.recovery_point_seconds=5.0000s;4.0000 " in line
    line = nagios(behind("dr", "check", "BACKUP", "--rpo-warn", "1s", "--rpo-critical",
                         "5s"), 2)
    assert line.startswith("CRITICAL dr Crit:BACKUP@east: Recovery point 2 messages, 5s OK:")
    assert "BACKUP@east.recovery_point_seconds=5.0000s;1.0000;5.0000 " in line
    assert "OK:BACKUP@east: Recovery point 2 messages, 5s" in nagios(
        behind("dr", "check", "BACKUP", "--rpo-critical", "5001ms"), 0)
    # the mirror's metadata, io.nats.monitor.rpo-critical, as every other threshold; a flag
    # overrides it
    mirror = behind.js("east")
    cfg = mirror.stream_info("BACKUP").config
    cfg.metadata = {**(cfg.metadata or {}), "io.nats.monitor.rpo-critical": "3s"}
    mirror.update_stream(cfg)
    line = nagios(behind("dr", "check", "BACKUP"), 2)
    assert "Crit:BACKUP@east: Recovery point 2 messages, 5s " in line
    assert "BACKUP@east.recovery_point_seconds=5.0000s;;3.0000 " in line
    assert "Crit:" not in nagios(behind("dr", "check", "BACKUP", "--rpo-critical", "1h"), 0)
    cfg.metadata["io.nats.monitor.rpo-critical"] = "3"
    mirror.update_stream(cfg)
    assert nagios(behind("dr", "check", "BACKUP"), 2).startswith(
        "CRITICAL dr Crit:BACKUP@east: could not configure based on metadata: "
        "io.nats.monitor.rpo-critical: ")
    # a negative time, which the flag refuses, is refused in the metadata too
    cfg.metadata["io.nats.monitor.rpo-critical"] = "-5s"
    mirror.update_stream(cfg)
    assert nagios(behind("dr", "check", "BACKUP"), 2).startswith(
        "CRITICAL dr Crit:BACKUP@east: could not configure based on metadata: "
        "io.nats.monitor.rpo-critical: '-5s' is negative: a time threshold is 0 or more ")
    # natscli's own key, read as jsm.go reads it (server check stream alike): a negative
    # duration turns the threshold off
    cfg.metadata.pop("io.nats.monitor.rpo-critical")
    cfg.metadata["io.nats.monitor.seen-critical"] = "-5s"
    mirror.update_stream(cfg)
    line = nagios(behind("dr", "check", "BACKUP"), 0)
    assert "BACKUP@east.active=" in line and ";;-5.0000 " in line, line
    # a flag that does not read is a usage error before anything runs
    bad = behind("dr", "check", "--rpo-warn", "5")
    assert bad.exit_code == 2 and "--rpo-warn" in bad.stderr and "missing unit" in bad.stderr


def test_a_silent_origin_the_time_since_the_mirror_last_heard_from_it(behind):
    """West down: what it took since BACKUP last heard from it (5s ago, at the positions
    sync) is lost, and no older: the recovery point is that silence, from ``silence``, and
    grows with it. A mirror that never heard from its origin has no figure."""
    ok(behind("cluster", "down", "west"))
    ok(east(behind, "stream", "add", "LATE", "--mirror", "ORDERS@west", "--defaults"))
    behind.clock.advance(55 * SECOND)
    twice = ("A failover of region west refuses it: stream ORDERS@west is mirrored twice on "
             "east ({}): a failover of each would make two primaries taking writes for one "
             "stream; --skip the others (jetlink dr failover --from west --skip NAME)")
    assert nagios(behind("dr", "check", "BACKUP", "LATE", "--rpo-warn", "1m"), 2) == (
        "CRITICAL dr Crit:LATE@east: Subjects unknown: a failover now would be refused (give "
        "--topology FILE naming the origin's stream, or --subjects to its failover) "
        "Warn:BACKUP@east: Origin ORDERS in cluster west does not answer "
        "(cluster west is down): promote would be refused, failover would go ahead "
        "Warn:BACKUP@east: Lag 0 (last reported 1m0s ago) Warn:BACKUP@east: Recovery point "
        "1m0s since the origin was last heard (0 messages as last reported) "
        f"Warn:BACKUP@east: {twice.format('LATE@east')} Warn:LATE@east: "
        "Origin ORDERS in cluster west does not answer (cluster west is down): promote would "
        "be refused, failover would go ahead Warn:LATE@east: Lag unknown (never reported) "
        "Warn:LATE@east: Recovery point unknown: never heard from the origin Warn:LATE@east: "
        "No positions synced (jetlink positions sync) "
        f"Warn:LATE@east: {twice.format('BACKUP@east')} OK:BACKUP@east: Last seen 1m0s ago "
        "OK:BACKUP@east: Positions synced 1m0s ago (1 consumer) OK:BACKUP@east: Subjects "
        "orders.> (from positions) OK:LATE@east: Never seen | BACKUP@east.lag=0 "
        "BACKUP@east.active=60.0000s BACKUP@east.recovery_point_seconds=60.0000s;60.0000 "
        "BACKUP@east.positions_age=60.0000s BACKUP@east.clamps=0 "
        "LATE@east.clamps=0 mirrors=2 mirrors_critical=1 mirrors_warning=1 "
        "worst_recovery_point_seconds=60.0000s worst_recovery_point_messages=0")
    assert "OK:BACKUP@east: Recovery point 1m0s since" in nagios(
        behind("dr", "check", "BACKUP"), 1)
    res = behind("dr", "check", "BACKUP", "LATE", "-j")
    assert res.exit_code == 2
    got = json.loads(res.stdout)
    backup, late = (m["readiness"]["recovery_point"] for m in got["mirrors"])
    assert (backup["messages"], backup["stale"], backup["seconds"], backup["seconds_from"],
            backup["oldest"]) == (0, True, 60, "silence", None)
    assert (late["seconds"], late["seconds_from"], late["last_seen_ms"]) == (
        None, "silence", None)
    # a lag never reported is no figure: no perf item, no sample (BACKUP's is, stale)
    items = {p["name"]: p for p in got["perf_data"]}
    assert "LATE@east.lag" not in items
    assert items["BACKUP@east.lag"]["stale"] is True
    prom = behind("dr", "check", "BACKUP", "LATE", "--format", "prometheus").stdout
    assert 'jetlink_dr_lag{item="BACKUP@east"} 0' in prom.splitlines()
    assert 'jetlink_dr_lag_stale{item="BACKUP@east"} 1' in prom.splitlines()
    assert 'item="LATE@east"' not in "".join(ln for ln in prom.splitlines()
                                            if ln.startswith("jetlink_dr_lag"))
    assert "Crit:LATE@east: Recovery point unknown: never heard from the origin" in nagios(
        behind("dr", "check", "LATE", "--rpo-critical", "1h"), 2)
    behind.clock.advance(3540 * SECOND)
    line = nagios(behind("dr", "check", "BACKUP", "--rpo-critical", "1h"), 2)
    assert "Crit:BACKUP@east: Recovery point 1h0m0s since the origin was last heard (0 " \
        "messages as last reported)" in line
    # west back (its "up" runs a replication step: the mirror copies the two): read at the
    # origin again, nothing behind
    ok(behind("cluster", "up", "west"))
    rp = doc(behind("dr", "check", "BACKUP", "-j"))["mirrors"][0]["readiness"][
        "recovery_point"]
    assert (rp["messages"], rp["seconds"], rp["seconds_from"], rp["mirror_last_seq"]) == (
        0, 0, "origin", 4)


def test_a_silent_origin_counts_at_least_what_its_synced_positions_saw(behind):
    """The origin silent: the messages behind are at least those it held past the mirror's
    last sequence when the positions were synced (its last sequence then), whatever lag the
    mirror reports (0 here: it never stepped since; a server restarted during the outage
    reports 0 too)."""
    from jetlink.core.dr.embedded import EmbeddedSite
    from jetlink.core.dr.positions import PositionStore, sync
    from jetlink.core.kv import KV

    dd = DataDir(behind.data)  # synced with no replication step: west at 4, BACKUP at 2
    try:
        sync(EmbeddedSite(dd, "east", behind.clock),
             PositionStore(KV(dd, "east", behind.clock)))
    finally:
        dd.close()
    ok(behind("cluster", "down", "west"))
    r = behind("dr", "check", "BACKUP", "-j")
    rp = json.loads(r.stdout)["mirrors"][0]["readiness"]["recovery_point"]
    assert "Recovery point 5s since the origin was last heard (2 messages as last " \
        "reported)" in json.loads(r.stdout)["mirrors"][0]["ok"]
    assert (rp["messages"], rp["lag"], rp["mirror_last_seq"], rp["origin_last_seq"],
            rp["known_from"], rp["seconds_from"]) == (2, 0, 2, 4, "positions", "silence")


def test_a_kv_mirror_bucket_behind(buckets):
    """A KV mirror bucket's recovery point: its origin bucket's first revision not copied."""
    jl = buckets
    jl.js("west").publish("$KV.CONFIG.b", b"2")  # no replication step: not copied
    jl.clock.advance(1500 * 1_000_000)
    res = jl("dr", "check", "CONFIG", "--rpo-warn", "1s", "-j")
    assert res.exit_code == 1, res.stdout
    [m] = json.loads(res.stdout)["mirrors"]
    assert "Recovery point 1 message, 2s" in m["warning"]
    rp = m["readiness"]["recovery_point"]
    assert (rp["messages"], rp["seconds"], rp["seconds_from"], rp["oldest"]["seq"]) == (
        1, 1.5, "origin", 2)


def test_kafka_mirror_topics_recovery_point(jl, links):
    """A mirror topic's recovery point: the first record of the source past the mirror
    partition's log end offset, per partition behind, the oldest of them (from the source's
    log start when retention removed the ones the mirror lacks); the time since the last
    fetch once the source does not answer."""
    dd, west = links
    west.create_topic("pay", 2)
    west.create_topic("short", 1, {"retention.ms": "1000"})
    ok(east(jl, "mirrors", "create", "pay", "--link", "L"))
    ok(east(jl, "mirrors", "create", "short", "--link", "L"))
    ok(east(jl, "replicate"))
    west.produce("short", [(None, b"s0"), (None, b"s1")], partition=0)  # at 0s
    jl.clock.advance(2 * SECOND)
    west.produce("pay", [(None, b"p1")], partition=1)  # at 2s
    jl.clock.advance(SECOND)
    west.produce("pay", [(None, b"p0"), (None, b"p0'")], partition=0)  # at 3s
    jl.clock.advance(2 * SECOND)
    west.produce("short", [(None, b"s2")], partition=0)  # at 5s: s0 and s1 expire
    jl.clock.advance(500 * 1_000_000)
    assert nagios(jl("dr", "check", "pay", "short", "--rpo-warn", "3s"), 1) == (
        "WARNING dr Warn:L/pay@east: Recovery point 3 messages, 4s OK:L/pay@east: Source pay "
        "in cluster west answers OK:L/pay@east: Lag 3 OK:L/pay@east: Last seen 6s ago "
        "OK:L/pay@east: Consumer offsets synced 6s ago OK:L/short@east: Source short in "
        "cluster west answers OK:L/short@east: Lag 3 OK:L/short@east: Last seen 6s ago "
        "OK:L/short@east: Recovery point 3 messages, 500ms OK:L/short@east: Consumer offsets "
        "synced 6s ago | L/pay@east.lag=3 L/pay@east.active=5.5000s "
        "L/pay@east.recovery_point_seconds=3.5000s;3.0000 L/pay@east.positions_age=5.5000s "
        "L/pay@east.consumers_unsynced=0 L/pay@east.clamps=0 L/short@east.lag=3 "
        "L/short@east.active=5.5000s L/short@east.recovery_point_seconds=0.5000s;3.0000 "
        "L/short@east.positions_age=5.5000s L/short@east.consumers_unsynced=0 "
        "L/short@east.clamps=0 mirrors=2 mirrors_critical=0 mirrors_warning=1 "
        "worst_recovery_point_seconds=3.5000s worst_recovery_point_messages=3")
    res = jl("dr", "check", "pay", "-j")
    [m] = json.loads(res.stdout)["mirrors"]
    rp = m["readiness"]["recovery_point"]
    assert (rp["messages"], rp["seconds"], rp["seconds_from"], rp["oldest"]) == (
        3, 3.5, "origin", {"partition": 1, "offset": 0, "time": "2026-01-01T00:00:02Z"})
    # the source gone: the time since the link last fetched from it
    ok(jl("cluster", "down", "west"))
    jl.clock.advance(60 * SECOND)
    res = jl("dr", "check", "pay", "-j")
    assert res.exit_code == 1
    [m] = json.loads(res.stdout)["mirrors"]
    rp = m["readiness"]["recovery_point"]
    assert (rp["messages"], rp["seconds"], rp["seconds_from"], rp["last_seen_ms"]) == (
        0, 65.5, "silence", 65_500)
    assert "Recovery point 1m6s since the origin was last heard (0 messages as last " \
        "reported)" in m["ok"]


def test_a_partition_the_source_added_counts_before_config_sync_adds_it(jl, links):
    """Records on a partition the source topic gained are behind (a failover would leave
    them on the source) before the link's config sync gives the mirror that partition; the
    offset sync writes no offset for a partition the mirror lacks (a commit there is
    UNKNOWN_TOPIC_OR_PARTITION), so no failover clamps one."""
    dd, west = links
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.topics import Kafka

    Links(dd, "east", jl.clock).alter("L", {"topic.config.sync.ms": "600000",
                                            "consumer.offset.sync.ms": "0"})
    west.alter_topic("orders", partitions=2)
    west.produce("orders", [(None, b"n0"), (None, b"n1"), (None, b"n2")], partition=1)
    west.commit("G", {("orders", 1): 2})
    jl.clock.advance(SECOND)
    ok(east(jl, "replicate"))
    [m] = json.loads(jl("dr", "check", "orders", "-j").stdout)["mirrors"]
    rp = m["readiness"]["recovery_point"]
    assert (rp["messages"], rp["oldest"]["partition"], rp["oldest"]["offset"]) == (3, 1, 0)
    east_k = Kafka(dd.open("east"), jl.clock)
    assert len(east_k.describe_topic("orders").partitions) == 1
    assert east_k.committed("G") == {("orders", 0): 4}
    plan = doc(east(jl, "mirrors", "failover", "orders", "--link", "L", "--dry-run", "-j"))
    assert "partition 1" not in json.dumps(plan)
    # config sync adds the partition: copied, its offsets synced, nothing behind
    jl.clock.advance(600 * SECOND)
    ok(east(jl, "replicate"))
    ok(east(jl, "replicate"))
    [m] = json.loads(jl("dr", "check", "orders", "-j").stdout)["mirrors"]
    assert m["readiness"]["recovery_point"]["messages"] == 0
    assert east_k.committed("G") == {("orders", 0): 4, ("orders", 1): 2}


def _damage(path) -> None:
    """A cluster database whose header was overwritten (store/health.py: not SQLite)."""
    data = bytearray(path.read_bytes())
    data[:16] = b"garbage garbage!"
    path.write_bytes(bytes(data))


def test_a_cluster_that_cannot_be_read_is_critical_not_left_out(world):
    """Its mirrors would be missing from the check: natscli's rule for a check that cannot
    load what it checks is CRITICAL; a check of named mirrors all found elsewhere is not
    about it."""
    ok(world("cluster", "add", "north"))
    ok(world("--cluster", "north", "stream", "add", "NB", "--mirror", "ORDERS@west",
             "--defaults"))
    _damage(world.data / "east.db")
    line = nagios(world("dr", "check"), 2)
    assert line.startswith("CRITICAL dr Crit:could not read cluster east: "
                           f"{world.data / 'east.db'} is not a SQLite database")
    d = json.loads(world("dr", "check", "--format", "json").stdout)
    assert d["status"] == "CRITICAL" and d["critical"][0].startswith(
        "could not read cluster east: ")
    assert "NB@north: Lag 0" in d["ok"]  # the others are still checked
    # BACKUP lives in the damaged cluster: it is not "no mirror named BACKUP"
    line = nagios(world("dr", "check", "BACKUP"), 2)
    assert "could not read cluster east" in line and "no mirror named" not in line
    assert world("dr", "check", "NB").exit_code == 1  # NB's own check (a WARNING)
    assert "east" not in world("dr", "check", "NB").stdout


def test_a_stream_and_a_kv_mirror_of_one_name_are_told_apart(world):
    """A stream CONFIG and the KV mirror bucket CONFIG (its stream KV_CONFIG) on one side:
    each is named with its kind, so no two perf items or Prometheus series share a name."""
    ok(world("--cluster", "west", "kv", "add", "CONFIG"))
    ok(east(world, "kv", "add", "CONFIG", "--mirror", "CONFIG@west"))
    ok(east(world, "stream", "add", "CONFIG", "--mirror", "ORDERS@west", "--defaults"))
    prom = world("dr", "check", "--format", "prometheus").stdout
    samples = [(f.name, tuple(sorted(x.labels.items())))
               for f in text_string_to_metric_families(prom) for x in f.samples]
    assert len(samples) == len(set(samples)), "a series twice"
    items = {dict(labels).get("item") for _n, labels in samples}
    assert {"CONFIG@east (kv)", "CONFIG@east (stream)", "BACKUP@east"} <= items
    line = world("dr", "check").stdout
    assert " 'CONFIG@east (kv).lag'=0" in line  # a label with a space: quoted, as Nagios's
    names = [p.rsplit("=", 1)[0] for p in shlex.split(line.split(" | ", 1)[1])]
    assert len(names) == len(set(names))


def test_a_mirror_of_a_mirror_has_no_subjects_to_take(world):
    """BACKUP's mirror CHAIN: its origin, itself a mirror, has no subjects of its own, so
    the promoted stream's are unknown (CRITICAL; its failover refused, nothing changed),
    never its own name."""
    ok(world("cluster", "add", "central"))
    ok(world("--cluster", "central", "stream", "add", "CHAIN", "--mirror", "BACKUP@east",
             "--defaults"))
    ok(world("--cluster", "central", "positions", "sync"))
    line = nagios(world("--cluster", "central", "dr", "check", "CHAIN"), 2)
    assert "Crit:CHAIN@central: Subjects unknown: a failover now would be refused" in line
    ok(world("cluster", "down", "east"))
    r = world("--cluster", "central", "stream", "failover", "CHAIN", "-f")
    assert r.exit_code == 2 and "the subjects of the promoted stream CHAIN are unknown" in \
        r.stderr, r.stderr
    assert doc(world("--cluster", "central", "stream", "info", "CHAIN", "-j"))["config"][
        "mirror"]["name"] == "BACKUP"


def test_a_failover_that_stopped_before_it_finished_is_critical_named_or_not(jl):
    """A promoted stream whose promotion record has not ended (a consumer the promoted
    stream refused: the run stopped there) is something left to do, CRITICAL with the
    command that finishes it, whether `dr check` is asked for it by name or not: never the
    UNKNOWN "no mirrors" of a region failed over and done."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
          "--defaults"))
    ok(jl("--cluster", "east", "stream", "add", "BACKUP", "--mirror", "ORDERS@west",
          "--max-consumers", "1", "--defaults"))
    ok(jl("--cluster", "west", "pub", "orders.new", "one"))
    for name in ("billing", "shipping"):
        ok(jl("--cluster", "west", "consumer", "add", "ORDERS", name, "--defaults"))
    ok(jl("replicate"))
    r = jl("--cluster", "east", "stream", "failover", "BACKUP", "-f")
    assert r.exit_code == 1 and "was not placed" in r.stderr, r.output
    ok(jl("cluster", "down", "west"))
    said = ("CRITICAL dr Crit:BACKUP@east: promoted by a failover that stopped before it "
            "finished: run it again (jetlink stream failover BACKUP, or the region's jetlink "
            "dr failover) to finish it")
    for names in ((), ("BACKUP",), ("BACKUP@east",)):
        line = nagios(jl("dr", "check", *names), 2)
        assert line.startswith(said + " | "), line
