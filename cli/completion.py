"""Shell completion of names: streams, consumers, buckets, topics, links, groups, mirror
topics, clusters.

Each function is a Typer ``autocompletion`` callback. It follows the target of the command
line as typed so far: with a live server in force (``-s``, ``--nats-context``, NATS_URL, a
context: the same resolution as the command's own), the stream, consumer and bucket names
are the server's, read with a short timeout (:data:`LIVE_TIMEOUT`); else it reads the data
directory in force (``--data-dir`` or JETLINK_DATA_DIR, else the default one) and the cluster
(``--cluster``, else ``local``). It returns the names starting with what was typed, never
creates anything (a data directory or cluster that does not exist completes nothing), and
never fails: a completion that cannot be read (a server that does not answer) offers
nothing. Works for bash, zsh and fish alike (click's completion protocol; completions/ holds
the scripts).
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer


def _where(ctx: Any) -> tuple[Path, str]:
    import os

    from jetlink.cli.app import default_data_dir

    root = ctx.find_root()
    context = _context(root)
    path = root.params.get("data_dir") or os.environ.get("JETLINK_DATA_DIR") or \
        (context.data_dir if context is not None else None) or default_data_dir()
    from jetlink.cli.common import parameter_source

    typed = root.params.get("cluster") if parameter_source(root, "cluster") == "COMMANDLINE" \
        else None
    cluster = typed or os.environ.get("JETLINK_CLUSTER") or \
        (context.cluster if context is not None else None) or "local"
    return Path(path).expanduser(), cluster


def _context(root: Any) -> Any:
    """The jetlink context in force for the line typed so far (--context, JETLINK_CONTEXT,
    the selected one), or None; a broken or missing one completes nothing from it, and
    nothing is said on the terminal while the operator types."""
    import contextlib
    import io

    from jetlink.cli.common import context_in_force
    from jetlink.core.errors import JetlinkError

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return context_in_force(root)
    except JetlinkError:
        return None


LIVE_TIMEOUT = 2.0  # seconds a completion waits for a server at most


def _backend(ctx: Any) -> Any:
    """The backend of the command line as typed so far (core/backend.py), creating
    nothing, a live server waited for :data:`LIVE_TIMEOUT` at most."""
    import contextlib
    import dataclasses
    import io

    from jetlink.cli.common import target_in_force
    from jetlink.core.backend import open_backend
    from jetlink.core.clock import SystemClock

    with contextlib.redirect_stderr(io.StringIO()):  # no notice while the operator types
        target = target_in_force(ctx)
    if target is not None:
        target = dataclasses.replace(target, timeout=min(float(target.timeout), LIVE_TIMEOUT))
    path, cluster = _where(ctx)
    return open_backend(target, path, cluster, SystemClock, create=False, step=False)


def _in_data_dir(ctx: Any, dd: Any, names: Callable[[Any], list[str]]) -> list[str]:
    _path, name = _where(ctx)
    if not dd.has_cluster(name):
        return []
    return names((ctx, dd, dd.open(name, create_local=False)))


def _on_server(js: Any, what: str | None, ctx: Any) -> list[str]:
    """The server's names of ``what`` (streams, consumers of the typed stream, buckets);
    topics, links and groups are the embedded engine's only."""
    if what == "streams":
        return js.stream_names()
    if what == "consumers":
        stream = ctx.params.get("stream")
        return js.consumer_names(stream) if stream else []
    if what == "buckets":
        from jetlink.core.kv import kv_statuses

        return [st.bucket for st in kv_statuses(js.streams())]
    if what in _DR:
        from jetlink.core.dr.readiness import dr_names

        return list(getattr(dr_names(js.streams()), what))
    return []


def _offer(names: Callable[[Any], list[str]], live: str | None = None
           ) -> Callable[[typer.Context, str], list[str]]:
    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        try:
            with _backend(ctx) as backend:
                found = backend.either(data_dir=lambda dd: _in_data_dir(ctx, dd, names),
                                       server=lambda js: _on_server(js, live, ctx))
            return sorted(n for n in found if n.startswith(incomplete))
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


def _mirror_topics(found: Any) -> list[str]:
    ctx, dd, cl = found
    return _mirror_topic_names(dd, cl, ctx.params.get("link"))


def _mirror_topic_names(dd: Any, cl: Any, link: str | None) -> list[str]:
    from jetlink.core.clock import SystemClock
    from jetlink.core.kafka.mirrors import Mirrors

    if "links" not in cl.table_names():
        return []
    return [m.mirror_topic_name for m in Mirrors(dd, cl.name, SystemClock()).list(link, None)]


# The names the DR verbs take (core/dr/readiness.py ``DrNames``): mirrors to fail over, KV
# mirror buckets, streams and buckets a promote or failover made (to fail back), and what
# `dr check` checks.
_DR = ("mirrors", "kv_mirrors", "promoted", "kv_promoted", "checked")


