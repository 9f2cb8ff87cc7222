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

pytestmark = pytest.mark.live

SEC = 1_000_000_000
TARGET = "-H Nats-Schedule-Target:s.t"

# Steps: CLI arguments; {at:N} is "@at <the side's now + N seconds>"; "wait N" moves time.
SCRIPT: list[str] = [
    "stream add S --subjects s.> --allow-schedules --allow-rollup --defaults -j",
    "stream add OFF --subjects off.> --allow-rollup --defaults -j",
    # refusals
    f"pub s.a x -H 'Nats-Schedule:@at bogus' {TARGET} -j",
    "pub s.a x -H 'Nats-Schedule:{at:60}' -j",
    "pub s.a x -H 'Nats-Schedule:{at:60}' -H Nats-Schedule-Target:s.a -j",
    "pub s.a x -H 'Nats-Schedule:{at:60}' -H Nats-Schedule-Target:other.t -j",
    f"pub s.a x -H 'Nats-Schedule:@every 999ms' {TARGET} -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-TTL:bogus -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-TTL:5s -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-Rollup:all -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Rollup:all -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-Source:s.t -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} -H Nats-Schedule-Source:other.x -j",
    "pub s.a x -H Nats-Scheduler:s.b -j",
    "pub s.a x -H Nats-Schedule-Next:2030-01-01T00:00:00Z -H Nats-Scheduler:s.b -j",
    "pub s.a x -H Nats-Schedule-Next:purge -j",
    f"pub s.a x -H 'Nats-Schedule:0 0 9 * * *' {TARGET} "
    "-H Nats-Schedule-Time-Zone:Mars/Olympus -j",
    f"pub s.a x -H 'Nats-Schedule:{{at:60}}' {TARGET} "
    "-H Nats-Schedule-Time-Zone:Europe/Amsterdam -j",
    "pub off.a x -H 'Nats-Schedule:{at:60}' -H Nats-Schedule-Target:off.t -j",
    f"pub s.a x -H 'Nats-Schedule:@at bogus' {TARGET}",
    "stream info S -j",
    # a one-shot schedule fires; a cron one with a time zone is stored
    f"pub s.sched hello -H 'Nats-Schedule:{{at:2}}' {TARGET} -H Custom:kept -j",
    "pub s.cron c -H 'Nats-Schedule:0 0 9 * * *' -H Nats-Schedule-Target:s.c "
    "-H Nats-Schedule-Time-Zone:Europe/Amsterdam -j",
    "stream get S --last-for s.sched -j",
    "wait 3.5",
    "stream get S --last-for s.t -j",
    "stream get S --last-for s.sched -j",
    "stream info S -j",
    # a client purge of a schedule
    "pub s.x x -H Nats-Schedule-Next:purge -H Nats-Scheduler:s.cron -j",
    "stream get S --last-for s.cron -j",
    "stream subjects S -j",
]

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


def _run(prefix: list[str], now: Any, wait: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for step in SCRIPT:
        if step.startswith("wait "):
            wait(float(step.split()[1]))
            continue
        text = step
        while "{at:" in text:
            start = text.index("{at:")
            end = text.index("}", start)
            secs = int(text[start + 4:end])
            text = text[:start] + "@at " + format_rfc3339_nano(now() + secs * SEC) + text[end + 1:]
        args = shlex.split(text)
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


@pytest.fixture(scope="module")
def both(nats_single, tmp_path_factory):
    from helpers import ENV_VARS

    with pytest.MonkeyPatch.context() as mp:
        for var in ENV_VARS:
            mp.delenv(var, raising=False)
        mp.setattr("jetlink.cli.output.is_interactive", lambda: False)
        mp.setenv("TZ", "UTC")
        mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("sched-config")))
        nats_single.reset()
        clock = ManualClock(time.time_ns())
        mp.setattr("jetlink.cli.common.make_clock", lambda: clock)
        data = tmp_path_factory.mktemp("sched-embedded") / "data"
        embedded = _run(["--data-dir", str(data)], clock.now_ns, clock.advance_s)
        mp.undo()
        for var in ENV_VARS:
            mp.delenv(var, raising=False)
        mp.setattr("jetlink.cli.output.is_interactive", lambda: False)
        mp.setenv("TZ", "UTC")
        live = _run(["--server", nats_single.url], time.time_ns, time.sleep)
        nats_single.reset()
    return embedded, live


STEPS = [s for s in SCRIPT if not s.startswith("wait ")]


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
