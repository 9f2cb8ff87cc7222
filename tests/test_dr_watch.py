"""`jetlink dr watch`: the readiness check every interval, exported over HTTP (core/dr/
watch.py, cli/dr.py). The command runs as a real process (the installed `jetlink` on a data
directory the in-process CLI set up) on a port it chooses (``--listen 127.0.0.1:0``, read
from its notice); /metrics is read by prometheus_client's own parser. The figures that are
ages (recovery point, positions) are checked exactly in process, on a manual clock."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers import data_dir_bytes, doc, ok, wait_until
from prometheus_client.parser import text_string_to_metric_families

from jetlink.core.backend import EmbeddedBackend
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir

JETLINK = str(Path(sys.executable).with_name("jetlink"))
SECOND = 1_000_000_000
STOP_WAIT = 60  # a generous deadline for an exit (a bound on a failure, never asserted)


def east(jl, *args):
    return jl("--cluster", "east", *args)


def west(jl, *args):
    return jl("--cluster", "west", *args)


def publish(data: Path, cluster: str, subject: str, n: int) -> None:
    """``n`` messages straight into ``cluster`` (no replication step: the mirror falls
    behind by exactly ``n``)."""
    store = DataDir(data)
    try:
        from jetlink.core.clock import SystemClock

        js = JetStream(store.open(cluster), SystemClock())
        for i in range(n):
            js.publish(subject, f"m{i}".encode())
    finally:
        store.close()


@pytest.fixture
def behind(jl):
    """west: ORDERS on orders.> (2 messages copied, the consumer billing); east: BACKUP, its
    mirror, positions synced; then 3 more messages in west not copied: BACKUP is 3 behind."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(east(jl, "stream", "add", "BACKUP", "--mirror", "ORDERS@west", "--defaults"))
    ok(west(jl, "pub", "orders.new", "one"))
    ok(west(jl, "pub", "orders.new", "two"))
    ok(west(jl, "consumer", "add", "ORDERS", "billing", "--defaults"))
    ok(east(jl, "positions", "sync"))
    publish(jl.data, "west", "orders.new", 3)
    return jl


@pytest.fixture
def returned(jl):
    """west: ORDERS on orders.> and the bucket CONFIG; east: their mirrors, failed over while
    west was down (taking west's subjects), then west up again: a split brain each."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(east(jl, "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west", "--defaults"))
    ok(west(jl, "kv", "add", "CONFIG"))
    ok(east(jl, "kv", "add", "CONFIG", "--mirror", "CONFIG@west"))
    ok(west(jl, "pub", "orders.new", "one"))
    ok(jl("replicate"))
    ok(east(jl, "positions", "sync"))
    ok(jl("cluster", "down", "west"))
    ok(east(jl, "stream", "failover", "ORDERS_EAST", "-f"))
    ok(east(jl, "kv", "failover", "CONFIG", "-f"))
    ok(jl("cluster", "up", "west"))
    return jl


class Watcher:
    """A `jetlink dr watch` process: its output in files, its URL from its notice.
    ``where``: the global options saying what it watches."""

    def __init__(self, tmp: Path, where: list[str], *args: str,
                 first_check: bool = True) -> None:
        self.out, self.err = tmp / "watch.out", tmp / "watch.err"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen(
                [JETLINK, *where, "dr", "watch", "--listen", "127.0.0.1:0", *args],
                stdout=out, stderr=err, env=env)
        self.url = wait_until(self._url, message=lambda: f"the watch's notice ({self.seen()})")
        if first_check:  # (served from its start: the first check's results come after)
            wait_until(lambda: self.stdout().strip(),
                       message=lambda: f"the watch's first check ({self.seen()})")

    def seen(self) -> str:
        return f"exit {self.proc.poll()}, stdout {self.stdout()!r}, stderr {self.stderr()!r}"

    def stdout(self) -> str:
        return self.out.read_text()

    def stderr(self) -> str:
        return self.err.read_text()

    def _url(self) -> str | None:
        assert self.proc.poll() is None, self.seen()
        found = re.search(r"serving (http://127\.0\.0\.1:\d+)/metrics", self.stderr())
        return found.group(1) if found else None

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()

    def metrics(self) -> dict:
        status, body = self.get("/metrics")
        assert status == 200, body
        return {f.name: f for f in text_string_to_metric_families(body)}

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=STOP_WAIT)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=STOP_WAIT)


@pytest.fixture
def watcher(jl):
    started: list[Watcher] = []

    def start(*args: str) -> Watcher:
        w = Watcher(jl.tmp, ["--data-dir", str(jl.data)], *args)
        started.append(w)
        return w

    yield start
    for w in started:
        w.kill()


def samples(families: dict, name: str) -> dict:
    """A family's samples: labels (sorted items) -> value."""
    return {tuple(sorted(s.labels.items())): s.value for s in families[name].samples}


