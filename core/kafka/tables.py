"""The tables one Kafka API object (Kafka, Links, Mirrors) of a cluster uses (see
:mod:`.schema`): brought up to date when they exist; else made by the object's first write,
inside that write's transaction (a refused write makes none), and read as empty until then.

Takes the components' schema steps from its caller: it imports none of the modules that
use it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Cluster

__all__ = ["KafkaSchema", "has_components"]

Parts = Sequence[tuple[str, Sequence[Sequence[str]]]]  # (component, schema steps)


def has_components(cluster: Cluster, components: Sequence[str]) -> bool:
    """Whether every one of ``components`` was ever created in ``cluster`` (reads only)."""
    with cluster.read() as conn:
        found = {r[0] for r in conn.execute(
            "SELECT component FROM schema_components WHERE component IN "
            f"({', '.join('?' * len(components))})", tuple(components))}
    return found >= set(components)


_empty_lock = threading.Lock()
_empty_conns: dict[tuple[int, tuple[str, ...]], sqlite3.Connection] = {}


def _empty_conn(parts: Parts) -> sqlite3.Connection:
    """An in-memory database holding the tables of ``parts``, empty (one per thread)."""
    key = (threading.get_ident(), tuple(c for c, _ in parts))
    with _empty_lock:
        conn = _empty_conns.get(key)
        if conn is None:
            conn = sqlite3.connect(":memory:", isolation_level=None,
                                   check_same_thread=False)
            for _component, steps in parts:
                for step in steps:
                    for stmt in step:
                        conn.execute(stmt)
            _empty_conns[key] = conn
        return conn


class KafkaSchema:
    """The tables of ``parts`` ((component, steps), ...) in ``cluster``."""

    def __init__(self, cluster: Cluster, parts: Parts) -> None:
        self.cluster = cluster
        self.parts = tuple(parts)
        self.components = tuple(c for c, _ in self.parts)
        self.ready = has_components(cluster, self.components)
        if self.ready:  # (an older version of the tables is upgraded, as before)
            self._ensure()

    def _ensure(self) -> None:
        for component, steps in self.parts:
            self.cluster.ensure_schema(component, steps)

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """``cluster.transaction()``, the tables created in it first when missing."""
        nested = self.cluster.conn.in_transaction  # (an outer one may still roll back)
        with self.cluster.transaction() as conn:
            if not self.ready:
                self._ensure()
            yield conn
        if not nested:
            self.ready = True

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """``cluster.read()``, or the empty tables when they were never made."""
        if not self.ready and not has_components(self.cluster, self.components):
            yield _empty_conn(self.parts)
            return
        with self.cluster.read() as conn:
            yield conn
