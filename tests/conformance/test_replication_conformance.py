"""Mirrors, sources and RePublish: jetlink's replication layer against a real nats-server.

The neutral scenario language and both executors of ``test_publish_conformance.py`` are reused
(imported, then extended here). On the server, replication is asynchronous: after each
operation that should replicate, a ``sync`` op polls STREAM.INFO (up to ``SYNC_TIMEOUT``) until
the target reaches the state the scenario expects; a ``settle`` op (stalls, messages that must
NOT arrive) waits a bounded time. On jetlink both call
``jetlink.core.replication.pump_until_idle(datadir, clock)`` (docs/replication.md) at exactly
those points and nowhere else. The final observable states are compared: state counters,
stored messages (seq, subject, headers including Nats-Stream-Source, data), StreamSourceInfo
(name, lag, seq, error, filter, transforms) and what a core subscription received.

Operations added to the publish language (every op may carry ``stream``; jetlink routes a
stream op to the cluster the stream was created in, a ``pub`` / ``sub`` to ``cluster``):

==================  ==========================================================================
``create``         ``cluster`` (jetlink only; default ``local``): where jetlink creates the
                   stream. The server has one account and ignores it (see "External" below).
``sync``           ``stream``, ``want`` (state fields): server: poll until the state matches
                   ``want`` (it is also the op's ``expect``); jetlink: pump until idle. Result:
                   the state counters.
``settle``         ``seconds``: server: wait (a stall, or nothing more must come); jetlink:
                   pump until idle. Result ``None``.
``src_info``       ``stream``: ``{"mirror": info | None, "sources": [info, ...]}`` with each
                   StreamSourceInfo's ``name, lag, seq`` (2.15.1: a source's highest origin
                   sequence stored; omitted when 0), ``error, filter_subject,
                   subject_transforms``. ``active`` (a duration) and ``external`` are left out.
``info``           As in the publish file; ``ts_bytes=True`` (also on ``sync``) subtracts from
                   ``bytes`` the length of each stored Nats-Time-Stamp value (its text is 20
                   to 30 bytes, as Go trims trailing zeros of the nanoseconds).
``msgs``           As in the publish file, with normalised headers (below); ``by_origin=True``
                   groups them by the origin named in Nats-Stream-Source (``""``: local
                   publishes) as ``[subject, headers, data]`` in stored order: the per-origin
                   order of several sources, whose interleaving the server leaves undefined.
``same_times``     ``stream``, ``other``: for each sequence stored in both, whether the two
                   timestamps are equal: ``{"equal": [seqs], "different": [seqs]}``.
``sub``            ``subject``: open a core subscription (kept until the scenario ends).
``received``       ``subject``, ``n``: the messages that subscription got (up to ``n``, then a
                   short wait proves no more came): ``[{"subject", "headers", "data"}]``.
==================  ==========================================================================

Normalised headers, the same function on both sides:
- ``Nats-Stream-Source``: nats-server 2.15 appends a sixth token, the origin's *identity*
  (``getHash(created.UTC().Format(time.RFC3339Nano))``, server/stream.go ``identity()`` and
  ``genSourceHeader``). Each side replaces it by ``<ident O>`` when it is the hash of the
  creation time of a stream ``O`` that side created; anything else is left as is.
- ``Nats-Time-Stamp`` (RePublish): replaced by ``<time of R n>`` when it is the RFC3339Nano
  time of message ``n`` (``Nats-Sequence``) of stream ``R`` (``Nats-Stream``) on that side,
  else kept raw (so it differs); its format is checked by ``TIME_RE`` as well.

External origins: a few scenarios create the origin in another jetlink cluster (``east``) and
point the target at it with ``external.api = "$JS.east.API"``. The server runs the origin in
the same account: its runner drops ``external`` from the config (a same-account external
prefix does not replicate on a single nats-server 2.15.1, checked: ``active`` stays -1), and
since the real server names an external origin ``<name>:<getHash(api)>`` in the
Nats-Stream-Source header (``StreamSource.composeIName``), the server runner writes that name
into the headers of messages sourced through such an agreement, and adds the longer name's
bytes to ``state.bytes`` (``_alias_bytes``). ``external`` itself is not compared in
``src_info``.

An op's ``expect`` is what the *server* must answer (a partial match, as in the publish file).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from test_publish_conformance import (  # the shared scenario language and executors
    ACK,
    ERR,
    MS,
    NO_RESPONDERS,
    NOT_FOUND,
    OK,
    SEC,
    STATE,
    JetlinkRunner,
    ServerRunner,
    _json_of,
    _op,
    decode_data,
    get,
    info,
    jetlink_modules,
    matches,
    norm_state,
    purge,
    rmm,
    sleep,
    strip,
    update,
)
from test_publish_conformance import create as _create
from test_publish_conformance import msgs as _msgs
from test_publish_conformance import pub as _pub

pytestmark = pytest.mark.conformance

SYNC_TIMEOUT = 60.0  # seconds a ``sync`` waits at most for the server to reach the state
RECEIVE_TIMEOUT = 60.0  # seconds to wait at most for each expected core message
QUIET = 0.15  # seconds of silence proving that no further core message comes

STREAM_SOURCE = "Nats-Stream-Source"
MSG_ID = "Nats-Msg-Id"
EXP_STREAM = "Nats-Expected-Stream"
EXP_LAST_SEQ = "Nats-Expected-Last-Sequence"
EXP_LAST_SUBJ_SEQ = "Nats-Expected-Last-Subject-Sequence"
TTL = "Nats-TTL"
EXTERNAL_EAST = {"api": "$JS.east.API"}

TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$")
_HASH_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def go_hash(text: str) -> str:
    """nats-server's ``getHash``: sha256, the first 8 bytes mapped to base-62 digits."""
    digest = hashlib.sha256(text.encode()).digest()
    return "".join(_HASH_DIGITS[b % 62] for b in digest[:8])


# --------------------------------------------------------------------------------------------
# Scenario language (extends the publish file's)
# --------------------------------------------------------------------------------------------


class Scenario:
    def __init__(self, id: str, ops: tuple[dict[str, Any], ...]) -> None:
        self.id = id
        self.ops = ops

    @property
    def wait_seconds(self) -> float:
        return sum(op.get("seconds", 0) for op in self.ops if op["op"] in ("sleep", "settle"))


def sc(id: str, *ops: dict[str, Any]) -> Scenario:
    return Scenario(id, tuple(ops))


def create(config: dict[str, Any], expect: Any = None, cluster: str | None = None
           ) -> dict[str, Any]:
    op = _create(config, expect)
    if cluster:
        op["cluster"] = cluster
    return op


def pub(subject: str, data: str = "", headers: dict[str, str] | None = None,
        expect: Any = None, cluster: str | None = None) -> dict[str, Any]:
    op = _pub(subject, data, headers, expect)
    if cluster:
        op["cluster"] = cluster
    return op


def msgs(stream: str, expect: Any = None, by_origin: bool = False) -> dict[str, Any]:
    op = _msgs(expect, stream=stream)
    if by_origin:
        op["by_origin"] = True
    return op


def sync(stream: str, **want: Any) -> dict[str, Any]:
    """Wait for replication into ``stream`` until its state has ``want`` (also the expect)."""
    return {"op": "sync", "stream": stream, "want": want, "expect": want}


def settle(seconds: float = 0.3) -> dict[str, Any]:
    return {"op": "settle", "seconds": seconds}


_SAME = object()


def src_info(stream: str, expect: Any = None, jetlink: Any = _SAME) -> dict[str, Any]:
    """``jetlink=`` marks a documented divergence: the server answers ``expect``, jetlink this."""
    op = _op("src_info", expect, stream=stream)
    if jetlink is not _SAME:
        op["jetlink"] = jetlink
    return op


def same_times(stream: str, other: str, expect: Any = None) -> dict[str, Any]:
    return _op("same_times", expect, stream=stream, other=other)


def sub(subject: str, cluster: str | None = None) -> dict[str, Any]:
    op = {"op": "sub", "subject": subject}
    if cluster:
        op["cluster"] = cluster
    return op


def received(subject: str, n: int, expect: Any = None) -> dict[str, Any]:
    return _op("received", expect, subject=subject, n=n)


def TIME_OF(stream: str, seq: int) -> dict[str, Any]:
    """A config value: the RFC3339Nano timestamp of message ``seq`` of ``stream``."""
    return {"$time_of": [stream, seq]}


def SRC(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, **kw}


