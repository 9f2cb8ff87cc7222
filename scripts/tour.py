"""Re-run the commands of a docs tour and refresh (or check) the output printed under them.

    python scripts/tour.py docs/cli-tour-replication.md           # rewrite the outputs
    python scripts/tour.py --check docs/cli-tour-replication.md   # exit 1 when one changed

A tour is Markdown whose ```console blocks hold `$ command` lines, each followed by what it
printed. Commands run in order through bash in a fresh data directory (JETLINK_DATA_DIR, as
the tour's preamble says) with the checkout's virtualenv first on PATH, stdout not a terminal.
Blocks containing a `# meanwhile` line are interactive (two shells, Ctrl-C) and kept as they
are; in a block where one command is marked `# in a second terminal`, that command and its
output are kept and the others run. A command marked `# figures vary` (a benchmark) is run
and its output refreshed, never compared. The temporary directory the tour runs in is shown
as `/tmp/tour`, as the tours' preambles say. A command that exits non-zero gets an
`[exit status N]` line, as the tours show it.
``--check`` compares with durations, timestamps and byte sizes masked, since those differ
from run to run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = "```"
VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)?(ns|µs|ms|s|m|h)\b"), "<dur>"),
    (re.compile(r"\b\d[\d,.]* ?(B|KiB|MiB)\b"), "<size>"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?"), "<date>"),
    (re.compile(r"\"(created|ts|time|last_ts|first_ts|active)\": \"?[^,\"]+\"?"), r'"\1": <v>'),
    (re.compile(r"\"active\": \d+"), '"active": <v>'),
    (re.compile(r"\[\d\d:\d\d:\d\d\]"), "[<clock>]"),
    (re.compile(r"(Nats-Stream-Source: .*) \w{8}$", re.M), r"\1 <identity>"),
    (re.compile(r"\$JS\.ACK\.[^\"\s]+"), "<ack reply>"),  # it holds the delivery time
    (re.compile(r"[ ─│╭╮╰╯├┤┬┴┼]+"), " "),
]


def mask(text: str) -> str:
    for pattern, repl in VOLATILE:
        text = pattern.sub(repl, text)
    return text


def blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line indexes of each console block's body."""
    out, start = [], None
    for i, line in enumerate(lines):
        if start is None and line.strip() == FENCE + "console":
            start = i + 1
        elif start is not None and line.strip() == FENCE:
            out.append((start, i))
            start = None
    return out


def run(command: str, env: dict[str, str], cwd: str) -> str:
    proc = subprocess.run(["bash", "-c", command], env=env, cwd=cwd,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=60)
    out = proc.stdout.rstrip("\n") + "\n" if proc.stdout.strip() else ""
    if proc.returncode != 0:
        out += f"[exit status {proc.returncode}]\n"
    return out


def shown_as(output: str, tmp: str) -> str:
    """``output`` with the tour's temporary directory shown as /tmp/tour; in a table cell
    (the path followed by spaces) the cell keeps its width."""
    pad = " " * max(0, len(tmp) - len("/tmp/tour"))
    return re.sub(re.escape(tmp) + r"(\S*)( +)?",
                  lambda m: f"/tmp/tour{m[1]}{m[2] + pad if m[2] else ''}", output)


def refresh(path: Path, check: bool) -> bool:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    tmp = tempfile.mkdtemp(prefix="jetlink-tour-")
    env = dict(os.environ, JETLINK_DATA_DIR=os.path.join(tmp, "data"), COLUMNS="200",
               PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("JETLINK_CLUSTER", None)
    env.pop("JETLINK_CONTEXT", None)
    new: list[str] = []
    pos = 0
    same = True
    try:
        for start, end in blocks(lines):
            new.extend(lines[pos:start])
            body = lines[start:end]
            pos = end
            if any(line.startswith("# meanwhile") for line in body):
                new.extend(body)
                continue
            i = 0
            while i < len(body):
                line = body[i]
                if not line.startswith("$ "):
                    new.append(line)
                    i += 1
                    continue
                j = i + 1
                while j < len(body) and not body[j].startswith("$ "):
                    j += 1
                if "# in a second terminal" in line:
                    new.extend(body[i:j])
                    i = j
                    continue
                output = shown_as(run(line[2:].rstrip("\n"), env, tmp), tmp)
                shown = body[i + 1:j]
                gap = []  # blank lines between this command's output and the next command
                while shown and not shown[-1].strip():
                    gap.insert(0, shown.pop())
                if "# figures vary" not in line and mask(output) != mask("".join(shown)):
                    same = False
                    if check:
                        print(f"{path}: output of `{line[2:].strip()}` changed:\n{output}",
                              file=sys.stderr)
                new.append(line)
                new.extend(output.splitlines(keepends=True))
                new.extend(gap)
                i = j
        new.extend(lines[pos:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not check:
        path.write_text("".join(new), encoding="utf-8")
    return same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    ok = all([refresh(f, args.check) for f in args.files])
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
