"""`jetlink dr failover --from REGION` and `jetlink dr failback --from REGION` on the
embedded engine (core/dr/region.py): a region's mirrors as one plan, run, journalled and
resumed; refusals, skips, hostile input. Exact output, JSON and exit codes; a dry run and a
refused command change no byte of the data directory."""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, doc, ok

SECOND = 1_000_000_000


@pytest.fixture
def jl(jl, cli_clock, utc):
    jl.clock = cli_clock
    return jl


def east(jl, *args):
    return jl("--cluster", "east", *args)


def west(jl, *args):
    return jl("--cluster", "west", *args)




@pytest.fixture
def region(jl):
    """west: ORDERS on orders.> (3 messages, the durable consumer billing), PAY on pay.>
    and the bucket CONFIG; east: their mirrors (ORDERS_EAST, PAY, CONFIG) and ALL, a stream
    sourcing ORDERS@west; positions synced; then west goes down, 2 s later."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(west(jl, "stream", "add", "PAY", "--subjects", "pay.>", "--defaults"))
    ok(east(jl, "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west", "--defaults"))
    ok(east(jl, "stream", "add", "PAY", "--mirror", "PAY@west", "--defaults"))
    ok(east(jl, "stream", "add", "ALL", "--source", "ORDERS@west", "--subjects", "all.>",
            "--defaults"))
    ok(west(jl, "kv", "add", "CONFIG"))
    ok(west(jl, "kv", "put", "CONFIG", "a", "1"))
    ok(east(jl, "kv", "add", "CONFIG", "--mirror", "CONFIG@west"))
    for i in range(3):
        ok(west(jl, "pub", "orders.new", f"m{i}"))
    ok(west(jl, "consumer", "add", "ORDERS", "billing", "--defaults"))
    ok(jl("replicate"))
    ok(east(jl, "positions", "sync"))
    ok(jl("cluster", "down", "west"))
    jl.clock.advance(2 * SECOND)
    return jl


PLAN = [
    "Region failover of west: 3 objects, 0 messages at risk as last reported (an origin does "
    "not answer), recovery point 2s, 1 consumer to place",
    "  kv CONFIG@east <- CONFIG@west: planned (0 not copied as last reported, recovery point "
    "2s; subjects $KV.CONFIG.> (from bucket))",
    "  stream ORDERS_EAST@east <- ORDERS@west: planned (0 not copied as last reported, "
    "recovery point 2s; subjects orders.> (from positions); 1 consumer to place)",
    "  stream PAY@east <- PAY@west: planned (0 not copied as last reported, recovery point 2s; "
    "subjects pay.> (from positions))",
    "  listed: stream ALL@east sources ORDERS@west: it receives nothing from them while the "
    "region is out (not promoted; they come back with the failback)",
]


def test_the_dry_run_shows_the_plan_and_changes_nothing(region):
    before = data_dir_bytes(region.data)
    r = ok(east(region, "dr", "failover", "--from", "west", "--dry-run"))
    assert r.stdout.splitlines() == [*PLAN, "Dry run: nothing changed"]
    d = doc(east(region, "dr", "failover", "--from", "west", "--dry-run", "-j"))
    assert data_dir_bytes(region.data) == before
    assert d["totals"] == {"objects": 3, "messages_at_risk": 0, "at_risk_unknown": 0,
                           "recovery_point_seconds": 2.0, "consumers": 1, "listed": 1}
    assert [(o["kind"], o["name"], o["state"], o["plan"]["subjects"]) for o in d["objects"]] \
        == [("kv", "CONFIG", "planned", ["$KV.CONFIG.>"]),
            ("stream", "ORDERS_EAST", "planned", ["orders.>"]),
            ("stream", "PAY", "planned", ["pay.>"])]
    orders = d["objects"][1]
    assert orders["plan"]["recovery_point"] == {"messages": 0, "seconds": 2.0,
                                                "seconds_from": "silence", "stale": True}
    assert [c["consumer"] for c in orders["plan"]["consumers"]] == ["billing"]
    assert d["listed"] == [{"kind": "stream", "name": "ALL", "side": "east",
                            "sources": ["ORDERS@west"]}]
    assert (d["dry_run"], d["complete"], d["nothing_to_do"]) == (True, False, False)


def _second_interrupted(real):
    """``real`` (a region object's verb) run, but a Ctrl-C on its second call."""
    calls = []

    def verb(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    return verb


def test_an_interrupted_region_run_says_what_it_ended_and_a_rerun_finishes(region,
                                                                            monkeypatch):
    """Ctrl-C between two objects: exit 130, one line on stderr saying what ended and that
    the same command finishes the run; the re-run does the rest."""
    from jetlink.core.dr import region as R

    real = R._failover
    monkeypatch.setattr(R, "_failover", _second_interrupted(real))
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == 130, r.output
    assert r.stderr.splitlines()[-1] == (
        "jetlink: interrupted: the region failover of west stopped with 1 of 3 objects ended "
        "(kv CONFIG@east); 1 under way (stream ORDERS_EAST@east: its failover may have "
        "finished); run the same command again to finish it (its journal keeps where it "
        "stopped)")
    monkeypatch.setattr(R, "_failover", real)
    d = doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))
    assert d["complete"] is True
    assert sorted((o["name"], o["state"]) for o in d["objects"]) == [
        ("CONFIG", "done earlier"), ("ORDERS_EAST", "done"), ("PAY", "done")]


def test_a_side_lost_mid_run_says_where_the_run_stopped_and_the_rerun_finishes(region,
                                                                               monkeypatch):
    """The side's store stops answering while the run writes its journal (a server gone):
    the error, then where the run stopped and that the same command finishes it; it does."""
    from jetlink.core.dr import region as R
    from jetlink.core.errors import LiveError

    real = R.Journal.mark
    calls = []

    def mark(self, obj, now):
        calls.append(obj.key)
        if len(calls) == 3:  # the second object's start
            raise LiveError("publishing: lost the connection to nats://127.0.0.1:4222")
        return real(self, obj, now)

    monkeypatch.setattr(R.Journal, "mark", mark)
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == 1, r.output
    assert r.stderr.splitlines()[-1] == (
        "jetlink: error: publishing: lost the connection to nats://127.0.0.1:4222: the region "
        "failover of west stopped with 1 of 3 objects ended; run the same command again once "
        "it answers (its journal keeps where it stopped)")
    monkeypatch.setattr(R.Journal, "mark", real)
    d = doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))
    assert d["complete"] is True


def test_an_interrupt_after_every_object_before_the_fence_says_the_fence_is_left(region,
                                                                                 monkeypatch):
    """--fence: Ctrl-C once every object ended, while the old origins are being fenced:
    exit 130, and the line says the fence is what is left (both sides may take writes)."""
    from jetlink.core.dr import region as R

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(R.RegionPlan, "_fence", interrupted)
    r = east(region, "dr", "failover", "--from", "west", "--fence", "-f")
    assert r.exit_code == 130, r.output
    assert r.stderr.splitlines()[-1] == (
        "jetlink: interrupted: the region failover of west stopped with 3 of 3 objects ended "
        "(kv CONFIG@east, stream ORDERS_EAST@east, stream PAY@east); the old origins of kv "
        "CONFIG@east, stream ORDERS_EAST@east, stream PAY@east are not fenced yet: both sides "
        "may take writes until the re-run fences them; run the same command again to finish "
        "it (its journal keeps where it stopped)")


def test_an_interrupt_after_the_run_ended_leaves_its_own_exit_status(region, monkeypatch):
    """Ctrl-C landing once every object has ended (while the report is written, or later
    on the way out): the run is journalled whole, so its status is its own, never 130 (a
    script would read a finished failover as an interrupted one)."""
    import os
    import signal

    import jetlink.cli.dr as dr

    real = dr._render_region

    def interrupted_while_reporting(app, *args, **kwargs):
        if "outcome_only" in kwargs:  # the report of the run (not the plan shown first)
            os.kill(os.getpid(), signal.SIGINT)
            # and once more on the way out, as the data directory closes
            app.ctx.call_on_close(lambda: os.kill(os.getpid(), signal.SIGINT))
        return real(app, *args, **kwargs)

    monkeypatch.setattr(dr, "_render_region", interrupted_while_reporting)
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1].startswith("Region failover of west: 3 done")


def test_an_interrupt_while_workers_run_lets_them_end_and_starts_no_other():
    """Objects run in worker threads (a live backend's): Ctrl-C reaches the main thread
    only; the objects under way run to their end, none is started after it, and the level
    says it was interrupted."""
    import os
    import signal
    import threading
    import time
    from types import SimpleNamespace

    from jetlink.core.dr import region as R

    started = []
    both = threading.Barrier(2, timeout=30)  # (A and B under way when the interrupt comes)
    # (Ctrl-C's KeyboardInterrupt in the main thread, whatever handler the test runner set)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)

    def run(o):
        started.append(o.name)
        both.wait()
        if o.name == "A":
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(2)  # (the main thread wakes every 0.1 s: it stops the rest before)
        return {}

    plan = SimpleNamespace(backend=SimpleNamespace(parallel=2), action=R.FAILBACK,
                           run_options={}, _mark=lambda o: None, _run=run,
                           _unfence=lambda o: "")
    level = [R.RegionObject(kind="stream", name=n, side="east", cluster="east", stream=n,
                            origin=n, region="west") for n in "ABCD"]
    try:
        assert R.RegionPlan._run_level(plan, level, None, threading.Lock()) is True
    finally:
        signal.signal(signal.SIGINT, handler)
    assert sorted(started) == ["A", "B"]
    assert [o.state for o in level] == [R.DONE, R.DONE, R.PLANNED, R.PLANNED]


def test_an_interrupt_before_the_pool_registers_a_worker_still_waits_for_its_object(
        monkeypatch):
    """Ctrl-C can land between a worker thread's start and the pool's note of it
    (ThreadPoolExecutor._adjust_thread_count): the pool's shutdown does not wait for that
    thread, so the level counts its objects under way itself and waits for them to end."""
    import concurrent.futures as cf
    import threading
    import time
    from types import SimpleNamespace

    from jetlink.core.dr import region as R

    b_under_way = threading.Event()

    class Racy(cf.ThreadPoolExecutor):
        def _adjust_thread_count(self):
            before = set(self._threads)
            super()._adjust_thread_count()
            new = set(self._threads) - before
            if new and len(self._threads) == 2:
                assert b_under_way.wait(30)
                self._threads -= new  # (started, not yet noted: then the interrupt)
                raise KeyboardInterrupt

    def run(o):
        if o.name == "B":
            b_under_way.set()
        time.sleep(1)
        return {}

    monkeypatch.setattr(cf, "ThreadPoolExecutor", Racy)
    plan = SimpleNamespace(backend=SimpleNamespace(parallel=2), action=R.FAILBACK,
                           run_options={}, _mark=lambda o: None, _run=run,
                           _unfence=lambda o: "")
    level = [R.RegionObject(kind="stream", name=n, side="east", cluster="east", stream=n,
                            origin=n, region="west") for n in "ABCD"]
    assert R.RegionPlan._run_level(plan, level, None, threading.Lock()) is True
    assert [o.state for o in level] == [R.DONE, R.DONE, R.PLANNED, R.PLANNED]


@pytest.mark.parametrize(("run_first", "code"), [(3, 0), (1, 130)])
def test_an_interrupt_in_a_parallel_level_ends_the_run_whole_or_stops_it(
        region, monkeypatch, run_first, code):
    """A level interrupted while its workers ran (RegionPlan._run_level True): every object
    ended, the run is recorded finished and its exit status is its own; objects left, it
    stopped (130, the re-run finishes)."""
    from jetlink.core.dr import region as R

    real = R.RegionPlan._run_level

    def interrupted_level(self, level, on_event, lock):
        real(self, level[:run_first], on_event, lock)
        return True

    monkeypatch.setattr(R.RegionPlan, "_run_level", interrupted_level)
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == code, r.output
    if code:
        assert "stopped with 1 of 3 objects ended" in r.stderr
    monkeypatch.setattr(R.RegionPlan, "_run_level", real)
    d = doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))
    assert d["complete"] is True
    assert bool(d.get("nothing_to_do")) is (code == 0)