def obj(name: str, kind: str = "stream", cluster: str = "east", region: str = "west"):
    return tuple(sorted({"name": name, "kind": kind, "cluster": cluster,
                         "region": region}.items()))


def test_a_mirror_behind_exported_exactly(behind, watcher):
    w = watcher("--interval", "200ms")
    got = wait_until(lambda: (m := w.metrics()) and
                     m["jetlink_dr_checks"].samples[0].value >= 2 and m,
                     message=lambda: f"two checks ({w.seen()})")
    backup = obj("BACKUP@east")
    assert samples(got, "jetlink_dr_lag") == {backup: 3}
    assert samples(got, "jetlink_dr_status_code") == {backup: 0}
    assert samples(got, "jetlink_dr_fenced") == {backup: 0}
    assert samples(got, "jetlink_dr_split_brain") == {backup: 0}
    assert set(samples(got, "jetlink_dr_recovery_point_seconds")) == {backup}
    assert set(samples(got, "jetlink_dr_positions_age")) == {backup}
    region = (("region", "west"),)
    assert samples(got, "jetlink_dr_region_lag") == {region: 3}
    assert samples(got, "jetlink_dr_region_status_code") == {region: 0}
    assert samples(got, "jetlink_dr_region_split_brain") == {region: 0}
    assert samples(got, "jetlink_dr_region_fenced") == {region: 0}
    assert samples(got, "jetlink_dr_mirrors") == {
        (("status", "OK"),): 1, (("status", "WARNING"),): 0, (("status", "CRITICAL"),): 0}
    assert samples(got, "jetlink_dr_overall_status_code") == {(): 0}
    assert samples(got, "jetlink_dr_worst_recovery_point_messages") == {(): 3}
    assert samples(got, "jetlink_dr_check_failures") == {(): 0}
    assert samples(got, "jetlink_dr_actions") == {}
    assert got["jetlink_dr_checks"].type == "counter"
    assert got["jetlink_dr_lag"].type == "gauge"
    [stamp] = got["jetlink_dr_last_check_timestamp_seconds"].samples
    assert stamp.value > 1.7e9  # a Unix time, in seconds
    assert w.get("/healthz") == (200, "ok\n")
    assert w.get("/other")[0] == 404
    # HEAD: GET's status and headers, no body (a probe that only asks whether it answers)
    for path, length in (("/metrics", None), ("/healthz", "3")):
        req = urllib.request.Request(w.url + path, method="HEAD")
        with urllib.request.urlopen(req, timeout=30) as r:
            assert (r.status, r.read()) == (200, b"")
            assert length is None or r.headers["Content-Length"] == length
    assert w.stop(signal.SIGTERM) == 0
    lines = w.stdout().splitlines()
    assert len(lines) >= 2
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z OK: 1 object \(1 ok, 0 warning, "
                            r"0 critical\); worst recovery point \S+, 3 messages", ln)
               for ln in lines), lines


def test_json_lines_one_document_per_check(behind, watcher):
    w = watcher("--interval", "200ms", "-j")
    wait_until(lambda: len(w.stdout().splitlines()) >= 2, message=w.seen)
    assert w.stop(signal.SIGINT) == 0
    docs = [json.loads(ln) for ln in w.stdout().splitlines()]
    first = docs[0]
    assert (first["status"], first["status_code"], first["counts"], first["failure"],
            first["actions"]) == ("OK", 0, {"OK": 1, "WARNING": 0, "CRITICAL": 0}, None, [])
    [o] = first["objects"]
    assert {k: o[k] for k in ("name", "kind", "cluster", "region", "status", "lag", "fenced",
                              "split_brain")} == {
        "name": "BACKUP@east", "kind": "stream", "cluster": "east", "region": "west",
        "status": "OK", "lag": 3, "fenced": False, "split_brain": False}
    assert first["worst_recovery_point"]["messages"] == 3


