"""The SparkSession jetlink's jobs run in.

``get_session`` builds (or reuses) the session from ``--master`` (default ``local[*]``),
repeated ``--conf k=v`` and ``--properties-file``, quietly: the web UI off for local masters,
log level ERROR, the driver bound to loopback for local masters (SPARK_LOCAL_IP), few shuffle
partitions locally. Under spark-submit (PYSPARK_GATEWAY_PORT set) the session spark-submit made
is used as it is, with its own master and configuration.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_MASTER = "local[*]"

# Settings for a quiet, small local run (each can be overridden with --conf).
_LOCAL_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.adaptive.enabled": "true",
}
_ALWAYS = {
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


class SparkConfError(ValueError):
    """A malformed --conf pair or properties file (the message names it)."""


@dataclass
class SparkOptions:
    """Where and how a job runs (the ``jetlink spark`` global options)."""

    master: str = DEFAULT_MASTER
    conf: list[str] = field(default_factory=list)
    properties_file: str | None = None
    app_name: str = "jetlink"

    def settings(self) -> dict[str, str]:
        """The configuration the session gets: local defaults, then the properties file, then
        each ``--conf`` (later ones win)."""
        out: dict[str, str] = dict(_ALWAYS)
        if is_local(self.master):
            out.update(_LOCAL_DEFAULTS)
        if self.properties_file:
            out.update(read_properties(self.properties_file))
        for pair in self.conf:
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise SparkConfError(f"--conf {pair!r}: expected KEY=VALUE")
            out[key.strip()] = value
        return out


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-")


def read_properties(path: str) -> dict[str, str]:
    """A Spark properties file (``spark-defaults.conf`` format: ``key value`` or ``key=value``
    per line, ``#`` comments)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise SparkConfError(f"--properties-file {path}: {e.strerror or e}") from None
    out: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        for i, ch in enumerate(line):
            if ch in " \t=":
                key, value = line[:i], line[i + 1:].strip()
                break
        else:
            raise SparkConfError(f"--properties-file {path} line {n}: expected 'key value'")
        out[key] = value
    return out


def under_spark_submit() -> bool:
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT"))


def get_session(opts: SparkOptions | None = None) -> Any:
    """The active session when there is one (spark-submit, tests), else a new one."""
    from pyspark.sql import SparkSession

    opts = opts or SparkOptions()
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if under_spark_submit():
        return SparkSession.builder.getOrCreate()
    settings = opts.settings()
    if is_local(opts.master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return _start(opts, settings)


def jvm_log_path() -> Path:
    """Where the driver JVM's own console output goes (its startup notices, its errors in
    full): ``$TMPDIR/jetlink-spark-<uid>.log``, replaced at each start."""
    import tempfile

    return Path(tempfile.gettempdir()) / f"jetlink-spark-{os.getuid()}.log"


def _start(opts: SparkOptions, settings: dict[str, str]) -> Any:
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    conf = SparkConf(loadDefaults=False)
    conf.setMaster(opts.master).setAppName(opts.app_name)
    for k, v in settings.items():
        conf.set(k, v)
    _quiet_jvm_logging()
    log = open(jvm_log_path(), "wb")  # noqa: SIM115 - the JVM keeps writing to it
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": log, "stdout": log})
    finally:
        log.close()
    sc = SparkContext(conf=conf, gateway=gateway)
    sc.setLogLevel("ERROR")
    return SparkSession(sc)


def _quiet_jvm_logging() -> None:
    """The driver JVM logs errors only (jetlink's conf/log4j2.properties) unless the user set
    up Spark's logging (SPARK_CONF_DIR or a log4j option of their own)."""
    if os.environ.get("SPARK_CONF_DIR"):
        return
    opts = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if "log4j" in opts or "log4j" in os.environ.get("JAVA_TOOL_OPTIONS", ""):
        return
    conf = Path(__file__).with_name("conf") / "log4j2.properties"
    flag = f"--driver-java-options -Dlog4j2.configurationFile={conf.as_uri()}"
    os.environ["PYSPARK_SUBMIT_ARGS"] = f"{flag} {opts or 'pyspark-shell'}"