def test_the_region_and_the_side_swapped_without_cluster_says_the_side_is_down(region):
    """--from east with west down and no --cluster: no side answers; said as the swap it is
    (exit 2, nothing changed), not as every cluster being a region given."""
    before = data_dir_bytes(region.data)
    for verb in ("failover", "failback"):
        r = region("dr", verb, "--from", "east", "--dry-run")
        assert (r.exit_code, r.stderr) == (2, (
            f"jetlink: error: --from east: no side is left to {verb.replace('fail', 'fail ')} "
            "to: cluster west, not given as --from, is down (a side that is down takes "
            "nothing over); if cluster west failed, the region and the side are swapped: "
            f"jetlink dr {verb} --from west\n")), r.output
    assert data_dir_bytes(region.data) == before


def test_the_region_that_is_down_addressed_as_the_side_is_said_down(region):
    """--cluster west (down) with --from east, the two swapped: said as such (exit 2, nothing
    changed), naming the cluster that answers, never the region itself; dr check of it
    names the cluster."""
    before = data_dir_bytes(region.data)
    for verb in ("failover", "fence", "failback"):
        r = west(region, "dr", verb, "--from", "east", "-f")
        assert r.exit_code == 2, r.output
        assert r.stderr == (
            "jetlink: error: --cluster west: cluster west is down: a side that is down takes "
            "nothing over (it is a region); mark it up once it answers (jetlink cluster up "
            "west), or, if cluster west failed, give it as --from and address the cluster "
            "that holds the mirrors with --cluster\n")
    ok(region("cluster", "add", "north"))
    r = west(region, "dr", "failover", "--from", "east", "-f")
    assert r.exit_code == 2, r.output
    assert r.stderr.endswith(
        "address the cluster that holds the mirrors (north answers), or leave --cluster out "
        "to plan every cluster that answers\n")
    ok(region("cluster", "rm", "north", "-f"))
    assert data_dir_bytes(region.data) == before
    r = west(region, "dr", "check")
    assert r.exit_code == 3
    assert r.stdout.startswith("UNKNOWN dr no mirrors in cluster west (cluster west is down: "
                               "a region that is out holds the origins, not their mirrors; ")


def test_a_kv_mirror_fails_over_with_its_origin_gone_and_no_positions_synced(jl):
    """A KV mirror takes its origin bucket's subjects ($KV.<bucket>.>) as kv failover does:
    with west down and nothing synced, the region's plan does not refuse it."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "kv", "add", "CONFIG"))
    ok(west(jl, "kv", "put", "CONFIG", "a", "1"))
    ok(east(jl, "kv", "add", "CONFIG", "--mirror", "CONFIG@west"))
    ok(jl("replicate"))
    ok(jl("cluster", "down", "west"))
    before = data_dir_bytes(jl.data)
    plan = ok(east(jl, "dr", "failover", "--from", "west", "--dry-run")).stdout.splitlines()
    assert data_dir_bytes(jl.data) == before
    assert plan[1] == ("  kv CONFIG@east <- CONFIG@west: planned (0 not copied as last "
                       "reported, recovery "
                       "point 0s; subjects $KV.CONFIG.> (from bucket))")
    d = doc(east(jl, "dr", "failover", "--from", "west", "-f", "-j"))
    [o] = d["objects"]
    assert (o["state"], d["complete"]) == ("done", True)
    assert o["result"]["subjects_from"] == "bucket"
    assert doc(east(jl, "kv", "get", "CONFIG", "a", "-j"))["value"] == "MQ=="
    assert doc(east(jl, "kv", "put", "CONFIG", "b", "2", "-j"))  # writable now


def test_a_failover_takes_every_mirror_and_a_second_run_does_nothing(region):
    r = ok(east(region, "dr", "failover", "--from", "west", "-f"))
    assert r.stdout.splitlines() == [
        *PLAN,
        "kv CONFIG@east <- CONFIG@west: done (subjects $KV.CONFIG.>)",
        "stream ORDERS_EAST@east <- ORDERS@west: done (subjects orders.>; 1 consumer placed)",
        "stream PAY@east <- PAY@west: done (subjects pay.>)",
        "Region failover of west: 3 done, 0 done earlier, 0 skipped, 0 failed"]
    info = doc(east(region, "stream", "info", "ORDERS_EAST", "-j"))
    assert "mirror" not in info["config"] and info["config"]["subjects"] == ["orders.>"]
    billing = doc(east(region, "consumer", "info", "ORDERS_EAST", "billing", "-j"))
    assert billing["config"]["opt_start_seq"] == 1
    assert doc(east(region, "kv", "put", "CONFIG", "b", "2", "-j"))  # writable now
    before = data_dir_bytes(region.data)
    again = ok(east(region, "dr", "failover", "--from", "west", "-f"))
    assert again.stdout.splitlines()[-1] == (
        "Nothing to do: the region failover of west was done already (finished "
        f"{_stamp(region)})")
    d = doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))
    assert d["nothing_to_do"] and [o["state"] for o in d["objects"]] == ["done earlier"] * 3
    # the dry run says so too, under the plan it shows
    dry = ok(east(region, "dr", "failover", "--from", "west", "--dry-run"))
    assert dry.stdout.splitlines()[-2:] == [
        "Nothing to do: the region failover of west was done already (finished "
        f"{_stamp(region)})", "Dry run: nothing changed"]
    assert doc(east(region, "dr", "failover", "--from", "west", "--dry-run", "-j"))[
        "finished"] == _stamp(region)
    assert data_dir_bytes(region.data) == before


def test_a_rerun_with_fence_says_nothing_to_fail_over_then_what_it_fenced(region):
    """The failover done, the region back: a re-run with --fence fails nothing over and
    fences; its summary says "Nothing to fail over", not "Nothing to do", before the
    fence's lines."""
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    # the dry run says it as the run will (then the fence it would make), changing nothing
    before = data_dir_bytes(region.data, databases_only=True)
    dry = ok(east(region, "dr", "failover", "--from", "west", "--fence", "--dry-run")).stdout
    assert data_dir_bytes(region.data, databases_only=True) == before
    assert [x for x in dry.splitlines() if x.startswith("Nothing to")] == [
        f"Nothing to fail over: the region failover of west was done already "
        f"(finished {_stamp(region)})"], dry
    lines = ok(east(region, "dr", "failover", "--from", "west", "--fence", "-f")).stdout
    said = [x for x in lines.splitlines() if x.startswith("Nothing to")]
    assert said == [f"Nothing to fail over: the region failover of west was done already "
                    f"(finished {_stamp(region)})"], lines
    assert "Fenced 3 old origins of west" in lines


@pytest.mark.parametrize("verb", [["dr", "failback", "--from", "west"],
                                  ["kv", "failback", "CONFIG"],
                                  ["stream", "failback", "ORDERS_EAST"]])
def test_a_tail_without_parquet_names_the_option(region, verb):
    """--tail checked in a command's body is named as Click names it in an option's own
    check, with the form it takes and the value it was probably meant as."""
    r = east(region, *verb, "--tail", "/tmp/x", "-f")
    assert r.exit_code == 2
    assert ("Invalid value for '--tail': '/tmp/x': a dataset is given as parquet:PATH, PATH "
            "a directory or a URI (parquet:/data/orders, parquet:file:///data/orders); did "
            "you mean parquet:/tmp/x?") in r.stderr, r.stderr


def _stamp(jl) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(jl.clock.now_ns() / 1e9))


@pytest.mark.parametrize(("args", "message"), [
    (["--from", "wset"], "jetlink: error: --from wset: no cluster of the data directory is "
                         "named wset; did you mean west?"),
    (["--from", "WEST"], "jetlink: error: --from WEST: no cluster of the data directory is "
                         "named WEST; did you mean west?"),
    # east is the side addressed (--cluster east): never the suggestion for a region
    (["--from", "eats"], "jetlink: error: --from eats: no cluster of the data directory is "
                         "named eats"),
    (["--from", ""], "jetlink: error: --from: a region is a cluster (embedded engine) or a "
                     "JetStream domain (live server), not an empty name"),
    (["--from", "east"], "jetlink: error: --from east: that is the side addressed (where the "
                         "mirrors are); name the region that failed, where their origins "
                         "are"),
    (["--from", "north"], "jetlink: error: --from north: nothing on east mirrors from north "
                          "(no mirror stream, KV mirror bucket or mirror topic has its origin "
                          "there): nothing to fail over"),
    (["--from", "west", "--skip", "ORDER"], "jetlink: error: --skip ORDER: no object of the "
                                            "region is named ORDER; did you mean ORDERS_EAST?"),
])
def test_hostile_input_is_one_line_and_changes_nothing(region, args, message):
    ok(region("cluster", "add", "north"))
    before = data_dir_bytes(region.data)
    for verb in ("failover", "failback"):
        r = east(region, "dr", verb, *args, "-f")
        assert r.exit_code == 2, (verb, r.stdout, r.stderr)
        if verb == "failback":  # nothing was failed over: that comes first
            message = message.replace("east mirrors from", "east was failed over from") \
                .replace("fail over", "fail back").replace(
                    "no mirror stream, KV mirror bucket or mirror topic has its origin there",
                    "no stream, KV bucket or mirror topic there was promoted by a failover "
                    "from north").replace("(where the mirrors are)",
                                          "(where the streams a failover promoted are)")
            if "--skip" in message:
                continue
        assert r.stderr.strip().splitlines() == [message], verb
        assert "Traceback" not in r.stderr
    assert data_dir_bytes(region.data) == before


def test_every_cluster_named_as_a_region_leaves_no_side(region):
    names = [c["name"] for c in doc(region("cluster", "ls", "-j"))]
    args = [a for n in names for a in ("--from", n)]
    for verb, to in (("failover", "fail over"), ("failback", "fail back")):
        r = region("dr", verb, *args, "--dry-run")
        assert (r.exit_code, r.stderr) == (2, (
            f"jetlink: error: --from {names[0]}: no side is left to {to} to: every cluster is "
            f"one of the regions given ({', '.join('--from ' + n for n in names)}); name only "
            "the regions that failed (every other cluster is a side that takes over)\n"))


def test_a_damaged_journal_record_is_refused_naming_it(region):
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(east(region, "kv", "put", "JETLINK_REGIONS", "failover.west", "{not json"))
    before = data_dir_bytes(region.data)
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == 1
    assert r.stderr.splitlines() == [
        "jetlink: error: the region journal record failover.west in bucket JETLINK_REGIONS "
        "is not JSON, so not a record jetlink wrote: remove it to start over: jetlink "
        "--cluster east kv del JETLINK_REGIONS failover.west -f (the objects keep their own "
        "records: a new run finds what was done)"]
    ok(east(region, "kv", "put", "JETLINK_REGIONS", "failover.west", '{"version": 7}'))
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == 1 and "is not a record jetlink wrote (version 1" in r.stderr
    assert data_dir_bytes(region.data) != before  # only the put above changed it
    before = data_dir_bytes(region.data)
    east(region, "dr", "failover", "--from", "west", "-f")
    assert data_dir_bytes(region.data) == before
    ok(east(region, "kv", "del", "JETLINK_REGIONS", "failover.west", "-f"))
    d = doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))
    assert d["nothing_to_do"]  # the objects' own records say they were done


