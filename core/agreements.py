"""The agreements the replication pump keeps, read without the pump.

An agreement (a mirror's or a source's) is a row of ``repl_agreements`` in its target's
database (jetlink.core.replication creates and moves them). What StreamInfo reports about
them (``mirror`` / ``sources``: lag, active, error) and how they are named (the server's
index name, its hashes) is defined here, below both the pump and the JetStream API that
reports them, so neither imports the other for it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import TYPE_CHECKING, Any

from .clock import format_rfc3339_nano
from .config.stream import StreamSource

if TYPE_CHECKING:  # pragma: no cover
    from . import streams as S

__all__ = ["COMPONENT", "go_hash", "identity", "iname_of", "source_filters",
           "stream_source_infos"]

COMPONENT = "replication"
_HASH_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def go_hash(text: str) -> str:
    """nats-server's ``getHash``: sha256, its first 8 bytes as base-62 digits."""
    digest = hashlib.sha256(text.encode()).digest()
    return "".join(_HASH_DIGITS[b % 62] for b in digest[:8])


def identity(created_ns: int) -> str:
    """A stream's identity (``mset.identity()``): the hash of its creation time."""
    return go_hash(format_rfc3339_nano(created_ns))


def iname_of(src: StreamSource) -> str:
    """The server's index name (``composeIName``): ``<name>[:<hash(api)>][:C=<hash(consumer)>]
    <filters> <destinations>`` (several joined with "\\f", none shown as ">")."""
    name = src.name
    if src.external is not None:
        name += ":" + go_hash(src.external.api)
    if src.consumer is not None:
        name += ":C=" + go_hash(src.consumer.name)
    if not src.subject_transforms:
        return f"{name} {src.filter_subject or '>'} >"
    srcs = "\f".join(t.src or ">" for t in src.subject_transforms)
    dests = "\f".join(t.dest or ">" for t in src.subject_transforms)
    return f"{name} {srcs} {dests}"


def source_filters(src: StreamSource) -> list[str]:
    """The origin subjects an agreement selects: its transforms' sources, else its
    filter_subject (none: every subject)."""
    if src.subject_transforms:
        return [t.src or ">" for t in src.subject_transforms]
    return [src.filter_subject] if src.filter_subject else []


def _has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM schema_components WHERE component = ?",
                        (COMPONENT,)).fetchone() is not None


def _info_doc(kind: str, src: StreamSource, row: tuple | None, now: int) -> dict[str, Any]:
    """One StreamSourceInfo, fields in the server's order."""
    out: dict[str, Any] = {"name": src.name}
    if src.external is not None:
        out["external"] = {"api": src.external.api, "deliver": src.external.deliver}
    lag = seq = last_seen = 0
    error = None
    if row is not None:
        lag, seq, last_seen, error = row
    out["lag"] = lag
    if kind == "source" and seq:
        out["seq"] = seq
    out["active"] = now - last_seen if last_seen else -1
    if error:
        out["error"] = json.loads(error)
    if src.filter_subject:
        out["filter_subject"] = src.filter_subject
    if src.subject_transforms:
        out["subject_transforms"] = [{"src": t.src, "dest": t.dest}
                                     for t in src.subject_transforms]
    return out


def stream_source_infos(conn: sqlite3.Connection, d: S.StreamDef, now: int
                        ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """StreamInfo's ``mirror`` and ``sources`` for stream ``d`` (read on its cluster's
    connection, inside the caller's transaction)."""
    cfg = d.cfg
    if cfg.mirror is None and not cfg.sources:
        return None, []
    rows: dict[tuple[str, str], tuple] = {}
    if _has_table(conn):
        for kind, iname, created, lag, seq, last_seen, error in conn.execute(
            "SELECT kind, iname, target_created, lag, seq, last_seen, error "
            "FROM repl_agreements WHERE target_id = ?", (d.id,)
        ):
            if created == d.created_ns:
                rows[(kind, iname)] = (lag, seq, last_seen, error)
    if cfg.mirror is not None:
        return _info_doc("mirror", cfg.mirror,
                         rows.get(("mirror", iname_of(cfg.mirror))), now), []
    return None, [_info_doc("source", s, rows.get(("source", iname_of(s))), now)
                  for s in cfg.sources]


