"""The promotion report of ``stream|kv promote|failover`` (core/dr ``PromoteReport``), as
the CLI prints it and the dashboard's promote / failover dialogs show it: one rendering."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jetlink.cli import output

if TYPE_CHECKING:  # pragma: no cover
    from jetlink.cli.app import App

# The report's subjects_from, said after the subjects.
SUBJECTS_FROM = {
    "given": "given",
    "bucket": "the origin bucket's",
    "origin": "the origin's",
    "positions": "the origin's, as last synced",
    "topology": "the origin's in the topology file",
    "promoted": "as promoted before",
}


def _where(origin: dict[str, Any]) -> tuple[str, str]:
    """(``ORDERS@west``, ``cluster west`` / ``domain west``) of a report's origin."""
    kind = "domain" if "domain" in origin else "cluster"
    place = origin.get(kind, "")
    if not place:
        return origin["stream"], "the mirror's own domain"
    return f"{origin['stream']}@{place}", f"{kind} {place}"


def render_promotion(app: App, doc: dict[str, Any], *, label: str | None = None) -> None:
    """The promotion report (:func:`promotion_columns`) on stdout."""
    promotion_columns(doc, label=label).render(app)


def promotion_columns(doc: dict[str, Any], *, label: str | None = None) -> output.Columns:
    """The promotion report: what the origin and the mirror held, the subjects and where
    they come from, the consumers placed and the clamps. ``label``: what was promoted as the
    user named it (default ``Stream NAME``; ``KV bucket NAME`` for kv promote / failover).
    The dashboard's dialogs show these same lines."""
    name, origin = doc["stream"], doc["origin"]
    where, scope = _where(origin)
    what = label or f"Stream {name}"
    how = " (failover)" if doc["action"] == "failover" else ""
    dry = doc.get("dry_run", False)
    at = f" at {doc['promoted_at']}" if doc.get("promoted_at") else ""
    before = doc.get("subjects_before")
    changed = (f"; its subjects {'would be' if dry else 'were'} changed from "
               f"{', '.join(before)} to {', '.join(doc['subjects'])}") if before else ""
    if doc.get("already_done"):
        head = (f"{what} was already promoted{how}{at}: "
                + ("nothing left to do" if not changed else changed[2:]))
    elif doc.get("resumed"):
        head = (f"{what} was promoted before{how}{at}: "
                + ("would place" if dry else "placing") + " what an earlier run left"
                + changed)
    elif dry:
        head = f"{what} would be promoted{how} (dry run): it would stop mirroring {where}"
    else:
        head = f"{what} was promoted{how}: it no longer mirrors {where}"
    if dry and (doc.get("already_done") or doc.get("resumed")):
        head += " (dry run)"
    cols = output.Columns(head)

    def seq(value: Any) -> str:
        return "unknown" if value is None else output.comma(value)

    cols.title("Promotion")
    cols.row("Action", doc["action"])
    cols.row("Origin", f"{origin['stream']} in {scope}")
    cols.row("Origin State", "reachable" if origin["reachable"] else origin.get("error", ""))
    last = seq(doc["origin_last_seq"])
    if not origin["reachable"] and doc["origin_last_seq"] is not None:
        last += " (last known)"
    cols.row("Origin Last Sequence", last)
    cols.row("Mirror Last Sequence", seq(doc["mirror_last_seq"]))
    lag = seq(doc["lag"])
    if doc["lag"] is not None and not origin["reachable"]:
        lag += " (last reported)"
    cols.row("Lag", lag)
    pending = doc.get("origin_pending")
    if pending is None:
        cols.row("Not Copied", "unknown (the origin does not answer)"
                 if not origin["reachable"] else "unknown")
    else:
        cols.row("Not Copied", f"{output.comma(pending)} (forced)" if doc["forced"]
                 else output.comma(pending))
    came = SUBJECTS_FROM.get(doc.get("subjects_from", ""), "")
    if before:
        came += f"; {'would replace' if dry else 'replaced'} {', '.join(before)}"
    cols.row("Subjects", ", ".join(doc["subjects"]) + (f" ({came})" if came else ""))
    pos = doc.get("positions") or {"source": "none"}
    placed = doc.get("consumers") or []
    source = {"origin": "read from the origin now",
              "synced": "as synced to this side",
              "none": "none"}[pos["source"]]
    if pos.get("synced"):
        source += f" at {pos['synced']} ({output.since(pos['age_ms'] * 1_000_000)} ago)"
    cols.row("Consumer Positions", source)
    if pos.get("note"):
        cols.row("Note", pos["note"])
    clamped = "Consumers To Clamp" if dry else "Clamped Consumers"
    cols.row(clamped, "none", not doc["clamps"])
    if placed:
        cols.title("Consumers To Place" if dry else "Consumers Placed")
        for p in placed:
            state = "" if dry and p["status"] == "planned" else f" ({p['status']})"
            if p.get("error"):
                state = f" ({p['status']}: {p['error']})"
            clamp = ", clamped" if p["clamped"] else ""
            if p["status"] == "exists" and p.get("error"):  # someone else's, kept as it is
                cols.row(p["consumer"], f"ack floor {seq(p['ack_floor'])} on the origin, not "
                                        f"placed: {p['error']}")
                continue
            cols.row(p["consumer"], f"ack floor {seq(p['ack_floor'])} on the origin, starts at "
                                    f"{seq(p['start_seq'])}{clamp}{state}")
    if doc["clamps"]:
        cols.title(clamped)
        for clamp in doc["clamps"]:
            cols.row(f"{clamp.get('stream') or name} > {clamp['consumer']}",
                     f"from {seq(clamp['from'])} to {seq(clamp['to'])}")
    return cols