def test_a_refused_object_refuses_the_plan_unless_skipped(region):
    # a mirror made after the positions were synced: with west down its subjects are unknown
    ok(region("cluster", "up", "west"))
    ok(west(region, "stream", "add", "SHIP", "--subjects", "ship.>", "--defaults"))
    ok(east(region, "stream", "add", "SHIP", "--mirror", "SHIP@west", "--defaults"))
    ok(region("cluster", "down", "west"))
    before = data_dir_bytes(region.data)
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == 2
    assert "  stream SHIP@east <- SHIP@west: refused (" in r.stdout
    assert r.stdout.endswith("\nRefused: nothing changed\n")  # (not a dry run)
    assert r.stderr.startswith("jetlink: error: the region failover is refused: SHIP@east "
                               "(the subjects of the promoted stream SHIP are unknown")
    assert r.stderr.rstrip().endswith("--skip NAME or --skip-unready leaves them out")
    # the way out names what this command takes (--topology), or the object's own failover
    assert ("give --topology FILE naming the origin's stream, or fail it over alone with "
            "jetlink stream failover SHIP --subjects SUBJECTS (what the producers publish "
            "to) and run this again") in r.stdout + r.stderr
    assert "give them with --subjects" not in r.stdout + r.stderr
    assert data_dir_bytes(region.data) == before
    r = east(region, "dr", "failover", "--from", "west", "-f", "-j")
    assert r.exit_code == 2 and json.loads(r.stdout)["dry_run"] is False
    assert data_dir_bytes(region.data) == before
    d = doc(east(region, "dr", "failover", "--from", "west", "--skip", "SHIP", "-f", "-j"))
    states = {o["name"]: (o["state"], o["detail"]) for o in d["objects"]}
    assert states["SHIP"][0] == "skipped" and states["SHIP"][1].startswith("--skip SHIP (")
    assert {n: s for n, (s, _) in states.items() if n != "SHIP"} == {
        "CONFIG": "done", "ORDERS_EAST": "done", "PAY": "done"}
    info = doc(east(region, "stream", "info", "SHIP", "-j"))
    assert info["config"]["mirror"]["name"] == "SHIP"  # left as it was


@pytest.mark.parametrize(("skip", "said"), [
    ("", "--skip: an object's name is not empty (NAME, or NAME@SIDE for one side's)"),
    ("ORDERS_EST", "--skip ORDERS_EST: no object of the region is named ORDERS_EST; did you "
                   "mean ORDERS_EAST?"),
    # the origin's name and region, where the mirror's side is meant
    ("PAY@west", "--skip PAY@west: no object of the region is named PAY@west: NAME@SIDE "
                 "names the side the mirror is on, not its origin's region; did you mean "
                 "PAY@east?"),
    ("ORDERS@west", "--skip ORDERS@west: no object of the region is named ORDERS@west: "
                    "NAME@SIDE names the side the mirror is on, not its origin's region; did "
                    "you mean ORDERS_EAST@east?"),
])
def test_a_skip_that_names_no_object_is_a_usage_error(region, skip, said):
    before = data_dir_bytes(region.data)
    r = east(region, "dr", "failover", "--from", "west", "--skip", skip, "--dry-run")
    assert (r.exit_code, r.stderr) == (2, f"jetlink: error: {said}\n")
    assert data_dir_bytes(region.data) == before


def test_skip_unready_leaves_out_what_would_be_refused(region):
    ok(region("cluster", "up", "west"))
    ok(west(region, "stream", "add", "SHIP", "--subjects", "ship.>", "--defaults"))
    ok(east(region, "stream", "add", "SHIP", "--mirror", "SHIP@west", "--defaults"))
    ok(region("cluster", "down", "west"))
    d = doc(east(region, "dr", "failover", "--from", "west", "--skip-unready", "-f", "-j"))
    ship = next(o for o in d["objects"] if o["name"] == "SHIP")
    assert ship["state"] == "skipped" and ship["detail"].startswith("--skip-unready: ")
    assert d["done"] == 3 and d["complete"]


def test_fence_fences_the_origins_that_answer(region, monkeypatch):
    """--fence with the region answering: each origin is fenced before its own object is
    promoted (never after: a publish of that window would be stored by the old origin and
    the promoted mirror alike), and no other origin earlier; the report says each fenced by
    this run, with the subjects it had."""
    from jetlink.core.dr import region as R
    from jetlink.core.dr.fencing import fenced_subjects
    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    ok(region("cluster", "up", "west"))
    real, seen = R._failover, []

    def fenced_now(clock):
        dd = DataDir(region.data)
        try:
            js = JetStream(dd.open("west"), clock)
            return sorted(n for n in ("KV_CONFIG", "ORDERS", "PAY")
                          if fenced_subjects(js.stream_info(n).config) is not None)
        finally:
            dd.close()

    def checked(backend, o, options, clock):
        seen.append(fenced_now(clock))  # before each promotion: its own origin and the
        # earlier ones' origins
        return real(backend, o, options, clock)

    monkeypatch.setattr(R, "_failover", checked)
    d = doc(east(region, "dr", "failover", "--from", "west", "--fence", "-f", "-j"))
    assert d["done"] == 3
    assert seen == [["KV_CONFIG"], ["KV_CONFIG", "ORDERS"], ["KV_CONFIG", "ORDERS", "PAY"]]
    # (CONFIG, ORDERS_EAST, PAY)
    assert {(o["name"], o["action"], tuple(o["subjects_before"])) for o in
            d["fence"]["objects"]} == {("ORDERS", "fenced", ("orders.>",)),
                                       ("PAY", "fenced", ("pay.>",)),
                                       ("CONFIG", "fenced", ("$KV.CONFIG.>",))}
    r = west(region, "pub", "orders.late", "x")
    assert r.exit_code == 1 and "no stream matches subject orders.late" in r.stderr


def test_fence_leaves_the_origin_of_an_object_that_failed_taking_writes(region, monkeypatch):
    """--fence fences an origin before its own object's promotion: an object whose promotion
    then fails is not failed over, and its origin's fence is undone: it keeps taking its
    writes (nothing else would), as its detail says; the others are fenced. The failed
    object: exit status 1."""
    from jetlink.core.dr import region as R
    from jetlink.core.errors import JetlinkError

    ok(region("cluster", "up", "west"))
    real = R._failover

    def pay_fails(backend, o, options, clock):
        if o.name == "PAY":
            raise JetlinkError("PAY refused (a test)")
        return real(backend, o, options, clock)

    monkeypatch.setattr(R, "_failover", pay_fails)
    r = east(region, "dr", "failover", "--from", "west", "--fence", "-f", "-j")
    assert r.exit_code == 1, r.output
    d = json.loads(r.stdout)
    assert sorted((o["name"], o["state"]) for o in d["objects"]) == [
        ("CONFIG", "done"), ("ORDERS_EAST", "done"), ("PAY", "failed")]
    subjects = {n: doc(west(region, "stream", "info", n, "-j"))["config"]["subjects"]
                for n in ("ORDERS", "PAY")}
    assert subjects == {"ORDERS": ["$JETLINK.fenced.ORDERS"], "PAY": ["pay.>"]}
    pay = doc(west(region, "stream", "info", "PAY", "-j"))["config"]
    assert "jetlink.fenced_subjects" not in (pay.get("metadata") or {}), pay
    assert next(o["detail"] for o in d["objects"] if o["name"] == "PAY") == (
        "PAY refused (a test); its origin PAY@west unfenced: it takes its writes again")
    assert "PAY@west" not in d["fence"]["not_fenced"] and {
        o["name"] for o in d["fence"]["objects"]} == {"ORDERS", "CONFIG"}, d["fence"]
    assert ok(west(region, "pub", "pay.late", "x"))


def test_fence_first_lets_the_mirror_copy_what_its_origin_holds(region):
    """--fence with the region answering and a mirror behind (west took 2 publishes since
    the last copy): the origin is fenced, the mirror copies them, then it is promoted:
    nothing is left on the old origin (no divergent tail) and nothing more is stored there.
    Without the fence the same mirror is promoted 2 behind (the run's forced failover)."""
    import shutil

    from jetlink.core.jetstream import JetStream
    from jetlink.core.store import DataDir

    ok(region("cluster", "up", "west"))
    dd = DataDir(region.data)
    try:  # (published by the engine itself: a command would end with a replication step)
        js = JetStream(dd.open("west"), region.clock)
        for i in range(2):
            js.publish("orders.late", f"late{i}".encode())
    finally:
        dd.close()
    unfenced = region.tmp / "unfenced"
    shutil.copytree(region.data, unfenced)
    d = doc(east(region, "dr", "failover", "--from", "west", "--fence", "-f", "-j"))
    orders = next(o for o in d["objects"] if o["name"] == "ORDERS_EAST")
    assert (orders["state"], orders["detail"]) == ("done", "origin ORDERS@west fenced first")
    assert (orders["result"]["origin_pending"], orders["result"]["mirror_last_seq"],
            orders["result"]["origin_last_seq"]) == (0, 5, 5), orders["result"]
    held = doc(east(region, "stream", "view", "ORDERS_EAST", "-j"))
    assert [m["subject"] for m in held] == ["orders.new"] * 3 + ["orders.late"] * 2
    r = west(region, "pub", "orders.later", "x")
    assert r.exit_code == 1 and "no stream matches subject orders.later" in r.stderr
    # the same without --fence: promoted as it was, the 2 left behind on west
    d = doc(region("--data-dir", str(unfenced), "--cluster", "east", "dr", "failover",
                   "--from", "west", "-f", "-j"))
    orders = next(o for o in d["objects"] if o["name"] == "ORDERS_EAST")
    assert (orders["result"]["origin_pending"], orders["result"]["mirror_last_seq"]) == (2, 3)


