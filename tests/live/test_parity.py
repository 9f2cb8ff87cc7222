"""Parity: one list of CLI invocations, run on the embedded engine and on a live nats-server.

SCRIPT is run twice, in order, each time from an empty system: once on a fresh data directory
(the embedded engine, the default), once with ``--server URL`` on a clean nats-server started
by the ``live`` fixture. For every invocation the exit status, the human output (stdout and
stderr) and, for ``--json`` runs, the JSON document are compared after masking what is
volatile on any system: times, durations since, ids, server versions and names, the data
directory / server URL. What still differs is either a bug, or listed in DIFFERENCES with its
reason (the same table is in docs/live.md, "Working with a live NATS server").
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from helpers import runner

from jetlink.cli.main import app

pytestmark = pytest.mark.live

# Each step: the arguments (after the global options). {tmp} is a scratch directory.
SCRIPT: list[str] = [
    # -- streams: create, read, list
    "stream add ORDERS --subjects orders.> --defaults -j",
    "stream add ORDERS --subjects orders.> --defaults",
    "stream add EVENTS --subjects events.* --storage memory --max-msgs 5 --defaults",
    "stream add DIRECT --subjects direct.> --allow-direct --max-msgs-per-subject 3 --defaults",
    "stream add BAD.NAME --subjects bad.> --defaults",
    "stream add OVERLAP --subjects orders.eu --defaults -j",
    "stream add OVERLAP --subjects orders.eu --defaults",  # the overlap named on both
    "stream add BADSUBJ --subjects a..b --defaults",  # the subject named, nothing sent
    "stream add NOSUBJ --defaults -j",
    "stream add LIMITED --subjects lim.> --max-msgs 2 --discard new --defaults -j",
    "stream add TTL --subjects ttl.> --max-age 1h --dupe-window 10m --defaults -j",
    "stream add SEALED --subjects sealed.> --defaults",
    "stream add SMALL --subjects small.> --max-msg-size 40 --defaults -j",
    "stream ls",
    "stream ls -j",
    "stream ls --names",
    "stream info ORDERS -j",
    "stream info ORDERS",
    "stream info MISSING",
    "stream info MISSING -j",
    # -- publishing
    "pub orders.eu.1 hello",
    # headers read as the server's parseInt64 does (int64, wrapping past 64 bits)
    "pub orders.eu.1 x -H Nats-Expected-Last-Sequence:" + "9" * 5000,
    "pub orders.eu.1 x -H Nats-Expected-Last-Sequence:18446744073709551617",
    "pub orders.eu.1 x -H Nats-Expected-Last-Subject-Sequence:" + "9" * 29,
    "pub orders.eu.1 x -H Nats-TTL:" + "9" * 5000,
    "pub orders.eu.1 hello -j",
    "pub orders.us.2 world -H Kind:new -j",
    "pub orders.eu.{{Count}} 'n {{Count}}' --count 20",
    "pub orders.eu.x body --count 3 -j",
    "pub nowhere.1 lost",
    "pub nowhere.1 lost -j",
    "pub events.a one",
    # the size is checked first, before the header rules (an oversized duplicate too)
    "pub small.a v -H Nats-Msg-Id:zz -j",
    "pub small.a 0123456789012345678901234567890123456789 -H Nats-Msg-Id:zz -j",
    "pub small.a 0123456789012345678901234567890123456789 -H Nats-Expected-Last-Sequence:9 -j",
    "pub small.a 0123456789012345678901234567890123456789 -H Nats-TTL:1h -j",
    "pub small.a 0123456789012345678901234567890123456789 -H Nats-Expected-Stream:X -j",
    "pub events.b two",
    "pub lim.a 1 -j",
    "pub lim.a 2 -j",
    "pub lim.a 3 -j",
    "pub ttl.a dup -H Nats-Msg-Id:m1 -j",
    "pub ttl.a dup -H Nats-Msg-Id:m1 -j",
    "pub direct.k v1",
    "pub direct.k v2",
    "pub direct.k v3",
    "pub direct.k v4",
    "pub direct.j j1",
    "pub 'bad subject' x",
    "pub orders.* wild",
    # -- reading messages
    "stream get ORDERS 1",
    "stream get ORDERS 1 -j",
    "stream get ORDERS 999",
    "stream info '' -j",  # (no stream has an empty name: not found, on either side)
    "consumer info ORDERS '' -j",
    "stream get ORDERS --last-for orders.us.2 -j",
    "stream get DIRECT --last-for direct.k -j",
    "stream view ORDERS --count 3",
    "stream view ORDERS --count 2 -j",
    "stream view ORDERS --since 1h --count 1 -j",
    # natscli's JetStream subscription: what the stream stored, -T ends at its end
    "sub orders.> --all -T --raw",
    "sub orders.eu.1 --all -T -j",
    "sub orders.> --last -T",
    "sub orders.> --last-per-subject -T --subjects-only",
    "sub orders.> --start-sequence 20 -T --raw",
    "sub orders.> --stream ORDERS --new -T",
    "sub orders.> --stream MISSING --all -T",
    "sub nowhere.> --all -T",
    "stream add SUBWQ --subjects subwq.> --retention work --defaults -j",
    "pub subwq.a x1 -q",
    "pub subwq.b x2 -q",
    "sub subwq.b --last -T --raw",  # (a work-queue stream takes no consumer without acks)
    "sub subwq.> --last-per-subject -T --raw",
    "sub subwq.> --all -T --raw",
    "stream rm SUBWQ -f",
    "stream view ORDERS --subject orders.us.> -j",
    "stream view DIRECT -j",
    # a message's own Nats-Stream / Nats-Subject... (a RePublish wrote them) read through a
    # direct get, where the server appends its own of the same names
    "stream add RPDEST --subjects rpd.> --allow-direct --defaults -j",
    "stream add RPSRC --subjects rps.> --republish-source rps.> --republish-destination rpd.> "
    "--defaults -j",
    "pub rps.a hi",
    "stream view RPDEST -j",
    # (removed again: the stored size of a RePublish'd message varies with its
    # Nats-Time-Stamp, whose RFC3339Nano text drops trailing zeros, and the report shows it)
    "stream rm RPSRC -f",
    "stream rm RPDEST -f",
    "stream subjects ORDERS",
    "stream subjects ORDERS -j",
    "stream subjects ORDERS orders.us.> -j",
    "stream subjects DIRECT -j",
    "stream info ORDERS --json",
    "stream info DIRECT -j",
    "stream info LIMITED -j",
    "stream report",
    "stream report -j",
    # -- changing streams
    "stream edit ORDERS --description orders -f -j",
    "stream edit ORDERS --max-msgs 1000 -f",
    "stream edit ORDERS --storage memory -f",
    "stream edit MISSING --max-msgs 1 -f",
    "stream rmm ORDERS 2 -f",
    "stream rmm ORDERS 2 -f",
    "stream rmm ORDERS 2 -f -j",
    "stream purge ORDERS --subject orders.us.> -f -j",
    "stream purge ORDERS --keep 5 -f",
    "stream info ORDERS -j",
    "stream copy ORDERS ORDERS_COPY --subjects copy.> -j",
    "stream seal LIMITED -f -j",
    "stream purge LIMITED -f -j",  # refused: the server's answer keeps its "purged": 0
    "pub lim.b after-seal",
    "stream rm EVENTS -f",
    "stream rm EVENTS -f",
    "stream rm EVENTS -f -j",
    "stream rm ORDERS",
    # -- mirrors and sources
    "stream add BACKUP --mirror ORDERS --defaults -j",
    "stream add ARCHIVE --source ORDERS --subjects archive.> --defaults -j",
    "stream add MIRROR2 --mirror ORDERS --subjects x.> --defaults",
    # a cycle the server's walk lets through (a stream without subjects of its own behind a
    # filtered source): created on both, with jetlink's warning; removed before any message
    "stream add LOOPA --source '{\"name\": \"LOOPB\", \"filter_subject\": \"loopb.1\"}' "
    "--defaults -j",
    "stream add LOOPB --subjects loopb.> --source LOOPA --defaults",
    "stream rm LOOPB -f",
    "stream rm LOOPA -f",
    # -- consumers
    "consumer add ORDERS C1 --pull --defaults -j",
    "consumer add ORDERS C2 --filter orders.eu.> --ack explicit --deliver all --pull --defaults",
    "consumer add MISSING C1 --defaults -j",
    "consumer add ORDERS BAD.NAME --defaults",
    "consumer ls ORDERS",
    "consumer ls ORDERS -j",
    "consumer info ORDERS C1 -j",
    "consumer info ORDERS C1",
    "consumer info ORDERS NOPE",
    "consumer next ORDERS C1 -j",
    "consumer next ORDERS C1 --count 3 -j",
    "consumer next ORDERS C2",
    "consumer info ORDERS C1 -j",
    "consumer edit ORDERS C1 --description first -f -j",
    "consumer rm ORDERS C2 -f",
    "consumer rm ORDERS C2 -f -j",
    # -- key-value
    "kv add CONFIG --history 5 -j",
    "kv add CONFIG --history 5",
    "kv add bad.bucket",
    "kv add BIG --history 100",
    "kv ls",
    "kv ls -j",
    "kv info CONFIG -j",
    "kv info CONFIG",
    "kv edit CONFIG --history 6 -j",
    "kv edit CONFIG --description settings",
    "kv put CONFIG a 1",
    "kv put CONFIG a 2 -j",
    "kv put CONFIG b.c 3",
    "kv get CONFIG a",
    "kv get CONFIG a -j",
    "kv get CONFIG a --raw",
    "kv get CONFIG zz",
    "kv get CONFIG zz -j",
    "kv create CONFIG a 9",
    "kv create CONFIG new 1 -j",
    "kv update CONFIG a 3 999",
    "kv update CONFIG a 3 2 -j",
    "kv del CONFIG b.c -f",
    "kv get CONFIG b.c",
    "kv history CONFIG a",
    "kv history CONFIG a -j",
    "kv keys CONFIG",
    "kv keys CONFIG -j",
    "kv revert CONFIG a 1 -f -j",
    "kv purge CONFIG a -f",
    "kv keys CONFIG -j",
    "kv watch CONFIG --count 1 -j",
    "kv get MISSING a",
    "kv rm CONFIG -f",
    "kv ls --names",
]

# Masks: (pattern, replacement), applied to human output and to JSON text alike.
MASKS: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"), "<time>"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?( [+-]\d{4} UTC)?"), "<time>"),
    (re.compile(r"\(\d+(\.\d+)?(ns|µs|us|ms|s|m|h)[^)]*\)"), "(<dur>)"),
    (re.compile(r"\b\d+(\.\d+)?(ns|µs|us|ms|s)( ago)\b"), "<dur> ago"),
    (re.compile(r"\b(\d+[dhms])+(\d+(\.\d+)?(ms|s))? ago\b"), "<dur> ago"),
    (re.compile(r'"_nats\.ver": "[^"]*"'), '"_nats.ver": "<ver>"'),
    (re.compile(r"^\[\d\d:\d\d:\d\d\]", re.M), "[<clock>]"),
    # where a missing origin was looked for: the engine's cluster, a server without a domain
    (re.compile(r'in cluster "local"|on this server \(it has no JetStream domain\)'),
     "in <here>"),
    # the cluster block of info outputs: the engine's cluster name, a server's name
    (re.compile(r"\n\nCluster Information:\n\n( +Name:.*\n)?( +(Raft|Cluster) Group:.*\n)?"
                r"( +Leader:.*\n)?( +Replica:.*\n)*"), "\n"),
    # a stream report's Replicas cell on a cluster (natscli's renderCluster: the leader
    # marked *, its replicas): the replica count the engine and a single server show
    (re.compile(r"(?<=│ )(?:[\w-]+!?, )*[\w-]+\*(?:, [\w-]+!?)*(?= *│\n)"),
     lambda m: "1".ljust(len(m.group()))),
]

# JSON keys whose values are volatile (times, leaders, ids): replaced by "<volatile>".
VOLATILE_KEYS = {"created", "ts", "time", "first_ts", "last_ts", "last_active", "leader",
                 "name_hash", "_nats.ver", "_nats.level", "_nats.req.level"}
# Keys left out on both sides: the cluster a stream or consumer lives in (the embedded
# engine's cluster name; a single live server has none).
DROPPED_KEYS = {"cluster"}
_ACK_TS = re.compile(r"^(\$JS\.ACK\.(?:[^.]+\.){5})\d+(\.\d+)$")


def _mask_doc(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in VOLATILE_KEYS else _mask_doc(v))
                for k, v in value.items() if k not in DROPPED_KEYS}
    if isinstance(value, str) and value.startswith("$JS.ACK."):
        return _ACK_TS.sub(r"\1<ts>\2", value)
    if isinstance(value, str) and MASKS[0][0].fullmatch(value):
        return "<time>"  # a time in a header value (Nats-Time-Stamp)
    if isinstance(value, list):
        return [_mask_doc(v) for v in value]
    return value


def _mask_text(text: str, where: str) -> str:
    text = text.replace(where, "<where>")
    for pat, rep in MASKS:
        text = pat.sub(rep, text)
    return text


def _run_script(prefix: list[str], where: str, tmp: Any) -> list[dict[str, Any]]:
    import shlex

    out = []
    for step in SCRIPT:
        args = [a.replace("{tmp}", str(tmp)) for a in shlex.split(step)]
        res = runner.invoke(app, [*prefix, *args], prog_name="jetlink")
        rec: dict[str, Any] = {"status": res.exit_code,
                               "stdout": _mask_text(res.stdout, where),
                               "stderr": _mask_text(res.stderr, where)}
        if "-j" in args or "--json" in args:
            try:
                rec["json"] = _mask_doc(json.loads(res.stdout))
                rec["stdout"] = ""
            except ValueError:
                rec["json"] = None
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            rec["exception"] = repr(res.exception)
        out.append(rec)
    return out


@pytest.fixture(scope="module", params=["single", "cluster"])
def both(request, tmp_path_factory):
    """The script's records on the embedded engine and on a live target: a single server,
    and a three-node cluster (R1 streams placed by its meta leader)."""
    from live.parity import parity_env

    server = request.getfixturevalue("nats_single" if request.param == "single"
                                     else "nats_cluster3")
    with parity_env(tmp_path_factory, server):
        embedded_tmp = tmp_path_factory.mktemp("parity-embedded")
        data = embedded_tmp / "data"
        embedded = _run_script(["--data-dir", str(data)], str(data), embedded_tmp)
        live_tmp = tmp_path_factory.mktemp("parity-live")
        # a 3-node cluster's meta leader can take over 5 s (the default) to answer a stream
        # create while the suite's workers share two cores: the waits, not the answers, grow
        live = _run_script(["--server", server.url, "--timeout", "30s"], server.url, live_tmp)
    return embedded, live


# Differences that remain on purpose: step text -> (part, reason). docs/live.md lists them.
DIFFERENCES: dict[str, tuple[str, str]] = {}


def test_script_is_long_enough():
    assert len(SCRIPT) >= 80


@pytest.mark.parametrize("i", range(len(SCRIPT)), ids=[s[:60] for s in SCRIPT])
def test_parity(both, i):
    embedded, live = both
    e, lv = embedded[i], live[i]
    step = SCRIPT[i]
    assert "exception" not in lv, (step, lv)
    assert "exception" not in e, (step, e)
    if step in DIFFERENCES:
        part, _reason = DIFFERENCES[step]
        assert e.get(part) != lv.get(part), f"{step}: listed as a difference but equal now"
        e = {k: v for k, v in e.items() if k != part}
        lv = {k: v for k, v in lv.items() if k != part}
    assert lv == e, step