@pytest.fixture
def manual(jl, cli_clock, utc):
    """``behind`` on a manual clock: positions synced at T+5s, the one message BACKUP has
    not copied published at T+5s, the clock at T+8s; north's ITEMS mirrored in east too."""
    jl.clock = cli_clock
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(jl("cluster", "add", "north"))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(east(jl, "stream", "add", "BACKUP", "--mirror", "ORDERS@west", "--defaults"))
    ok(jl("--cluster", "north", "stream", "add", "ITEMS", "--subjects", "items.>",
          "--defaults"))
    ok(east(jl, "stream", "add", "ITEMS_EAST", "--mirror", "ITEMS@north", "--defaults"))
    ok(west(jl, "pub", "orders.new", "one"))
    ok(west(jl, "consumer", "add", "ORDERS", "billing", "--defaults"))
    cli_clock.advance(5 * SECOND)
    ok(east(jl, "positions", "sync"))
    store = DataDir(jl.data)
    try:
        JetStream(store.open("west"), cli_clock).publish("orders.new", b"two")
    finally:
        store.close()
    cli_clock.advance(3 * SECOND)
    return jl


def test_the_ages_exactly_on_a_manual_clock(manual):
    """In process: recovery point and positions age from the check's clock; --from keeps
    the region's objects; the namespace prefixes every name; /healthz 503 before a check."""
    clock = manual.clock
    got = _one_check(manual, before=lambda url: _get(url + "/healthz") == (
        503, "no check has completed yet\n"), after=lambda url: _get(url + "/healthz") == (
        200, "ok\n"))
    backup = obj("BACKUP@east")
    assert samples(got, "ops_dr_status_code") == {backup: 0}  # north's ITEMS_EAST left out
    assert samples(got, "ops_dr_lag") == {backup: 1}
    assert samples(got, "ops_dr_lag_stale") == {backup: 0}  # counted at the origin now
    assert samples(got, "ops_dr_positions_age") == {backup: 3}
    assert samples(got, "ops_dr_recovery_point_seconds") == {backup: 3}
    assert samples(got, "ops_dr_worst_recovery_point_seconds") == {(): 3}
    region = (("region", "west"),)
    assert samples(got, "ops_dr_region_positions_age") == {region: 3}
    assert samples(got, "ops_dr_region_recovery_point_seconds") == {region: 3}
    assert samples(got, "ops_dr_last_check_timestamp_seconds") == {
        (): clock.now_ns() / SECOND}
    assert samples(got, "ops_dr_checks") == {(): 1}


def test_a_lag_as_last_reported_is_marked_stale(manual):
    """West silent: BACKUP's lag is the one it last reported; lag_stale says so, for it and
    its region (a graph of the lag alone reads it as current)."""
    ok(manual("cluster", "down", "west"))
    got = _one_check(manual)
    assert samples(got, "ops_dr_lag_stale") == {obj("BACKUP@east"): 1}
    assert samples(got, "ops_dr_region_lag_stale") == {(("region", "west"),): 1}


def test_a_mirror_never_synced_makes_the_region_positions_age_infinite(manual):
    """A mirror of the region whose positions were never synced has no age: +Inf for it and
    for the region, so an alert on the region's positions age fires (its other mirrors'
    recent syncs do not hide it)."""
    ok(east(manual, "stream", "add", "LATE", "--mirror", "ORDERS@west", "--defaults"))
    got = _one_check(manual)
    assert samples(got, "ops_dr_positions_age") == {obj("BACKUP@east"): 3,
                                                     obj("LATE@east"): math.inf}
    assert samples(got, "ops_dr_region_positions_age") == {(("region", "west"),): math.inf}