def test_fence_first_of_a_mirror_that_can_not_catch_up_says_what_stayed(jl, monkeypatch):
    """--fence of a mirror its own limits hold back (discard new at max_msgs 2 of its
    origin's 5): waiting would not catch it up, so it is promoted once a step copies nothing
    more (not after the 30 s wait: the dry run of its promotion read twice), and its line
    says what stayed on the fenced origin and what saves it."""
    from jetlink.core.dr import region as R

    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(west(jl, "pub", "orders.{{Count}}", "--count", "5", "o{{Count}}"))
    ok(east(jl, "stream", "add", "HELD", "--mirror", "ORDERS@west", "--defaults",
            "--max-msgs", "2", "--discard", "new"))
    ok(east(jl, "positions", "sync"))
    real, calls = R._prepare, []

    def counted(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(R, "_prepare", counted)
    d = doc(east(jl, "dr", "failover", "--from", "west", "--fence", "-f", "-j"))
    (o,) = [x for x in d["objects"] if x["state"] != "listed"]
    assert (o["state"], o["detail"]) == ("done", (
        "origin ORDERS@west fenced first; 3 messages stayed on the origin ORDERS@west "
        "(fenced), never copied: the divergent tail, which jetlink stream failback HELD "
        "saves"))
    assert o["result"]["origin_pending"] == 3
    assert len(calls) == 2, calls


def _interrupt_after_the_fence(region, monkeypatch, name):
    """A --fence run stopped by Ctrl-C after the origin of ``name`` was fenced, before its
    promotion (the objects before it done)."""
    from jetlink.core.dr import region as R

    real = R._failover

    def stop(backend, o, options, clock):
        if o.name == name:
            raise KeyboardInterrupt
        return real(backend, o, options, clock)

    monkeypatch.setattr(R, "_failover", stop)
    r = east(region, "dr", "failover", "--from", "west", "--fence", "-f")
    monkeypatch.setattr(R, "_failover", real)
    return r


def test_an_interrupt_between_a_fence_and_its_promotion_says_nothing_takes_the_writes(
        region, monkeypatch):
    """Ctrl-C after ORDERS@west was fenced and before ORDERS_EAST was promoted: exit 130,
    and the line says nothing takes its writes until the re-run; the journal keeps the
    fence as the run's, so the re-run promotes ORDERS_EAST (west's ORDERS stays fenced)."""
    ok(region("cluster", "up", "west"))
    r = _interrupt_after_the_fence(region, monkeypatch, "ORDERS_EAST")
    assert r.exit_code == 130, r.output
    assert r.stderr == (
        "jetlink: interrupted: the region failover of west stopped with 1 of 3 objects ended "
        "(kv CONFIG@east); 1 under way (stream ORDERS_EAST@east: its failover may have "
        "finished); the origin of stream ORDERS_EAST@east is fenced and it is not promoted "
        "yet: nothing takes its writes until the re-run promotes it; run the same command "
        "again to finish it (its journal keeps where it stopped)\n")
    from jetlink.core.dr.positions import key_for

    key = f"failover.west.{key_for('stream:ORDERS_EAST@east')}"
    mark = json.loads(ok(east(region, "kv", "get", "JETLINK_REGIONS", key, "--raw")).stdout)
    assert (mark["state"], mark["fenced"]) == ("running", ["orders.>"]), mark
    # dr check: nothing takes orders.> now, CRITICAL
    check = east(region, "dr", "check", "ORDERS_EAST")
    assert check.exit_code == 2 and (
        "Crit:ORDERS_EAST@east: Origin ORDERS in cluster west is fenced: it takes no "
        "writes (orders.> recorded) and this mirror copies nothing new; unless a stream "
        "promoted elsewhere took them, nothing takes them: run the failover that fenced it "
        "again (jetlink dr failover --from west --fence, where this mirror is)") \
        in check.stdout, check.stdout
    d = doc(east(region, "dr", "failover", "--from", "west", "--fence", "-f", "-j"))
    assert {o["name"]: o["state"] for o in d["objects"] if o["state"] != "listed"} == {
        "CONFIG": "done earlier", "ORDERS_EAST": "done", "PAY": "done"}, d
    assert next(o["detail"] for o in d["objects"] if o["name"] == "ORDERS_EAST") == (
        "origin ORDERS@west fenced first (by the run this one continues)")
    assert doc(east(region, "stream", "info", "ORDERS_EAST", "-j"))["config"]["subjects"] == \
        ["orders.>"]
    assert doc(west(region, "stream", "info", "ORDERS", "-j"))["config"]["subjects"] == \
        ["$JETLINK.fenced.ORDERS"]
    assert {(o["name"], o["action"]) for o in d["fence"]["objects"]} >= {
        ("ORDERS", "fenced"), ("PAY", "fenced")}, d["fence"]


def test_skipping_an_object_whose_origin_the_stopped_run_fenced_unfences_it(region,
                                                                             monkeypatch):
    """The run stopped between ORDERS@west's fence and ORDERS_EAST's promotion; the re-run
    with --skip ORDERS_EAST leaves it a mirror and gives ORDERS@west its subjects back (the
    skip leaves the object as it was before the run): the dry run says so and changes
    nothing, the run does it."""
    ok(region("cluster", "up", "west"))
    assert _interrupt_after_the_fence(region, monkeypatch, "ORDERS_EAST").exit_code == 130
    skip = ("dr", "failover", "--from", "west", "--fence", "--skip", "ORDERS_EAST")
    before = data_dir_bytes(region.data, databases_only=True)
    dry = doc(east(region, *skip, "--dry-run", "-j"))
    assert data_dir_bytes(region.data, databases_only=True) == before
    assert next(o["detail"] for o in dry["objects"] if o["name"] == "ORDERS_EAST") == (
        "--skip ORDERS_EAST; its origin ORDERS@west, fenced by the run that stopped, to be "
        "unfenced (it then takes its writes again)")
    d = doc(east(region, *skip, "-f", "-j"))
    assert {o["name"]: (o["state"], o["detail"]) for o in d["objects"]
            if o["name"] == "ORDERS_EAST"} == {"ORDERS_EAST": ("skipped", (
                "--skip ORDERS_EAST; its origin ORDERS@west unfenced: it takes its writes "
                "again"))}
    cfg = doc(west(region, "stream", "info", "ORDERS", "-j"))["config"]
    assert cfg["subjects"] == ["orders.>"], cfg
    assert "jetlink.fenced_subjects" not in (cfg.get("metadata") or {}), cfg
    assert "mirror" in doc(east(region, "stream", "info", "ORDERS_EAST", "-j"))["config"]
    ok(west(region, "pub", "orders.after", "x"))


def test_the_report_lines_say_a_skipped_objects_origin_unfenced(region, monkeypatch):
    """The same re-run in human form, not on a terminal (a line per object as it ends): the
    skipped object's line says what was done, not only the plan's "to be unfenced"."""
    ok(region("cluster", "up", "west"))
    assert _interrupt_after_the_fence(region, monkeypatch, "ORDERS_EAST").exit_code == 130
    r = ok(east(region, "dr", "failover", "--from", "west", "--fence", "--skip",
                "ORDERS_EAST", "-f"))
    said = [line for line in r.stdout.splitlines() if "ORDERS@west unfenced" in line]
    assert len(said) == 1 and "it takes its writes again" in said[0], r.stdout


def test_fence_of_a_region_that_does_not_answer_warns_and_exits_0(region):
    """--fence with the region down (the outage itself): the failover is done and the old
    origins are fenced when they answer (dr fence, dr watch --fence-on-return): a warning
    naming them, exit status 0, the re-run's too; the JSON's fence says it is not complete."""
    for _ in range(2):
        r = east(region, "dr", "failover", "--from", "west", "--fence", "-f")
        assert r.exit_code == 0, r.output
        assert r.stderr.splitlines()[-1].startswith(
            "jetlink: warning: not fenced yet: CONFIG@west (cluster west is down: fenced when "
            "it answers (jetlink dr fence --from west, or dr watch --fence-on-return))"), r.stderr
    r = east(region, "dr", "failover", "--from", "west", "--fence", "-f", "-j")
    d = json.loads(r.stdout)
    assert (r.exit_code, d["complete"], d["fence"]["complete"]) == (0, True, False)


def test_a_fence_dry_run_of_a_region_that_is_down_says_what_the_run_says(jl):
    """The dry run of --fence with the region down names why its origin is unreachable
    in the words the run's fence uses (cluster west is down), not a word of its own."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "stream", "add", "O", "--subjects", "o.>", "--defaults"))
    ok(east(jl, "stream", "add", "B", "--mirror", "O@west", "--defaults"))
    ok(east(jl, "positions", "sync"))
    ok(jl("cluster", "down", "west"))
    before = data_dir_bytes(jl.data, databases_only=True)
    dry = ok(east(jl, "dr", "failover", "--from", "west", "--fence", "--dry-run"))
    assert data_dir_bytes(jl.data, databases_only=True) == before
    run = ok(east(jl, "dr", "failover", "--from", "west", "--fence", "-f"))
    line = ("stream O@west (failed over to B@east): unreachable (cluster west is down: fenced "
            "when it answers (jetlink dr fence --from west, or dr watch --fence-on-return))")
    assert dry.stdout.splitlines()[-2] == line and line in run.stdout.splitlines()


def _object_line_of(doc_: dict, name: str) -> list[str]:
    from jetlink.cli.dr import _object_line

    return [_object_line(o, doc_["action"]) for o in doc_["objects"] if o["name"] == name]


def test_a_failback_while_the_region_is_down_says_to_wait_not_to_skip(region):
    """Every object refused because its old origin does not answer: --skip would leave out
    everything; the refusal says to run again once the region answers (nothing changed)."""
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    before = data_dir_bytes(region.data)
    r = east(region, "dr", "failback", "--from", "west", "-f")
    assert r.exit_code == 2, r.output
    last = r.stderr.splitlines()[-1]
    assert last.endswith("; every one waits for its old origin: run the same command again "
                         "once the region answers"), last
    assert "--skip" not in last
    assert data_dir_bytes(region.data) == before


def test_a_failback_without_switch_names_the_switch_as_the_next_step(region, tmp_path):
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    r = ok(east(region, "dr", "failback", "--from", "west", "--tail",
                f"parquet:{tmp_path / 'tails'}", "-f"))
    assert r.stdout.splitlines()[-2:] == [
        "Region failback of west: 3 done, 0 done earlier, 0 skipped, 0 failed",
        "Next: once the old origins have caught up, switch back (they become the primaries "
        "again, the promoted streams their mirrors): run this command again with --switch "
        "(jetlink dr failback --from west --switch, with this run's server or cluster "
        "options)"]


def test_a_switch_planned_after_the_tails_were_saved_says_they_are(region, tmp_path):
    """A failback without --switch saves the tails; the switch's dry run then shows each
    tail as saved (where), not as one still to save."""
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    ok(west(region, "pub", "orders.west", "w1"))  # the divergent tail
    ok(east(region, "dr", "fence", "--from", "west", "-f"))
    tails = tmp_path / "tails"
    first = doc(east(region, "dr", "failback", "--from", "west", "--tail",
                     f"parquet:{tails}", "-f", "-j"))
    assert first["started"] and first["finished"] and first["complete"]
    dry = doc(east(region, "dr", "failback", "--from", "west", "--switch", "--dry-run", "-j"))
    (line,) = _object_line_of(dry, "ORDERS_EAST")
    assert f"tail 1 message saved to {tails}/object=ORDERS_EAST@east" in line, line
    # the switch is a new run: the dry run has none started (the first one finished)
    assert (dry["dry_run"], dry["started"], dry["finished"]) == (True, None, None)
    # the plan says the switch is in force (without --switch it says nothing of one)
    head = ok(east(region, "dr", "failback", "--from", "west", "--switch", "--dry-run"))
    assert head.stdout.splitlines()[0] == (
        "Region failback of west: 3 objects, then the switch back (--switch: the old origins "
        "primaries again, unfenced; the promoted streams mirror them)")


def test_a_switch_interrupted_in_the_second_its_failback_ended_is_finished_by_a_rerun(
        region, tmp_path, monkeypatch):
    """The failback (tails saved) and its --switch run begun within one second, the switch
    interrupted after its first object: the re-run switches back the rest. (The journal
    tagged each object's record with the run's start, whole seconds: the re-run took the
    failback's records for its own and said the rest "done earlier", still mirrors.)"""
    from jetlink.core.dr import region as R

    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    ok(east(region, "dr", "fence", "--from", "west", "-f"))
    ok(east(region, "dr", "failback", "--from", "west", "--tail", f"parquet:{tmp_path / 't'}",
            "-f"))
    real = R._failback
    monkeypatch.setattr(R, "_failback", _second_interrupted(real))  # (manual clock: 1 second)
    assert east(region, "dr", "failback", "--from", "west", "--switch", "-f").exit_code == 130
    monkeypatch.setattr(R, "_failback", real)
    d = doc(east(region, "dr", "failback", "--from", "west", "--switch", "-f", "-j"))
    assert (d["complete"], d["done"], d["done_earlier"]) == (True, 2, 1), d
    for name in ("ORDERS", "PAY"):  # the old origins are the primaries again
        assert "mirror" not in doc(west(region, "stream", "info", name, "-j"))["config"], name
    assert "mirror" not in doc(west(region, "stream", "info", "KV_CONFIG", "-j"))["config"]


def test_a_second_outage_of_the_region_fails_over_and_back_again(region, tmp_path):
    """A failback finished before the region's next failover is that cycle's record: the
    next failback is a new run (never "done already"), and it takes the region back."""
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    first = doc(east(region, "dr", "failback", "--from", "west", "--switch", "-f", "--tail",
                     f"parquet:{tmp_path / 't1'}", "-j"))
    assert first["complete"] and first["done"] == 3
    region.clock.advance(60 * SECOND)
    ok(east(region, "positions", "sync"))
    ok(region("cluster", "down", "west"))
    region.clock.advance(2 * SECOND)
    assert doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))["done"] == 3
    ok(region("cluster", "up", "west"))
    ok(east(region, "pub", "orders.after", "e2"))  # written on the promoted side
    region.clock.advance(SECOND)
    dry = doc(east(region, "dr", "failback", "--from", "west", "--switch", "--dry-run",
                   "-j"))
    assert not dry["nothing_to_do"] and dry["done_earlier"] == 0
    second = doc(east(region, "dr", "failback", "--from", "west", "--switch", "-f", "--tail",
                      f"parquet:{tmp_path / 't2'}", "-j"))
    assert second["complete"] and second["done"] == 3 and second["done_earlier"] == 0
    got = doc(west(region, "stream", "get", "ORDERS", "--last-for", "orders.after", "-j"))
    assert got["subject"] == "orders.after"


