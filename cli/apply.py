"""``jetlink apply FILE`` and ``jetlink export``: topology as code.

The rules live in core/topology/ (plan.py: one planner, ``plan_topology``, over the
clusters of the data directory or the live servers a file binds its clusters to; apply.py
``apply_changes``; the clusters' ``read`` for export); this module reads the file, picks the
backend (cli/common.py ``topology_backend``), prints the plan and the report, and asks
before ``--prune`` deletes anything. Exit status 3 (nothing changed) when the file or the
plan has problems, 1 when a change failed half-way (what was applied and what not is
printed) or a server does not answer, 0 otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from jetlink.cli import common, output
from jetlink.cli.app import App, ExitCode
from jetlink.cli.common import data_dir, usage
from jetlink.cli.options import JsonOption, force_option

SIGN = {"create": "+", "update": "~", "delete": "-"}


def _value(v: Any) -> str:
    """A field's value in a plan line as the file writes it (TOML's and JSON's ``true``,
    ``false``; lists and tables as compact JSON); ``unset`` for none."""
    if isinstance(v, (dict, list, bool)):
        return json.dumps(v, separators=(",", ":"), sort_keys=True)
    return "unset" if v is None else str(v)


def render_plan(app: App, plan_doc: dict[str, Any]) -> None:
    changes = plan_doc["changes"]
    if not changes:
        n = plan_doc["unchanged"]
        output.line(app, f"No changes: {n} object{' is' if n == 1 else 's are'} as the file "
                         "declares them")
        return
    output.line(app, "Plan:")
    for c in changes:
        output.line(app, f"  {SIGN[c['action']]} {_label(c)}")
        for d in c.get("diff", []):
            output.line(app, f"      {d['field']}: {_value(d['from'])} -> {_value(d['to'])}")
        if c.get("removes"):
            output.line(app, f"      removes stored messages: {c['removes']}")
    counts = {a: sum(1 for c in changes if c["action"] == a) for a in SIGN}
    output.line(app, f"{counts['create']} to create, {counts['update']} to update, "
                     f"{counts['delete']} to delete, {plan_doc['unchanged']} unchanged")


def _label(c: dict[str, Any]) -> str:
    where = "" if c["kind"] == "cluster" else f" in cluster {c['cluster']}"
    return f"{c['action']} {c['kind']} {c['name']}{where}"


def render_result(app: App, report: Any, *, said: int = 0) -> None:
    """The report's lines; ``said``: how many Applied lines were printed already (as the
    changes were made)."""
    for c in report.applied[said:]:
        output.line(app, f"Applied: {_label(c.to_json())}")
    if report.failed is not None:
        output.line(app, f"Failed: {_label(report.failed.to_json())}: "
                         f"{output.error_text(report.error)}")
        for c in report.not_applied:
            output.line(app, f"Not applied: {_label(c.to_json())}")
        done = len(report.applied)
        left = len(report.not_applied)
        uncertain = (" The connection failed during that change: the server may or may not "
                     "have made it." if getattr(report, "uncertain", False) else "")
        output.notice(app, f"Partly applied: {done} applied, 1 failed, {left} not tried."
                           f"{uncertain} Run the same apply again (--dry-run first) to see "
                           "what is left.")


def apply(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Topology file (TOML or JSON).",
                                         show_default=False, readable=False)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; change nothing.")
                       ] = False,
    prune: Annotated[bool, typer.Option(
        "--prune", help="Also delete the objects of the file's clusters it does not declare.")
    ] = False,
    force: Annotated[bool, force_option(
        "Prune or make an update that removes stored messages")] = False,
    json_output: JsonOption = False,
) -> None:
    """Apply a topology file (data dir or servers).

    Or to live NATS servers: when the file binds its clusters to servers ([clusters.NAME]
    server = "nats://..." or context = "NAME"), or when a server is in force (--server,
    NATS_URL, a context), which then takes the file's unbound clusters: `local` as its own
    JetStream, any other cluster NAME as JetStream domain NAME.

    Validates the whole resulting topology first (the file's objects over what the data
    directory or the servers hold): any problem, or a change the engine or server would
    refuse (a non-editable stream field, fewer partitions, a link's source), is listed and
    nothing is changed (exit 3). Then prints the plan (create / update with each field's
    old and new value / delete) and applies it in dependency order: clusters, ACLs,
    topics, streams (origins first, across clusters and domains), links, mirror topics;
    deletions in reverse. --prune deletes the objects of the file's clusters the file does not
    declare (asks on a terminal; -f without one); so does an update whose limits remove
    stored messages (shown in the plan: a lower max_msgs, interest retention with no
    consumer, a shorter history...), as stream edit and kv edit. A change that fails stops
    the run: what
    was applied, what failed (the server's error as it answered) and what was not tried is
    printed (exit 1). Applying the same file twice changes nothing. With --json: {plan,
    result, dry_run}.
    """
    from jetlink.core.topology import Topology, validate_topology
    from jetlink.core.topology.plan import plan_topology, unique_problems

    app = App.of(ctx)
    _global_cluster_unused(ctx, app, "apply", "each object of the file names its cluster "
                                             "(cluster = NAME; without one: local)")
    topo = Topology()
    topo.add_file(str(file))
    backend, bind_problems = common.topology_backend(app, topo)
    if backend is None:  # the bindings have problems: nothing connected, nothing planned
        problems = unique_problems([*validate_topology(topo), *bind_problems])
        plan_doc = {"prune": prune, "changes": [], "unchanged": 0,
                    "problems": [p.to_dict() for p in problems],
                    "warnings": [w.to_dict() for w in topo.warnings]}
    else:
        plan = plan_topology(backend, topo, prune=prune)
        plan_doc = plan.to_json()
    if prune and not topo.clusters and not topo.problems:
        # (--prune acts on declared clusters only: said so; a file that did not read is
        # said by its problems instead)
        output.notice(app, f"jetlink: notice: --prune deletes objects of the clusters the "
                           f"file declares ([clusters.NAME]); {file} declares none, so "
                           "nothing is pruned (declare [clusters.local] to prune the default "
                           "cluster)")
    if plan_doc["problems"]:
        from jetlink.cli.validate import render as render_problems

        doc = {"files": [str(file)], "problems": plan_doc["problems"],
               "warnings": plan_doc["warnings"], "valid": False}
        app.emit({"plan": plan_doc, "result": None, "dry_run": dry_run},
                 # a plan with problems is no file that is OK, wherever the problems are
                 # (the data directory's objects the plan breaks: an origin --prune deletes)
                 human=lambda a, _d: render_problems(a, doc, ok_lines=False))
        raise typer.Exit(ExitCode.PROBLEMS)
    if plan_doc.get("warnings") and not app.json:
        from jetlink.cli.validate import render_warnings

        render_warnings(app, plan_doc["warnings"])
    if dry_run or not plan.pending:
        app.emit({"plan": plan_doc, "result": None, "dry_run": dry_run},
                 human=lambda a, _d: render_plan(a, plan_doc))
        return
    deletes = [c for c in plan.pending if c.action == "delete"]
    removing = [c for c in plan.pending if c.removes]
    if not app.json:  # the plan before the first change, each change said as it is made
        render_plan(app, plan_doc)
    if deletes or removing:
        from jetlink.core.errors import UsageError

        try:
            if deletes:
                output.confirm(app, f"Really delete {len(deletes)} object(s) the file does "
                                    "not declare", force=force, action="prune")
            if removing:  # as stream edit and kv edit: a destructive update asks, or needs -f
                what = "; ".join(f"{c.label}: {c.removes}" for c in removing)
                output.confirm(app, f"Really update {len(removing)} object(s) removing stored "
                                    f"messages ({what})", force=force,
                               action=f"apply updates that remove stored messages ({what})")
        except UsageError as err:
            if not app.json:
                raise
            # (no terminal to ask on: the refusal, with the plan a human run printed above)
            output.print_json({**err.to_dict(), "plan": plan_doc, "result": None,
                               "dry_run": False})
            raise typer.Exit(err.exit_code) from None
    report, said = _run(app, backend, plan, plan_doc)
    result = report.to_json()

    def human(a: App, _d: Any) -> None:
        render_result(a, report, said=said)

    app.emit({"plan": plan_doc, "result": result, "dry_run": False}, human=human)
    if not report.ok:
        raise typer.Exit(ExitCode.FAILED)


def _global_cluster_unused(ctx: typer.Context, app: App, verb: str, how: str) -> None:
    """The global --cluster typed before a verb that does not take it (a topology names
    its clusters): said, not silently dropped (as replicate says it is no filter)."""
    if common.parameter_source(ctx.find_root(), "cluster") == "COMMANDLINE":
        output.notice(app, f"jetlink: notice: --cluster {app.cluster} before the command is "
                           f"not used by {verb}: {how}")


def _run(app: App, backend: Any, plan: Any, plan_doc: dict[str, Any]) -> tuple[Any, int]:
    """The plan's changes made (core/topology/apply.py), each ``Applied:`` line printed as
    its change is made (not with --json); Ctrl-C says how far it got and the way on (with
    --json also as the one document: the plan, what was applied, the change under way and
    what was not, ``interrupted`` true). Returns the report and how many Applied lines were
    printed."""
    from jetlink.core.topology.apply import ApplyReport, apply_changes

    made: list[Any] = []

    def made_one(change: Any, err: Any) -> None:
        if err is None:
            made.append(change)
            if not app.json:
                output.line(app, f"Applied: {_label(change.to_json())}")

    try:
        report = apply_changes(backend, plan, on_change=made_one)
    except KeyboardInterrupt as stop:
        pending = plan.pending
        done, total = len(made), len(pending)
        change = getattr(stop, "under_way", pending[done] if done < total else None)
        under_way = (f"; the change under way ({_label(change.to_json())}) stopped "
                     "with it (on a live server the server may have made it)"
                     if change is not None else "")
        output.notice(app, f"jetlink: interrupted: apply stopped after {output.comma(done)} of "
                           f"{output.comma(total)} "
                           f"change{'s' if total != 1 else ''}{under_way}. Run the same "
                           "apply again (--dry-run first) to see what is left.")
        if app.json:  # (a script reads what was made from the one document, as ever)
            rest = [c for c in pending if c not in made and c is not change]
            result = ApplyReport(applied=list(made), not_applied=rest).to_json()
            result["under_way"] = change.to_json() if change is not None else None
            output.print_json({"plan": plan_doc, "result": result, "dry_run": False,
                               "interrupted": True})
        raise
    return report, len(made)


def export(
    ctx: typer.Context,
    clusters: Annotated[list[str] | None, typer.Option(
        "--cluster", "-c", metavar="NAME",
        help="Only this cluster (repeatable). With a server in force: the JetStream domain "
             "NAME, exported as cluster NAME.")] = None,
    source: Annotated[Path | None, typer.Option(
        "--from", metavar="FILE", dir_okay=False,
        help="Read the live servers FILE binds its clusters to (server = / context =).")
    ] = None,
    out: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE", help="Write the topology to FILE (default, or -: "
        "stdout).",
        dir_okay=False)] = None,
    json_output: JsonOption = False,
) -> None:
    """Write a topology (data dir or servers).

    Clusters, streams, KV buckets, KV mirrors and aggregates, topics, cluster links and
    mirror topics, in the format jetlink apply and jetlink validate read; apply of the
    output on an empty data directory makes the same topology.

    With a server in force (--server, NATS_URL, a context): the server's streams and KV
    objects, as one cluster named after its JetStream domain (--js-domain, else the one the
    server reports; `local` without one), or the domains given with --cluster; each cluster
    bound to the server in its table (server, js_domain, or context when the server came
    from one; passwords and tokens are never written), so jetlink apply of the output
    changes nothing. --from FILE reads the live servers FILE binds its clusters to, and
    writes their bindings as FILE gives them; a FILE with problems (one that does not read,
    a binding that is wrong) is shown as jetlink validate shows it, exit status 3.

    --output FILE writes JSON when FILE ends in .json. With --json: the document as JSON
    (with --output: {output, format, clusters}).
    """
    import tomli_w

    from jetlink.core.topology.embedded import export_document

    app = App.of(ctx)
    _global_cluster_unused(ctx, app, "export", "export --cluster NAME (after the command) "
                                              "selects the clusters written")
    if out is not None and str(out) == "-":
        out = None  # (-o -: stdout, as the checks' --outfile '' and most tools take it)
    if out is not None and out.suffix.lower() in (".yaml", ".yml"):
        raise usage(f"--output {out}: YAML is not written: a name ending in .json gets JSON, "
                    "any other TOML (the formats validate and apply read)")
    from jetlink.core.store import validate_cluster_name

    # a name no cluster can have (a domain exported as a cluster too): a usage error (exit
    # 2), before any server is asked
    for name in clusters or ():
        validate_cluster_name(name, field="--cluster")
    try:
        live = common.live_export_backend(app, clusters, source)
    except common.FileProblems as bad:  # as validate shows them (exit 3)
        from jetlink.cli.validate import render as render_problems

        app.emit(bad.to_json(), human=lambda a, d: render_problems(a, d, ok_lines=False))
        raise typer.Exit(ExitCode.PROBLEMS) from None
    if live is not None:
        doc = live.read(None)
        if source is None:
            _withheld_secrets(app, live.bindings)
        else:  # (the file's own tables: its secrets never copied either)
            _file_secrets_withheld(app, doc)
    else:
        withheld: list[tuple[str, str, str]] = []
        doc = export_document(data_dir(app, step=False), common.make_clock(),
                              clusters or None, withheld)
        for cluster, link, key in withheld:
            output.notice(app, f"jetlink: warning: link {link} (cluster {cluster}): {key} is "
                          "sensitive and not exported; add it to the link's configs in the "
                          "file before applying it elsewhere (a plan keeps the one a link "
                          "has when the file leaves it out)")
    if out is not None:
        as_json = out.suffix.lower() == ".json"
        text = (json.dumps(doc, indent=2) + "\n") if as_json else tomli_w.dumps(doc)
        from jetlink.core.outfile import write_output

        write_output(out, text)
        n = len(doc.get("clusters", {}))
        app.emit({"output": str(out), "format": "json" if as_json else "toml", "clusters": n},
                 human=lambda a, _d: output.notice(
                     a, f"Wrote the topology of {n} cluster{'s' if n != 1 else ''} to {out}"))
        return
    app.emit(doc, human=lambda a, d: output.line(a, tomli_w.dumps(d).rstrip("\n")))


def _withheld_secrets(app: App, bindings: dict[str, Any]) -> None:
    """A notice per cluster whose binding left a password or token out (never written):
    what ``apply`` of the file needs given again."""
    from jetlink.core.topology.targets import withheld

    for name, b in bindings.items():
        _secrets_notice(app, name, withheld(b.target), "the connection's {}")


def _file_secrets_withheld(app: App, doc: dict[str, Any]) -> None:
    """``export --from FILE``: each cluster table the file gave, without its password or
    token (keys, or a server URL's user part); a notice for each one left out."""
    from jetlink.core.topology.targets import table_without_secrets

    for name, table in (doc.get("clusters") or {}).items():
        doc["clusters"][name], left = table_without_secrets(table)
        _secrets_notice(app, name, left, "the {} of the file's binding")


def _secrets_notice(app: App, name: str, left: list[str], what: str) -> None:
    """The notice for cluster ``name``'s secrets ``left`` out of an export (``what``: whose
    they were, ``{}`` their names): what ``apply`` of the file needs given again."""
    if left:
        keys = " or ".join(f"{k} = \"...\"" for k in left)
        output.notice(app, f"jetlink: notice: cluster {name}: {what.format(' and '.join(left))} "
                      f"is not written (secrets never are); before jetlink apply of the file, "
                      f"add {keys} to [clusters.{name}] or bind it to a context (context = "
                      "NAME)")


def register(app: typer.Typer) -> None:
    app.command("apply")(apply)
    app.command("export")(export)
