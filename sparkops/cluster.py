"""A Spark standalone cluster on this machine's loopback: one master and N workers, started
from the installed pyspark (``spark-class ...Master`` / ``...Worker``), stopped by PID.

Used by ``jetlink bench spark --local-cluster N`` and the tests: a real cluster master (the
driver talks to executors in other JVMs over the network, tasks are scheduled across
workers, shuffles go between executors), without anything but pyspark and Java installed.

    with LocalCluster(workers=2) as url:       # spark://127.0.0.1:PORT, every worker ALIVE
        ...

Imported only by the Spark commands and tests (pyspark is located, not imported).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["ClusterError", "LocalCluster", "spark_env"]


class ClusterError(RuntimeError):
    """The cluster did not come up (a daemon exited, or no worker registered in time)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_home() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise ClusterError("pyspark is not installed (pip install 'jetlink[spark]')")
    return Path(spec.origin).parent


def spark_env() -> dict[str, str]:
    """The environment of the daemons and of a ``jetlink`` run against them: this pyspark as
    SPARK_HOME, loopback addresses, no inherited Spark or jetlink settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JETLINK_", "PYSPARK_GATEWAY", "SPARK_"))}
    env.update(SPARK_HOME=str(_spark_home()), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_NO_DAEMONIZE="1")
    return env


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it is still there after 15 s."""
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


class LocalCluster:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` each on 127.0.0.1,
    every port free-picked; the context value is the master URL once every worker is ALIVE.
    ``root``: where logs and work directories go (default: a temporary directory, removed)."""

    def __init__(self, workers: int = 2, *, cores: int = 1, memory: str = "1g",
                 root: str | os.PathLike[str] | None = None, timeout: float = 180) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers, self.cores, self.memory, self.timeout = workers, cores, memory, timeout
        self._own_root = root is None
        self.root = Path(root) if root is not None else Path(
            tempfile.mkdtemp(prefix="jetlink-spark-cluster-"))
        self.procs: list[subprocess.Popen] = []
        self.url = ""
        self.webui = 0

    # -- the master's view ----------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The master's JSON (``/json/``): workers, applications."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.webui}/json/", timeout=5) as r:
            return json.loads(r.read().decode())

    def logs(self) -> str:
        return "\n".join(f"== {f.name}\n{f.read_text(errors='replace')[-2000:]}"
                         for f in sorted((self.root / "logs").glob("*.log")))

    def _wait(self) -> None:
        deadline = time.monotonic() + self.timeout
        last: Any = None
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise ClusterError(f"a Spark daemon exited ({p.returncode}):\n{self.logs()}")
            try:
                last = self.state()
                alive = [w for w in last.get("workers", []) if w.get("state") == "ALIVE"]
                if len(alive) >= self.workers:
                    return
            except (OSError, ValueError):  # not up yet, or its UI still answering HTML
                pass
            time.sleep(0.5)
        raise ClusterError(f"{self.workers} workers did not register with the master in "
                           f"{self.timeout:.0f} s (last: {last})")

    # -- start / stop ---------------------------------------------------------------------
    def start(self) -> str:
        spark_class = _spark_home() / "bin" / "spark-class"
        if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
            raise ClusterError("no Java runtime (java on PATH or JAVA_HOME)")
        logs = self.root / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        port, self.webui = _free_port(), _free_port()
        self.url = f"spark://127.0.0.1:{port}"
        env = spark_env()

        def launch(name: str, args: list[str]) -> None:
            with open(logs / f"{name}.log", "wb") as out:
                self.procs.append(subprocess.Popen(
                    [str(spark_class), *args], env=env, stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT, cwd=self.root))

        try:
            launch("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                              "--port", str(port), "--webui-port", str(self.webui)])
            for i in range(self.workers):
                launch(f"worker{i}", [
                    "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                    "--port", str(_free_port()), "--webui-port", str(_free_port()),
                    "--cores", str(self.cores), "--memory", self.memory,
                    "--work-dir", str(self.root / f"work{i}")])
            self._wait()
        except BaseException:
            self.stop()
            raise
        return self.url

    def stop(self) -> None:
        for p in reversed(self.procs):
            _stop(p)
        self.procs = []
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