def test_a_failover_begun_in_the_second_its_failback_ended_is_a_new_cycle(region, tmp_path):
    """A failback (--switch) ended and the region's next failover begun within one second:
    the next failback is a new run, not "done already" (the journal compared whole-second
    stamps; it compares nanoseconds now)."""
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    ok(east(region, "dr", "failback", "--from", "west", "--switch", "-f", "--tail",
            f"parquet:{tmp_path / 't1'}"))
    region.clock.advance(1_000_000)  # 1 ms: the same second
    ok(east(region, "positions", "sync"))
    assert doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))["done"] == 3
    region.clock.advance(1_000_000)
    again = doc(east(region, "dr", "failback", "--from", "west", "--switch", "-f", "--tail",
                     f"parquet:{tmp_path / 't2'}", "-j"))
    assert (again["complete"], again["done"], again["done_earlier"]) == (True, 3, 0), again


def test_a_failback_takes_the_region_back_with_its_tails(region, tmp_path):
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(east(region, "pub", "orders.east", "e1"))
    ok(region("cluster", "up", "west"))
    ok(west(region, "pub", "orders.west", "w1"))  # the divergent tail
    ok(west(region, "pub", "orders.west", "w2"))
    ok(east(region, "dr", "fence", "--from", "west", "-f"))
    tails = tmp_path / "tails"
    before = data_dir_bytes(region.data)
    dry = doc(east(region, "dr", "failback", "--from", "west", "--tail", f"parquet:{tails}",
                   "--switch", "--dry-run", "-j"))
    assert data_dir_bytes(region.data) == before and not tails.exists()
    plan = {o["name"]: o["plan"]["tail"] for o in dry["objects"]}
    assert plan["ORDERS_EAST"]["messages"] == 2
    assert plan["ORDERS_EAST"]["path"] == str(tails / "object=ORDERS_EAST@east")
    r = ok(east(region, "dr", "failback", "--from", "west", "--tail", f"parquet:{tails}",
                "--switch", "-f"))
    assert ("stream ORDERS_EAST@east <- ORDERS@west: done (tail 2 messages saved to "
            f"{tails}/object=ORDERS_EAST@east; switched: the old origin is the primary "
            "again)") in r.stdout.splitlines()
    assert r.stdout.splitlines()[-1] == ("Region failback of west: 3 done, 0 done earlier, "
                                         "0 skipped, 0 failed")
    # PAY and CONFIG had no tail: nothing was saved, and the report says so, no path
    assert "tail 0 messages" not in r.stdout and r.stdout.count("no tail: nothing saved") == 2
    assert "no tail: nothing to save" in "\n".join(
        _object_line_of(dry, "PAY"))
    import pyarrow.dataset as ds

    rows = ds.dataset(str(tails / "object=ORDERS_EAST@east"), format="parquet").to_table()
    assert sorted(rows.column("subject").to_pylist()) == ["orders.west", "orders.west"]
    # west was fenced when its tail was saved: the dataset records its own subjects, the
    # config an import of the tail makes, not the fence's
    from jetlink.core import lake

    meta = json.loads((tails / "object=ORDERS_EAST@east" / lake.META_FILE).read_text())
    assert meta["config"]["subjects"] == ["orders.>"]
    assert "jetlink.fenced_subjects" not in (meta["config"].get("metadata") or {})
    origin = doc(west(region, "stream", "info", "ORDERS", "-j"))
    assert origin["config"]["subjects"] == ["orders.>"] and "mirror" not in origin["config"]
    assert doc(east(region, "stream", "info", "ORDERS_EAST", "-j"))["config"]["mirror"][
        "name"] == "ORDERS"
    ok(west(region, "pub", "orders.after", "once"))
    ok(region("replicate"))
    got = doc(east(region, "stream", "get", "ORDERS_EAST", "--last-for", "orders.after", "-j"))
    assert got["subject"] == "orders.after"
    again = doc(east(region, "dr", "failback", "--from", "west", "--switch", "-f", "-j"))
    assert again["nothing_to_do"] and again["complete"]
    assert [o["state"] for o in again["objects"]] == ["done earlier"] * 3
    before = data_dir_bytes(region.data)
    other = east(region, "dr", "failback", "--from", "west", "--tail",
                 f"parquet:{tmp_path / 'other'}", "-f")
    assert other.exit_code == 2 and (
        f"and its tails went to parquet:{tails}: nothing is written to --tail "
        f"parquet:{tmp_path / 'other'}; run again without --tail") in other.stderr
    assert data_dir_bytes(region.data) == before


