"""Soak: one data directory shared by every kind of jetlink process at once.

For ``JETLINK_SOAK_SECONDS`` (30 in the suite; ``make soak`` runs 300) these run side by side
on one data directory, each as its own process started from the installed ``jetlink``:

- the dashboard following, headless through Textual's pilot, and once in a real terminal
  (a pseudo-terminal: Textual's own driver, keys typed into it);
- ``replicate --follow`` and ``positions sync --follow``;
- ``serve``, taking REST writes (link configs altered, the mirror topic paused and resumed);
- four writer loops: ``pub --count``, ``kv put``, ``topic produce --count``, ``stream edit``.

Then every acknowledged message is present exactly once in its origin and in its mirror
(each message has a subject of its own, so a duplicate or a loss shows in the counts), each
key holds its last acknowledged value on both sides, ``cluster check`` passes, and no process
printed a damage or I/O error (or a traceback). ``JETLINK_SOAK_REPORT=FILE`` writes the
figures as JSON (docs/faults.md has those of the long run).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from pathlib import Path

import pytest

SECONDS = float(os.environ.get("JETLINK_SOAK_SECONDS", "30"))
JETLINK = str(Path(sys.executable).with_name("jetlink"))
# What no process may ever print: the store reported damaged or failing, or a crash.
BAD = re.compile(r"damaged|malformed|disk I/O error|storage failed|Traceback|not a usable "
                 r"database", re.IGNORECASE)

TOPOLOGY = """
version = 1
[clusters.west]
kind = "nats"
[clusters.east]
kind = "nats"
[clusters.kwest]
kind = "kafka"
[clusters.keast]
kind = "kafka"
[streams.SOAK]
cluster = "west"
subjects = ["soak.>"]
[streams.SOAK_EAST]
cluster = "east"
mirror = { name = "SOAK", domain = "west" }
[kv.CFG]
cluster = "west"
history = 3
[kv_mirrors.CFG_EAST]
cluster = "east"
origin_bucket = "CFG"
domain = "west"
history = 3
[topics.t]
cluster = "kwest"
partitions = 2
"""

DASHBOARD = textwrap.dedent("""
    import asyncio, json, sys, time
    from pathlib import Path
    from jetlink.cli.dashboard.app import create_app

    path, seconds, out = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3]

    async def main():
        app = create_app(path, refresh=1, label="soak")
        lines = []
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause(0.5)
            await pilot.press("2")
            await pilot.press("f")
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                await pilot.pause(0.2)
                lines.append(str(app.query_one("#status").render()))
            following = app.following
            await pilot.press("f")
            await pilot.pause(0.2)
        with open(out, "w") as f:
            json.dump({"status": sorted(set(lines)), "following": following,
                       "followed": app.followed}, f)

    asyncio.run(main())