def TR(src: str, dest: str) -> dict[str, str]:
    return {"src": src, "dest": dest}


def MSG(seq: int, subject: str, data: str, headers: dict[str, list[str]] | None = None
        ) -> list[Any]:
    return [seq, subject, headers or {}, data]


def HS(origin: str, seq: int, subject: str, filters: str = ">", dests: str = ">",
       ident: str | None = None) -> dict[str, list[str]]:
    """The normalised Nats-Stream-Source header of a sourced message."""
    base = origin.split(":")[0]
    return {STREAM_SOURCE: [f"{origin} {seq} {filters} {dests} {subject} "
                            f"<ident {ident or base}>"]}


def RP(stream: str, subject: str, seq: int, last: int) -> dict[str, list[str]]:
    """The normalised RePublish headers of message ``seq`` of ``stream``."""
    return {"Nats-Stream": [stream], "Nats-Subject": [subject], "Nats-Sequence": [str(seq)],
            "Nats-Time-Stamp": [f"<time of {stream} {seq}>"], "Nats-Last-Sequence": [str(last)]}


O = {"name": "O", "subjects": ["o.>"]}  # noqa: E741 - named after the stream it configures
A = {"name": "A", "subjects": ["a.>"]}
B = {"name": "B", "subjects": ["b.>"]}


def origin(**kw: Any) -> dict[str, Any]:
    return {**O, **kw}


def mirror(name: str = "M", of: str = "O", **kw: Any) -> dict[str, Any]:
    src = {k: v for k, v in kw.items() if k in ("opt_start_seq", "opt_start_time",
                                               "filter_subject", "subject_transforms",
                                               "external")}
    rest = {k: v for k, v in kw.items() if k not in src}
    return {"name": name, "mirror": {"name": of, **src}, **rest}


def sourced(name: str, *sources: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"name": name, "sources": list(sources), **kw}



# --------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------

THREE_TRANSFORMS = ("o.a.*\fo.b\fo.c.>", "x.{{wildcard(1)}}\fy.b\f>")
EXTERNAL_O = f"O:{go_hash(EXTERNAL_EAST['api'])}"  # the server's name for an external origin

