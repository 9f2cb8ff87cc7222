"""Parity of message schedules (ADR-51): the same CLI invocations on the embedded engine and
on nats-server 2.15.1, outputs compared after masking times.

Refusals are compared exactly (exit status, stderr, the JSON error document). Firing: on the
server the test waits past the schedule's time; on the engine a ManualClock (the clock every
engine call of the CLI runs with) is moved by the same amount, so the embedded run does not
sleep. The same refusal table runs engine-only in tests/test_schedules.py.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import time
from typing import Any

import pytest
from helpers import runner

from jetlink.cli.main import app
from jetlink.core.clock import ManualClock, format_rfc3339_nano
from live.parity import TARGETS, NoServer, mask_replicas, on_target, parity_env, target

pytestmark = pytest.mark.live

SEC = 1_000_000_000
TARGET = "-H Nats-Schedule-Target:s.t"

# Steps: CLI arguments; {at:N} is "@at <the side's anchor + N seconds>", the anchor being the
# whole second after the last "mark" step (the start before any); "until N" waits until
# anchor + N (each N moved by LEAD - 5, below).
# Every schedule between "mark" and "until" is due at anchor + LEAD or later, and the steps in
# between must be done by then on the live side (checked): a schedule firing early would
# shift the sequences the acks show.
SB = "-H Nats-Batch-Id:{id} -H Nats-Batch-Sequence:{seq}"


def _b(bid: str, seq: int, commit: bool = False) -> str:
    return SB.format(id=bid, seq=seq) + (" -H Nats-Batch-Commit:1" if commit else "")


SCRIPT: list[str] = [
    "stream add S --subjects s.> --allow-schedules --allow-rollup --defaults -j",
    "stream add OFF --subjects off.> --allow-rollup --defaults -j",
    # refusals
    f"pub s.a x -H 'Nats-Schedule:@at bogus' {TARGET} -j",
    "pub s.a x -H 'Nats-Schedule:{at:60}' -j",
    "pub s.a x -H 'Nats-Schedule:{at:60}' -H Nats-Schedule-Target:s.a -j",
    "pub s.a x -H 'Nats-Schedule:{at:60}' -H Nats-Schedule-Target:other.t -j",
    f"pub s.a x -H 'Nats-Schedule:@every 999ms' {TARGET} -j",
    f"pub s.a x -H 'Nats-Schedule:{'9' * 5000} * * * * *' {TARGET} -j",
    f"pub s.a x -H 'Nats-Schedule:*/{'9' * 5000} * * * * *' {TARGET} -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-TTL:bogus -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-TTL:5s -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-Rollup:all -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Rollup:all -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-Source:s.t -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-Source:other.x -j",
    "pub s.a x -H Nats-Scheduler:s.b -j",
    "pub s.a x -H Nats-Schedule-Next:2030-01-01T00:00:00Z -H Nats-Scheduler:s.b -j",
    "pub s.a x -H Nats-Schedule-Next:purge -j",
    "pub s.a x -H Nats-Schedule-Next:purge -H 'Nats-Scheduler:s.*' -j",
    f"pub s.a x -H 'Nats-Schedule:0 0 9 * * *' {TARGET} "
    "-H Nats-Schedule-Time-Zone:Mars/Olympus -j",
    # Go's time.LoadLocation takes "Local": the server's own zone
    f"pub s.a x -H 'Nats-Schedule:0 0 9 * * *' {TARGET} -H Nats-Schedule-Time-Zone:Local -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} "
    "-H Nats-Schedule-Time-Zone:Europe/Amsterdam -j",
    "pub off.a x -H 'Nats-Schedule:{at:60}' -H Nats-Schedule-Target:off.t -j",
    f"pub s.a x -H 'Nats-Schedule:@at bogus' {TARGET}",
    "stream info S -j",
    # schedules need roll-ups (a schedule gets an implicit Nats-Rollup: sub): the server
    # turns them on; roll-ups with purges denied are refused (10052)
    "stream add NR --subjects nr.> --allow-schedules --defaults -j",
    "stream add DP --subjects dp.> --allow-schedules --allow-rollup --deny-purge --defaults -j",
    "stream add SB --subjects sb.> --allow-schedules --allow-rollup --allow-batch --defaults -j",
    # a time past Go's UnixNano range (2262-04-11T23:47:16.854775807Z) is accepted; the
    # server keeps it as the int64-wrapped UnixNano, here in the past: it fires at once
    # (checked after "until"); the last time inside the range is kept and does not fire
    "stream add FAR --subjects far.> --allow-schedules --allow-rollup --defaults -j",
    "pub far.keep k -H 'Nats-Schedule:@at 2262-04-11T23:47:16Z' "
    "-H Nats-Schedule-Target:far.kept -j",
    "pub far.end e -H 'Nats-Schedule:@at 9999-12-31T23:59:59Z' -H Nats-Schedule-Target:far.t -j",
    "mark",
    # a one-shot schedule fires; a cron one with a time zone is stored
    f"pub s.sched hello -H 'Nats-Schedule:{{at:5}}' {TARGET} -H Custom:kept -j",
    "pub s.cron c -H 'Nats-Schedule:0 0 9 * * *' -H Nats-Schedule-Target:s.c "
    "-H Nats-Schedule-Time-Zone:Europe/Amsterdam -j",
    "stream get S --last-for s.sched -j",
    # a message without schedule headers on a schedule's subject cancels the schedule,
    # with headers or without
    "pub s.p1 one -H 'Nats-Schedule:{at:5}' -H Nats-Schedule-Target:s.pt1 -j",
    "pub s.p1 plain -j",
    "pub s.p2 one -H 'Nats-Schedule:{at:5}' -H Nats-Schedule-Target:s.pt2 -j",
    "pub s.p2 two -H Custom:x -j",
    # a removed schedule message never fires
    "pub s.del d -H 'Nats-Schedule:{at:5}' -H Nats-Schedule-Target:s.dt -j",
    "stream rmm S 7 -f -j",
    # a schedule's own Nats-Rollup (sub, in any case) is kept; Nats-Schedule-Rollup with a
    # source: the fired message rolls up its target
    "pub s.r1 x -H 'Nats-Schedule:{at:60}' -H Nats-Schedule-Target:s.rt -H Nats-Rollup:sub -j",
    "pub s.r2 x -H 'Nats-Schedule:{at:60}' -H Nats-Schedule-Target:s.rt -H Nats-Rollup:SUB -j",
    "pub s.one one -j",
    "pub s.pub previous -j",
    "pub s.sr x -H 'Nats-Schedule:{at:5}' -H Nats-Schedule-Target:s.pub "
    "-H Nats-Schedule-Source:s.one -H Nats-Schedule-Rollup:sub -j",
    # a purge naming a subject without messages is a no-op, and stored
    "pub s.x2 x -H Nats-Schedule-Next:purge -H Nats-Scheduler:s.none -j",
    # schedules in an atomic batch: checked at the commit as single publishes are, stored
    # with the batch, fired as any other
    f"pub sb.s one {_b('k1', 1)} -H 'Nats-Schedule:{{at:5}}' -H Nats-Schedule-Target:sb.t -j",
    f"pub sb.p two {_b('k1', 2, True)} -j",
    f"pub sb.a x {_b('k2', 1)} -H 'Nats-Schedule:@at bogus' -H Nats-Schedule-Target:sb.t -j",
    f"pub sb.b x {_b('k2', 2, True)} -j",
    # a schedule's implicit Nats-Rollup: sub counts in the batch's rollup rule (10111)
    f"pub sb.c x {_b('k3', 1)} -H 'Nats-Schedule:{{at:60}}' -H Nats-Schedule-Target:sb.t -j",
    f"pub sb.c x {_b('k3', 2, True)} -H 'Nats-Schedule:{{at:60}}' "
    "-H Nats-Schedule-Target:sb.t -j",
    f"pub sb.d x {_b('k4', 1)} -j",
    f"pub sb.d x {_b('k4', 2, True)} -H 'Nats-Schedule:{{at:60}}' -H Nats-Schedule-Target:sb.t -j",
    # a purge in the batch: valid while the batch's last message on that subject is a schedule
    f"pub sb.e x {_b('k5', 1)} -H 'Nats-Schedule:{{at:5}}' -H Nats-Schedule-Target:sb.et -j",
    f"pub sb.f x {_b('k5', 2, True)} -H Nats-Schedule-Next:purge -H Nats-Scheduler:sb.e -j",
    f"pub sb.g x {_b('k6', 1)} -H 'Nats-Schedule:{{at:60}}' -H Nats-Schedule-Target:sb.t -j",
    f"pub sb.g x {_b('k6', 2)} -j",
    f"pub sb.h x {_b('k6', 3, True)} -H Nats-Schedule-Next:purge -H Nats-Scheduler:sb.g -j",
    "stream info SB -j",
    # a message fired onto another schedule's subject leaves that schedule (the last
    # schedule of S, so both sides fire in the same order)
    "pub s.A a -H 'Nats-Schedule:{at:5}' -H Nats-Schedule-Target:s.B -j",
    "pub s.B b -H 'Nats-Schedule:{at:5.5}' -H Nats-Schedule-Target:s.C -j",
    "until 6.5",
    "stream get S --last-for s.t -j",
    "stream get S --last-for s.sched -j",
    "stream get S --last-for s.pt1 -j",
    "stream get S --last-for s.pt2 -j",
    "stream get S --last-for s.dt -j",
    "stream get S --last-for s.pub -j",
    "stream get S --last-for s.C -j",
    "stream info S -j",
    "stream subjects S -j",
    # a client purge of a schedule
    "pub s.x x -H Nats-Schedule-Next:purge -H Nats-Scheduler:s.cron -j",
    "stream get S --last-for s.cron -j",
    "stream subjects S -j",
    "stream get SB --last-for sb.t -j",
    "stream subjects SB -j",
    "stream subjects FAR -j",
    "stream get FAR --last-for far.t -j",
    "stream info FAR -j",
]
# The earliest due time after "mark", in seconds: the script's times ({at:N}, until N) are
# written from 5 and moved by LEAD - 5 on both sides, so the steps in between have LEAD seconds
# on a busy machine (the server fires on its wall clock; the engine's ManualClock follows).
LEAD = 15

VOLATILE = {"created", "ts", "time", "first_ts", "last_ts", "_nats.ver", "_nats.level",
            "_nats.req.level", "leader"}
DROPPED = {"cluster"}  # the engine's cluster name; a single live server has none


_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


def _mask(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("hdrs"), str):
        # a stored message: its header block decoded, the times in it masked
        text = base64.b64decode(value["hdrs"]).decode()
        value = {**value, "hdrs": _TIME.sub("<time>", text)}
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in VOLATILE else _mask(v)) for k, v in value.items()
                if k not in DROPPED}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _run(prefix: list[str], now: Any, wait_until: Any, clustered: bool = False
         ) -> list[dict[str, Any]]:
    def whole_second() -> int:
        # the next whole second: the @at texts then have one length on both sides (RFC 3339
        # drops a fraction's trailing zeros), and so have the stored messages' sizes
        return -(-now() // SEC) * SEC

    out: list[dict[str, Any]] = []
    anchor = whole_second()
    for step in SCRIPT:
        if step == "mark":
            anchor = whole_second()
            continue
        if step.startswith("until "):
            late = (now() - anchor) / SEC
            assert late < LEAD, f"the steps after mark took {late:.2f}s, past the lead {LEAD}s"
            wait_until(anchor + int((float(step.split()[1]) + LEAD - 5) * SEC))
            continue
        text = step
        while "{at:" in text:
            start = text.index("{at:")
            end = text.index("}", start)
            at = anchor + int((float(text[start + 4:end]) + LEAD - 5) * SEC)
            text = text[:start] + "@at " + format_rfc3339_nano(at) + text[end + 1:]
        args = on_target(shlex.split(text), clustered)
        res = runner.invoke(app, [*prefix, *args], prog_name="jetlink")
        rec: dict[str, Any] = {"step": step, "status": res.exit_code, "stderr": res.stderr}
        if "-j" in args:
            try:
                rec["json"] = _mask(json.loads(res.stdout))
            except ValueError:
                rec["json"] = res.stdout
        else:
            rec["stdout"] = res.stdout
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            rec["exception"] = repr(res.exception)
        out.append(rec)
    return out


def _sleep_until(ns: int) -> None:
    left = (ns - time.time_ns()) / SEC
    if left > 0:
        time.sleep(left)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    with parity_env(tmp_path_factory, NoServer(), "sched") as mp:
        clock = ManualClock(time.time_ns())
        mp.setattr("jetlink.cli.common.make_clock", lambda: clock)
        data = tmp_path_factory.mktemp("sched-embedded") / "data"
        return _run(["--data-dir", str(data)], clock.now_ns,
                    lambda ns: clock.advance(max(0, ns - clock.now_ns())))


@pytest.fixture(scope="module", params=TARGETS)
def both(request, embedded, tmp_path_factory):
    server = target(request)
    clustered = request.param == "cluster"
    with parity_env(tmp_path_factory, server, "sched"):
        live = _run(["--server", server.url], time.time_ns, _sleep_until, clustered)
    if clustered:
        return [mask_replicas(r) for r in embedded], [mask_replicas(r) for r in live]
    return embedded, live


STEPS = [s for s in SCRIPT if s != "mark" and not s.startswith("until ")]


@pytest.mark.parametrize("i", range(len(STEPS)), ids=[s[:70] for s in STEPS])
def test_parity_schedules(both, i):
    embedded, live = both
    e, lv = embedded[i], live[i]
    assert "exception" not in e and "exception" not in lv, (e, lv)
    assert e == lv, e["step"]


def test_the_schedule_fired_on_both(both):
    embedded, live = both
    for run in (embedded, live):
        fired = next(r for r in run if r["step"] == "stream get S --last-for s.t -j")
        assert fired["status"] == 0
        assert fired["json"]["data"] == base64.b64encode(b"hello").decode()
        assert fired["json"]["hdrs"] == ("NATS/1.0\r\nCustom: kept\r\nNats-Scheduler: s.sched"
                                         "\r\nNats-Schedule-Next: purge\r\n\r\n")
        removed = next(r for r in run if r["step"] == "stream get S --last-for s.sched -j"
                       and r["json"].get("error"))
        assert removed["json"]["error"]["err_code"] == 10037



def test_far_future_schedules_on_both(both):
    """Past Go's UnixNano range the schedule fires at once (the wrapped time is in the past);
    at the range's last whole second it stays stored."""
    embedded, live = both
    for run in (embedded, live):
        subjects = next(r for r in run if r["step"] == "stream subjects FAR -j")
        assert (subjects["status"], subjects["json"]) == (0, {"far.keep": 1, "far.t": 1})
        fired = next(r for r in run if r["step"] == "stream get FAR --last-for far.t -j")
        assert fired["json"]["hdrs"] == ("NATS/1.0\r\nNats-Scheduler: far.end"
                                         "\r\nNats-Schedule-Next: purge\r\n\r\n")