def test_a_mirror_whose_check_stopped_early_keeps_its_region(manual):
    """Bad metadata ends a mirror's check before its origin is read: its region is still
    its config's (the origin's cluster), so --from keeps it and the region's gauge counts
    it (it was exported with region="" and the region stayed OK)."""
    ok(east(manual, "stream", "add", "EBAD", "--mirror", "ORDERS@west", "--defaults",
            "--metadata", "io.nats.monitor.rpo-critical=abc"))
    got = _one_check(manual)
    # (BACKUP a WARNING: with EBAD, ORDERS is mirrored twice on east, which a failover of
    # the region refuses until one is left out)
    assert samples(got, "ops_dr_status_code") == {obj("BACKUP@east"): 1, obj("EBAD@east"): 2}
    assert samples(got, "ops_dr_region_status_code") == {(("region", "west"),): 2}


def _one_check(manual, before=lambda url: True, after=lambda url: True) -> dict:
    """One check of a watch of east --from west, in process, on ``manual``'s clock, served
    with the namespace ``ops``: its metric families by name (``before`` / ``after``: what
    must hold of the server's URL before and after the check)."""
    from jetlink.core.dr.watch import Watch, serve

    clock = manual.clock
    with EmbeddedBackend(manual.data, "east", lambda: clock, step=False) as backend:
        w = Watch(backend, regions=["west"], clock=clock)
        server = serve(w, "127.0.0.1", 0, "ops")
        server.start()
        try:
            assert before(server.url)
            w.check()
            got = {f.name: f for f in text_string_to_metric_families(
                _get(server.url + "/metrics")[1])}
            assert after(server.url)
        finally:
            server.close()
    return got


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


SPLIT = obj("ORDERS_EAST@east")
SPLIT_KV = obj("CONFIG@east", kind="kv")


def test_a_split_brain_is_exported_and_nothing_is_fenced_by_default(returned, watcher):
    w = watcher("--interval", "200ms")
    got = w.metrics()
    assert samples(got, "jetlink_dr_split_brain") == {SPLIT: 1, SPLIT_KV: 1}
    assert samples(got, "jetlink_dr_fenced") == {SPLIT: 0, SPLIT_KV: 0}
    assert samples(got, "jetlink_dr_status_code") == {SPLIT: 2, SPLIT_KV: 2}
    assert samples(got, "jetlink_dr_region_split_brain") == {(("region", "west"),): 1}
    assert samples(got, "jetlink_dr_region_status_code") == {(("region", "west"),): 2}
    assert samples(got, "jetlink_dr_overall_status_code") == {(): 2}
    wait_until(lambda: w.metrics()["jetlink_dr_checks"].samples[0].value >= 3, message=w.seen)
    assert w.stop(signal.SIGINT) == 0
    assert "fenced" not in w.stderr()
    r = returned("dr", "check", "-j")
    assert r.exit_code == 2  # still a split brain: the watch changed nothing


def test_fence_on_return_fences_once_and_never_again_by_itself(returned, watcher):
    w = watcher("--interval", "200ms", "--fence-on-return")
    wait_until(lambda: samples(w.metrics(), "jetlink_dr_fenced") == {SPLIT: 1, SPLIT_KV: 1},
               message=w.seen)
    got = w.metrics()
    assert samples(got, "jetlink_dr_split_brain") == {SPLIT: 0, SPLIT_KV: 0}
    assert samples(got, "jetlink_dr_region_fenced") == {(("region", "west"),): 1}
    assert samples(got, "jetlink_dr_actions") == {
        (("action", "fence"), ("region", "west"), ("result", "fenced")): 2}
    assert w.stderr().splitlines()[1:] == [
        "jetlink: dr watch: fenced kv CONFIG@west (failed over to CONFIG@east): producers "
        "on its subjects get no responders; stored messages and consumers kept",
        "jetlink: dr watch: fenced stream ORDERS@west (failed over to ORDERS_EAST@east): "
        "producers on its subjects get no responders; stored messages and consumers kept"]
    d = doc(returned("dr", "fence", "--from", "west", "--dry-run", "-j"))
    assert d["nothing_to_do"] is True  # both old origins fenced, as dr fence would
    # west's ORDERS takes its subjects again: a split brain the watch reports, not fences
    ok(west(returned, "stream", "edit", "ORDERS", "--subjects", "orders.>", "-f"))
    wait_until(lambda: samples(w.metrics(), "jetlink_dr_split_brain")[SPLIT] == 1,
               message=w.seen)
    checks = w.metrics()["jetlink_dr_checks"].samples[0].value
    wait_until(lambda: w.metrics()["jetlink_dr_checks"].samples[0].value >= checks + 3,
               message=w.seen)
    got = w.metrics()
    assert samples(got, "jetlink_dr_split_brain")[SPLIT] == 1
    assert samples(got, "jetlink_dr_actions") == {
        (("action", "fence"), ("region", "west"), ("result", "fenced")): 2}
    assert w.stderr().count("jetlink: dr watch: fenced") == 2
    assert w.stop(signal.SIGTERM) == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_it_during_the_interval_with_status_0(jl, watcher, sig):
    ok(jl("cluster", "add", "west"))
    w = watcher("--interval", "1h")
    wait_until(lambda: w.stdout().count("\n") >= 1, message=w.seen)
    assert w.get("/healthz") == (200, "ok\n")
    assert w.stop(sig) == 0
    assert "Traceback" not in w.stderr()


