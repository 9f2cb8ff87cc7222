"""A stream's definition as the engine reads it, and the catalog of a cluster's streams.

- :class:`StreamDef`: a stream's config compiled for the hot path (limits, record sizes, the
  subject transform, the RePublish rule), immutable;
- :class:`Catalog`: every stream of a cluster database, reloaded when ``meta.config_gen``
  changes, and the route of a subject to the stream capturing it; :func:`bump_config_gen`.

Below the stream store (core/streamstore/), RePublish and core/streams.py, which all read a
StreamDef: it imports only the stored form (core/streamstore/base.py, the record sizes) and,
when a stream has them, its transform (core/transform.py) and its RePublish rule
(core/republish_rule.py). core/streams.py re-exports the names (their import path stays
``jetlink.core.streams``).
"""

from __future__ import annotations

import bisect
import json
import sqlite3
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .config.stream import StreamConfig
from .streamstore.base import (
    _SECOND,
    FILE_HEADER_OVERHEAD,
    FILE_RECORD_OVERHEAD,
    MEM_RECORD_OVERHEAD,
    payload_sql,
)
from .subjects import KeyedSubjectIndex, SubjectFilter

if TYPE_CHECKING:  # pragma: no cover
    from .republish_rule import RePublishRule
    from .transform import SubjectTransform

__all__ = ["Catalog", "StreamConfigs", "StreamDef", "bump_config_gen"]


class StreamDef:
    """A stream's configuration with what the hot path needs precomputed (immutable)."""

    __slots__ = (
        "id", "name", "cfg", "created_ns", "config_json", "filter", "transform", "file",
        "max_msgs", "max_bytes", "max_per", "max_age", "max_msg_size", "discard_new",
        "discard_new_per", "dup_window", "sealed", "allow_rollup_purge", "allow_ttl",
        "sdm_ttl_s", "retention", "is_mirror", "allow_counter", "allow_schedules",
        "deny_delete", "deny_purge", "needs_limits", "fast", "base_size", "hdr_extra",
        "payload_sql", "no_ack", "republish",
    )

    def __init__(self, sid: int, cfg: StreamConfig, created_ns: int, config_json: str) -> None:
        self.id = sid
        self.name = cfg.name
        self.cfg = cfg
        self.created_ns = created_ns
        self.config_json = config_json
        self.filter = SubjectFilter(cfg.subjects)
        st = cfg.subject_transform
        self.transform: SubjectTransform | None
        if st is not None and st.dest:
            from .transform import compile_transform

            self.transform = compile_transform(st.src, st.dest)
        else:
            self.transform = None
        self.file = cfg.storage != "memory"
        self.max_msgs = cfg.max_msgs if cfg.max_msgs > 0 else 0
        self.max_bytes = cfg.max_bytes if cfg.max_bytes > 0 else 0
        self.max_per = cfg.max_msgs_per_subject if cfg.max_msgs_per_subject > 0 else 0
        self.max_age = cfg.max_age if cfg.max_age > 0 else 0
        self.max_msg_size = cfg.max_msg_size if cfg.max_msg_size != 0 else -1
        self.discard_new = cfg.discard == "new"
        self.discard_new_per = bool(cfg.discard_new_per_subject)
        self.dup_window = cfg.duplicate_window if cfg.duplicate_window > 0 else 0
        self.sealed = bool(cfg.sealed)
        self.allow_rollup_purge = bool(cfg.allow_rollup_hdrs) and not cfg.deny_purge
        self.allow_ttl = bool(cfg.allow_msg_ttl)
        sdm = cfg.subject_delete_marker_ttl
        self.sdm_ttl_s = sdm // _SECOND if sdm > 0 else 0
        self.retention = cfg.retention
        self.is_mirror = cfg.mirror is not None
        self.allow_counter = bool(cfg.allow_msg_counter)
        self.allow_schedules = bool(cfg.allow_msg_schedules)
        self.deny_delete = bool(cfg.deny_delete)
        self.deny_purge = bool(cfg.deny_purge)
        self.no_ack = bool(cfg.no_ack)  # the server answers nothing to its publishes
        rp = cfg.republish
        self.republish: RePublishRule | None
        if rp is not None and rp.dest:
            # core/republish_rule.py is imported when a stream republishes (a read such as
            # `jetlink kv get` needs none)
            from .republish_rule import compile_rule

            self.republish = compile_rule(cfg)  # None: no republish
        else:
            self.republish = None
        self.needs_limits = bool(self.max_msgs or self.max_bytes or self.max_per)
        # A message without headers needs none of the header, counter or interest rules
        # (on a schedules stream it still cancels a schedule on its subject: schedules.py).
        self.fast = (not self.allow_counter and self.retention != "interest"
                     and not self.allow_schedules)
        self.base_size = FILE_RECORD_OVERHEAD if self.file else MEM_RECORD_OVERHEAD
        self.hdr_extra = FILE_HEADER_OVERHEAD if self.file else 0
        # A stored message's size is base_size + len(subject) + this (sizes are not stored).
        self.payload_sql = payload_sql(self.file)

    def __repr__(self) -> str:
        return f"StreamDef({self.id}, {self.name!r})"


