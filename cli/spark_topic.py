"""``jetlink spark mirror-topic``: the bulk copy of a topic into a mirror topic."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from jetlink.cli import common, completion, output
from jetlink.cli.app import App
from jetlink.cli.common import data_dir
from jetlink.cli.options import JsonOption
from jetlink.cli.spark_session import ConfOpt, MasterOpt, PropsOpt, session_maker, with_progress


def _human(app: App, d: dict[str, Any]) -> None:
    output.kv_block(app, {
        "Job": d["job"],
        "Target": d["target"] + (" (created)" if d["created"] else ""),
        "Source": d["source"],
        "Link": d["link"],
        "Rows in": output.comma(d["rows_in"]),
        "Rows out": output.comma(d["rows_out"]),
        "Seconds": f"{d['seconds']:.2f}",
        "Rows/s": output.comma(int(d["rows_per_second"])),
        "Cursors": ", ".join(f"{c['partition']} at {c['cursor']}" for c in d["cursors"])
        or "none",
        "Mirror status": d["mirror_status"],
        "Offsets synced": output.comma(d["offsets_synced"]),
        "Clamps": output.comma(len(d["clamps"])) if d["failover"] else "none (no failover)",
    })
    for c in d["clamps"]:
        output.line(app, f"  Clamped consumer group {c['group']} on {c['topic']} partition "
                         f"{c['partition']}: offset {c['from']} -> {c['to']}")


def _check(store: Any, cluster: str, topic: str, link: str) -> None:
    """What refuses the copy for its link or its existing mirror, read only (core's
    ``bulk_check``): a refused job starts no Spark and creates nothing."""
    from jetlink.core.kafka.mirrors import Mirrors
    from jetlink.core.store import DataDir

    store.check_exists()
    read = DataDir(store.path, create=False)
    try:
        Mirrors(read, cluster, common.make_clock()).bulk_check(topic, link)
    finally:
        read.close()


def mirror_topic(
    ctx: typer.Context,
    topic: Annotated[str, typer.Argument(
        metavar="TOPIC", help="The mirror topic (the source topic's name after the link's "
        "prefix); created when absent.")],
    link: Annotated[str, typer.Option(
        "--link", "-l", metavar="LINK", help="The cluster link (stored in --cluster, the "
        "destination).", autocompletion=completion.links)],
    failover: Annotated[bool, typer.Option(
        "--failover", help="Fail the mirror over after the copy and the offset sync "
        "(clamps reported).")] = False,
    master: MasterOpt = "local[*]",
    conf: ConfOpt = None,
    properties_file: PropsOpt = None,
    json_output: JsonOption = False,
) -> None:
    """Seed a mirror topic from its source topic.

    Copies every partition of the link's source topic into the mirror topic, offsets,
    timestamps, keys, values and headers kept, exactly as the link would; the mirror is
    created (like `jetlink mirrors create`) when absent, and an existing one must hold no
    records. The mirror is paused while the job runs; then each partition's cursor is set at
    the source's log end offset the job read, and the link continues from there. Consumer
    group offsets are synced through the link's group filters; --failover then stops the
    mirror, clamping synced offsets beyond its log end offsets (one line per clamp).
    """
    from jetlink.sparkops.topics import seed_mirror_topic

    app = App.of(ctx)
    store = data_dir(app)
    make = session_maker(master, conf, properties_file)  # its options first (usage: 2)
    _check(store, app.cluster, topic, link)  # then the link and mirror, before Spark starts
    spark = make()

    def job() -> Any:
        return seed_mirror_topic(spark, store, common.make_clock(), app.cluster, topic, link,
                                 failover=failover)

    from jetlink.cli.spark_session import interrupt_said

    summary = interrupt_said(
        app, lambda: job() if app.json or not output.stdout_is_terminal() else with_progress(job))
    output.emit(app, summary.to_json(), _human)


def register_commands(spark_app: typer.Typer) -> None:
    """Add this module's commands to the ``jetlink spark`` group."""
    spark_app.command("mirror-topic")(mirror_topic)