SCENARIOS: list[Scenario] = [
    # ---- Mirrors -------------------------------------------------------------------------
    sc("mirror/copies-seq-time-and-headers-minus-expected",
       create(O),
       pub("o.a", "1", {MSG_ID: "m1", EXP_STREAM: "O", "Foo": "bar"}),
       pub("o.b", "2"),
       pub("o.a", "3", {EXP_LAST_SEQ: "2"}),
       pub("o.c", "4", {EXP_LAST_SUBJ_SEQ: "0", "X-Keep": "yes"}),
       create(mirror()),
       sync("M", messages=4, last_seq=4),
       # Nats-Expected-* are dropped; a block left empty is no header at all (bytes 208).
       msgs("M", expect=[MSG(1, "o.a", "1", {MSG_ID: ["m1"], "Foo": ["bar"]}),
                         MSG(2, "o.b", "2"), MSG(3, "o.a", "3"),
                         MSG(4, "o.c", "4", {"X-Keep": ["yes"]})]),
       same_times("M", "O", expect={"equal": [1, 2, 3, 4], "different": []}),
       info(stream="M", expect=STATE(messages=4, bytes=208, num_subjects=3)),
       info(stream="O", expect=STATE(messages=4, bytes=321)),
       src_info("M", expect={"mirror": {"name": "O", "lag": 0}, "sources": []})),
    sc("mirror/created-first-follows-publishes",
       create(O), create(mirror()),
       pub("o.a", "1"), pub("o.b", "2"),
       sync("M", messages=2),
       pub("o.a", "3", {"H": "v"}),
       sync("M", messages=3),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(2, "o.b", "2"), MSG(3, "o.a", "3", {"H": ["v"]})]),
       src_info("M", expect={"mirror": {"name": "O", "lag": 0}, "sources": []})),
    sc("mirror/filter-subject",
       create(O),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.a", "3"), pub("o.c", "4"), pub("o.a", "5"),
       create(mirror(filter_subject="o.a")),
       sync("M", messages=3),
       # Filtered-out origin sequences are gaps of the mirror.
       info(stream="M", deleted=True,
            expect=STATE(first_seq=1, last_seq=5, num_deleted=2, deleted=[2, 4])),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(3, "o.a", "3"), MSG(5, "o.a", "5")]),
       get(stream="M", seq=2, expect=NOT_FOUND),
       src_info("M", expect={"mirror": {"name": "O", "lag": 0, "filter_subject": "o.a"}})),
    sc("mirror/subject-transform",
       create(O),
       pub("o.a", "1"), pub("o.b.x", "2"), pub("o.c", "3"),
       create(mirror(subject_transforms=[TR("o.*", "m.{{wildcard(1)}}")])),
       sync("M", messages=2),
       info(stream="M", deleted=True, expect=STATE(last_seq=3, deleted=[2])),
       msgs("M", expect=[MSG(1, "m.a", "1"), MSG(3, "m.c", "3")]),
       src_info("M", expect={"mirror": {"name": "O", "lag": 0, "subject_transforms": [
           {"src": "o.*", "dest": "m.{{wildcard(1)}}"}]}})),
    sc("mirror/several-transforms",
       create(O),
       pub("o.a", "1"), pub("o.b.x", "2"), pub("o.c", "3"), pub("o.b.y", "4"),
       create(mirror(subject_transforms=[TR("o.a", "first.a"), TR("o.b.*", "second.$1")])),
       sync("M", messages=3),
       info(stream="M", deleted=True, expect=STATE(last_seq=4, deleted=[3])),
       msgs("M", expect=[MSG(1, "first.a", "1"), MSG(2, "second.x", "2"),
                         MSG(4, "second.y", "4")]),
       src_info("M")),
    sc("mirror/opt-start-seq",
       create(O),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.a", "3"), pub("o.b", "4"), pub("o.c", "5"),
       create(mirror(opt_start_seq=3)),
       sync("M", messages=3),
       info(stream="M", deleted=True, expect=STATE(first_seq=3, last_seq=5, deleted=[])),
       msgs("M", expect=[MSG(3, "o.a", "3"), MSG(4, "o.b", "4"), MSG(5, "o.c", "5")]),
       get(stream="M", seq=2, expect=NOT_FOUND),
       pub("o.d", "6"),
       sync("M", messages=4),
       info(stream="M", expect=STATE(first_seq=3, last_seq=6))),
    sc("mirror/opt-start-seq-past-the-end",
       create(O),
       pub("o.a", "1"), pub("o.b", "2"),
       create(mirror(opt_start_seq=5)),
       settle(),
       info(stream="M", expect=STATE(messages=0, first_seq=5, last_seq=4)),
       pub("o.a", "3"), pub("o.a", "4"), pub("o.a", "5"), pub("o.a", "6"),
       sync("M", messages=2),
       info(stream="M", deleted=True, expect=STATE(first_seq=5, last_seq=6, deleted=[])),
       msgs("M", expect=[MSG(5, "o.a", "5"), MSG(6, "o.a", "6")])),
    sc("mirror/opt-start-time",
       create(O),
       pub("o.a", "1"), sleep(0.01), pub("o.b", "2"), sleep(0.01),
       pub("o.a", "3"), sleep(0.01), pub("o.c", "4"),
       create(mirror(opt_start_time=TIME_OF("O", 3))),
       sync("M", messages=2),
       info(stream="M", deleted=True, expect=STATE(first_seq=3, last_seq=4, deleted=[])),
       msgs("M", expect=[MSG(3, "o.a", "3"), MSG(4, "o.c", "4")])),
    sc("mirror/origin-gaps-from-deletes",
       create(O),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.a", "3"), pub("o.b", "4"), pub("o.c", "5"),
       rmm(2, stream="O"), rmm(4, stream="O"),
       create(mirror()),
       sync("M", messages=3, last_seq=5),
       info(stream="M", deleted=True, expect=STATE(num_deleted=2, deleted=[2, 4])),
       get(stream="M", seq=2, expect=NOT_FOUND), get(stream="M", seq=4, expect=NOT_FOUND),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(3, "o.a", "3"), MSG(5, "o.c", "5")])),
    sc("mirror/origin-purged-head-and-per-subject-limit",
       create(origin(max_msgs_per_subject=1)),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.c", "3"), pub("o.b", "4"), pub("o.d", "5"),
       purge(stream="O", seq=2),
       info(stream="O", deleted=True, expect=STATE(first_seq=3, last_seq=5, deleted=[])),
       create(mirror()),
       sync("M", last_seq=5),
       info(stream="M", deleted=True,
            expect=STATE(messages=3, first_seq=3, last_seq=5, deleted=[])),
       msgs("M", expect=[MSG(3, "o.c", "3"), MSG(4, "o.b", "4"), MSG(5, "o.d", "5")])),
    sc("mirror/origin-gap-from-ttl-expiry",
       create(origin(allow_msg_ttl=True)),
       pub("o.a", "1"), pub("o.b", "2", {TTL: "1s"}), pub("o.c", "3"),
       sleep(1.2),
       info(stream="O", deleted=True, expect=STATE(messages=2, deleted=[2])),
       create(mirror()),
       sync("M", messages=2, last_seq=3),
       info(stream="M", deleted=True, expect=STATE(num_deleted=1, deleted=[2])),
       get(stream="M", seq=2, expect=NOT_FOUND),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(3, "o.c", "3")])),
    sc("mirror/origin-deletes-not-replicated",
       create(O), create(mirror()),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.a", "3"),
       sync("M", messages=3),
       rmm(2, stream="O"), purge(stream="O", subject="o.a", expect={"purged": 2}),
       pub("o.c", "4"),
       sync("M", messages=4),
       info(stream="O", expect=STATE(messages=1, first_seq=4)),
       info(stream="M", expect=STATE(messages=4, first_seq=1, last_seq=4, num_deleted=0)),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(2, "o.b", "2"), MSG(3, "o.a", "3"),
                         MSG(4, "o.c", "4")])),
    sc("mirror/client-writes-refused",
       create(O), create(mirror()),
       create({"name": "M2", "mirror": {"name": "O"}, "subjects": ["m.>"]},
              expect=ERR(400, 10034, "stream mirrors can not contain subjects")),
       update({"name": "M", "mirror": {"name": "O"}, "subjects": ["m.>"]},
              expect=ERR(400, 10034, "stream mirrors can not contain subjects")),
       pub("m.x", "1", expect=NO_RESPONDERS),
       pub("o.a", "1", {EXP_STREAM: "M"}, expect=ERR(400, 10060, "expected stream does not match")),
       sync("M", messages=0),
       info(stream="M", expect=STATE(messages=0, last_seq=0))),
    sc("mirror/configuration-can-not-change",
       create(O), create(A), create(mirror()),
       update(mirror(opt_start_seq=2),
              expect=ERR(400, 10055, "stream mirror configuration can not be updated")),
       update(mirror(of="A"),
              expect=ERR(400, 10055, "stream mirror configuration can not be updated")),
       update(mirror(filter_subject="o.a"),
              expect=ERR(400, 10055, "stream mirror configuration can not be updated")),
       info(stream="M"), src_info("M")),
    sc("mirror/turned-into-a-sourced-stream",
       create(O), create(mirror()),
       pub("o.a", "1"), pub("o.b", "2"),
       sync("M", messages=2),
       update({"name": "M", "sources": [{"name": "O"}]}, expect=OK),
       pub("o.c", "3"),
       # Mirrored messages carry no Nats-Stream-Source: the new source starts at O's first.
       sync("M", last_seq=5),
       settle(0.2),
       info(stream="M", expect=STATE(messages=5, last_seq=5)),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(2, "o.b", "2"),
                         MSG(3, "o.a", "1", HS("O", 1, "o.a")),
                         MSG(4, "o.b", "2", HS("O", 2, "o.b")),
                         MSG(5, "o.c", "3", HS("O", 3, "o.c"))]),
       src_info("M", expect={"mirror": None, "sources": [{"name": "O", "lag": 0, "seq": 3}]})),
    sc("mirror/delete-in-mirror",
       create(O), create(mirror()),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.a", "3"),
       sync("M", messages=3),
       rmm(2, stream="M", expect=OK),
       pub("o.c", "4"),
       sync("M", messages=3, last_seq=4),
       info(stream="M", deleted=True, expect=STATE(deleted=[2])),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(3, "o.a", "3"), MSG(4, "o.c", "4")])),
    sc("mirror/of-a-mirror",
       create(O), create(mirror("M1")), create(mirror("M2", of="M1")),
       pub("o.a", "1", {"K": "v"}), pub("o.b", "2"), pub("o.a", "3"),
       sync("M1", messages=3), sync("M2", messages=3),
       rmm(2, stream="M1"),
       pub("o.c", "4"),
       sync("M2", messages=4),
       info(stream="M2", deleted=True, expect=STATE(first_seq=1, last_seq=4, deleted=[])),
       msgs("M2", expect=[MSG(1, "o.a", "1", {"K": ["v"]}), MSG(2, "o.b", "2"),
                          MSG(3, "o.a", "3"), MSG(4, "o.c", "4")]),
       same_times("M2", "O", expect={"equal": [1, 2, 3, 4], "different": []}),
       src_info("M2", expect={"mirror": {"name": "M1", "lag": 0}, "sources": []})),
    sc("mirror/of-a-mirror-with-gaps",
       create(O),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.a", "3"), pub("o.b", "4"),
       create(mirror("M1")),
       sync("M1", messages=4),
       rmm(3, stream="M1"),
       create(mirror("M2", of="M1")),
       sync("M2", messages=3, last_seq=4),
       info(stream="M2", deleted=True, expect=STATE(deleted=[3])),
       get(stream="M2", seq=3, expect=NOT_FOUND),
       msgs("M2", expect=[MSG(1, "o.a", "1"), MSG(2, "o.b", "2"), MSG(4, "o.b", "4")])),
    sc("mirror/discard-new-drops",
       create(O), create(mirror(max_msgs=2, discard="new")),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.c", "3"), pub("o.d", "4"),
       sync("M", messages=2),
       settle(0.3),
       # nats-server 2.15.1 (stream.go processInboundMirrorMsg): a message the mirror's own
       # DiscardNew limit refuses is consumed and dropped; no error, lag 0 once caught up
       info(stream="M", expect=STATE(messages=2, last_seq=2)),
       src_info("M", expect={"mirror": {"name": "O", "lag": 0}, "sources": []}),
       pub("o.e", "5"),
       settle(0.2),
       info(stream="M", expect=STATE(messages=2, last_seq=2)),
       src_info("M", expect={"mirror": {"name": "O", "lag": 0}, "sources": []}),
       info(stream="O", expect=STATE(messages=5)),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(2, "o.b", "2")])),
    sc("mirror/discard-old-keeps-newest",
       create(O), create(mirror(max_msgs=2)),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.c", "3"), pub("o.d", "4"),
       sync("M", messages=2, last_seq=4),
       info(stream="M", expect=STATE(first_seq=3)),
       msgs("M", expect=[MSG(3, "o.c", "3"), MSG(4, "o.d", "4")]),
       src_info("M", expect={"mirror": {"name": "O", "lag": 0}, "sources": []})),
    sc("mirror/promote-by-update-then-publish",
       create(O), create(mirror()),
       pub("o.a", "1"), pub("o.b", "2"),
       sync("M", messages=2),
       update({"name": "M", "subjects": ["o.>"]},
              expect=ERR(400, 10065, "subjects overlap with an existing stream")),
       update({"name": "M", "subjects": ["m.>"]}, expect=OK),
       pub("m.x", "3", expect=ACK(3, stream="M")),
       pub("o.c", "4", expect=ACK(3, stream="O")),
       settle(0.2),
       info(stream="M", expect=STATE(messages=3, last_seq=3)),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(2, "o.b", "2"), MSG(3, "m.x", "3")]),
       src_info("M", expect={"mirror": None, "sources": []})),
    sc("mirror/external-origin",
       create(O, cluster="east"),
       pub("o.a", "1", {"K": "v"}, cluster="east"), pub("o.b", "2", cluster="east"),
       pub("o.a", "3", cluster="east"),
       rmm(2, stream="O"),
       create(mirror(external=EXTERNAL_EAST)),
       sync("M", messages=2, last_seq=3),
       pub("o.c", "4", cluster="east"),
       sync("M", messages=3, last_seq=4),
       info(stream="M", deleted=True, expect=STATE(deleted=[2])),
       msgs("M", expect=[MSG(1, "o.a", "1", {"K": ["v"]}), MSG(3, "o.a", "3"),
                         MSG(4, "o.c", "4")]),
       same_times("M", "O", expect={"equal": [1, 3, 4], "different": []}),
       src_info("M", expect={"mirror": {"name": "O", "lag": 0}, "sources": []})),
    sc("mirror/external-origin-with-filter",
       create(O, cluster="east"),
       pub("o.a", "1", cluster="east"), pub("o.b", "2", cluster="east"),
       pub("o.a", "3", cluster="east"),
       create(mirror(external=EXTERNAL_EAST, filter_subject="o.a")),
       sync("M", messages=2),
       info(stream="M", deleted=True, expect=STATE(last_seq=3, deleted=[2])),
       msgs("M", expect=[MSG(1, "o.a", "1"), MSG(3, "o.a", "3")])),

    # ---- Sources -------------------------------------------------------------------------
    sc("source/single-origin-header-and-local-publishes",
       create(O),
       create(sourced("S", SRC("O"), subjects=["s.>"])),
       pub("o.a", "1", {"Foo": "bar"}), pub("o.b", "2"),
       sync("S", messages=2),
       pub("s.x", "local", expect=ACK(3, stream="S")),
       pub("o.a", "3", {EXP_STREAM: "O", EXP_LAST_SEQ: "2"}),
       sync("S", messages=4),
       msgs("S", expect=[MSG(1, "o.a", "1", {"Foo": ["bar"], **HS("O", 1, "o.a")}),
                         MSG(2, "o.b", "2", HS("O", 2, "o.b")),
                         MSG(3, "s.x", "local"),
                         MSG(4, "o.a", "3", HS("O", 3, "o.a"))]),
       info(stream="S", expect=STATE(messages=4, bytes=324)),
       src_info("S", expect={"mirror": None, "sources": [{"name": "O", "lag": 0, "seq": 3}]})),
    sc("source/preloaded-origin-with-a-gap",
       create(O),
       pub("o.a", "1"), pub("o.b", "2", {MSG_ID: "x"}), pub("o.a", "3"),
       rmm(2, stream="O"),
       sleep(0.01),  # time passes before the copy: a sourced message gets its own timestamp
       create(sourced("S", SRC("O"))),
       sync("S", messages=2),
       # A sourced stream has no placeholders: the gap is simply absent.
       info(stream="S", deleted=True, expect=STATE(first_seq=1, last_seq=2, deleted=[])),
       msgs("S", expect=[MSG(1, "o.a", "1", HS("O", 1, "o.a")),
                         MSG(2, "o.a", "3", HS("O", 3, "o.a"))]),
       same_times("S", "O", expect={"equal": [], "different": [1]}),
       src_info("S", expect={"mirror": None, "sources": [{"name": "O", "lag": 0, "seq": 3}]})),
    sc("source/filter-subject",
       create(O),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.a.x", "3"), pub("o.a", "4"),
       create(sourced("S", SRC("O", filter_subject="o.a"))),
       sync("S", messages=2),
       msgs("S", expect=[MSG(1, "o.a", "1", HS("O", 1, "o.a", "o.a")),
                         MSG(2, "o.a", "4", HS("O", 4, "o.a", "o.a"))]),
       info(stream="S"),
       src_info("S", expect={"sources": [{"name": "O", "lag": 0, "seq": 4,
                                          "filter_subject": "o.a"}]})),
    sc("source/transforms-first-match-wins",
       create(O),
       pub("o.a.1", "1"), pub("o.b", "2"), pub("o.a.2", "3"), pub("o.c.1", "4"),
       create(sourced("S", SRC("O", subject_transforms=[TR("o.a.*", "x.{{wildcard(1)}}"),
                                                        TR("o.b", "y.b"),
                                                        TR("o.c.>", "")]))),
       sync("S", messages=4),
       # Several filters / destinations are joined with \f; an empty destination shows ">".
       msgs("S", expect=[MSG(1, "x.1", "1", HS("O", 1, "o.a.1", *THREE_TRANSFORMS)),
                         MSG(2, "y.b", "2", HS("O", 2, "o.b", *THREE_TRANSFORMS)),
                         MSG(3, "x.2", "3", HS("O", 3, "o.a.2", *THREE_TRANSFORMS)),
                         MSG(4, "o.c.1", "4", HS("O", 4, "o.c.1", *THREE_TRANSFORMS))]),
       info(stream="S", expect=STATE(messages=4, bytes=520)),
       src_info("S")),
    sc("source/partition-transform",
       create({"name": "ORDERS", "subjects": ["orders.>"]}),
       *[pub(f"orders.{i}.new", str(i)) for i in range(10)],
       pub("orders.1.old", "old"),
       create(sourced("ARCHIVE", SRC("ORDERS", subject_transforms=[
           TR("orders.*.new", "archive.{{wildcard(1)}}.{{partition(3,1)}}")]))),
       sync("ARCHIVE", messages=10),
       msgs("ARCHIVE", expect=[
           MSG(i + 1, f"archive.{i}.{p}", str(i),
               HS("ORDERS", i + 1, f"orders.{i}.new", "orders.*.new",
                  "archive.{{wildcard(1)}}.{{partition(3,1)}}"))
           for i, p in enumerate([0, 1, 1, 2, 1, 2, 2, 0, 1, 2])]),
       info(stream="ARCHIVE", expect=STATE(messages=10, bytes=1661))),
    sc("source/several-origins-per-origin-order",
       create(A), create(B),
       pub("a.1", "a1"), pub("b.1", "b1"), pub("a.2", "a2"), pub("b.2", "b2"), pub("a.3", "a3"),
       create(sourced("S", SRC("A"), SRC("B", subject_transforms=[TR("b.*", "bb.$1")]))),
       sync("S", messages=5),
       # The interleaving of two origins is left undefined by the server: compared per origin.
       msgs("S", by_origin=True, expect={
           "A": [["a.1", HS("A", 1, "a.1"), "a1"], ["a.2", HS("A", 2, "a.2"), "a2"],
                 ["a.3", HS("A", 3, "a.3"), "a3"]],
           "B": [["bb.1", HS("B", 1, "b.1", "b.*", "bb.$1"), "b1"],
                 ["bb.2", HS("B", 2, "b.2", "b.*", "bb.$1"), "b2"]]}),
       info(stream="S", expect=STATE(messages=5, bytes=479)),
       src_info("S", expect={"mirror": None, "sources": [
           {"name": "A", "lag": 0, "seq": 3},
           {"name": "B", "lag": 0, "seq": 2,
            "subject_transforms": [{"src": "b.*", "dest": "bb.$1"}]}]})),
    sc("source/several-origins-interleaved",
       create(A), create(B),
       create(sourced("S", SRC("A"), SRC("B"), subjects=["s.>"])),
       pub("a.1", "a1"), sync("S", messages=1),
       pub("b.1", "b1"), sync("S", messages=2),
       pub("s.1", "s1"),
       pub("a.2", "a2"), sync("S", messages=4),
       pub("b.2", "b2"), sync("S", messages=5),
       msgs("S", expect=[MSG(1, "a.1", "a1", HS("A", 1, "a.1")),
                         MSG(2, "b.1", "b1", HS("B", 1, "b.1")),
                         MSG(3, "s.1", "s1"),
                         MSG(4, "a.2", "a2", HS("A", 2, "a.2")),
                         MSG(5, "b.2", "b2", HS("B", 2, "b.2"))]),
       info(stream="S"),
       src_info("S", expect={"mirror": None, "sources": [{"name": "A", "lag": 0, "seq": 2},
                                                         {"name": "B", "lag": 0, "seq": 2}]})),
    sc("source/dedupe-msg-id-across-origins",
       create(A), create(B),
       create(sourced("S", SRC("A"), SRC("B"), subjects=["s.>"], duplicate_window=120 * SEC)),
       pub("a.1", "first", {MSG_ID: "k1"}), sync("S", messages=1),
       pub("b.1", "dup", {MSG_ID: "k1"}),
       pub("b.2", "other", {MSG_ID: "k2"}), sync("S", messages=2, last_seq=2),
       pub("s.x", "local-dup", {MSG_ID: "k2"}, expect=ACK(2, stream="S", duplicate=True)),
       pub("a.2", "plain"), sync("S", messages=3),
       msgs("S", expect=[MSG(1, "a.1", "first", {MSG_ID: ["k1"], **HS("A", 1, "a.1")}),
                         MSG(2, "b.2", "other", {MSG_ID: ["k2"], **HS("B", 2, "b.2")}),
                         MSG(3, "a.2", "plain", HS("A", 2, "a.2"))]),
       info(stream="S"),
       src_info("S", expect={"mirror": None, "sources": [{"name": "A", "lag": 0, "seq": 2},
                                                         {"name": "B", "lag": 0, "seq": 2}]})),
    sc("source/no-dedupe-by-default",
       # A stream with sources gets no default duplicate window (server/stream.go).
       create(A), create(B),
       create(sourced("S", SRC("A"), SRC("B"), subjects=["s.>"])),
       pub("a.1", "first", {MSG_ID: "k1"}), sync("S", messages=1),
       pub("b.1", "same id", {MSG_ID: "k1"}), sync("S", messages=2),
       pub("s.x", "local", {MSG_ID: "k1"}, expect=ACK(3, stream="S")),
       msgs("S", expect=[MSG(1, "a.1", "first", {MSG_ID: ["k1"], **HS("A", 1, "a.1")}),
                         MSG(2, "b.1", "same id", {MSG_ID: ["k1"], **HS("B", 1, "b.1")}),
                         MSG(3, "s.x", "local", {MSG_ID: ["k1"]})]),
       info(stream="S")),
    sc("source/dedupe-window-of-the-target",
       create(origin(duplicate_window=100 * MS)),
       pub("o.a", "1", {MSG_ID: "k"}),
       sleep(0.15),
       pub("o.a", "2", {MSG_ID: "k"}, expect=ACK(2, stream="O")),
       pub("o.b", "3", {MSG_ID: "j"}),
       create(sourced("S", SRC("O"), duplicate_window=60 * SEC)),
       sync("S", messages=2),
       settle(0.1),
       msgs("S", expect=[MSG(1, "o.a", "1", {MSG_ID: ["k"], **HS("O", 1, "o.a")}),
                         MSG(2, "o.b", "3", {MSG_ID: ["j"], **HS("O", 3, "o.b")})]),
       info(stream="S", expect=STATE(messages=2, last_seq=2)),
       src_info("S", expect={"mirror": None, "sources": [{"name": "O", "lag": 0, "seq": 3}]})),
    sc("source/daisy-chain-header-replaced",
       create(A),
       create(sourced("B2", SRC("A"), subjects=["b2.>"])),
       create(sourced("C", SRC("B2", filter_subject="a.>"))),
       pub("a.1", "1", {"K": "v"}), sync("B2", messages=1),
       pub("b2.local", "2"), pub("a.2", "3"),
       sync("B2", messages=3), sync("C", messages=2),
       msgs("B2", expect=[MSG(1, "a.1", "1", {"K": ["v"], **HS("A", 1, "a.1")}),
                          MSG(2, "b2.local", "2"),
                          MSG(3, "a.2", "3", HS("A", 2, "a.2"))]),
       msgs("C", expect=[MSG(1, "a.1", "1", {"K": ["v"], **HS("B2", 1, "a.1", "a.>")}),
                         MSG(2, "a.2", "3", HS("B2", 3, "a.2", "a.>"))]),
       info(stream="C"),
       src_info("C", expect={"sources": [{"name": "B2", "lag": 0, "seq": 3,
                                          "filter_subject": "a.>"}]})),
    sc("source/daisy-chain-with-transforms",
       create(A),
       create(sourced("B2", SRC("A", subject_transforms=[TR("a.*", "b2.$1")]))),
       create(sourced("C", SRC("B2", subject_transforms=[TR("b2.*", "c.{{wildcard(1)}}.x")]))),
       pub("a.1", "1"), pub("a.2", "2"),
       sync("C", messages=2),
       msgs("B2", expect=[MSG(1, "b2.1", "1", HS("A", 1, "a.1", "a.*", "b2.$1")),
                          MSG(2, "b2.2", "2", HS("A", 2, "a.2", "a.*", "b2.$1"))]),
       msgs("C", expect=[
           MSG(1, "c.1.x", "1", HS("B2", 1, "b2.1", "b2.*", "c.{{wildcard(1)}}.x")),
           MSG(2, "c.2.x", "2", HS("B2", 2, "b2.2", "b2.*", "c.{{wildcard(1)}}.x"))])),
    sc("source/client-source-header-refused",
       create(O), create(sourced("S", SRC("O"), subjects=["s.>"])),
       pub("s.a", "x", {STREAM_SOURCE: "O 1 > > o.a"},
           expect=ERR(400, 10227, "message stream source header is not allowed")),
       pub("o.a", "1"),
       sync("S", messages=1),
       msgs("S", expect=[MSG(1, "o.a", "1", HS("O", 1, "o.a"))])),
    sc("source/discard-new-retries",
       create(O),
       create(sourced("S", SRC("O"), max_msgs=2, discard="new")),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.c", "3"), pub("o.d", "4"),
       sync("S", messages=2),
       settle(0.3),
       info(stream="S", expect=STATE(messages=2, last_seq=2)),
       src_info("S", expect={"mirror": None, "sources": [{"name": "O", "lag": 0, "seq": 2}]}),
       info(stream="O", expect=STATE(messages=4)),
       purge(stream="S", expect={"purged": 2}),
       # The server retries the source every ~2 s (sourceConsumerRetryThreshold).
       sync("S", messages=2, last_seq=4),
       msgs("S", expect=[MSG(3, "o.c", "3", HS("O", 3, "o.c")),
                         MSG(4, "o.d", "4", HS("O", 4, "o.d"))]),
       src_info("S", expect={"mirror": None, "sources": [{"name": "O", "lag": 0, "seq": 4}]})),
    sc("source/origin-deletes-not-replicated",
       create(O), create(sourced("S", SRC("O"))),
       pub("o.a", "1"), pub("o.b", "2"),
       sync("S", messages=2),
       rmm(1, stream="O"), purge(stream="O"),
       pub("o.c", "3"),
       sync("S", messages=3),
       msgs("S", expect=[MSG(1, "o.a", "1", HS("O", 1, "o.a")),
                         MSG(2, "o.b", "2", HS("O", 2, "o.b")),
                         MSG(3, "o.c", "3", HS("O", 3, "o.c"))]),
       info(stream="S")),
    # One origin each: with two origins, one of them with opt_start_time, nats-server 2.15.1
    # sometimes starts that origin at its end (seen 4 times in 8), so they are kept apart.
    sc("source/opt-start-seq",
       create(A),
       pub("a.1", "1"), pub("a.2", "2"), pub("a.3", "3"),
       create(sourced("S", SRC("A", opt_start_seq=2))),
       sync("S", messages=2),
       msgs("S", expect=[MSG(1, "a.2", "2", HS("A", 2, "a.2")),
                         MSG(2, "a.3", "3", HS("A", 3, "a.3"))]),
       src_info("S", expect={"mirror": None, "sources": [{"name": "A", "lag": 0, "seq": 3}]})),
    sc("source/opt-start-time",
       create(B),
       pub("b.1", "1"), sleep(0.01), pub("b.2", "2"), sleep(0.01), pub("b.3", "3"),
       create(sourced("S", SRC("B", opt_start_time=TIME_OF("B", 2)))),
       sync("S", messages=2),
       msgs("S", expect=[MSG(1, "b.2", "2", HS("B", 2, "b.2")),
                         MSG(2, "b.3", "3", HS("B", 3, "b.3"))]),
       info(stream="S")),
    sc("source/external-origin",
       create(O, cluster="east"),
       pub("o.a", "1", cluster="east"), pub("o.b", "2", cluster="east"),
       create(sourced("S", SRC("O", external=EXTERNAL_EAST), subjects=["s.>"])),
       sync("S", messages=2),
       pub("o.c", "3", cluster="east"),
       sync("S", messages=3),
       # The server names an external origin <name>:<getHash(api)> (composeIName).
       msgs("S", expect=[MSG(1, "o.a", "1", HS(EXTERNAL_O, 1, "o.a")),
                         MSG(2, "o.b", "2", HS(EXTERNAL_O, 2, "o.b")),
                         MSG(3, "o.c", "3", HS(EXTERNAL_O, 3, "o.c"))]),
       # 276 bytes as stored by the server, + 9 per message for the ":<hash>" (alias_bytes).
       info(stream="S", expect=STATE(messages=3, bytes=303))),
    sc("source/from-a-mirror",
       create(O), create(mirror()),
       create(sourced("S", SRC("M"))),
       pub("o.a", "1"), pub("o.b", "2"),
       sync("S", messages=2),
       msgs("S", expect=[MSG(1, "o.a", "1", HS("M", 1, "o.a")),
                         MSG(2, "o.b", "2", HS("M", 2, "o.b"))]),
       src_info("S")),
    sc("source/added-by-update",
       create(A), create(B),
       create(sourced("S", SRC("A"))),
       pub("a.1", "1"), pub("b.1", "2"),
       sync("S", messages=1),
       update(sourced("S", SRC("A"), SRC("B")), expect=OK),
       sync("S", messages=2),
       pub("a.2", "3"), sync("S", messages=3),
       msgs("S", expect=[MSG(1, "a.1", "1", HS("A", 1, "a.1")),
                         MSG(2, "b.1", "2", HS("B", 1, "b.1")),
                         MSG(3, "a.2", "3", HS("A", 2, "a.2"))]),
       src_info("S", expect={"mirror": None, "sources": [{"name": "A", "lag": 0, "seq": 2},
                                                         {"name": "B", "lag": 0, "seq": 1}]})),
    sc("source/target-subject-transform-and-limits",
       create(O),
       create(sourced("S", SRC("O"), subject_transform={"src": "o.*", "dest": "t.$1"},
                      max_msgs_per_subject=1)),
       pub("o.a", "1"), pub("o.b", "2"), pub("o.a", "3"),
       sync("S", last_seq=3),
       msgs("S", expect=[MSG(2, "t.b", "2", HS("O", 2, "o.b")),
                         MSG(3, "t.a", "3", HS("O", 3, "o.a"))]),
       info(stream="S", expect=STATE(messages=2, first_seq=2))),

    # ---- RePublish -----------------------------------------------------------------------
    sc("republish/headers-seen-by-a-core-subscription",
       create({"name": "R", "subjects": ["r.>"], "republish": {"src": "r.>", "dest": "rp.>"}}),
       sub("rp.>"),
       pub("r.a", "1", {"Foo": "bar"}), pub("r.b", "2"), pub("r.a", "3", {MSG_ID: "m"}),
       received("rp.>", 3, expect=[
           {"subject": "rp.a", "headers": {"Foo": ["bar"], **RP("R", "r.a", 1, 0)}, "data": "1"},
           {"subject": "rp.b", "headers": RP("R", "r.b", 2, 0), "data": "2"},
           {"subject": "rp.a", "headers": {MSG_ID: ["m"], **RP("R", "r.a", 3, 1)},
            "data": "3"}]),
       info(stream="R", expect=STATE(messages=3))),
    sc("republish/headers-only",
       create({"name": "R", "subjects": ["r.>"],
               "republish": {"src": "r.*", "dest": "rp.$1", "headers_only": True}}),
       sub("rp.>"),
       pub("r.a", "hello"), pub("r.a", ""), pub("r.b.c", "not matched"),
       pub("r.b", "12345", {"X": "y"}),
       received("rp.>", 3, expect=[
           {"subject": "rp.a", "headers": {**RP("R", "r.a", 1, 0), "Nats-Msg-Size": ["5"]},
            "data": ""},
           {"subject": "rp.a", "headers": {**RP("R", "r.a", 2, 1), "Nats-Msg-Size": ["0"]},
            "data": ""},
           {"subject": "rp.b",
            "headers": {"X": ["y"], **RP("R", "r.b", 4, 0), "Nats-Msg-Size": ["5"]},
            "data": ""}])),
    sc("republish/last-sequence-after-delete-and-duplicates",
       create({"name": "R", "subjects": ["r.>"], "republish": {"dest": "rp.>"}}),
       sub("rp.>"),
       pub("r.a", "1"), pub("r.a", "2", {MSG_ID: "x"}),
       received("rp.>", 2, expect=[
           {"subject": "rp.r.a", "headers": RP("R", "r.a", 1, 0), "data": "1"},
           {"subject": "rp.r.a", "headers": {MSG_ID: ["x"], **RP("R", "r.a", 2, 1)},
            "data": "2"}]),
       rmm(2, stream="R"),
       pub("r.a", "3"),
       pub("r.a", "2", {MSG_ID: "x"}, expect=ACK(2, stream="R", duplicate=True)),
       # The previous message of the subject is now 1; the duplicate is not republished.
       received("rp.>", 1, expect=[
           {"subject": "rp.r.a", "headers": RP("R", "r.a", 3, 1), "data": "3"}])),
    sc("republish/into-another-stream",
       create({"name": "R", "subjects": ["r.>"], "republish": {"src": "r.>", "dest": "cap.>"}}),
       create({"name": "CAP", "subjects": ["cap.>"]}),
       pub("r.a", "1", {"K": "v"}), pub("r.b", "2"), pub("r.a", "3"),
       {**sync("CAP", messages=3), "ts_bytes": True},
       msgs("CAP", expect=[MSG(1, "cap.a", "1", {"K": ["v"], **RP("R", "r.a", 1, 0)}),
                           MSG(2, "cap.b", "2", RP("R", "r.b", 2, 0)),
                           MSG(3, "cap.a", "3", RP("R", "r.a", 3, 1))]),
       # state.bytes counts the Nats-Time-Stamp text, whose length varies (trailing zeros
       # are trimmed): ``ts_bytes`` subtracts the stored stamps' lengths.
       info(stream="CAP", ts_bytes=True, expect=STATE(messages=3, num_subjects=2))),
    sc("republish/from-a-sourced-stream",
       create(O),
       create(sourced("S", SRC("O"), republish={"src": ">", "dest": "rp.>"})),
       sub("rp.>"),
       pub("o.a", "1"), pub("o.b", "2"),
       sync("S", messages=2),
       received("rp.>", 2, expect=[
           {"subject": "rp.o.a", "headers": {**HS("O", 1, "o.a"), **RP("S", "o.a", 1, 0)},
            "data": "1"},
           {"subject": "rp.o.b", "headers": {**HS("O", 2, "o.b"), **RP("S", "o.b", 2, 0)},
            "data": "2"}])),
    sc("republish/sourced-message-refused-by-the-capturing-stream",
       # The republished copy keeps Nats-Stream-Source: a capturing stream refuses it (10227),
       # silently; an unsourced message goes through.
       create(O),
       create(sourced("S", SRC("O"), subjects=["s.>"], republish={"src": ">", "dest": "cap.>"})),
       create({"name": "CAP", "subjects": ["cap.>"]}),
       sub("cap.>"),
       pub("o.a", "1"),
       sync("S", messages=1),
       pub("s.b", "2"),
       {**sync("CAP", messages=1), "ts_bytes": True},
       received("cap.>", 2, expect=[
           {"subject": "cap.o.a", "headers": {**HS("O", 1, "o.a"), **RP("S", "o.a", 1, 0)},
            "data": "1"},
           {"subject": "cap.s.b", "headers": RP("S", "s.b", 2, 0), "data": "2"}]),
       msgs("CAP", expect=[MSG(1, "cap.s.b", "2", RP("S", "s.b", 2, 0))])),
    sc("republish/from-a-mirror",
       create(O),
       create(mirror(republish={"src": ">", "dest": "rp.>"})),
       sub("rp.>"),
       pub("o.a", "1"), pub("o.b", "2"),
       sync("M", messages=2),
       received("rp.>", 2, expect=[
           {"subject": "rp.o.a", "headers": RP("M", "o.a", 1, 0), "data": "1"},
           {"subject": "rp.o.b", "headers": RP("M", "o.b", 2, 0), "data": "2"}])),
]