def test_a_server_that_does_not_answer_is_unhealthy(tmp_path):
    """A live server that refuses the connection: every check fails to list the mirrors,
    /healthz says so with 503, the metrics say CRITICAL."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    w = Watcher(tmp_path, ["-s", f"nats://127.0.0.1:{port}"], "--interval", "200ms")
    try:  # (served from the start: 503 "no check has completed yet" before the first)
        status, body = wait_until(lambda: (lambda got: got if got[1].startswith(
            "the last check failed") else None)(w.get("/healthz")),
            message=lambda: f"the first check's failure on /healthz ({w.seen()})")
        assert status == 503
        assert body.startswith("the last check failed: could not list mirrors: ")
        got = w.metrics()
        assert samples(got, "jetlink_dr_overall_status_code") == {(): 2}
        assert samples(got, "jetlink_dr_check_failures")[()] >= 1
        assert samples(got, "jetlink_dr_status_code") == {}
        wait_until(lambda: len(w.stdout().splitlines()) >= 3,
                   message=lambda: f"three checks ({w.seen()})")
        assert w.stop(signal.SIGTERM) == 0
        assert " CRITICAL: could not list mirrors: " in w.stdout().splitlines()[0]
        # the failure said once on stderr, not at every check
        warned = [ln for ln in w.stderr().splitlines() if "warning" in ln]
        assert len(warned) == 1 and warned[0].startswith(
            "jetlink: warning: dr watch: could not list mirrors: "), w.stderr()
        assert warned[0].endswith(" (checking again at the next interval)")
    finally:
        w.kill()


def test_a_failure_and_the_recovery_are_each_said_once_on_stderr(capsys):
    """As every follow loop (core/retry.py): a failed check once, again when its reason
    changes, and once that checks succeed again."""
    from types import SimpleNamespace

    from jetlink.cli.app import App
    from jetlink.cli.dr import _report, _Said

    said = _Said()
    app = App()
    for failure in ("lost the connection", "lost the connection", "refused", "", "", "x"):
        _report(app, SimpleNamespace(failure=failure, actions=[], to_json=lambda f=failure: {
            "time": "T", "status": "CRITICAL" if f else "OK", "failure": f,
            "counts": {"OK": 0, "WARNING": 0, "CRITICAL": 0}, "objects": [],
            "worst_recovery_point": {"messages": None}}), said)
    assert capsys.readouterr().err.splitlines() == [
        "jetlink: warning: dr watch: lost the connection (checking again at the next "
        "interval)",
        "jetlink: warning: dr watch: refused (checking again at the next interval)",
        "jetlink: dr watch: the last check succeeded: watching again",
        "jetlink: warning: dr watch: x (checking again at the next interval)"]


@pytest.mark.parametrize(("listen", "message"), [
    ("127.0.0.1", "--listen '127.0.0.1': not HOST:PORT, e.g. 127.0.0.1:9180 or [::1]:9180"),
    ("127.0.0.1:http", "--listen '127.0.0.1:http': not HOST:PORT, e.g. 127.0.0.1:9180 or "
                       "[::1]:9180"),
    ("::1:9180", "--listen '::1:9180': not HOST:PORT, e.g. 127.0.0.1:9180 or [::1]:9180"),
    (":9180", "--listen ':9180': not HOST:PORT, e.g. 127.0.0.1:9180 or [::1]:9180"),
    ("127.0.0.1:65536", "--listen '127.0.0.1:65536': port 65536 out of range (0 to 65535)"),
], ids=["no-port", "port-name", "ipv6-without-brackets", "no-host", "port-past-range"])
def test_a_listen_that_is_not_host_port_is_a_usage_error(jl, listen, message):
    r = jl("dr", "watch", "--listen", listen)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"jetlink: error: {message}\n")


def test_an_address_in_use_exits_1_in_one_line(jl):
    ok(jl("cluster", "add", "west"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = jl("dr", "watch", "--listen", f"127.0.0.1:{port}")
    assert (r.exit_code, r.stdout, r.stderr) == (
        1, "", f"jetlink: error: cannot listen on 127.0.0.1:{port}: Address already in use\n")


def test_from_an_unknown_or_empty_region_is_a_usage_error(behind):
    """Refused once the first check found the regions (the watch served from its start:
    its serving line comes first)."""
    r = behind("dr", "watch", "--listen", "127.0.0.1:0", "--from", "wset")
    assert (r.exit_code, r.stdout) == (2, "")
    served, said = r.stderr.splitlines()
    assert served.startswith("jetlink: dr watch: serving http://127.0.0.1:"), r.stderr
    assert said == ("jetlink: error: --from wset: no region named wset (a cluster of the "
                    "data directory, or the cluster or JetStream domain of an origin); did "
                    "you mean west?")
    r = behind("dr", "watch", "--listen", "127.0.0.1:0", "--from", " ")
    assert (r.exit_code, r.stderr) == (2, (
        "jetlink: error: --from: a region is a cluster (embedded engine) or a JetStream "
        "domain (live server), not an empty name\n"))
    # the side addressed is no region to watch (or fail over: dr failover refuses it too)
    r = east(behind, "dr", "watch", "--listen", "127.0.0.1:0", "--from", "east",
             "--failover-after", "1s")
    assert (r.exit_code, r.stdout, r.stderr.splitlines()[-1]) == (2, "", (
        "jetlink: error: --from east: that is the side addressed (where the mirrors are); "
        "name the region that failed, where their origins are"))


def test_help_imports_no_exporter():
    """`dr watch --help` stays light: prometheus_client and the HTTP server are imported
    when the watch runs."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "jetlink.cli.main", "dr",
                           "watch", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines()
             if ln.startswith("import time:") and "|" in ln}
    assert "typer" in names
    assert not [n for n in names if n.split(".")[0] in ("prometheus_client", "wsgiref")]