def test_a_failback_without_cluster_passes_over_a_kafka_cluster(region):
    """With no --cluster every cluster that is up is a side: a Kafka one among them keeps no
    failback records (its mirror topics' state is the link's) and is passed over, as
    failover and fence pass over it, not refused for the buckets it cannot hold."""
    ok(region("cluster", "add", "keast", "--kind", "kafka"))
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    before = data_dir_bytes(region.data)
    dry = region("dr", "failback", "--from", "west", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert dry.stdout.splitlines()[-1] == "Dry run: nothing changed"
    assert data_dir_bytes(region.data) == before
    done = doc(region("dr", "failback", "--from", "west", "--switch", "-f", "-j"))
    assert (done["complete"], sorted(o["name"] for o in done["objects"])) == (
        True, ["CONFIG", "ORDERS_EAST", "PAY"])


def _two_sides(jl):
    """west: ORDERS (3 messages) and PAY; east: their mirrors; central: ORDERS_C, a second
    mirror of ORDERS@west; positions synced on both sides; west down."""
    for c in ("west", "east", "central"):
        ok(jl("cluster", "add", c))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(west(jl, "stream", "add", "PAY", "--subjects", "pay.>", "--defaults"))
    for i in range(3):
        ok(west(jl, "pub", "orders.new", f"m{i}"))
    ok(east(jl, "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west", "--defaults"))
    ok(east(jl, "stream", "add", "PAY", "--mirror", "PAY@west", "--defaults"))
    ok(jl("--cluster", "central", "stream", "add", "ORDERS_C", "--mirror", "ORDERS@west",
          "--defaults"))
    ok(jl("replicate"))
    ok(east(jl, "positions", "sync"))
    ok(jl("--cluster", "central", "positions", "sync"))
    ok(jl("cluster", "down", "west"))


def test_an_origin_mirrored_on_two_sides_is_failed_over_to_one(jl):
    """Without --cluster both mirrors of ORDERS@west would be promoted: two primaries taking
    writes for one stream. Both are refused, naming each other, nothing changed; --skip
    one (or --cluster) and the failover goes ahead; --skip-unready leaves both out."""
    _two_sides(jl)
    before = data_dir_bytes(jl.data)
    res = jl("dr", "failover", "--from", "west", "-f")
    assert res.exit_code == 2 and data_dir_bytes(jl.data) == before
    lines = res.stdout.splitlines()
    assert ("  stream ORDERS_C@central <- ORDERS@west: refused (stream ORDERS@west is mirrored "
            "on other sides too (ORDERS_EAST@east): a failover of each would make two "
            "primaries taking writes for one stream; fail over one side (--cluster) or --skip "
            "the others)") in lines
    assert any(ln.startswith("  stream ORDERS_EAST@east <- ORDERS@west: refused (stream "
                             "ORDERS@west is mirrored on other sides too (ORDERS_C@central)")
               for ln in lines), lines
    unready = doc(jl("dr", "failover", "--from", "west", "--skip-unready", "--dry-run", "-j"))
    assert {o["name"]: o["state"] for o in unready["objects"]} == {
        "ORDERS_C": "skipped", "ORDERS_EAST": "skipped", "PAY": "planned"}
    assert data_dir_bytes(jl.data) == before
    done = doc(jl("dr", "failover", "--from", "west", "--skip", "ORDERS_C@central", "-f", "-j"))
    assert {o["name"]: o["state"] for o in done["objects"]} == {
        "ORDERS_C": "skipped", "ORDERS_EAST": "done", "PAY": "done"}
    # promoted once: a later run without --skip refuses the other side's, not the done one
    again = jl("dr", "failover", "--from", "west", "-f", "-j")
    assert again.exit_code == 2
    assert {o["name"]: o["state"] for o in json.loads(again.stdout)["objects"]} == {
        "ORDERS_C": "refused", "ORDERS_EAST": "done earlier", "PAY": "done earlier"}


def test_a_kv_mirror_holding_a_replaced_value_of_the_same_key_is_critical(jl):
    """A KV mirror in a third cluster copied west's value of a key written after the
    failover (west's divergent tail); the failback replaced it with east's value of the
    same key: Diverged, said as other data on the same subject (not the subject twice)."""
    for c in ("west", "east", "central"):
        ok(jl("cluster", "add", c))
    ok(west(jl, "kv", "add", "CFG"))
    ok(west(jl, "kv", "put", "CFG", "db.url", "x"))
    ok(east(jl, "kv", "add", "CFG", "--mirror", "CFG@west"))
    ok(jl("--cluster", "central", "kv", "add", "CFG", "--mirror", "CFG@west"))
    ok(jl("replicate"))
    ok(east(jl, "positions", "sync"))
    ok(jl("cluster", "down", "west"))
    ok(east(jl, "kv", "failover", "CFG", "-f"))
    ok(east(jl, "kv", "put", "CFG", "db.url", "z"))
    ok(jl("cluster", "up", "west"))
    ok(west(jl, "kv", "put", "CFG", "db.url", "y"))  # the tail: central copies it
    ok(jl("replicate"))
    ok(east(jl, "dr", "fence", "--from", "west", "-f"))
    ok(east(jl, "kv", "failback", "CFG", "--switch", "-f"))
    ok(jl("replicate"))
    line = jl("--cluster", "central", "dr", "check").stdout
    assert ("Diverged: sequence 2 of the mirror ($KV.CFG.db.url) is the old origin's, which a "
            "failback at ") in line, line
    assert "(its sequences 2..2; now other data or time on that subject there)" in line


def test_a_mirror_its_origin_no_longer_agrees_with_is_critical(jl):
    """A failback replaces the old origin's divergent tail with the promoted side's
    messages; a mirror of that origin on a third side copied the tail before and only ever
    appends: dr check compares its last message with the origin's at that sequence and
    says Diverged (CRITICAL) rather than OK."""
    _two_sides(jl)
    ok(east(jl, "dr", "failover", "--from", "west", "-f"))
    ok(east(jl, "pub", "orders.east", "e1"))
    ok(jl("cluster", "up", "west"))
    ok(west(jl, "pub", "orders.west", "w1"))  # the tail: central copies it
    ok(jl("replicate"))
    ok(east(jl, "dr", "fence", "--from", "west", "-f"))
    ok(east(jl, "dr", "failback", "--from", "west", "--switch", "-f"))
    ok(jl("replicate"))
    fix = ("re-seed the mirror from its origin (stream rm, then stream add as it was) before "
           "failing over to it")
    for published in (False, True):
        # the failback left its divergence point on west's ORDERS (jetlink.divergence): the
        # mirror is compared there, also once newer messages made its last one agree again
        res = jl("--cluster", "central", "dr", "check")
        assert res.exit_code == 2
        said = res.stdout.split("Crit:ORDERS_C@central: ", 1)[1]
        assert said.startswith("Diverged: sequence 4 of the mirror (orders.west) is the old "
                               "origin's, which a failback at "), said
        assert f"replaced (its sequences 4..4; now orders.east there): {fix}" in said
        res = jl("--cluster", "central", "dr", "check", "--format", "json")
        assert res.exit_code == 2
        (mirror,) = json.loads(res.stdout)["mirrors"]
        assert mirror["readiness"]["diverged"] == {"seq": 4, "subject": "orders.west",
                                                   "origin_subject": "orders.east"}
        if not published:
            ok(west(jl, "pub", "orders.after", "a1"))
            ok(jl("replicate"))
    # the side that failed back agrees with its origin
    assert "Diverged" not in jl("--cluster", "east", "dr", "check", "ORDERS_EAST").stdout


def test_a_failover_of_a_region_that_answers_warns_of_the_split_brain(jl):
    """The region is up (its origins answer): a failover without --fence leaves both sides
    taking writes. A warning on stderr says so and names the fence, in the dry run too
    ("would"); with --fence there is nothing to warn of."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(east(jl, "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west", "--defaults"))
    warn = ("jetlink: warning: ORDERS@west answers now: after the failover it and the "
            "promoted side {}both take writes (a split brain) until fenced: add --fence, or "
            "run jetlink dr fence --from west\n")
    dry = ok(east(jl, "dr", "failover", "--from", "west", "--dry-run"))
    assert dry.stderr == warn.format("would ")
    before = data_dir_bytes(jl.data)
    fenced = ok(east(jl, "dr", "failover", "--from", "west", "--fence", "--dry-run"))
    assert fenced.stderr == ""
    # the dry run shows the fence it would make (before each promotion), as dr fence --dry-run
    assert fenced.stdout.splitlines()[-2:] == [
        "stream ORDERS@west (failed over to ORDERS_EAST@east): to fence: orders.> -> "
        "$JETLINK.fenced.ORDERS",
        "Dry run: nothing changed"]
    d = doc(east(jl, "dr", "failover", "--from", "west", "--fence", "--dry-run", "-j"))
    assert [(o["name"], o["action"], o["subjects_after"]) for o in d["fence"]["objects"]] == [
        ("ORDERS", "to fence", ["$JETLINK.fenced.ORDERS"])]
    assert data_dir_bytes(jl.data) == before
    done = ok(east(jl, "dr", "failover", "--from", "west", "-f"))
    assert done.stderr == warn.format("")


def _subjects(jl, cluster, stream):
    return [m["subject"] for m in doc(jl("--cluster", cluster, "stream", "view", stream,
                                         "--json"))]


def test_a_stream_sourcing_a_failed_back_origin_copies_nothing_twice(region):
    """ALL@east sources ORDERS@west. The failback creates ORDERS@west again, and a source
    whose origin was created again starts over (the server's rule): the failback first sets
    ALL's source to start after what it holds (opt_start_seq, at most the promoted last
    sequence), so ALL gets east's outage write once and none of ORDERS' messages twice;
    a run killed after the step and run again sets nothing twice."""
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(east(region, "pub", "orders.east", "e1"))
    ok(region("cluster", "up", "west"))
    ok(region("replicate"))
    ok(east(region, "dr", "fence", "--from", "west", "-f"))
    assert _subjects(region, "east", "ALL") == ["orders.new"] * 3
    dry = region("--cluster", "east", "dr", "failback", "--from", "west", "--dry-run")
    assert ("  listed: stream ALL@east sources ORDERS@west: each source starts again after "
            "what it holds when its origin is created again (nothing copied twice)"
            ) in dry.stdout.splitlines()
    done = doc(east(region, "dr", "failback", "--from", "west", "--switch", "-f", "-j"))
    (orders,) = [o for o in done["objects"] if o["name"] == "ORDERS_EAST"]
    held = [s for s in orders["result"]["steps"] if s["step"] == "hold-sources"]
    assert [s["detail"] for s in held] == [
        "ORDERS@west is created again: its sources start after what they hold: ALL@east "
        "from sequence 4"]
    ok(region("replicate"))
    assert _subjects(region, "east", "ALL") == ["orders.new"] * 3 + ["orders.east"]
    ok(west(region, "pub", "orders.after", "a1"))
    ok(region("replicate"))
    assert _subjects(region, "east", "ALL") == ["orders.new"] * 3 + ["orders.east",
                                                                      "orders.after"]
    src = doc(east(region, "stream", "info", "ALL", "-j"))["config"]["sources"][0]
    assert (src["name"], src["opt_start_seq"]) == ("ORDERS", 4)


def test_the_journal_names_the_tail_path_a_run_took(region, tmp_path):
    """A run whose --tail could not be written, then one with another --tail that saved the
    tails: later runs accept that path and, given another, name it (not the failed one);
    a --switch run without --tail keeps it too."""
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    ok(west(region, "pub", "orders.west", "w1"))  # a tail
    assert east(region, "dr", "failback", "--from", "west", "--tail", "parquet:/proc/jl-x",
                "-f").exit_code == 1
    tails = tmp_path / "tails"
    ok(east(region, "dr", "failback", "--from", "west", "--tail", f"parquet:{tails}", "-f"))
    ok(east(region, "dr", "failback", "--from", "west", "--tail", f"parquet:{tails}", "-f"))
    ok(east(region, "dr", "failback", "--from", "west", "--switch", "-f"))
    ok(east(region, "dr", "failback", "--from", "west", "--switch", "--tail",
            f"parquet:{tails}", "-f"))
    other = east(region, "dr", "failback", "--from", "west", "--tail",
                 f"parquet:{tmp_path / 'other'}", "-f")
    assert other.exit_code == 2
    assert f"and its tails went to parquet:{tails}: nothing is written" in other.stderr


def test_dr_check_after_a_failover_names_what_was_failed_over(region):
    """West still down after the failover: nothing is a mirror any more (UNKNOWN, no mirror
    to check), and the check says which streams were failed over from a silent origin and
    what to do when it returns."""
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    res = east(region, "dr", "check")
    assert res.exit_code == 3
    assert res.stdout.startswith(
        "UNKNOWN dr no mirrors in cluster east (failed over, their old origin silent: "
        "CONFIG@east from CONFIG@west, ORDERS_EAST@east from ORDERS@west, PAY@east from "
        "PAY@west; fence each when its region returns) | mirrors=0 "), res.stdout
    # every format says the same sentence (natscli's text form: a head line, then it)
    res = east(region, "dr", "check", "--format", "text")
    assert (res.exit_code, res.stdout) == (3, (
        "dr: UNKNOWN (0 mirrors: 0 ok, 0 warning, 0 critical)\n\nno mirrors in cluster east "
        "(failed over, their old origin silent: CONFIG@east from CONFIG@west, "
        "ORDERS_EAST@east from ORDERS@west, PAY@east from PAY@west; fence each when its "
        "region returns)\n\n"))
    as_json = east(region, "dr", "check", "-j")
    assert json.loads(as_json.stdout)["output"] == res.stdout.split("\n\n")[1]


def test_one_source_topic_mirrored_on_two_sides_is_one_primary_at_most(jl):
    """The one-primary rule covers mirror topics: a topic of kwest mirrored in keast and in
    knorth is two primaries forking its offsets if both fail over. `dr check` warns of it,
    and the region's failover without --cluster is refused (exit 2, nothing changed);
    with --cluster the side named takes over."""
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.topics import Kafka
    from jetlink.core.store import DataDir

    dd = DataDir(jl.data)
    for c in ("kwest", "keast", "knorth"):
        dd.add_cluster(c, "kafka")
    src = Kafka(dd.open("kwest"), jl.clock)
    src.create_topic("orders", 1)
    src.produce("orders", [(None, f"a{i}".encode()) for i in range(5)], partition=0)
    Links(dd, "keast", jl.clock).create("LE", "kwest", {})
    Links(dd, "knorth", jl.clock).create("LN", "kwest", {})
    dd.close()
    ok(jl("--cluster", "keast", "mirrors", "create", "orders", "--link", "LE"))
    ok(jl("--cluster", "knorth", "mirrors", "create", "orders", "--link", "LN"))
    ok(jl("replicate"))
    r = jl("dr", "check")
    assert r.exit_code == 1 and ("A failover of region kwest refuses it: topic orders@kwest "
                                 "is mirrored on other sides too (LN/orders@knorth)"
                                 ) in r.stdout, r.stdout
    ok(jl("cluster", "down", "kwest"))
    before = data_dir_bytes(jl.data)
    r = jl("dr", "failover", "--from", "kwest", "-f")
    assert r.exit_code == 2 and "two primaries taking writes for one topic" in r.stdout
    assert data_dir_bytes(jl.data) == before
    d = doc(jl("--cluster", "keast", "dr", "failover", "--from", "kwest", "-f", "-j"))
    assert [(o["name"], o["state"]) for o in d["objects"]] == [("LE/orders", "done")]
    # a run per side: the other side's after it is refused, keast's being a primary still
    before = data_dir_bytes(jl.data)
    r = jl("--cluster", "knorth", "dr", "failover", "--from", "kwest", "-f")
    assert r.exit_code == 2 and ("topic orders@kwest was failed over already to "
                                 "LE/orders@keast, a primary still") in r.stdout, r.stdout
    assert data_dir_bytes(jl.data) == before


def test_fence_first_refused_means_not_promoted(jl):
    """--fence on a region that answers, its Kafka cluster without an authorizer: the old
    source topic can not be fenced (a DENY WRITE ACL needs one), so its mirror is not
    promoted (it was, leaving both sides taking writes): failed, exit 1, still ACTIVE."""
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.topics import Kafka
    from jetlink.core.store import DataDir

    dd = DataDir(jl.data)
    for c in ("kwest", "keast"):
        dd.add_cluster(c, "kafka")
    Kafka(dd.open("kwest"), jl.clock).create_topic("orders", 1)
    Links(dd, "keast", jl.clock).create("LE", "kwest", {})
    dd.close()
    ok(jl("--cluster", "keast", "mirrors", "create", "orders", "--link", "LE"))
    r = jl("--cluster", "keast", "dr", "failover", "--from", "kwest", "--fence", "-f", "-j")
    assert r.exit_code == 1
    [o] = json.loads(r.stdout)["objects"]
    assert o["state"] == "failed" and o["detail"].startswith(
        "its origin orders@kwest can not be fenced (cluster kwest has no authorizer")
    desc = doc(jl("--cluster", "keast", "mirrors", "describe", "--link", "LE", "-j"))
    assert [m["mirror_status"] for m in desc] == ["ACTIVE"]


def test_mirror_topics_of_a_kafka_region(jl):
    from jetlink.core.kafka.links import Links
    from jetlink.core.kafka.topics import Kafka
    from jetlink.core.store import DataDir

    dd = DataDir(jl.data)
    dd.add_cluster("kwest", "kafka")
    dd.add_cluster("keast", "kafka")
    src = Kafka(dd.open("kwest"), jl.clock)
    src.create_topic("orders", 1)
    src.produce("orders", [(None, f"a{i}".encode()) for i in range(5)], partition=0)
    src.create_topic("payments", 1)
    Links(dd, "keast", jl.clock).create("L", "kwest", {})
    dd.close()
    ok(jl("--cluster", "keast", "mirrors", "create", "orders", "--link", "L"))
    ok(jl("--cluster", "keast", "mirrors", "create", "payments", "--link", "L"))
    ok(jl("replicate"))
    ok(jl("cluster", "down", "kwest"))
    d = doc(jl("--cluster", "keast", "dr", "failover", "--from", "kwest", "--skip",
               "L/payments", "-f", "-j"))
    o = d["objects"][0]
    assert (o["kind"], o["name"], o["state"], o["origin"]) == ("topic", "L/orders", "done",
                                                                "orders")
    assert (d["objects"][1]["name"], d["objects"][1]["state"]) == ("L/payments", "skipped")
    desc = doc(jl("--cluster", "keast", "mirrors", "describe", "--link", "L", "-j"))
    assert [m["mirror_status"] for m in desc] == ["STOPPED", "SOURCE_UNAVAILABLE"]
    before = data_dir_bytes(jl.data)
    back = doc(jl("--cluster", "keast", "dr", "failback", "--from", "kwest", "-f", "-j"))
    assert data_dir_bytes(jl.data) == before  # it ran nothing
    # the mirror topic still mirroring was not failed over: nothing of it goes back
    assert [o["name"] for o in back["objects"]] == ["L/orders"]
    assert back["objects"][0]["state"] == "manual"
    # one whose failover is not finished (PENDING_STOPPED, as a kill mid-stop leaves it)
    # is listed with the step that finishes it
    import sqlite3

    with sqlite3.connect(jl.data / "keast.db") as conn:
        conn.execute("UPDATE mirrors SET status = 'PENDING_STOPPED' WHERE topic = 'payments'")
    pend = doc(jl("--cluster", "keast", "dr", "failback", "--from", "kwest", "--dry-run",
                  "-j"))
    [p] = [o for o in pend["objects"] if o["name"] == "L/payments"]
    assert (p["state"], p["detail"]) == ("manual", (
        "its failover is not finished (PENDING_STOPPED): jetlink replicate finishes it; then "
        "it goes back per link: jetlink --cluster kwest mirrors truncate-and-restore payments "
        "--link LINK, LINK a link of kwest from keast made first (jetlink --cluster kwest "
        "links create LINK --source-cluster keast) (it removes the records payments took on "
        "kwest after the failover, keeping no copy: run it with --dry-run first to count "
        "them)"))
    with sqlite3.connect(jl.data / "keast.db") as conn:
        conn.execute("UPDATE mirrors SET status = 'SOURCE_UNAVAILABLE' WHERE topic = "
                     "'payments'")
    assert "jetlink --cluster kwest mirrors truncate-and-restore orders --link LINK" in \
        back["objects"][0]["detail"]
    assert (back["nothing_to_do"], back["manual"], back["done_earlier"]) == (True, 1, 0)
    # as people read it: the step left to them, and no claim that it was done
    r = ok(jl("--cluster", "keast", "dr", "failback", "--from", "kwest", "-f"))
    assert r.stdout.splitlines() == [
        "  topic L/orders@keast <- orders@kwest: manual (a mirror topic goes back per link: "
        "jetlink --cluster kwest mirrors truncate-and-restore orders --link LINK, LINK a link "
        "of kwest from keast made first (jetlink --cluster kwest links create LINK "
        "--source-cluster keast) (it removes the records orders took on kwest after the "
        "failover, keeping no copy: run it with --dry-run first to count them), with kwest "
        "answering)",
        "Nothing to do: the region failback of kwest runs no object; 1 object left to the "
        "step named above"]
    # that step taken: the topic went back, and the failback says so (not the step again)
    ok(jl("cluster", "up", "kwest"))
    ok(jl("--cluster", "kwest", "links", "create", "LINK", "--source-cluster", "keast"))
    ok(jl("--cluster", "kwest", "mirrors", "truncate-and-restore", "orders", "--link",
          "LINK"))
    again = doc(jl("--cluster", "keast", "dr", "failback", "--from", "kwest", "-f", "-j"))
    [o] = [o for o in again["objects"] if o["name"] == "L/orders"]
    assert (o["state"], o["detail"]) == ("done earlier", "it went back already: orders on "
                                         "kwest mirrors orders of keast through link LINK")
    assert (again["manual"], again["done_earlier"]) == (0, 1)


def test_objects_that_depend_on_others_run_after_them():
    from jetlink.core.dr.region import RegionObject, _levels

    def obj(name, after=()):
        return RegionObject("stream", name, "east", "east", name, name, "west",
                            after=[f"stream:{a}@east" for a in after])

    a, b, c, d = obj("A"), obj("B", ["A"]), obj("C", ["B"]), obj("D")
    assert [[o.name for o in level] for level in _levels([c, b, d, a])] == [
        ["D", "A"], ["B"], ["C"]]


def test_a_rerun_with_fence_fences_what_the_first_run_left(region):
    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    d = doc(east(region, "dr", "failover", "--from", "west", "--fence", "-f", "-j"))
    assert d["nothing_to_do"]
    assert sorted((o["name"], o["action"]) for o in d["fence"]["objects"]) == [
        ("CONFIG", "fenced"), ("ORDERS", "fenced"), ("PAY", "fenced")]


def test_a_damaged_object_record_of_the_journal_is_refused_naming_it(region):
    from jetlink.core.dr.positions import key_for

    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    key = f"failover.west.{key_for('stream:PAY@east')}"
    ok(east(region, "kv", "put", "JETLINK_REGIONS", key, "[1, 2]"))
    before = data_dir_bytes(region.data)
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == 1
    assert r.stderr.splitlines() == [
        f"jetlink: error: the region journal record {key} in bucket JETLINK_REGIONS is not a "
        f"record jetlink wrote (an object's state): remove it to start over: jetlink "
        f"--cluster east kv del JETLINK_REGIONS {key} -f (the objects keep their own records: "
        "a new run finds what was done)"]
    assert data_dir_bytes(region.data) == before
    # the way out, as printed, works (no --cluster of this invocation needed)
    way_out = r.stderr.split("start over: jetlink ")[1].split(" (the objects")[0].split()
    ok(region(*way_out))
    ok(east(region, "dr", "failover", "--from", "west", "-f"))


def test_a_plan_of_objects_skipped_or_done_by_hand_says_so_not_done_already(region):
    """One object failed over by its own verb, the others skipped: the region run runs
    nothing and says what it left, never that the region failover was done already."""
    ok(east(region, "stream", "failover", "ORDERS_EAST", "-f"))
    r = ok(east(region, "dr", "failover", "--from", "west", "--skip", "CONFIG", "--skip",
                "PAY", "-f"))
    assert r.stdout.splitlines()[-1] == (
        "Nothing to do: the region failover of west runs no object (1 done earlier, "
        "2 skipped)")
    d = doc(east(region, "dr", "failover", "--from", "west", "--skip", "CONFIG", "--skip",
                 "PAY", "-f", "-j"))
    assert (d["done"], d["done_earlier"], d["skipped"], d["nothing_to_do"]) == (0, 1, 2, True)
    assert doc(east(region, "stream", "info", "PAY", "-j"))["config"]["mirror"]["name"] == "PAY"


def test_a_kv_mirror_under_another_name_is_refused_as_kv_failover_refuses_it(region):
    """A KV read replica named otherwise than its origin (CONFIG_RO of CONFIG) stores its
    keys as $KV.CONFIG.<key>: `kv failover` refuses it, dr check grades it CRITICAL (not
    promotable), and a region's plan refuses it too instead of promoting it (it did);
    --skip-unready leaves it out and the rest runs."""
    ok(region("cluster", "up", "west"))
    ok(east(region, "kv", "add", "CONFIG_RO", "--mirror", "CONFIG@west"))
    ok(region("replicate"))
    ok(region("cluster", "down", "west"))
    r = east(region, "kv", "failover", "CONFIG_RO", "--dry-run")
    assert r.exit_code == 1 and "mirrors bucket CONFIG under another name" in r.stderr
    before = data_dir_bytes(region.data)
    r = east(region, "dr", "failover", "--from", "west", "-f")
    assert r.exit_code == 2
    assert data_dir_bytes(region.data) == before
    assert ("  kv CONFIG_RO@east <- CONFIG@west: refused (Not promotable: KV mirror "
            "KV_CONFIG_RO mirrors bucket CONFIG under another name") in r.stdout
    d = doc(east(region, "dr", "failover", "--from", "west", "--skip-unready", "-f", "-j"))
    states = {o["name"]: o["state"] for o in d["objects"]}
    assert states == {"CONFIG": "done", "CONFIG_RO": "skipped", "ORDERS_EAST": "done",
                      "PAY": "done"}


def _damage(path) -> None:
    """A cluster database whose header was overwritten (store/health.py: not SQLite)."""
    data = bytearray(path.read_bytes())
    data[:16] = b"garbage garbage!"
    path.write_bytes(bytes(data))


def test_a_side_that_cannot_be_read_is_refused_the_failed_region_may_be_damaged(region):
    """A damaged cluster on the side of the plan would hide the mirrors it holds: refused,
    naming it and both ways on; the region that failed is a region all the same."""
    ok(region("cluster", "add", "north"))
    ok(region("cluster", "up", "west"))
    ok(region("--cluster", "north", "stream", "add", "NB", "--mirror", "ORDERS@west",
              "--defaults"))
    ok(region("replicate"))
    ok(region("--cluster", "north", "positions", "sync"))
    ok(region("cluster", "down", "west"))
    data_dir_bytes(region.data)  # every log folded in: the files alone hold the data
    _damage(region.data / "east.db")
    before = {p.name: p.read_bytes() for p in region.data.iterdir() if p.is_file()}
    r = region("dr", "failover", "--from", "west", "--dry-run")
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.startswith("jetlink: error: dr failover: cluster east cannot be read, so "
                               "the objects it holds cannot be planned (cluster east: ")
    assert "'jetlink cluster check east --repair'" in r.stderr
    assert "name the clusters to plan with --cluster" in r.stderr
    assert "Traceback" not in r.stderr
    r = ok(region("--cluster", "north", "dr", "failover", "--from", "west", "--dry-run"))
    assert r.stdout.splitlines()[1].startswith("  stream NB@north <- ORDERS@west: planned")
    # east, damaged, as the region that failed: known, nothing mirrors from it
    r = region("--cluster", "north", "dr", "fence", "--from", "east", "--dry-run")
    assert r.exit_code == 2 and "no region named" not in r.stderr
    assert {p.name: p.read_bytes() for p in region.data.iterdir() if p.is_file()} == before


def test_the_failed_region_damaged_fails_over_as_one_that_does_not_answer(region):
    """The region that failed, its database damaged as well (marked down or not: the mark
    is inside the damaged file): the plan is made from what the mirrors' side holds (the
    synced positions), as for a region that does not answer; fencing and failing back wait
    for it to be readable again, saying why."""
    data_dir_bytes(region.data)  # every log folded in: the files alone hold the data
    _damage(region.data / "west.db")
    before = {p.name: p.read_bytes() for p in region.data.iterdir() if p.is_file()}
    r = ok(east(region, "dr", "failover", "--from", "west", "--dry-run"))
    assert r.stdout.splitlines() == [*PLAN, "Dry run: nothing changed"]
    assert {p.name: p.read_bytes() for p in region.data.iterdir() if p.is_file()} == before
    d = doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))
    assert d["complete"] is True
    assert sorted((o["name"], o["state"]) for o in d["objects"]) == [
        ("CONFIG", "done"), ("ORDERS_EAST", "done"), ("PAY", "done")]
    unusable = ("cluster west cannot be used (its database is damaged: see jetlink cluster "
                "check)")
    r = east(region, "dr", "fence", "--from", "west", "-f")
    assert r.exit_code == 1 and f"unreachable: {unusable}" in r.stderr, r.output
    r = east(region, "dr", "failback", "--from", "west", "--dry-run")
    assert r.exit_code == 2 and f"does not answer ({unusable})" in r.stderr, r.output


def test_the_default_tail_the_plan_names_is_the_one_written(region, tmp_path, monkeypatch):
    """Without --tail each tail goes to ./failback-<stream>-<time>: the time is the plan's,
    so the path the plan shows is the one the run writes, however long the run takes."""
    import jetlink.core.dr.region as R

    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    ok(west(region, "pub", "orders.west", "w1"))  # the divergent tail
    ok(east(region, "dr", "fence", "--from", "west", "-f"))
    monkeypatch.chdir(tmp_path)
    real = R._failback

    def later(*args, **kw):  # each object's failback runs a while after the plan
        region.clock.advance(5 * SECOND)
        return real(*args, **kw)

    monkeypatch.setattr(R, "_failback", later)
    done = doc(east(region, "dr", "failback", "--from", "west", "-f", "-j"))
    o = next(o for o in done["objects"] if o["name"] == "ORDERS_EAST")
    planned = o["plan"]["tail"]["path"]
    assert planned.startswith(str(tmp_path / "failback-ORDERS-"))
    written = [p.name for p in tmp_path.iterdir() if p.name.startswith("failback-")]
    assert written == [planned.rsplit("/", 1)[1]]


def test_an_origin_never_heard_from_has_no_figure_at_risk(jl):
    """A mirror made while its origin was down never heard from it: its lag is no figure,
    so the plan says the messages at risk are unknown (not 0), as dr check says its lag."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    ok(west(jl, "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("cluster", "down", "west"))
    ok(east(jl, "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS@west", "--defaults"))
    r = east(jl, "dr", "failover", "--from", "west", "--dry-run")
    assert r.stdout.splitlines()[0] == (
        "Region failover of west: 1 object, messages at risk unknown (never heard from the "
        "origins), recovery point unknown, 0 consumers to place")
    refused = east(jl, "dr", "failover", "--from", "west", "--dry-run", "-j")
    assert refused.exit_code == 2  # (refused: its subjects are unknown too)
    totals = json.loads(refused.stdout)["totals"]
    assert (totals["messages_at_risk"], totals["at_risk_unknown"]) == (0, 1)
    assert "Lag unknown (never reported)" in east(jl, "dr", "check").stdout
    # its subjects known: planned, and its own line and figures say unknown too, not 0
    topo = jl.tmp / "topo.toml"
    topo.write_text('[clusters.west]\n[clusters.east]\n'
                    '[streams.ORDERS]\ncluster = "west"\nsubjects = ["orders.>"]\n')
    r = ok(east(jl, "dr", "failover", "--from", "west", "--dry-run", "--topology", str(topo)))
    assert r.stdout.splitlines()[1] == (
        "  stream ORDERS_EAST@east <- ORDERS@west: planned (not copied and recovery point "
        "unknown (never heard from its origin); subjects orders.> (from topology))")
    plan = doc(east(jl, "dr", "failover", "--from", "west", "--dry-run", "--topology",
                    str(topo), "-j"))["objects"][0]["plan"]
    assert (plan["lag"], plan["recovery_point"]["messages"],
            plan["recovery_point"]["seconds"]) == (None, None, None)