# --------------------------------------------------------------------------------------------
# Normalisation shared by both sides
# --------------------------------------------------------------------------------------------


class HeaderContext:
    """What one side knows to normalise headers: stream identities, stored times."""

    def __init__(self, time_of: Any) -> None:
        self.idents: dict[str, set[str]] = {}  # stream name -> hashes of its creation times
        self.time_of = time_of  # (stream, seq) -> RFC3339Nano text | None
        self.aliases: dict[tuple[str, str], str] = {}  # (target, origin) -> header name

    def created(self, stream: str, created: str) -> None:
        self.idents.setdefault(stream, set()).add(go_hash(created))

    def source_header(self, value: str, target: str | None) -> str:
        tokens = value.split(" ")
        if len(tokens) >= 6:
            base = tokens[0].split(":")[0]
            if tokens[5] in self.idents.get(base, ()):
                tokens[5] = f"<ident {base}>"
        if target is not None and (target, tokens[0]) in self.aliases:
            tokens[0] = self.aliases[(target, tokens[0])]
        return " ".join(tokens)

    def headers(self, headers: Mapping[str, list[str]], target: str | None
                ) -> dict[str, list[str]]:
        out = {k: list(v) for k, v in headers.items()}
        if STREAM_SOURCE in out:
            out[STREAM_SOURCE] = [self.source_header(v, target) for v in out[STREAM_SOURCE]]
        if "Nats-Time-Stamp" in out:
            stream = (out.get("Nats-Stream") or [""])[0]
            seq = (out.get("Nats-Sequence") or [""])[0]
            values = []
            for v in out["Nats-Time-Stamp"]:
                stored = self.time_of(stream, int(seq)) if seq.isdigit() and stream else None
                if not TIME_RE.match(v):
                    values.append(f"<not RFC3339Nano: {v}>")
                elif stored == v:
                    values.append(f"<time of {stream} {seq}>")
                else:
                    values.append(f"<not the stored time of {stream} {seq}: {v}>")
            out["Nats-Time-Stamp"] = values
        return out


