"""Shell completion of names: streams, consumers, buckets, topics, links, groups, clusters.

Each function is a Typer ``autocompletion`` callback: it reads the data directory in force
(``--data-dir`` or JETLINK_DATA_DIR as typed so far, else the default one) and the cluster
(``--cluster``, else ``local``) and returns the names starting with what was typed. It never
creates anything (a data directory or cluster that does not exist completes nothing), never
connects to a server, and never fails: a completion that cannot be read offers nothing.
Works for bash, zsh and fish alike (click's completion protocol; completions/ holds the
scripts).
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer


def _where(ctx: Any) -> tuple[Path, str]:
    import os

    from jetlink.cli.app import default_data_dir

    root = ctx.find_root()
    path = root.params.get("data_dir") or os.environ.get("JETLINK_DATA_DIR") or \
        default_data_dir()
    cluster = root.params.get("cluster") or os.environ.get("JETLINK_CLUSTER") or "local"
    return Path(path).expanduser(), cluster


@contextmanager
def _cluster(ctx: Any) -> Iterator[Any]:
    """(DataDir, Cluster) of the command line, or nothing to offer."""
    from jetlink.core.store import DataDir

    path, name = _where(ctx)
    if not (path / f"{name}.db").is_file():
        yield None
        return
    dd = DataDir(path)
    try:
        yield dd, dd.open(name, create_local=False)
    finally:
        dd.close()


def _offer(names: Callable[[Any], list[str]]) -> Callable[[typer.Context, str], list[str]]:
    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        try:
            with _cluster(ctx) as found:
                if found is None:
                    return []
                return sorted(n for n in names((ctx, *found)) if n.startswith(incomplete))
        except Exception:  # noqa: BLE001 - completion offers nothing rather than fail
            return []

    return complete


def _js(dd: Any, cl: Any) -> Any:
    from jetlink.core.clock import SystemClock
    from jetlink.core.jetstream import JetStream

    return JetStream(cl, SystemClock())


def _kafka(cl: Any) -> Any:
    from jetlink.core.clock import SystemClock
    from jetlink.core.kafka.topics import Kafka

    return Kafka(cl, SystemClock())


def _streams(found: Any) -> list[str]:
    _ctx, dd, cl = found
    return _js(dd, cl).stream_names()


def _consumers(found: Any) -> list[str]:
    ctx, dd, cl = found
    stream = ctx.params.get("stream")
    return _js(dd, cl).consumer_names(stream) if stream else []


def _buckets(found: Any) -> list[str]:
    from jetlink.core.kv import kv_statuses

    _ctx, dd, cl = found
    return [s.bucket for s in kv_statuses(_js(dd, cl).streams())]


def _topics(found: Any) -> list[str]:
    _ctx, _dd, cl = found
    return _kafka(cl).topic_names() if "topics" in cl.table_names() else []


def _groups(found: Any) -> list[str]:
    _ctx, _dd, cl = found
    return [g.group for g in _kafka(cl).groups()] if "topics" in cl.table_names() else []


def _links(found: Any) -> list[str]:
    from jetlink.core.clock import SystemClock
    from jetlink.core.kafka.links import Links

    _ctx, dd, cl = found
    if "links" not in cl.table_names():
        return []
    return [li.name for li in Links.open(dd, cl, SystemClock()).list()]


streams = _offer(_streams)
consumers = _offer(_consumers)
buckets = _offer(_buckets)
topics = _offer(_topics)
groups = _offer(_groups)
links = _offer(_links)


def clusters(ctx: typer.Context, incomplete: str) -> list[str]:
    """The clusters of the data directory (no cluster needs to be named for these)."""
    from jetlink.core.store import DataDir

    try:
        path, _ = _where(ctx)
        if not path.is_dir():
            return []
        dd = DataDir(path)
        try:
            return sorted(c.name for c in dd.clusters(create_local=False)
                          if c.name.startswith(incomplete))
        finally:
            dd.close()
    except Exception:  # noqa: BLE001
        return []
