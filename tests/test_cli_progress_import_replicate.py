"""Progress bars of ``jetlink stream import`` and ``jetlink replicate``: the core
callbacks they are drawn from (core/lake.py ``import_stream(on_total=, on_rows=)``,
core/replication.py ``pump_until_idle(on_moved=)``), and the bars themselves: the one helper
cli/output.py ``progress``, on stderr, only on a terminal, never with --json, never with
``replicate --follow``. CliRunner's streams are not terminals: a test that wants a bar
replaces ``output.stderr_is_terminal`` and records the bars opened (Rich draws nothing
readable on a stream that is no terminal: what a bar looks like is checked on a fake one)."""

from __future__ import annotations

import io
import json

import pytest
from helpers import doc, ok

from jetlink.cli import output
from jetlink.cli import replicate as replicate_cli
from jetlink.cli import stream as stream_cli
from jetlink.cli.app import App
from jetlink.core import lake
from jetlink.core import replication as R
from jetlink.core.config.stream import StreamConfig
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir


def _dataset(js, tmp_path, n=7):
    js.add_stream(StreamConfig(name="ORDERS", subjects=["orders.>"]))
    js.publish_batch([(f"orders.{i}", b"x", None) for i in range(n)])
    out = tmp_path / "lake"
    lake.export_stream(js, "ORDERS", str(out))
    return str(out)


def _running(calls):
    out, total = [], 0
    for n in calls:
        total += n
        out.append(total)
    return out


class _NotEmbedded:
    """The engine behind another JetStreamAPI implementation: the import takes the path a
    live server takes (publishes deduplicated by Nats-Msg-Id)."""

    def __init__(self, js):
        self._js = js

    def __getattr__(self, name):
        return getattr(self._js, name)


# -- core callbacks -------------------------------------------------------------------------------


def test_import_reports_the_total_first_then_rows_up_to_it(js, other, tmp_path):
    path = _dataset(js, tmp_path)
    events = []
    result = lake.import_stream(other, "COPY", path, txn_rows=3,
                                on_total=lambda n: events.append(("total", n)),
                                on_rows=lambda n: events.append(("rows", n)))
    assert result["messages"] == 7
    assert events == [("total", 7), ("rows", 3), ("rows", 3), ("rows", 1)]


def test_import_over_the_interface_reports_rows_per_acknowledged_batch(js, other, tmp_path):
    path = _dataset(js, tmp_path)
    for stored, dups in ((7, 0), (0, 7)):  # again: every row a duplicate, counted all the same
        total, rows = [], []
        result = lake.import_stream_api(_NotEmbedded(other), "COPY", path, chunk=3,
                                        on_total=total.append, on_rows=rows.append)
        assert (result["messages"], result["duplicates"]) == (stored, dups)
        assert total == [7]
        assert _running(rows) == [3, 6, 7]


def test_a_refused_import_reports_no_rows(js, other, tmp_path):
    path = _dataset(js, tmp_path)
    other.add_stream(StreamConfig(name="COPY", subjects=["orders.>"]))
    other.publish("orders.x", b"already")
    rows = []
    with pytest.raises(lake.LakeError):
        lake.import_stream(other, "COPY", path, on_rows=rows.append)
    assert rows == []


def test_pump_reports_the_messages_moved_per_transaction(dd, js, clock):
    js.add_stream(StreamConfig(name="O", subjects=["o.>"]))
    js.add_stream(StreamConfig.from_json({"name": "M", "mirror": {"name": "O"}}))
    js.add_stream(StreamConfig.from_json({"name": "ALL", "sources": [{"name": "M"}]}))
    js.publish_batch([("o.x", b"x", None)] * 7)
    moved = []
    reports = R.pump_until_idle(dd, clock, batch=3, on_moved=moved.append)
    assert sorted((r.target, r.copied) for r in reports) == [("ALL", 7), ("M", 7)]
    assert all(n > 0 for n in moved)
    assert sum(moved) == sum(r.copied + r.skipped for r in reports) == 14
    assert max(moved) <= 3
    moved.clear()
    R.pump_until_idle(dd, clock, on_moved=moved.append)  # nothing pending: never called
    assert moved == []


# -- the bars --------------------------------------------------------------------------------------