def test_a_refusal_of_many_objects_says_the_first_and_names_the_others(jl):
    """Every object refused (here: subjects unknown, nothing synced): one line, the first
    with its reason, the others named (each has its reason in the plan printed above)."""
    ok(jl("cluster", "add", "west"))
    ok(jl("cluster", "add", "east"))
    for name in ("A", "B", "C"):
        ok(west(jl, "stream", "add", name, "--subjects", f"{name.lower()}.>", "--defaults"))
        ok(east(jl, "stream", "add", name, "--mirror", f"{name}@west", "--defaults"))
    ok(jl("cluster", "down", "west"))
    r = east(jl, "dr", "failover", "--from", "west", "--dry-run")
    assert r.exit_code == 2
    line = r.stderr.splitlines()[-1]
    assert line.startswith("jetlink: error: the region failover is refused: A@east (the "
                           "subjects of the promoted stream A are unknown")
    assert line.endswith("; and 2 more: B@east, C@east (each with its reason in the plan "
                         "above); --skip NAME or --skip-unready leaves them out")
    assert [x.split(":")[0] for x in r.stdout.splitlines()[1:4]] == [
        "  stream A@east <- A@west", "  stream B@east <- B@west", "  stream C@east <- C@west"]


def test_a_rerun_plans_the_consumers_the_stopped_run_had_not_placed(region, monkeypatch):
    """A stream promoted by a run that stopped before placing its origin's consumers: the
    re-run's plan counts them (the run places them), not 0."""
    import jetlink.core.dr.rules as rules
    from jetlink.core.errors import JetlinkError

    def stopped(*args, **kw):
        raise JetlinkError("stopped before placing the consumers")

    monkeypatch.setattr(rules, "_place_consumers", stopped)
    assert east(region, "stream", "failover", "ORDERS_EAST", "-f").exit_code == 1
    monkeypatch.undo()
    check = east(region, "dr", "check", "ORDERS_EAST")
    assert check.stdout.startswith(
        "CRITICAL dr Crit:ORDERS_EAST@east: promoted by a failover that stopped "
        "before it finished: run it again (jetlink stream failover ORDERS_EAST, or the "
        "region's jetlink dr failover) to finish it"), check.stdout
    plan = doc(east(region, "dr", "failover", "--from", "west", "--dry-run", "-j"))
    o = next(o for o in plan["objects"] if o["name"] == "ORDERS_EAST")
    assert (o["state"], o["detail"]) == (
        "planned", "promoted by an earlier run that stopped: the rest is finished")
    assert [c["consumer"] for c in o["plan"]["consumers"]] == ["billing"]
    assert plan["totals"]["consumers"] == 1
    done = doc(east(region, "dr", "failover", "--from", "west", "-f", "-j"))
    o = next(o for o in done["objects"] if o["name"] == "ORDERS_EAST")
    assert o["state"] == "done"
    assert doc(east(region, "consumer", "ls", "ORDERS_EAST", "-j")) == ["billing"]
    assert "not mirrored: promoted at " in east(region, "dr", "check", "ORDERS_EAST").stdout