def _dr(what: str) -> Callable[[Any], list[str]]:
    def names(found: Any) -> list[str]:
        from jetlink.core.dr.readiness import dr_names

        _ctx, dd, cl = found
        if cl.kind != "nats":
            return []
        return list(getattr(dr_names(_js(dd, cl).streams()), what))

    return names


def _dr_checked(ctx: Any, dd: Any) -> list[str]:
    """`dr check NAME`: the mirrors and KV mirror buckets of the cluster given by
    --cluster, else of every cluster of the data directory (dr check checks them all), and
    the mirror topics of their links."""
    from jetlink.cli.common import given as was_given

    root = ctx.find_root()
    given = root.params.get("cluster") if was_given(root, "cluster") else None
    out: list[str] = []
    for info in dd.clusters(create_local=False):
        if given and info.name != given:
            continue
        try:
            cl = dd.open(info.name, create_local=False)
            if info.kind == "nats":
                out += _dr("checked")((ctx, dd, cl))
            else:
                out += _mirror_topic_names(dd, cl, None)
        except Exception:  # noqa: BLE001, S112 - a cluster that does not read offers nothing
            continue
    return out


def dr_checked(ctx: typer.Context, incomplete: str) -> list[str]:
    """`dr check NAME`: see :func:`_dr_checked` (a live server: its mirrors and KV mirror
    buckets)."""
    try:
        with _backend(ctx) as backend:
            found = backend.either(data_dir=lambda dd: _dr_checked(ctx, dd),
                                   server=lambda js: _on_server(js, "checked", ctx))
        return sorted(n for n in set(found) if n.startswith(incomplete))
    except Exception:  # noqa: BLE001 - completion offers nothing rather than fail
        return []


streams = _offer(_streams, "streams")
consumers = _offer(_consumers, "consumers")
buckets = _offer(_buckets, "buckets")
topics = _offer(_topics)
groups = _offer(_groups)
def _rest_in_force(ctx: Any) -> bool:
    """A REST API named for the links / mirrors verbs (--rest-url, on the group or the
    verb; JETLINK_REST_URL; the context's rest_url): their names are that API's, not the
    data directory's."""
    import os

    from jetlink.cli.app import ENV_REST_URL

    c = ctx
    while c is not None:
        if c.params.get("rest_url"):
            return True
        c = c.parent
    if os.environ.get(ENV_REST_URL):
        return True
    try:
        from jetlink.cli.common import context_in_force

        found = context_in_force(ctx.find_root())
    except Exception:  # noqa: BLE001 - a broken context: none in force for completion
        return False
    return bool(found is not None and found.rest_url)


def _local_kafka(offer: Callable[[typer.Context, str], list[str]]
                 ) -> Callable[[typer.Context, str], list[str]]:
    """``offer`` of the data directory's links or mirror topics, nothing when a REST API is
    in force (completion asks no endpoint: a TAB sends no request)."""
    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        return [] if _rest_in_force(ctx) else offer(ctx, incomplete)
    return complete


links = _local_kafka(_offer(_links))
mirror_topics = _local_kafka(_offer(_mirror_topics))


def comma_list(offer: Callable[[typer.Context, str], list[str]]
               ) -> Callable[[typer.Context, str], list[str]]:
    """``offer`` for the last item of a comma-separated value (``--topics a,b,c``): what
    comes before the last comma kept, the items already named not offered again."""
    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        head, comma, last = incomplete.rpartition(",")
        named = set(head.split(",")) if comma else set()
        return [f"{head}{comma}{name}" for name in offer(ctx, last) if name not in named]
    return complete


mirror_topic_lists = comma_list(mirror_topics)
mirror_streams = _offer(_dr("mirrors"), "mirrors")
kv_mirror_buckets = _offer(_dr("kv_mirrors"), "kv_mirrors")
promoted_streams = _offer(_dr("promoted"), "promoted")
promoted_buckets = _offer(_dr("kv_promoted"), "kv_promoted")


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


def contexts(ctx: typer.Context, incomplete: str) -> list[str]:
    """The jetlink contexts (core/contexts.py), for --context and the context verbs."""
    try:
        from jetlink.core.contexts import ContextStore

        return [n for n in ContextStore().names() if n.startswith(incomplete)]
    except Exception:  # noqa: BLE001 - a completion never fails the shell
        return []


def benchmarks(ctx: typer.Context, incomplete: str) -> list[str]:
    """The benchmarks ``bench all --only / --skip`` take."""
    from jetlink.core.bench.suite import BENCHES

    return [n for n in BENCHES if n.startswith(incomplete)]


def scale_series(ctx: typer.Context, incomplete: str) -> list[str]:
    """The series ``bench scale --only`` takes."""
    from jetlink.core.bench.scale import SERIES

    return [n for n in SERIES if n.startswith(incomplete)]