def _is_timed(d: StreamDef) -> bool:
    """A stream with due work to look for on an engine call (expiry: max_age, per message
    TTLs, delete markers; message schedules); the others never have any."""
    return bool(d.max_age or d.allow_ttl or d.sdm_ttl_s or d.allow_schedules)


class StreamConfigs(Mapping[str, StreamConfig]):
    """A catalog's streams' configs by name, in id order (a view, nothing copied), and which
    of them can overlap given subjects (its subject index): what the create and update checks
    read (core/config/validate.py ``IndexedStreams``). Read only."""

    __slots__ = ("_cat",)

    def __init__(self, cat: Catalog) -> None:
        self._cat = cat

    def __getitem__(self, name: str) -> StreamConfig:
        return self._cat.by_name[name].cfg

    def __iter__(self) -> Iterator[str]:
        return iter(self._cat.by_name)

    def __len__(self) -> int:
        return len(self._cat.by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._cat.by_name

    def overlap_candidates(self, subjects: list[str]) -> list[str]:
        by_id = self._cat.by_id
        return [by_id[i].name for i in sorted(self._cat.index.candidates_of(subjects))]


class Catalog:
    """Every stream of a cluster database, reloaded when ``meta.config_gen`` changes.

    ``by_name`` and ``by_id`` hold the streams in id order, ``index`` their subjects (the
    route of a subject and the overlap check look at the streams that can match only). After
    one recorded change (:func:`bump_config_gen`) the catalog is changed in place, only that
    stream's entries (:meth:`_one_changed`): a region's failover changes thousands of
    streams one by one."""

    ROUTE_CACHE_MAX = 200_000

    def __init__(self, gen: int, defs: list[StreamDef]) -> None:
        self.gen = gen
        self.by_name = {d.name: d for d in defs}
        self.by_id = {d.id: d for d in defs}
        self.index: KeyedSubjectIndex[int] = KeyedSubjectIndex()
        for d in defs:
            self.index.put(d.id, d.cfg.subjects)
        self._routes: dict[str, StreamDef | None] = {}
        # the cached routes by the stream they go to (None: no stream), so that a change of
        # one stream drops only the routes it can affect (_forget_routes)
        self._routed: dict[int | None, set[str]] = {}
        #: the streams with due work to look for on an engine call (:func:`_is_timed`), by
        #: id; a new list after a change that concerns one of them
        self.timed = [d for d in defs if _is_timed(d)]

    @property
    def configs(self) -> StreamConfigs:
        """Every stream's config by name, with the subject index (the checks' ``existing``)."""
        return StreamConfigs(self)

    def route(self, subject: str) -> StreamDef | None:
        """The stream whose subjects capture ``subject`` (subjects never overlap: at most one;
        were there more, the first by id, as a scan of every stream would find)."""
        try:
            return self._routes[subject]
        except KeyError:
            pass
        found = None
        by_id = self.by_id
        for sid in sorted(self.index.candidates(subject)):
            d = by_id[sid]
            if d.filter.matches(subject):
                found = d
                break
        if len(self._routes) >= self.ROUTE_CACHE_MAX:
            self._routes.clear()
            self._routed.clear()
        self._routes[subject] = found
        self._routed.setdefault(found.id if found is not None else None, set()).add(subject)
        return found

    def _forget_routes(self, changed: int) -> None:
        """After a change of the one stream ``changed`` (added, updated or deleted): every
        cached route but those to that stream, and those to no stream (the changed one may
        capture them now), stays right, as subjects of two streams never overlap."""
        routes, routed = self._routes, self._routed
        for key in (changed, None):
            for subject in routed.pop(key, ()):
                routes.pop(subject, None)

    def _replace(self, sid: int, new: StreamDef | None) -> bool:
        """Stream ``sid`` is ``new`` now (None: deleted): its entries only. False (nothing
        changed) when the id order could not be kept (a new stream below the highest id, a
        renamed one): then the catalog is read whole."""
        prev = self.by_id.get(sid)
        if new is not None and (prev.name != new.name if prev is not None
                                else self.by_id and sid < next(reversed(self.by_id))):
            return False
        if prev is not None and new is None:
            del self.by_id[sid]
            del self.by_name[prev.name]
        elif new is not None:
            self.by_id[sid] = new  # an update keeps its place; a new id is the highest
            self.by_name[new.name] = new
        self.index.put(sid, new.cfg.subjects if new is not None else ())
        if (prev is not None and _is_timed(prev)) or (new is not None and _is_timed(new)):
            timed = [d for d in self.timed if d.id != sid]
            if new is not None and _is_timed(new):
                ids = [d.id for d in timed]
                timed.insert(bisect.bisect(ids, sid), new)
            self.timed = timed
        self._forget_routes(sid)
        return True

    @staticmethod
    def config_gen(conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = 'config_gen'").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    @classmethod
    def load(cls, conn: sqlite3.Connection, cache: dict[str, Any]) -> Catalog:
        gen = cls.config_gen(conn)
        cat: Catalog | None = cache.get("catalog")
        if cat is not None and cat.gen == gen:
            return cat
        if cat is not None and cat.gen == gen - 1 and cls._one_changed(conn, cat, gen):
            return cat
        old = cat.by_id if cat is not None else {}
        defs = []
        for sid, name, config, created in conn.execute(
            "SELECT id, name, config, created_ns FROM streams ORDER BY id"
        ):
            prev = old.get(sid)
            if prev is not None and prev.config_json == config and prev.name == name:
                defs.append(prev)
                continue
            cfg = StreamConfig.from_json(json.loads(config), strict=False)
            defs.append(StreamDef(sid, cfg, created, config))
        cat = cls(gen, defs)
        cache["catalog"] = cat
        return cat

    @classmethod
    def _one_changed(cls, conn: sqlite3.Connection, cat: Catalog, gen: int) -> bool:
        """``cat`` made the catalog of ``gen`` in place, when the one change that made
        ``gen`` from ``cat``'s recorded which stream it was (:func:`bump_config_gen`): that
        stream's row read alone, its entries alone replaced. False when the change is not
        recorded so, or its stream cannot be placed in id order (then everything is read)."""
        marks = dict(conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('config_changed_gen', "
            "'config_changed_id')").fetchall())
        if marks.get("config_changed_gen") != gen or marks.get("config_changed_id") is None:
            return False
        sid = int(marks["config_changed_id"])
        row = conn.execute("SELECT id, name, config, created_ns FROM streams WHERE id = ?",
                           (sid,)).fetchone()
        new = None
        if row is not None:
            prev = cat.by_id.get(sid)
            if prev is not None and prev.config_json == row[2] and prev.name == row[1]:
                new = prev
            else:
                cfg = StreamConfig.from_json(json.loads(row[2]), strict=False)
                new = StreamDef(row[0], cfg, row[3], row[2])
        if not cat._replace(sid, new):
            return False
        cat.gen = gen
        return True


def bump_config_gen(conn: sqlite3.Connection, stream_id: int | None = None) -> None:
    """A stream was added, changed or deleted: the catalog's generation moves on, and, given
    ``stream_id``, which stream it was (the next :meth:`Catalog.load` then reads that one
    row; without it, or after any other change in between, every row)."""
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('config_gen', 1) "
        "ON CONFLICT(key) DO UPDATE SET value = value + 1"
    )
    gen = Catalog.config_gen(conn) if stream_id is not None else None
    conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [("config_changed_gen", gen), ("config_changed_id", stream_id)])
