"""``jetlink sub --dump DIRECTORY`` and ``-t`` / ``-d``: natscli's other sub outputs.

- ``--dump DIRECTORY``: each message written to ``DIRECTORY/<n>.json`` (``n``: the stream
  sequence of a JetStream subscription's message, else the message's number), the document
  natscli writes (nats.go's ``Msg`` through ``json.Marshal``: ``Subject``, ``Reply``,
  ``Header`` (null without headers), ``Data`` (base64), ``Sub`` (null)); a ``.`` on stdout
  every 100 messages. ``--dump -``: the documents on stdout, each followed by a NUL byte
  (``xargs -0``). ``--translate`` changes the ``Data`` written.
- ``--timestamp`` / ``--delta-time``: `` @ <time>`` after the message number: when it was
  received (a stored message: when it was stored), Go's ``time.StampMicro`` in local time;
  or how long before now that was (a core message: since the subscription started).
"""

from __future__ import annotations

import base64
import os
import time
from typing import Any

from jetlink.cli import output
from jetlink.cli.app import App
from jetlink.core.errors import JetlinkError
from jetlink.core.gojson import marshal

__all__ = ["Dump", "stamp_of"]

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _stamp_micro(ns: int) -> str:
    """Go's ``time.StampMicro`` (``Jan _2 15:04:05.000000``) in local time, the month's
    English name whatever the locale."""
    t = time.localtime(ns // 1_000_000_000)
    return (f"{_MONTHS[t.tm_mon - 1]} {t.tm_mday:2d} {t.tm_hour:02d}:{t.tm_min:02d}:"
            f"{t.tm_sec:02d}.{ns // 1000 % 1_000_000:06d}")


def stamp_of(timestamp: bool, delta: bool, *, stored_ns: int | None, start_ns: int) -> str:
    """The `` @ ...`` natscli's -t / -d put after ``[#n]`` ("" with neither):
    ``stored_ns`` is a stored message's time (None for a core message: received now), both
    on the engine's clock."""
    if not (timestamp or delta):
        return ""
    from jetlink.cli.common import now_ns

    now = now_ns()
    if timestamp:
        return " @ " + _stamp_micro(now if stored_ns is None else stored_ns)
    from jetlink.core.durations import format_duration

    return " @ " + format_duration(now - (start_ns if stored_ns is None else stored_ns))


def jetstream_line(n: int, stamp: str, stream: str, pending: int, msg: Any) -> str:
    """natscli's line for a JetStream subscription's message (printJetStreamMsg): its
    stream, sequence and the messages still to come then, numbers and the stored time
    (local, ``2006-01-02 15:04:05``) as natscli's columns.F writes them."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(msg.ts // 1_000_000_000))
    return (f"[#{n}]{stamp} Received JetStream message: stream: {stream} seq: {msg.seq:,} / "
            f"pending: {pending:,} / subject: {msg.subject} / time: {when}")


def _seq_of(doc: dict[str, Any], n: int) -> int:
    """A core message's file number: the stream sequence its ``$JS.ACK`` reply carries (a
    push consumer's delivery, as natscli's printMsg reads it), else its number ``n``."""
    reply = doc.get("reply") or ""
    if reply.startswith("$JS.ACK."):
        from jetlink.core.messages import ack_metadata

        try:
            return int(ack_metadata(reply)["seq"])
        except JetlinkError:
            pass
    return n


class Dump:
    """Where ``--dump`` writes: a directory (made, 0700, as natscli's MkdirAll), or ``-``."""

    def __init__(self, app: App, target: str, translate: str | None) -> None:
        self.app, self.translate = app, translate
        self.stdout = target == "-"
        self.dir = target
        if not self.stdout:
            try:
                os.makedirs(target, mode=0o700, exist_ok=True)
            except OSError as err:
                raise JetlinkError(f"--dump: cannot make the directory {target!r}: "
                                   f"{err.strerror or err}", field="dump") from None

    def write(self, n: int, msg: Any, doc: dict[str, Any], stored: bool) -> None:
        data_b64 = doc.get("data") or ""
        if self.translate is not None:
            from jetlink.cli import translate as T
            from jetlink.core.config.validate import go_quote

            out, err = T.run(output.body_text(data_b64), self.translate, "", "")
            if err is not None:  # natscli's dumpMsg: said, the message not written
                output.notice(self.app, f"{go_quote(out.decode('utf-8', 'surrogateescape'))}\n"
                                        f"Error while translating msg body: {err}")
                return
            data_b64 = base64.b64encode(out).decode()
        # nats.go's Header: nil without a header block, a map (empty too) with one
        headers = doc.get("headers") or {}
        text = marshal({"Subject": doc["subject"], "Reply": doc.get("reply") or "",
                        "Header": dict(sorted(headers.items())) if getattr(msg, "hdr", None)
                        else None, "Data": data_b64, "Sub": None}).encode()
        if self.stdout:
            output.write_bytes(text + b"\0")
            return
        name = os.path.join(self.dir, f"{doc['seq'] if stored else _seq_of(doc, n)}.json")
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(text)
        except OSError as err:
            output.notice(self.app, f"Could not save message: {name}: {err.strerror or err}")
        if n % 100 == 0:  # natscli's progress: a dot every 100 messages
            output.write_bytes(b".")