""")


# The dashboard's two threads at full speed in one process: its loader reading every cluster
# again and again beside its follower replicating (a reader and a writer of one process
# share SQLite's per-process locks: the case that once broke).
THREADS = textwrap.dedent("""
    import json, sys, threading, time
    from pathlib import Path
    from jetlink.core.step import bounded_step
    from jetlink.cli.dashboard.data import load
    from jetlink.core.clock import SystemClock
    from jetlink.core.store import DataDir

    path, seconds, out = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    end = time.monotonic() + seconds
    clock = SystemClock()
    errors, counts = [], {"loads": 0, "steps": 0, "copied": 0}

    def loader():
        while time.monotonic() < end:
            try:
                snap = load(path, clock)
                errors.extend(c.error for c in snap.clusters if c.error)
            except Exception as err:
                errors.append(f"{type(err).__name__}: {err}")
            counts["loads"] += 1

    def follower():
        dd = DataDir(path)
        while time.monotonic() < end:
            reports, links = bounded_step(dd, clock, lambda e: errors.append(str(e)),
                                          max_msgs=10_000)
            counts["steps"] += 1
            counts["copied"] += sum(r.copied for r in reports) + sum(r.copied for r in links)
            time.sleep(0.02)
        dd.close()

    threads = [threading.Thread(target=loader), threading.Thread(target=follower)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(out, "w") as f:
        json.dump({**counts, "errors": errors[:20], "error_count": len(errors)}, f)
""")


def _ctrl_c() -> None:
    """In the child before it runs: Ctrl-C (SIGINT) does what it does on a terminal. A
    shell's background job (`make soak &`) ignores it, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


_STARTED: list[subprocess.Popen] = []  # every process a test started, killed at its end


@pytest.fixture(autouse=True)
def _reap():
    yield
    while _STARTED:
        p = _STARTED.pop()
        if p.poll() is None:
            p.kill()
            p.wait()


class Proc:
    """A jetlink process whose output is collected in files."""

    def __init__(self, tmp: Path, name: str, args: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.out = tmp / f"{name}.out"
        self.err = tmp / f"{name}.err"
        self.p = subprocess.Popen(args, stdout=open(self.out, "wb"), stderr=open(self.err, "wb"),
                                  stdin=subprocess.DEVNULL, env=env, preexec_fn=_ctrl_c)
        _STARTED.append(self.p)

    def interrupt(self, timeout: float = 60) -> int:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            # Where it hangs: PYTHONFAULTHANDLER makes SIGABRT print every thread's stack.
            self.p.send_signal(signal.SIGABRT)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
            raise AssertionError(f"{self.name} did not end within {timeout}s of Ctrl-C:\n"
                                 f"{self.err.read_text(errors='replace')[-6000:]}") from None

    def text(self) -> str:
        return self.out.read_text(errors="replace") + self.err.read_text(errors="replace")


class Terminal:
    """``jetlink dashboard`` in a pseudo-terminal of 200x40, keys typed into it. (The status
    line starts with the data directory's path, which is tmp_path: at 120 columns, with a
    pytest-xdist worker's longer base directory, "following: N copied" fell off its end.)"""

    def __init__(self, env: dict[str, str]) -> None:
        import fcntl
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        # The terminal's size is the pty's: COLUMNS / LINES (a pytest-xdist worker has
        # 80 / 24) would override it.
        env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")}
        self.p = subprocess.Popen([JETLINK, "dashboard", "--refresh", "1s"], stdin=slave,
                                  stdout=slave, stderr=slave, env={**env,
                                                                   "TERM": "xterm-256color"},
                                  start_new_session=True)
        _STARTED.append(self.p)
        os.close(slave)
        self.output = bytearray()
        self._stop = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        poller = select.poll()  # not select(): a descriptor may be above 1024 in the suite
        poller.register(self.master, select.POLLIN)
        while not self._stop:
            if poller.poll(200):
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    return
                if not data:
                    return
                self.output += data

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait_for(self, text: str, timeout: float = 60) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text.encode() in self.output:
                return True
            time.sleep(0.1)
        return False

    def quit(self) -> int:
        self.type("q")
        try:
            rc = self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self._stop = True
        self.reader.join(5)
        os.close(self.master)
        return rc

    def text(self) -> str:
        plain = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-B]|\x1b[=>]", b"",
                       bytes(self.output))
        return plain.decode(errors="replace")


