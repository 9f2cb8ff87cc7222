"""Write the summary at the top of docs/benchmarks.md from one `jetlink bench all --json` run.

    jetlink bench all --json -o docs/benchmarks.json
    python scripts/benchmarks_md.py            # rewrites the summary from docs/benchmarks.json
    python scripts/benchmarks_md.py --check    # exit 1 when the summary is not the JSON's

The summary sits between the markers below; everything else in docs/benchmarks.md (what each
benchmark does, where the time goes, what was tried) is written by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
DATA = ROOT / "docs" / "benchmarks.json"
BEGIN = "<!-- bench all: begin (scripts/benchmarks_md.py writes this part) -->"
END = "<!-- bench all: end -->"


def render(doc: dict) -> str:
    from jetlink.core.bench.suite import BENCHES, figure_text, judge

    doc = {**doc, "goals": judge(doc["benchmarks"])}  # the goals as defined now
    m = doc["machine"]
    load = m.get("load_average_start") or []
    load_end = m.get("load_average_end") or []
    lines = [
        BEGIN,
        "",
        f"One run of `jetlink bench all --json` ({m['date']}), the whole document in "
        "[benchmarks.json](benchmarks.json). Machine: "
        f"{m['cpus']} CPUs, {m['memory']}, {m['system']}, Python {m['python']}, "
        f"{m['java']}, {m['nats_server']}; load average "
        f"{', '.join(f'{x:.2f}' for x in load[:1])} at the start, "
        f"{', '.join(f'{x:.2f}' for x in load_end[:1])} at the end.",
        "",
        "| benchmark | figure | goal | measured | met |",
        "|---|---|---|---|---|",
    ]
    for g in doc["goals"]:
        if g["met"] is None:
            measured, met = f"not measured: {g.get('note', '')}", "-"
        else:
            measured = figure_text(g["measured"], g["unit"])
            met = "yes" if g["met"] else "**no**"
        command = "jetlink bench " + " ".join(BENCHES[g["bench"]]["args"] or [g["bench"]])
        lines.append(f"| `{command}` | {g['what']} | {g['goal']} | {measured} | {met} |")
    met = sum(1 for g in doc["goals"] if g["met"])
    missed = sum(1 for g in doc["goals"] if g["met"] is False)
    lines += ["", f"{met} goals met, {missed} not met, "
              f"{len(doc['goals']) - met - missed} not measured.", "", END]
    return "\n".join(lines)


def rewrite(text: str, section: str) -> str:
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + section + rest.split(END, 1)[1]
    # first time: after the introduction (before the first "## " heading)
    i = text.index("\n## ")
    return text[:i + 1] + section + "\n" + text[i:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when out of date")
    ap.add_argument("--data", default=str(DATA), help="the bench all JSON document")
    args = ap.parse_args()
    section = render(json.loads(Path(args.data).read_text(encoding="utf-8")))
    text = DOC.read_text(encoding="utf-8")
    new = rewrite(text, section)
    if args.check:
        if new != text:
            print("docs/benchmarks.md: the bench all summary is not docs/benchmarks.json's; "
                  "run python scripts/benchmarks_md.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