def test_an_output_nobody_reads_any_more_ends_it_with_1_silently(jl, tmp_path):
    """Its stdout a pipe whose reader went away (`dr watch | head -1`): the watch cannot
    report its checks, so it ends, 1, as every command whose reader went away: nothing
    more on stderr, no traceback."""
    ok(jl("cluster", "add", "west"))
    err = tmp_path / "err"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "JETLINK_"))}
    with err.open("w") as errf:
        proc = subprocess.Popen([JETLINK, "--data-dir", str(jl.data), "dr", "watch", "--listen",
                                 "127.0.0.1:0", "--interval", "100ms"],
                                stdout=subprocess.PIPE, stderr=errf, env=env)
    try:
        assert proc.stdout is not None
        assert " UNKNOWN: 0 objects " in proc.stdout.readline().decode()
        proc.stdout.close()
        assert proc.wait(timeout=STOP_WAIT) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=STOP_WAIT)
    lines = err.read_text().splitlines()
    assert lines[0].startswith("jetlink: dr watch: serving http://127.0.0.1:")
    assert lines[1:] == []


# --- --failover-after ----------------------------------------------------------------------------
def _watch(manual, **kw):
    from jetlink.core.dr.watch import Watch

    clock = manual.clock
    backend = EmbeddedBackend(manual.data, "east", lambda: clock, step=False)
    return backend, Watch(backend, regions=["west"], clock=clock, **kw)