def _run(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([JETLINK, *args], env=env, capture_output=True, text=True,
                          timeout=300, **kw)


def _ok(args: list[str], env: dict[str, str]) -> str:
    r = _run(args, env)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


class Writers:
    """The writer loops: each runs its command again and again until the deadline and
    keeps what was acknowledged (exit 0). A failed command is kept with its output."""

    def __init__(self, env: dict[str, str], deadline: float) -> None:
        self.env = env
        self.deadline = deadline
        self.pubs = 0  # messages acknowledged
        self.produced = 0  # records acknowledged
        self.values: dict[str, str] = {}  # the last acknowledged value of each key
        self.ops: dict[str, int] = {"pub": 0, "kv put": 0, "topic produce": 0,
                                    "stream edit": 0, "rest": 0}
        self.failures: list[str] = []
        self.outputs: list[str] = []

    def _cmd(self, what: str, args: list[str]) -> bool:
        r = _run(args, self.env)
        self.outputs.append(r.stdout + r.stderr)
        self.ops[what] += 1
        if r.returncode != 0:
            self.failures.append(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
        return r.returncode == 0

    def pub(self) -> None:
        i = 0
        while time.monotonic() < self.deadline:
            i += 1
            if self._cmd("pub", ["--cluster", "west", "pub", f"soak.p{i}.{{{{Count}}}}", "x",
                                 "--count", "500"]):
                self.pubs += 500

    def kv(self) -> None:
        i = 0
        while time.monotonic() < self.deadline:
            i += 1
            key, value = f"k{i % 7}", f"v{i}"
            if self._cmd("kv put", ["--cluster", "west", "kv", "put", "CFG", key, value]):
                self.values[key] = value

    def produce(self) -> None:
        i = 0
        while time.monotonic() < self.deadline:
            i += 1
            if self._cmd("topic produce", ["--cluster", "kwest", "topic", "produce", "t",
                                           f"r{i}.{{{{Count}}}}", "--count", "200"]):
                self.produced += 200

    def edit(self) -> None:
        i = 0
        while time.monotonic() < self.deadline:
            i += 1
            self._cmd("stream edit", ["--cluster", "west", "stream", "edit", "SOAK",
                                      "--description", f"edit {i}", "-f"])
            time.sleep(0.2)

    def rest(self, url: str) -> None:
        """REST writes through serve: link configs altered, the mirror topic paused and
        resumed (resumed last)."""
        base = f"{url}/keast/links/dr"  # url: the printed base, .../kafka/v3/clusters
        i = 0
        while time.monotonic() < self.deadline:
            i += 1
            reqs = [("PUT", f"{base}/configs:alter",
                     {"data": [{"name": "consumer.offset.sync.ms", "value": str(1000 + i)}]}),
                    ("POST", f"{base}/mirrors:pause", {"mirror_topic_names": ["t"]}),
                    ("POST", f"{base}/mirrors:resume", {"mirror_topic_names": ["t"]})]
            for method, u, body in reqs:
                req = urllib.request.Request(u, method=method, data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
                self.ops["rest"] += 1
                try:
                    with urllib.request.urlopen(req, timeout=60) as resp:
                        self.outputs.append(resp.read().decode(errors="replace"))
                except Exception as err:  # noqa: BLE001 - kept and reported by the test
                    body = getattr(err, "read", lambda: b"")()
                    self.failures.append(f"rest {method} {u}: {err} {body!r}")
            time.sleep(0.3)


@pytest.mark.slow
def test_one_data_directory_shared_by_every_kind_of_process(tmp_path):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JETLINK_", "NATS_"))}
    env.update(JETLINK_DATA_DIR=str(data), XDG_CONFIG_HOME=str(tmp_path / "config"),
               NO_COLOR="1", PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
    topo = tmp_path / "soak.toml"
    topo.write_text(TOPOLOGY)
    _ok(["apply", str(topo), "-f"], env)
    _ok(["--cluster", "keast", "links", "create", "dr", "--source-cluster", "kwest",
         "-c", "consumer.offset.sync.ms=1000"], env)
    _ok(["--cluster", "keast", "mirrors", "create", "t", "--link", "dr"], env)
    _ok(["--cluster", "west", "consumer", "add", "SOAK", "C1", "--pull", "--defaults"], env)

    procs = [
        Proc(tmp_path, "replicate", [JETLINK, "replicate", "--follow", "--interval", "200ms"],
             env),
        Proc(tmp_path, "positions", [JETLINK, "--cluster", "east", "positions", "sync",
                                     "--follow", "--interval", "500ms"], env),
        Proc(tmp_path, "serve", [JETLINK, "serve", "--port", "0", "--json"], env),
    ]
    serve = procs[2]
    url = None
    for _ in range(600):
        text = serve.out.read_text()
        if text.strip():
            url = json.loads(text.splitlines()[0])["url"]
            break
        time.sleep(0.1)
    assert url, serve.text()
    pilot_out = tmp_path / "pilot.json"
    pilot = Proc(tmp_path, "pilot", [sys.executable, "-c", DASHBOARD, str(data), str(SECONDS),
                                     str(pilot_out)], env)
    threads_out = tmp_path / "threads.json"
    threads = Proc(tmp_path, "threads", [sys.executable, "-c", THREADS, str(data),
                                         str(SECONDS), str(threads_out)], env)
    term = Terminal(env)
    assert term.wait_for("Clusters"), term.text()[-2000:]
    term.type("2")
    time.sleep(0.5)
    term.type("f")
    assert term.wait_for("following:"), term.text()[-3000:]  # the key was taken

    writers = Writers(env, time.monotonic() + SECONDS)
    loops = [threading.Thread(target=fn) for fn in (writers.pub, writers.kv, writers.produce,
                                                     writers.edit)]
    loops.append(threading.Thread(target=writers.rest, args=(url,)))
    started = time.monotonic()
    for t in loops:
        t.start()
    for t in loops:
        t.join()
    elapsed = time.monotonic() - started
    assert pilot.p.wait(SECONDS + 300) == 0, pilot.text()
    assert threads.p.wait(SECONDS + 300) == 0, threads.text()
    following_seen = "following:" in term.text()
    assert term.quit() == 0, term.text()[-3000:]
    codes = {p.name: p.interrupt() for p in procs}
    # Ctrl-C ends the follow loops with 130; serve ends cleanly.
    assert codes == {"replicate": 130, "positions": 130, "serve": codes["serve"]}, codes
    assert codes["serve"] in (0, 130), serve.text()

    # Whatever was still pending is copied now.
    _ok(["replicate"], env)
    check = _run(["cluster", "check", "-j"], env)
    assert check.returncode == 0, check.stdout + check.stderr

    def info(cluster: str, stream: str) -> dict:
        return json.loads(_ok(["--cluster", cluster, "stream", "info", stream, "-j"], env))

    origin, mirror = info("west", "SOAK"), info("east", "SOAK_EAST")
    # Each message has a subject of its own: as many subjects as messages means none twice.
    for doc in (origin, mirror):
        state = doc["state"]
        assert (state["messages"], state["num_subjects"], state["last_seq"]) == (
            writers.pubs, writers.pubs, writers.pubs), (doc["config"]["name"], state)
    for key, value in writers.values.items():
        for cluster, bucket in (("west", "CFG"), ("east", "CFG_EAST")):
            got = _ok(["--cluster", cluster, "kv", "get", "CFG" if cluster == "west"
                       else bucket, key, "--raw"], env)
            assert got.strip() == value, (bucket, key, got, value)

    def records(cluster: str) -> int:
        doc = json.loads(_ok(["--cluster", cluster, "topic", "describe", "t", "-j"], env))
        return sum(p["log_end_offset"] for p in doc["partitions"])

    assert records("kwest") == records("keast") == writers.produced

    pilot_doc = json.loads(pilot_out.read_text())
    threads_doc = json.loads(threads_out.read_text())
    outputs = {p.name: p.text() for p in [*procs, pilot, threads]}
    outputs["loader and follower threads"] = "\n".join(threads_doc["errors"])
    outputs["terminal dashboard"] = term.text()
    outputs["pilot dashboard status"] = "\n".join(pilot_doc["status"])
    outputs["writers"] = "\n".join(writers.outputs + writers.failures)
    bad = {name: [text[max(0, m.start() - 300):m.end() + 3000] for m in
                  list(BAD.finditer(text))[:2]]
           for name, text in outputs.items() if BAD.search(text)}
    report = {
        "seconds": round(elapsed, 1),
        "operations": writers.ops,
        "messages": writers.pubs,
        "records": writers.produced,
        "kv_keys": len(writers.values),
        "dashboard_followed": pilot_doc["followed"],
        "threads": {k: threads_doc[k] for k in ("loads", "steps", "copied", "error_count")},
        "failed_commands": len(writers.failures),
        "damage_or_io_errors": sum(len(BAD.findall(t)) for t in outputs.values()),
    }
    if os.environ.get("JETLINK_SOAK_REPORT"):
        Path(os.environ["JETLINK_SOAK_REPORT"]).write_text(json.dumps(report, indent=2) + "\n")
    assert writers.failures == [], writers.failures[:5]
    assert not bad, bad
    assert threads_doc["error_count"] == 0, threads_doc["errors"]
    assert pilot_doc["following"] and following_seen
    assert min(writers.ops.values()) > 0, writers.ops


@pytest.mark.slow
def test_the_dashboard_threads_beside_short_lived_writers(tmp_path):
    """The dashboard's loader and follower threads in one process, with only short-lived
    commands beside them (``pub --count`` in a loop): every command's connection closes,
    and a closing connection that believes it is the last one checkpoints the log and
    deletes it. Once, the loader's header read dropped the follower's locks, and this
    ended in "disk I/O error", "database disk image is malformed" and truly damaged
    files within seconds."""
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JETLINK_", "NATS_"))}
    env.update(JETLINK_DATA_DIR=str(data), XDG_CONFIG_HOME=str(tmp_path / "config"))
    topo = tmp_path / "soak.toml"
    topo.write_text(TOPOLOGY)
    _ok(["apply", str(topo), "-f"], env)
    seconds = min(SECONDS, 12.0)
    out = tmp_path / "threads.json"
    threads = Proc(tmp_path, "threads", [sys.executable, "-c", THREADS, str(data),
                                         str(seconds), str(out)], env)
    published = 0
    end = time.monotonic() + seconds - 1
    i = 0
    while time.monotonic() < end:
        i += 1
        _ok(["--cluster", "west", "pub", f"soak.p{i}.{{{{Count}}}}", "x", "--count", "2000"],
            env)
        published += 2000
    assert threads.p.wait(seconds + 300) == 0, threads.text()
    doc = json.loads(out.read_text())
    assert doc["error_count"] == 0, doc["errors"]
    assert not BAD.search(threads.text()), threads.text()[-2000:]
    check = _run(["cluster", "check"], env)
    assert check.returncode == 0, check.stdout + check.stderr
    _ok(["replicate"], env)
    state = json.loads(_ok(["--cluster", "east", "stream", "info", "SOAK_EAST", "-j"],
                           env))["state"]
    assert (state["messages"], state["num_subjects"]) == (published, published)