def stamp_bytes(headers: Mapping[str, list[str]]) -> int:
    """Bytes of the Nats-Time-Stamp values of a stored message (see ``ts_bytes``)."""
    return sum(len(v.encode()) for v in headers.get("Nats-Time-Stamp") or [])


def norm_source_info(doc: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if doc is None:
        return None
    out: dict[str, Any] = {"name": doc.get("name"), "lag": doc.get("lag", 0)}
    if doc.get("seq"):  # nats-server 2.15.1: the highest origin sequence stored (sources)
        out["seq"] = doc["seq"]
    if doc.get("filter_subject"):
        out["filter_subject"] = doc["filter_subject"]
    if doc.get("subject_transforms"):
        out["subject_transforms"] = [{"src": t.get("src", ""), "dest": t.get("dest", "")}
                                     for t in doc["subject_transforms"]]
    err = doc.get("error")
    if err:
        out["error"] = {"code": err.get("code"), "err_code": err.get("err_code", 0),
                        "description": err.get("description")}
    return out


def norm_source_infos(mirror_doc: Any, sources: Any) -> dict[str, Any]:
    return {"mirror": norm_source_info(mirror_doc),
            "sources": sorted((norm_source_info(s) for s in (sources or [])),
                              key=lambda d: d["name"])}


def group_by_origin(rows: list[list[Any]]) -> dict[str, list[list[Any]]]:
    out: dict[str, list[list[Any]]] = {}
    for _seq, subject, headers, data in rows:
        src = (headers.get(STREAM_SOURCE) or [""])[0]
        out.setdefault(src.split(" ")[0], []).append([subject, headers, data])
    return dict(sorted(out.items()))


def resolve(value: Any, time_of: Any) -> Any:
    """Replace ``TIME_OF`` placeholders in a config."""
    if isinstance(value, dict):
        if set(value) == {"$time_of"}:
            stream, seq = value["$time_of"]
            found = time_of(stream, seq)
            if found is None:
                raise AssertionError(f"TIME_OF({stream!r}, {seq}): no such message")
            return found
        return {k: resolve(v, time_of) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, time_of) for v in value]
    return value