def _is_mirror(jl, name="BACKUP"):
    return doc(east(jl, "stream", "info", name, "-j"))["config"].get("mirror") is not None


def test_failover_after_the_whole_duration_once(manual):
    """On a manual clock: west's origins silent 9s (then answering: the count starts again),
    then 10s: the region is failed over, once; the checks after it do nothing more."""
    backend, w = _watch(manual, failover_after=10 * SECOND)
    with backend:
        assert w.check().actions == []  # west answers
        ok(manual("cluster", "down", "west"))
        assert w.check().actions == []
        manual.clock.advance(9 * SECOND)
        assert w.check().actions == []
        ok(manual("cluster", "up", "west"))
        manual.clock.advance(5 * SECOND)
        assert w.check().actions == []  # back: the whole duration starts again
        ok(manual("cluster", "down", "west"))
        assert w.check().actions == []
        manual.clock.advance(9 * SECOND)
        assert w.check().actions == []
        assert _is_mirror(manual)
        manual.clock.advance(1 * SECOND)
        [a] = w.check().actions
        assert a.to_json() == {
            "action": "failover", "region": "west",
            "target": "region west (its origins silent for 10s)", "result": "failed over",
            "detail": "1 of 1 done (BACKUP@east)"}
        assert a.message() == ("failed over region west (its origins silent for 10s): "
                               "1 of 1 done (BACKUP@east)")
        assert not _is_mirror(manual)
        manual.clock.advance(30 * SECOND)
        assert w.check().actions == []
        assert w.snapshot()[3] == {("failover", "west", "failed over"): 1}


def test_failover_after_waits_for_recent_positions(manual):
    """Positions synced 3s ago, at most 2s allowed: west silent for a minute is not failed
    over by itself."""
    backend, w = _watch(manual, failover_after=1 * SECOND, positions_max_age=2 * SECOND)
    with backend:
        ok(manual("cluster", "down", "west"))
        for _ in range(3):
            assert w.check().actions == []
            manual.clock.advance(30 * SECOND)
    assert _is_mirror(manual)


def test_failover_after_with_dry_run_only_says_so_once(manual):
    backend, w = _watch(manual, failover_after=2 * SECOND, dry_run=True)
    ok(manual("cluster", "down", "west"))
    before = data_dir_bytes(manual.data)
    with backend:
        assert w.check().actions == []
        manual.clock.advance(2 * SECOND)
        [a] = w.check().actions
        assert a.message() == ("would fail over region west (its origins silent for 2s) "
                               "(dry run): BACKUP@east")
        manual.clock.advance(2 * SECOND)
        assert w.check().actions == []
    assert data_dir_bytes(manual.data) == before  # a dry run changes nothing
    assert _is_mirror(manual)


def test_failover_after_with_dry_run_names_what_it_would_fail_over(manual, monkeypatch):
    """An object of the region failed over earlier (by hand) is not named among those the
    dry run would fail over: the region plan's preview has it done earlier."""
    from types import SimpleNamespace

    from jetlink.core.dr import region

    objects = [SimpleNamespace(shown="BACKUP@east", state=region.EARLIER),
               SimpleNamespace(shown="AUDIT@east", state=region.PLANNED)]
    preview = SimpleNamespace(objects=objects, refused=[], failed=[])
    monkeypatch.setattr(region, "plan_region",
                        lambda *a, **kw: SimpleNamespace(preview=lambda: preview))
    backend, w = _watch(manual, failover_after=2 * SECOND, dry_run=True)
    ok(manual("cluster", "down", "west"))
    with backend:
        assert w.check().actions == []
        manual.clock.advance(2 * SECOND)
        [a] = w.check().actions
    assert a.message() == ("would fail over region west (its origins silent for 2s) "
                           "(dry run): AUDIT@east (BACKUP@east failed over earlier)")