def test_a_region_failback_saves_what_the_dr_side_lacks_beside_the_tails(jl):
    """A KV mirror with history 1 of a bucket with history 5: the revision east never held
    goes to DIR-unmatched/object=<name>, the region's tails dataset's sibling, partitioned
    alike; the plan and the outcome say so."""
    import pyarrow.parquet as pq

    for c in ("west", "east"):
        ok(jl("cluster", "add", c))
    ok(jl("--cluster", "west", "kv", "add", "CFG", "--history", "5"))
    for key, value in (("k1", "a"), ("k2", "b"), ("k1", "c"), ("k1", "d")):
        ok(jl("--cluster", "west", "kv", "put", "CFG", key, value))
    ok(jl("--cluster", "east", "kv", "add", "CFG", "--mirror", "CFG@west", "--history", "1"))
    ok(jl("replicate"))
    ok(jl("--cluster", "east", "positions", "sync"))
    ok(jl("cluster", "down", "west"))
    ok(jl("dr", "failover", "--from", "west", "-f"))
    ok(jl("cluster", "up", "west"))
    tails = jl.tmp / "tails"
    saved = f"{tails}-unmatched/object=CFG@east"
    plan = ok(jl("dr", "failback", "--from", "west", "--tail", f"parquet:{tails}",
                 "--dry-run")).stdout
    assert f"1 message not on the promoted side -> {saved})" in plan, plan
    out = ok(jl("dr", "failback", "--from", "west", "--tail", f"parquet:{tails}", "-f")).stdout
    assert f"1 message not on the promoted side saved to {saved};" in out, out
    table = pq.read_table(saved, columns=["seq", "subject", "data"])
    assert table.to_pylist() == [{"seq": 3, "subject": "$KV.CFG.k1", "data": b"c"}]


def test_no_consumers_still_takes_the_synced_subjects_and_places_none(region):
    """--no-consumers only leaves the consumers out: the subjects of an origin that does
    not answer still come from the synced positions (the dry run said "planned" and the
    run failed, "no positions were synced"), and the plan places no consumer."""
    before = data_dir_bytes(region.data)
    r = ok(east(region, "dr", "failover", "--from", "west", "--no-consumers", "--dry-run"))
    assert r.stdout.splitlines()[:3] == [
        "Region failover of west: 3 objects, 0 messages at risk as last reported (an origin "
        "does not answer), recovery point 2s, 0 consumers to place",
        PLAN[1],
        "  stream ORDERS_EAST@east <- ORDERS@west: planned (0 not copied as last reported, "
        "recovery point 2s; subjects orders.> (from positions))"]
    assert data_dir_bytes(region.data) == before
    d = doc(east(region, "dr", "failover", "--from", "west", "--no-consumers", "-f", "-j"))
    assert {o["name"]: o["state"] for o in d["objects"] if o["state"] != "listed"} == {
        "CONFIG": "done", "ORDERS_EAST": "done", "PAY": "done"}
    info = doc(east(region, "stream", "info", "ORDERS_EAST", "-j"))
    assert info["config"]["subjects"] == ["orders.>"] and info["state"]["consumer_count"] == 0


def test_stream_failover_no_consumers_reads_the_synced_subjects(region):
    r = ok(east(region, "stream", "failover", "ORDERS_EAST", "--no-consumers", "-f", "-j"))
    d = json.loads(r.stdout)
    assert d["subjects_from"] == "positions" and d["subjects"] == ["orders.>"]
    assert d["consumers"] == []


def test_an_origin_mirrored_twice_on_one_side_is_refused_naming_the_other(region):
    """Two mirrors of ORDERS@west in east (a DR mirror and a side replica): promoting both
    would make two primaries whose subjects overlap, the second failing half-way through
    the run; both are refused before anything is done, naming each other; --skip one."""
    jl = region
    ok(jl("cluster", "up", "west"))
    ok(east(jl, "stream", "add", "AUDIT", "--mirror", "ORDERS@west", "--defaults"))
    ok(jl("replicate"))
    ok(east(jl, "positions", "sync"))
    ok(jl("cluster", "down", "west"))
    before = data_dir_bytes(jl.data)
    res = east(jl, "dr", "failover", "--from", "west", "-f")
    assert res.exit_code == 2 and data_dir_bytes(jl.data) == before
    assert ("  stream AUDIT@east <- ORDERS@west: refused (stream ORDERS@west is mirrored twice "
            "on east (ORDERS_EAST@east): a failover of each would make two primaries taking "
            "writes for one stream; --skip the others)") in res.stdout.splitlines()
    d = doc(east(jl, "dr", "failover", "--from", "west", "--skip", "AUDIT", "-f", "-j"))
    assert {o["name"]: o["state"] for o in d["objects"] if o["state"] != "listed"} == {
        "AUDIT": "skipped", "CONFIG": "done", "ORDERS_EAST": "done", "PAY": "done"}


def test_an_interrupt_of_a_large_region_names_the_first_few_objects_ended(capsys):
    from types import SimpleNamespace

    import typer

    from jetlink.cli.app import App
    from jetlink.cli.dr import _interrupted

    def objs(names):
        return [SimpleNamespace(kind="stream", shown=n) for n in names]

    # (the plan as a run stopped part-way leaves it: RegionPlan.stopped)
    plan = SimpleNamespace(regions=["west"], stopped=lambda: (
        objs([f"S{i}@east" for i in range(28)]), objs(["S28@east"]), [], []))
    with pytest.raises(typer.Exit) as stop:
        _interrupted(App(), "failover", plan, 30)
    assert stop.value.exit_code == 130
    assert capsys.readouterr().err == (
        "jetlink: interrupted: the region failover of west stopped with 28 of 30 objects "
        "ended (stream S0@east, stream S1@east, stream S2@east, stream S3@east, stream "
        "S4@east and 23 more); 1 under way (stream S28@east: its failover may have "
        "finished); run the same command again to finish it (its journal keeps where it "
        "stopped)\n")


def test_an_interrupted_fence_says_what_it_fenced_and_a_finished_one_exits_0(region,
                                                                            monkeypatch):
    """Ctrl-C while dr fence fences: exit 130 and one line saying which old origins are
    fenced (the same command run again fences the rest); Ctrl-C once every one is fenced
    only cuts the report short: exit 0, as a finished failover's."""
    import os
    import signal

    from jetlink.cli import dr as cli_dr
    from jetlink.core.dr import fence as F

    ok(east(region, "dr", "failover", "--from", "west", "-f"))
    ok(region("cluster", "up", "west"))
    real, calls = F.fence_item, []

    def second_interrupted(item):
        calls.append(item)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(item)

    monkeypatch.setattr(F, "fence_item", second_interrupted)
    r = east(region, "dr", "fence", "--from", "west", "-f")
    assert r.exit_code == 130
    first = f"{calls[0].name}@{calls[0].region}"
    assert r.stderr.splitlines()[-1] == (
        f"jetlink: interrupted: 1 of 3 old origins fenced ({first}); run the same command "
        "again to fence the rest")
    monkeypatch.setattr(F, "fence_item", real)
    render = cli_dr._render_fence

    def interrupted_then_rendered(app, d):
        os.kill(os.getpid(), signal.SIGINT)
        return render(app, d)

    monkeypatch.setattr(cli_dr, "_render_fence", interrupted_then_rendered)
    r = east(region, "dr", "fence", "--from", "west", "-f")
    assert r.exit_code == 0, r.output
    assert "fenced" in r.stdout