@pytest.fixture
def bars(monkeypatch):
    """Every output.progress a command opens: ``[{"label", "total", "enabled", "advanced"}]``."""
    made = []
    real = output.progress

    class Recorded(real):
        def __init__(self, app, label, total, *, enabled=True):
            self.rec = {"label": label, "total": total, "enabled": enabled, "advanced": []}
            made.append(self.rec)
            super().__init__(app, label, total, enabled=enabled)

        def __enter__(self):
            bar = super().__enter__()
            rec, advance = self.rec, bar.advance

            class Counting:
                def advance(self, n):
                    rec["advanced"].append(n)
                    advance(n)

            return Counting()

    monkeypatch.setattr(output, "progress", Recorded)
    return made


@pytest.fixture
def terminal(monkeypatch):
    """stderr counts as a terminal (Rich draws into CliRunner's captured stderr)."""
    monkeypatch.setattr(output, "stderr_is_terminal", lambda: True)


def _cli_dataset(jl, n=30):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("pub", "orders.new", "m{{Count}}", "--count", str(n), "-j"))
    out = jl.tmp / "lake"
    ok(jl("stream", "export", "ORDERS", f"parquet:{out}", "-j"))
    return out


def test_import_bar_on_a_terminal(jl, bars, terminal, monkeypatch):
    monkeypatch.setattr(stream_cli, "PROGRESS_MIN", 10)
    out = _cli_dataset(jl)
    other = str(jl.tmp / "other")
    result = ok(jl("--data-dir", other, "stream", "import", "COPY", f"parquet:{out}"))
    assert result.stdout == (
        f"Imported 30 messages into new stream COPY (sequences 1 to 30) from {out}\n")
    assert "Importing" not in result.stdout  # the bar goes to stderr
    assert bars[-1]["label"] == "Importing"
    assert (bars[-1]["total"], bars[-1]["enabled"]) == (30, True)
    assert sum(bars[-1]["advanced"]) == 30


def test_small_import_has_no_bar(jl, bars, terminal):
    out = _cli_dataset(jl, n=3)
    result = ok(jl("--data-dir", str(jl.tmp / "other"), "stream", "import", "COPY",
                   f"parquet:{out}"))
    assert "Importing" not in result.stderr
    assert bars[-1]["label"] == "Importing" and bars[-1]["enabled"] is False


def test_import_bar_never_with_json_or_on_a_pipe(jl, monkeypatch):
    monkeypatch.setattr(stream_cli, "PROGRESS_MIN", 0)
    out = _cli_dataset(jl)
    piped = ok(jl("--data-dir", str(jl.tmp / "piped"), "stream", "import", "COPY",
                  f"parquet:{out}"))
    assert piped.stderr == "" and "Importing" not in piped.stdout
    monkeypatch.setattr(output, "stderr_is_terminal", lambda: True)
    result = ok(jl("--data-dir", str(jl.tmp / "json"), "stream", "import", "COPY",
                   f"parquet:{out}", "-j"))
    assert json.loads(result.stdout)["messages"] == 30
    assert result.stderr == ""


def _backlog(jl, monkeypatch, n):
    """Mirror BACKUP of ORDERS with ``n`` messages pending: the step the publishing command
    ends with copies 2 of ``n + 2`` and records a lag (StreamInfo's, returned: an estimate,
    as the server's)."""
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("stream", "add", "BACKUP", "--mirror", "ORDERS", "--defaults"))
    monkeypatch.setattr("jetlink.core.step.STEP_MAX_MSGS", 2)
    ok(jl("pub", "orders.new", "m", "--count", str(n + 2), "-j"))
    lag = doc(jl("stream", "info", "BACKUP", "-j"))["mirror"]["lag"]
    assert n - 2 <= lag <= n
    return lag


def test_replicate_bar_totals_the_lag_at_the_start(jl, bars, terminal, monkeypatch):
    lag = _backlog(jl, monkeypatch, 40)
    monkeypatch.setattr(replicate_cli, "PROGRESS_MIN", 10)
    bars.clear()
    result = ok(jl("replicate"))
    assert result.stdout.endswith("1 agreement: 40 messages copied, lag 0, 0 errors\n")
    assert "Replicating" not in result.stdout
    assert [(b["label"], b["total"]) for b in bars] == [("Replicating", lag)]
    assert sum(bars[0]["advanced"]) == 40


def test_replicate_bar_appears_once_much_is_copied_without_a_known_lag(jl, bars, terminal,
                                                                       monkeypatch):
    ok(jl("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults"))
    ok(jl("stream", "add", "BACKUP", "--mirror", "ORDERS", "--defaults"))
    store = DataDir(jl.data)  # published through the core: no step, no lag recorded
    JetStream(store.open("local")).publish_batch([("orders.new", b"x", None)] * 25)
    store.close()
    monkeypatch.setattr(replicate_cli, "PROGRESS_MIN", 10)
    monkeypatch.setattr(R, "SQL_BATCH", 5)  # transactions of 5: the bar opens at 15
    monkeypatch.setattr(R, "BATCH", 5)
    result = ok(jl("replicate"))
    assert result.stdout.endswith("1 agreement: 25 messages copied, lag 0, 0 errors\n")
    assert [(b["label"], b["total"]) for b in bars] == [("Replicating", None)]
    assert bars[0]["advanced"] == [15, 5, 5]