def test_failover_after_in_a_real_process(behind, watcher):
    ok(behind("cluster", "down", "west"))
    w = watcher("--interval", "200ms", "--from", "west", "--failover-after", "500ms")
    wait_until(lambda: "failed over region west" in w.stderr(), message=w.seen)
    [line] = [ln for ln in w.stderr().splitlines() if "region west" in ln]
    assert re.fullmatch(r"jetlink: dr watch: failed over region west \(its origins silent "
                        r"for \S+\): 1 of 1 done \(BACKUP@east\)", line), line
    assert samples(w.metrics(), "jetlink_dr_actions") == {
        (("action", "failover"), ("region", "west"), ("result", "failed over")): 1}
    assert w.stop(signal.SIGTERM) == 0
    assert not _is_mirror(behind)


@pytest.mark.parametrize(("args", "message"), [
    (["--failover-after", "1m"],
     "--failover-after: name the regions the watch may fail over with --from REGION"),
    (["--from", "west", "--positions-max-age", "1m"],
     "--positions-max-age: only with --failover-after (how recent the positions must be for "
     "a failover by itself)"),
    (["--dry-run"], "--dry-run: only with --fence-on-return or --failover-after (what the "
                    "watch would do by itself)"),
], ids=["failover-without-from", "max-age-alone", "dry-run-alone"])
def test_automatic_options_that_go_with_others(behind, args, message):
    r = behind("dr", "watch", "--listen", "127.0.0.1:0", *args)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"jetlink: error: {message}\n")


def test_fence_on_return_with_dry_run_only_says_so_once(returned):
    from jetlink.core.clock import SystemClock
    from jetlink.core.dr.watch import Watch

    before = data_dir_bytes(returned.data)
    with EmbeddedBackend(returned.data, "east", SystemClock, step=False) as backend:
        w = Watch(backend, fence_on_return=True, dry_run=True)
        assert [a.message() for a in w.check().actions] == [
            "would fence kv CONFIG@west (failed over to CONFIG@east) (dry run): $KV.CONFIG.> "
            "-> $JETLINK.fenced.KV_CONFIG",
            "would fence stream ORDERS@west (failed over to ORDERS_EAST@east) (dry run): "
            "orders.> -> $JETLINK.fenced.ORDERS"]
        assert w.check().actions == []
    assert data_dir_bytes(returned.data) == before  # a dry run changes nothing
    d = doc(returned("dr", "fence", "--from", "west", "--dry-run", "-j"))
    assert [o["action"] for o in d["objects"]] == ["to fence", "to fence"]


def test_an_unfenced_returned_source_topic_is_exported_a_split_brain(jl):
    """A mirror topic failed over while its source topic still answers and takes writes
    unfenced: what dr check calls a split brain (core/dr/readiness.py
    ``MirrorReadiness.split_brain``) is the exporter's split_brain too."""
    from jetlink.core.clock import SystemClock
    from jetlink.core.dr.watch import Watch
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.mirrors import Mirrors
    from jetlink.core.kafka.topics import Kafka

    clock = SystemClock()
    dd = DataDir(jl.data)
    try:
        dd.add_cluster("kwest", "kafka")
        dd.add_cluster("keast", "kafka")
        Kafka(dd.open("kwest"), clock).create_topic("orders", 1)
        Links(dd, "keast", clock).create("dr", "kwest", {})
        Mirrors(dd, "keast", clock).create("orders", "dr")
        [res] = Mirrors(dd, "keast", clock).failover(["orders"], "dr")
        assert res.ok
    finally:
        dd.close()
    assert "(a split brain)" in jl("--cluster", "keast", "dr", "check").stdout
    with EmbeddedBackend(jl.data, "keast", lambda: clock, step=False) as backend:
        w = Watch(backend, regions=["kwest"], clock=clock)
        [row] = w.check().rows
    assert (row.name, row.split_brain, row.returned) == ("dr/orders@keast", True,
                                                         "unfenced")


def test_healthz_answers_while_the_first_check_waits_on_a_silent_server(jl):
    """A server that accepts the connection and never speaks: the first check waits its
    --timeout; meanwhile /healthz answers at once, 503, no check completed yet (it was
    served only once that check ended)."""
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    w = Watcher(jl.tmp, ["--server", f"nats://127.0.0.1:{port}", "--timeout", "30s"],
                first_check=False)
    try:  # (answered after the check, it would say the check failed)
        status, body = w.get("/healthz")
        assert (status, body.strip()) == (503, "no check has completed yet"), body
    finally:
        w.kill()
        silent.close()