def agreements(config: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    if isinstance(config.get("mirror"), dict):
        out.append(config["mirror"])
    out += [s for s in (config.get("sources") or []) if isinstance(s, dict)]
    return out


def core_msg(subject: str, headers: Mapping[str, list[str]], data: bytes) -> dict[str, Any]:
    return {"subject": subject, "headers": dict(headers), "data": decode_data(data)}


# --------------------------------------------------------------------------------------------
# The real server
# --------------------------------------------------------------------------------------------


class ReplServerRunner(ServerRunner):
    def __init__(self, js: Any) -> None:
        super().__init__(js)
        self.ctx = HeaderContext(self._time_of)
        self.subs: dict[str, Any] = {}

    def run(self, ops: Iterable[Mapping[str, Any]]) -> list[Any]:
        try:
            return [self.step(op) for op in ops]
        finally:
            for s in self.subs.values():
                try:
                    self.js._run(s.unsubscribe())
                except Exception:  # noqa: BLE001 - best effort
                    pass

    def _time_of(self, stream: str, seq: int) -> str | None:
        resp = self.js.api(f"STREAM.MSG.GET.{stream}", {"seq": seq})
        return None if "error" in resp else resp["message"]["time"]

    def _config(self, op: Mapping[str, Any]) -> dict[str, Any]:
        config = resolve(copy.deepcopy(dict(op["config"])), self._time_of)
        for src in agreements(config):
            ext = src.pop("external", None)
            if ext is not None and "mirror" not in config:
                self.ctx.aliases[(config["name"], src["name"])] = (
                    f"{src['name']}:{go_hash(ext['api'])}")
        return config

    def op_create(self, op: Mapping[str, Any]) -> Any:
        config = self._config(op)
        if self.default_stream is None:
            self.default_stream = config["name"]
        err = self._err(self.js.stream_create(config))
        if err:
            return err
        self.ctx.created(config["name"], self.js.stream_info(config["name"])["created"])
        return {"ok": True}

    def op_update(self, op: Mapping[str, Any]) -> Any:
        return self._err(self.js.stream_update(self._config(op))) or {"ok": True}

    def _get(self, stream: str, req: Mapping[str, Any]) -> Any:
        out = super()._get(stream, req)
        if "headers" in out:
            out["headers"] = self.ctx.headers(out["headers"], stream)
        return out

    def op_msgs(self, op: Mapping[str, Any]) -> Any:
        rows = super().op_msgs(op)
        if isinstance(rows, list) and op.get("by_origin"):
            return group_by_origin(rows)
        return rows

    def op_info(self, op: Mapping[str, Any]) -> Any:
        out = super().op_info(op)
        if "error" not in out:
            out["bytes"] += self._alias_bytes(self.stream(op))
            if op.get("ts_bytes"):
                out["bytes"] -= self._stamps(self.stream(op))
        return out

    def _alias_bytes(self, stream: str) -> int:
        """What the external origin names add to ``stream``'s bytes (see "External")."""
        aliases = {o: a for (t, o), a in self.ctx.aliases.items() if t == stream}
        if not aliases:
            return 0
        state = self.js.stream_info(stream)["state"]
        total = 0
        for seq in range(state["first_seq"], state["last_seq"] + 1):
            m = ServerRunner._get(self, stream, {"seq": seq})  # headers as stored
            for v in (m.get("headers") or {}).get(STREAM_SOURCE) or []:
                name = v.split(" ")[0]
                if name in aliases:
                    total += len(aliases[name].encode()) - len(name.encode())
        return total

    def _stamps(self, stream: str) -> int:
        state = self.js.stream_info(stream)["state"]
        total = 0
        for seq in range(state["first_seq"], state["last_seq"] + 1):
            m = ServerRunner._get(self, stream, {"seq": seq})  # headers as stored
            total += stamp_bytes(m.get("headers") or {})
        return total

    def op_sync(self, op: Mapping[str, Any]) -> Any:
        deadline = time.monotonic() + op.get("timeout", SYNC_TIMEOUT)
        while True:
            resp = self.js.stream_info(op["stream"])
            err = self._err(resp)
            if err:
                return err
            state = norm_state(resp["state"], False)
            if matches(op["want"], state) or time.monotonic() > deadline:
                state["bytes"] += self._alias_bytes(op["stream"])
                if op.get("ts_bytes"):
                    state["bytes"] -= self._stamps(op["stream"])
                return state
            time.sleep(0.005)

    def op_settle(self, op: Mapping[str, Any]) -> Any:
        time.sleep(op["seconds"])
        return None

    def op_src_info(self, op: Mapping[str, Any]) -> Any:
        resp = self.js.stream_info(op["stream"])
        return self._err(resp) or norm_source_infos(resp.get("mirror"), resp.get("sources"))

    def op_same_times(self, op: Mapping[str, Any]) -> Any:
        def times(stream: str) -> dict[int, str]:
            state = self.js.stream_info(stream)["state"]
            out = {}
            for seq in range(state["first_seq"], state["last_seq"] + 1):
                t = self._time_of(stream, seq)
                if t is not None:
                    out[seq] = t
            return out

        a, b = times(op["stream"]), times(op["other"])
        common = sorted(set(a) & set(b))
        return {"equal": [s for s in common if a[s] == b[s]],
                "different": [s for s in common if a[s] != b[s]]}

    def op_sub(self, op: Mapping[str, Any]) -> Any:
        async def subscribe() -> Any:
            s = await self.js._nc.subscribe(op["subject"])
            await self.js._nc.flush(timeout=5)
            return s

        self.subs[op["subject"]] = self.js._run(subscribe())
        return None

    def op_received(self, op: Mapping[str, Any]) -> Any:
        import nats.errors

        s = self.subs[op["subject"]]
        out = []
        while True:
            timeout = RECEIVE_TIMEOUT if len(out) < op["n"] else QUIET
            try:
                m = self.js._run(s.next_msg(timeout=timeout))
            except nats.errors.TimeoutError:
                break
            headers = {k: [v] for k, v in (m.headers or {}).items()}
            out.append(core_msg(m.subject, self.ctx.headers(headers, None), m.data))
        return out


# --------------------------------------------------------------------------------------------
# jetlink
# --------------------------------------------------------------------------------------------


def replication_module() -> Any:
    import importlib

    return importlib.import_module("jetlink.core.replication")


class ReplJetlinkRunner(JetlinkRunner):
    """Several clusters of one data directory; replication pumped where the server would."""

    def __init__(self, data_dir: str) -> None:
        self.mods = jetlink_modules()
        from jetlink.core.store import DataDir  # type: ignore[import-not-found]

        self.clock = self.mods["clock"].ManualClock(time.time_ns())
        self.datadir = DataDir(data_dir)
        self.jss: dict[str, Any] = {}
        self.where: dict[str, str] = {}  # stream -> cluster
        self.js = self._js("local")
        self.cluster = self.js.cluster
        self.default_stream = None
        self.streams_of = {}
        self.ctx = HeaderContext(self._time_of)
        self.subs: dict[str, Any] = {}

    def _js(self, name: str) -> Any:
        if name not in self.jss:
            if name != "local" and not self.datadir.has_cluster(name):
                self.datadir.add_cluster(name)
            self.jss[name] = self.mods["jetstream"].JetStream(self.datadir.open(name),
                                                              self.clock)
        return self.jss[name]

    def _js_of(self, stream: str) -> Any:
        return self._js(self.where.get(stream, "local"))

    def _time_of(self, stream: str, seq: int) -> str | None:
        from jetlink.core.errors import ApiError

        try:
            return self._js_of(stream).get_msg(stream, seq).time
        except ApiError:
            return None

    def run(self, ops: Iterable[Mapping[str, Any]]) -> list[Any]:
        out = []
        try:
            for op in ops:
                if op.get("cluster"):
                    cluster = op["cluster"]
                elif op["op"] in ("create", "update"):
                    cluster = self.where.get(op["config"].get("name", ""), "local")
                elif op.get("stream"):
                    cluster = self.where.get(op["stream"], "local")
                elif op["op"] in ("pub", "pub_core", "sub"):
                    cluster = "local"
                else:
                    cluster = self.where.get(self.stream(op), "local")
                self.js = self._js(cluster)
                out += super().run([op])
        finally:
            for s in self.subs.values():
                s.close()
        return out

    def op_create(self, op: Mapping[str, Any]) -> Any:
        from jetlink.core.config.stream import StreamConfig

        config = resolve(copy.deepcopy(dict(op["config"])), self._time_of)
        if self.default_stream is None:
            self.default_stream = config["name"]
        self.js.add_stream(StreamConfig.from_json(config))
        self.where[config["name"]] = self.js.cluster.name
        created = _json_of(self.js.stream_info(config["name"]))["created"]
        self.ctx.created(config["name"], created)
        return {"ok": True}

    def op_update(self, op: Mapping[str, Any]) -> Any:
        from jetlink.core.config.stream import StreamConfig

        config = resolve(copy.deepcopy(dict(op["config"])), self._time_of)
        self.js.update_stream(StreamConfig.from_json(config))
        return {"ok": True}

    def op_get(self, op: Mapping[str, Any]) -> Any:
        out = super().op_get(op)
        out["headers"] = self.ctx.headers(out["headers"], self.stream(op))
        return out

    def op_msgs(self, op: Mapping[str, Any]) -> Any:
        stream = self.stream(op)
        rows = [[seq, subject, self.ctx.headers(headers, stream), data]
                for seq, subject, headers, data in super().op_msgs(op)]
        return group_by_origin(rows) if op.get("by_origin") else rows

    def op_info(self, op: Mapping[str, Any]) -> Any:
        out = super().op_info(op)
        if op.get("ts_bytes"):
            for m in self.js.messages(self.stream(op)):
                out["bytes"] -= stamp_bytes(m.headers)
        return out

    def _pump(self) -> None:
        replication_module().pump_until_idle(self.datadir, self.clock)

    def op_sync(self, op: Mapping[str, Any]) -> Any:
        self._pump()
        return self.op_info({"stream": op["stream"], "ts_bytes": op.get("ts_bytes")})

    def op_settle(self, op: Mapping[str, Any]) -> Any:
        self._pump()
        return None

    def op_src_info(self, op: Mapping[str, Any]) -> Any:
        stream = self.stream(op)
        doc = _json_of(self.js.stream_info(stream))
        return norm_source_infos(doc.get("mirror"), doc.get("sources"))

    def op_same_times(self, op: Mapping[str, Any]) -> Any:
        def times(stream: str) -> dict[int, int]:
            return {m.seq: m.ts for m in self._js_of(stream).messages(stream)}

        a, b = times(op["stream"]), times(op["other"])
        common = sorted(set(a) & set(b))
        return {"equal": [s for s in common if a[s] == b[s]],
                "different": [s for s in common if a[s] != b[s]]}

    def op_sub(self, op: Mapping[str, Any]) -> Any:
        self.subs[op["subject"]] = self.js.subscribe(op["subject"])
        return None

    def op_received(self, op: Mapping[str, Any]) -> Any:
        s = self.subs[op["subject"]]
        out = []
        while True:
            m = s.next(timeout=RECEIVE_TIMEOUT if len(out) < op["n"] else QUIET)
            if m is None:
                break
            out.append(core_msg(m.subject, self.ctx.headers(m.headers, None), bytes(m.data)))
        return out


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------


def check_server_expectations(scenario: Scenario, results: list[Any]) -> None:
    for i, (op, got) in enumerate(zip(scenario.ops, results, strict=True)):
        if "expect" in op and not matches(op["expect"], got):
            pytest.fail(f"[{scenario.id}] op {i} {json.dumps(strip(op))}: the scenario expects "
                        f"the server to answer {op['expect']!r}, it answered {got!r}",
                        pytrace=False)


def mismatches(scenario: Scenario, server: list[Any], mine: list[Any]) -> list[str]:
    out = []
    for i, (op, a, b) in enumerate(zip(scenario.ops, server, mine, strict=True)):
        if "jetlink" in op:  # a documented divergence: jetlink must give its own answer
            if b != op["jetlink"]:
                out.append(f"op {i} {json.dumps(strip(op))} (documented divergence)\n"
                           f"      expected: {json.dumps(op['jetlink'])}\n"
                           f"      jetlink:  {json.dumps(b)}")
            continue
        if a != b:
            out.append(f"op {i} {json.dumps(strip(op))}\n      server:  {json.dumps(a)}\n"
                       f"      jetlink: {json.dumps(b)}")
    return out


KNOWN_OPS = {n[3:] for n in dir(ReplServerRunner) if n.startswith("op_")}


def test_scenario_table_is_well_formed() -> None:
    ids = [s.id for s in SCENARIOS]
    assert len(ids) == len(set(ids)), "duplicate scenario ids"
    assert len(SCENARIOS) >= 30
    for s in SCENARIOS:
        assert s.ops and s.ops[0]["op"] == "create", s.id
        for op in s.ops:
            assert op["op"] in KNOWN_OPS, (s.id, op)
            assert hasattr(ReplJetlinkRunner, "op_" + op["op"]), (s.id, op)
    # Real waits on the server side: keep the file well under its time budget.
    assert sum(s.wait_seconds for s in SCENARIOS) < 12


def require_replication() -> None:
    try:
        jetlink_modules()
        replication_module()
    except ImportError as e:
        pytest.fail(f"jetlink's replication layer can not be imported ({e}); "
                    "docs/replication.md: core/replication.py", pytrace=False)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_replication_conformance(js_fresh: Any, tmp_path: Any, scenario: Scenario) -> None:
    server = ReplServerRunner(js_fresh).run(scenario.ops)
    check_server_expectations(scenario, server)  # the server side is checked in any case
    require_replication()
    mine = ReplJetlinkRunner(os.fspath(tmp_path / "data")).run(scenario.ops)
    diffs = mismatches(scenario, server, mine)
    if diffs:
        pytest.fail(f"[{scenario.id}] {len(diffs)} operation(s) differ:\n  " + "\n  ".join(diffs),
                    pytrace=False)