def test_replicate_small_catch_up_has_no_bar(jl, bars, terminal, monkeypatch):
    _backlog(jl, monkeypatch, 3)
    bars.clear()
    result = ok(jl("replicate"))
    assert bars == [] and "Replicating" not in result.stderr


def test_replicate_bar_never_with_json_or_on_a_pipe(jl, monkeypatch):
    _backlog(jl, monkeypatch, 40)
    monkeypatch.setattr(replicate_cli, "PROGRESS_MIN", 0)
    result = ok(jl("replicate"))  # CliRunner: not a terminal
    assert result.stderr == ""
    monkeypatch.setattr(output, "stderr_is_terminal", lambda: True)
    _more = DataDir(jl.data)
    JetStream(_more.open("local")).publish_batch([("orders.new", b"x", None)] * 5)
    _more.close()
    result = ok(jl("replicate", "-j"))
    assert json.loads(result.stdout)["copied"] == 5
    assert result.stderr == ""


def test_replicate_follow_has_no_bar(jl, bars, terminal, monkeypatch):
    _backlog(jl, monkeypatch, 40)
    monkeypatch.setattr(replicate_cli, "PROGRESS_MIN", 0)

    def stop(_seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(replicate_cli, "sleep", stop)
    bars.clear()
    result = jl("replicate", "--follow", "-j")
    assert result.exit_code == 130
    assert bars == []
    assert result.stderr == ("Replicating every 1s; Ctrl-C to stop\n"
                             "Stopped after 2 steps: 40 messages copied\n")


def test_an_estimated_total_that_proves_short_turns_indeterminate(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    monkeypatch.setattr("sys.stderr", tty)
    with output.progress(App(), "Replicating", 10) as bar:
        bar.advance(8)
        bar.advance(8)  # more than the estimate: 16 of an unknown total, not 16/10
    assert "Replicating" in tty.getvalue()
    assert "16/10" not in tty.getvalue()


def test_an_import_killed_part_way_continues_when_run_again(jl):
    """SIGKILL after some transactions of an embedded import: the stream holds a whole
    prefix of the dataset; the same import run again continues after it (no refusal, no
    row twice), and ends equal to an import that was never cut."""
    import subprocess
    import sys
    import textwrap

    out = _cli_dataset(jl, n=5000)
    other = jl.tmp / "killed"
    code = textwrap.dedent(f"""
        import os, signal
        from jetlink.core.clock import SystemClock
        from jetlink.core.jetstream import JetStream
        from jetlink.core.lake import import_stream
        from jetlink.core.store import DataDir
        js = JetStream(DataDir({str(other)!r}).open(), SystemClock())
        seen = []
        def on_rows(n):
            seen.append(n)
            if len(seen) == 3:
                os.kill(os.getpid(), signal.SIGKILL)
        import_stream(js, "COPY", {str(out)!r}, txn_rows=700, on_rows=on_rows)
    """)
    killed = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    part = doc(jl("--data-dir", str(other), "stream", "info", "COPY", "-j"))["state"]
    assert (part["messages"], part["last_seq"]) == (2100, 2100)
    result = ok(jl("--data-dir", str(other), "stream", "import", "COPY", f"parquet:{out}",
                   "-j"))
    assert doc(result)["messages"] == 2900  # the rest, once
    whole = jl.tmp / "whole"
    ok(jl("--data-dir", str(whole), "stream", "import", "COPY", f"parquet:{out}"))

    def view(data):
        return doc(jl("--data-dir", str(data), "stream", "view", "COPY", "--all", "-j"))

    assert view(other) == view(whole)
    for data in (other, whole):
        state = doc(jl("--data-dir", str(data), "stream", "info", "COPY", "-j"))["state"]
        assert (state["messages"], state["first_seq"], state["last_seq"]) == (5000, 1, 5000)
    # Done: a third run stores nothing and succeeds (every row there already), as over a
    # live server
    again = ok(jl("--data-dir", str(other), "stream", "import", "COPY", f"parquet:{out}"))
    assert again.stdout == (f"Imported 0 messages into stream COPY (no messages) from {out}; "
                            "5,000 duplicates skipped\n")
