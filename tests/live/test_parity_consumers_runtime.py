"""Parity of the consumer runtime (priority groups, pause, reset): the same CLI invocations on
the embedded engine and on nats-server 2.15.1, outputs compared after masking (times, pin ids;
tests/live/test_parity.py's masks)."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest

from .parity import TARGETS, NoServer, mask_replicas, on_target, parity_env, step, target
from .servers import wait_until
from .test_parity import _mask_doc, _mask_text

pytestmark = pytest.mark.live

SCRIPT: list[str] = [
    "stream add S --subjects s.> --defaults",
    "pub s.a 'm{{Count}}' --count 5",
    # priority groups
    "consumer add S P --defaults --pinned-groups g1 --pinned-ttl 30s -j",
    "consumer add S O --defaults --overflow-groups g1 -j",
    "consumer add S R --defaults --prioritized-groups g1,g2 -j",
    "consumer add S X --defaults --overflow-groups g1 --pinned-groups g2",
    "consumer next S P",
    "consumer next S P --group g9",
    "consumer next S P --group g1 --min-pending 1",
    "consumer next S O --group g1 --pin-id abc",
    "consumer next S R --group g1 --priority 10",
    "consumer next S P --group g1 -j",
    "consumer next S P --group g1 -j",
    "consumer next S P --group g1 --pin-id notthepin",
    "consumer info S P -j",
    "consumer unpin S P g9 -f",
    "consumer unpin S P g1 -f -j",
    "consumer unpin S P g1 -f",  # nothing pinned any more: refused, as natscli's unpin
    "consumer unpin S O g1 -f",
    "consumer next S P --group g1 --count 2 -j",
    "consumer next S O --group g1 --min-pending 10 -j",
    "consumer next S O --group g1 --min-pending 4 --count 5 -j",
    "consumer next S R --group g2 --priority 3 --count 2 -j",
    # pause, resume
    "consumer add S C --defaults",
    "consumer resume S C -f",
    "consumer pause S C 2020-01-01 00:00:00 -f",
    "consumer pause S C 1h -f",
    "consumer next S C -j",
    "consumer resume S C -f",
    "consumer next S C -j",
    "consumer pause S NOPE 1h -f",
    # reset
    "consumer next S C --count 2 -j",
    "consumer reset S C -f -j",
    "consumer reset S C --sequence 4 -f -j",
    "consumer next S C -j",
    "consumer add S N --defaults --deliver new",
    "consumer reset S N --sequence 1 -f",
    "consumer add S Q --defaults --deliver 3",
    "consumer reset S Q --sequence 2 -f",
    "consumer reset S Q --sequence 3 -f -j",
    # no such consumer or stream: said at once (the server's RESET has no one to answer it)
    "consumer reset S NOPE -f",
    "consumer reset NOSTREAM X -f -j",
    # natscli's --max-pull-bytes and --sample, and edit's --backoff
    "consumer add S B --defaults --max-pull-bytes 1024 --sample 50 -j",
    "consumer edit S B --sample 0 --backoff linear --backoff-steps 3 -f -j",
    "consumer edit S B --backoff none --max-pull-bytes 2048 -f -j",
    # a name no stream can have: the server's 404 stream not found, said before asking
    "consumer info S.X C -j",
    "consumer info S.X C",
]

_PIN = re.compile(r"\b[0-9A-Za-z]{22}\b")


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<pin>" if k in ("Nats-Pin-Id", "pinned_client_id")
                    else "<volatile>" if k == "pinned_ts" and v != "0001-01-01T00:00:00Z"
                    else _mask(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _applied(cluster: Any, args: list[str]) -> None:
    """On the cluster, ``consumer add`` / ``pause`` / ``resume`` are answered once the meta
    leader has proposed the assignment (jetstream_cluster.go jsClusteredConsumerRequest); the
    consumer's own leader is elected, or applies the new config (processClusterUpdateConsumer,
    consumer.go updateConfig), after that. The next step's pull request goes to that leader:
    wait until its CONSUMER.INFO (the consumer leader answers it) shows the step applied."""
    verb, stream, name = args[1], args[2], args[3]

    def info() -> dict[str, Any]:
        return cluster.api(f"CONSUMER.INFO.{stream}.{name}")

    if verb == "add":
        wait_until(lambda: (info().get("cluster") or {}).get("leader"),
                   message=f"consumer {name}'s leader elected")
    elif verb == "pause" and args[4:5] == ["1h"]:
        wait_until(lambda: info().get("paused") is True,
                   message=f"consumer {name} paused on its leader")
    elif verb == "resume":
        wait_until(lambda: "error" not in info() and not info().get("paused"),
                   message=f"consumer {name} resumed on its leader")


def _run(prefix: list[str], where: str, cluster: Any = None) -> list[dict[str, Any]]:
    out = []
    for s in SCRIPT:
        args = shlex.split(s)
        if args[:2] == ["consumer", "pause"] and len(args) > 5 and args[4] == "2020-01-01":
            args[4:6] = ["2020-01-01 00:00:00"]
        rec = step(prefix, on_target(args, cluster is not None),
                   text=lambda t: _mask_text(t, where), out=lambda t: _PIN.sub("<pin>", t),
                   doc=lambda d: _mask(_mask_doc(d)))
        if cluster is not None and rec["status"] == 0 and args[0] == "consumer" and \
                args[1] in ("add", "pause", "resume"):
            _applied(cluster, args)
        out.append(rec)
    return out


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    with parity_env(tmp_path_factory, NoServer(), "prio"):
        data = tmp_path_factory.mktemp("prio-embedded") / "data"
        return _run(["--data-dir", str(data)], str(data))


@pytest.fixture(scope="module", params=TARGETS)
def both(request, embedded, tmp_path_factory):
    server = target(request)
    clustered = request.param == "cluster"
    with parity_env(tmp_path_factory, server, "prio"):
        live = _run(["--server", server.url], server.url, server if clustered else None)
    if clustered:
        return [mask_replicas(r) for r in embedded], [mask_replicas(r) for r in live]
    return embedded, live


_DUR = re.compile(r"\b\d+m\d+s\b|\b\d+s\b")
_ACK_FLOOR = re.compile(r"^( +Acknowledgment Floor: Consumer sequence: \d+ Stream sequence:) \d+$",
                        re.M)

# What differs on the cluster (R3 streams and consumers) on purpose: step -> reason.
CLUSTER_DIFFERENCES: dict[str, str] = {
    step: "a new R3 consumer with a start position reports an ack floor of stream sequence 0 "
          "until its first ack (its leader applies the replicated consumer state, "
          "consumer.go applyState); a single server and the engine report the start "
          "sequence - 1 (resetLocalStartingSeq)"
    for step in ("consumer add S N --defaults --deliver new",
                 "consumer add S Q --defaults --deliver 3")
}


@pytest.mark.parametrize("i", range(len(SCRIPT)), ids=[s[:60] for s in SCRIPT])
def test_parity_consumers_runtime(request, both, i):
    embedded, live = both
    if request.node.callspec.params["both"] == "cluster" and SCRIPT[i] in CLUSTER_DIFFERENCES:
        e, lv = dict(embedded[i]), dict(live[i])
        assert e["stdout"] != lv["stdout"], f"{SCRIPT[i]}: listed as a difference but equal now"
        e["stdout"] = _ACK_FLOOR.sub(r"\1 <floor>", e["stdout"])
        lv["stdout"] = _ACK_FLOOR.sub(r"\1 <floor>", lv["stdout"])
    else:
        e, lv = embedded[i], live[i]
    assert "exception" not in lv, (SCRIPT[i], lv)
    assert "exception" not in e, (SCRIPT[i], e)
    if "pause_remaining" in json.dumps(e.get("json")):  # remaining time moves on
        for rec in (e, lv):
            rec["json"] = {k: v for k, v in rec["json"].items() if k != "pause_remaining"}
    e["stdout"], lv["stdout"] = _DUR.sub("<d>", e["stdout"]), _DUR.sub("<d>", lv["stdout"])
    assert lv == e, SCRIPT[i]

