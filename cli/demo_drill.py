"""The machinery of ``jetlink demo``'s drills (cli/demo.py's scenario and cli/demo_live.py's
live one): :class:`Drill` runs jetlink commands in this process exactly as typed in a shell,
narrates them (each command line, what it printed, cut) and collects the summary; a command
that does not end as expected raises :class:`DemoFailed`. :func:`section` picks a
natscli-style section of a command's output, :func:`first` its first lines (the rest
counted). Below both scenarios; cli/demo.py composes them.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jetlink.cli.console import PROG

STEPS = 9  # the steps of cli/demo.py's scenario (the live one sets its own)
OUTPUT_LINES = 14  # lines of a command's output shown before "... N more lines"


class DemoFailed(Exception):
    """A command of the drill did not end as expected."""


@dataclass
class Ran:
    """One command of the drill: its exit status, outputs and wall time."""

    code: int
    out: str
    err: str
    seconds: float

    def doc(self) -> Any:
        return json.loads(self.out)


@dataclass
class Summary:
    """What the drill measured: the rows of the summary table and the JSON document."""

    moved: list[dict[str, Any]] = field(default_factory=list)
    clamps: list[dict[str, Any]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)


# Variables of the caller the drill's commands must not see: jetlink's own, natscli's (a
# NATS_URL or NATS_CONTEXT would send the drill to a live server) and the config home (a
# selected context of theirs, with a server or a data directory).
CALLERS = ("JETLINK_", "NATS_")


@contextmanager
def _isolated_env(width: int, config_home: Path) -> Iterator[None]:
    """The commands see no JETLINK_* or NATS_* variable of the caller and no context of
    theirs (XDG_CONFIG_HOME is the drill's own, empty): a context, a REST URL, a cluster or a
    live server of theirs must not redirect the drill. And a terminal width for tables."""
    keep = ("COLUMNS", "XDG_CONFIG_HOME")
    saved = {k: v for k, v in os.environ.items() if k.startswith(CALLERS) or k in keep}
    for k in saved:
        del os.environ[k]
    os.environ["COLUMNS"] = str(width)
    os.environ["XDG_CONFIG_HOME"] = str(config_home)
    try:
        yield
    finally:
        for k in [k for k in os.environ if k.startswith(CALLERS) or k in keep]:
            del os.environ[k]
        os.environ.update(saved)


class Drill:
    """Runs the scenario's commands and narrates them (``console`` None: silent, --json)."""

    def __init__(self, data_dir: Path, work: Path, console: Any, err: Any, width: int) -> None:
        self.data_dir = data_dir
        self.work = work
        self.console = console
        self.err = err
        self.width = width
        self.summary = Summary()
        self._step_started = 0.0
        self.steps = STEPS
        self.cleanups: list[Callable[[], None]] = []  # run by finish, last first

    # -- running commands -------------------------------------------------------------------

    def invoke(self, args: Sequence[str]) -> Ran:
        """Run ``jetlink --data-dir DIR ARGS`` in this process; its stdout and stderr
        captured."""
        from jetlink.cli.main import run

        out, err = io.StringIO(), io.StringIO()
        argv = ["--data-dir", str(self.data_dir), *args]
        started = time.perf_counter()
        config_home = self.work / "config"
        config_home.mkdir(mode=0o700, exist_ok=True)
        with _isolated_env(self.width, config_home), redirect_stdout(out), \
                redirect_stderr(err):
            try:
                run(argv)  # always ends with SystemExit
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        if code == 130:  # the command was interrupted (Ctrl-C): so is the drill
            raise KeyboardInterrupt
        return Ran(code, out.getvalue(), err.getvalue(), time.perf_counter() - started)

    def run(self, *args: str, expect: int = 0, show: bool = True, head: int = OUTPUT_LINES,
            tail: int = 0, select: Callable[[list[str]], list[str]] | None = None,
            note: str | None = None) -> Ran:
        """Run a command of the drill, show it and what it printed (``head`` first lines,
        ``tail`` last ones, or the lines ``select`` picks); DemoFailed when its exit status
        is not ``expect``."""
        ran = self.invoke(args)
        if show:
            printed = "".join(text for text in (ran.out, ran.err) if text.strip())
            self.show(args, printed, code=ran.code, head=head, tail=tail, select=select,
                      note=note)
        if ran.code != expect:
            raise DemoFailed(
                f"`{self.command_line(args)}` exited with status {ran.code} (expected {expect})"
                f"\n{ran.out}{ran.err}".rstrip()
            )
        return ran

    def query(self, *args: str) -> Any:
        """A read the narration does not show: its --json document."""
        return self.run(*args, "--json", show=False).doc()

    # -- narration --------------------------------------------------------------------------

    @staticmethod
    def command_line(args: Sequence[str], program: str = PROG) -> str:
        return " ".join([program, *(shlex.quote(a) for a in args)])

    def step(self, n: int, title: str, text: str) -> None:
        self._end_step()
        self._step_started = time.perf_counter()
        self.summary.steps.append({"step": n, "title": title})
        if self.console is None:
            self.err.print(f"jetlink demo: step {n}/{self.steps}: {title}")
            return
        from rich.rule import Rule
        from rich.text import Text

        self.console.print()
        self.console.print(Rule(Text(f" {n}/{self.steps}  {title} ", style="bold"), align="left",
                                style="cyan"))
        self.say(text)

    def _end_step(self) -> None:
        if self.summary.steps and "seconds" not in self.summary.steps[-1]:
            self.summary.steps[-1]["seconds"] = round(
                time.perf_counter() - self._step_started, 2)

    def say(self, text: str) -> None:
        if self.console is not None:
            from rich.text import Text

            self.console.print(Text(text, style="italic"))

    def show(self, args: Sequence[str], printed: str, *, code: int = 0,
             head: int = OUTPUT_LINES, tail: int = 0,
             select: Callable[[list[str]], list[str]] | None = None, note: str | None = None,
             program: str = PROG, pipe: str | None = None) -> None:
        """Print ``$ PROGRAM ARGS`` (``| PIPE`` after it: a shell pipeline, ``printed`` what
        its last command printed) and what it printed (stdout, then stderr), cut."""
        if self.console is None:
            return
        from rich.text import Text

        line = Text("$ ", style="bold green")
        line.append(self.command_line(args, program) + (f" | {pipe}" if pipe else ""),
                    style="bold")
        if note:
            line.append(f"   # {note}", style="dim")
        self.console.print(line)
        lines = printed.rstrip("\n").splitlines() if printed.strip() else []
        if select is not None:
            lines = select(lines)
        elif len(lines) > head + tail + 1:
            hidden = len(lines) - head - tail
            lines = [*lines[:head], more_lines(hidden), *(lines[-tail:] if tail else [])]
        for text in lines:
            self.console.print(Text(text), overflow="ellipsis", no_wrap=True, crop=True)
        if code:
            self.console.print(Text(f"[exit status {code}]", style="yellow"))

    def pause(self, seconds: float, why: str) -> None:
        self.say(f"(waiting {seconds:g}s: {why})")
        time.sleep(seconds)

    # -- summary ----------------------------------------------------------------------------

    def moved(self, what: str, count: int, unit: str, *, seconds: float | None = None,
              how: str = "", left: str = "") -> None:
        row: dict[str, Any] = {"what": what, unit: count, "how": how}
        if seconds is not None:
            row["seconds"] = round(seconds, 3)
            row[f"{unit}_per_second"] = round(count / seconds) if seconds > 0 else None
        if left:
            row["left"] = left
        self.summary.moved.append(row)

    def finish(self) -> None:
        self._end_step()
        while self.cleanups:
            self.cleanups.pop()()


def more_lines(hidden: int) -> str:
    """The line that stands for ``hidden`` lines of a command's output left out."""
    return f"... {hidden:,} more lines"


def first(n: int, pick: Callable[[list[str]], list[str]] | None = None,
          ) -> Callable[[list[str]], list[str]]:
    """Select the first ``n`` lines (of those ``pick`` selects, else of all), and
    :func:`more_lines` for the rest when there is more than one line left out."""

    def cut(lines: list[str]) -> list[str]:
        chosen = pick(lines) if pick is not None else lines
        if len(chosen) <= n + 1:
            return chosen
        return [*chosen[:n], more_lines(len(chosen) - n)]

    return cut


def section(heading: str) -> Callable[[list[str]], list[str]]:
    """Select a natscli-style section: the line ``heading``, the blank line after it, and
    its lines up to the next blank line."""

    def pick(lines: list[str]) -> list[str]:
        start = next((i for i, x in enumerate(lines) if x.strip() == heading), None)
        if start is None:
            return []
        out = [lines[start]]
        for text in lines[start + 1:]:
            if not text.strip() and len(out) > 1:
                break
            out.append(text)
        return out

    return pick
