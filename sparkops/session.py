"""The SparkSession jetlink's jobs run in.

``get_session`` builds (or reuses) the session from ``--master`` (default ``local[*]``),
repeated ``--conf k=v`` and ``--properties-file``, quietly: the web UI off for local masters,
log level ERROR, the driver bound to loopback for local masters (SPARK_LOCAL_IP), few shuffle
partitions locally. Under spark-submit (PYSPARK_GATEWAY_PORT set) the session spark-submit made
is used as it is, with its own master and configuration.

Cluster masters (``spark://``, ``yarn``, ``k8s://``): executors run Python workers with
``spark.pyspark.python``, which defaults to ``PYSPARK_PYTHON`` or else this interpreter (the
one jetlink is installed in): right for a standalone cluster on the same machines with the same
paths; elsewhere set it (``--conf spark.pyspark.python=/path/to/python``) to an interpreter
with jetlink installed on every executor. A master on a loopback address
(``spark://127.0.0.1:7077``, ``spark://localhost:7077``) is a cluster on this machine: the
driver binds to 127.0.0.1 as for a local master.

JVM start-up: the driver JVM (and the short-lived JVM of Spark's launcher before it) starts
from a class-data-sharing archive of the classes it loaded the first time (Java 13+ dynamic
CDS: the first run writes it with ``-XX:ArchiveClassesAtExit``, later runs map it with
``-XX:SharedArchiveFile``), kept in ``$XDG_CACHE_HOME/jetlink/`` (default ``~/.cache/jetlink``)
under a name keyed by the Java runtime, the pyspark version and installation. An archive the
JVM cannot use is ignored by the JVM (``-Xshare:auto``) and removed, to be made again;
``JETLINK_SPARK_CDS=0`` turns all of this off. See docs/benchmarks.md (Spark) for what it saves.
"""

from __future__ import annotations

import os
import sys
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
# A standalone master on a loopback address: the driver is reachable there only.
_LOOPBACK_DEFAULTS = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
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
        else:
            # executors start Python workers with this interpreter (see the module doc)
            out["spark.pyspark.python"] = os.environ.get("PYSPARK_PYTHON") or sys.executable
            if is_loopback(self.master):
                out.update(_LOOPBACK_DEFAULTS)
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


def is_loopback(master: str) -> bool:
    """A ``spark://`` master whose hosts are all loopback addresses (a cluster on this
    machine)."""
    if not master.startswith("spark://"):
        return False
    hosts = []
    for hp in master[len("spark://"):].split(","):
        host = hp.rsplit(":", 1)[0] if hp.count(":") == 1 or hp.startswith("[") else hp
        hosts.append(host.strip("[]").lower())
    return all(h == "localhost" or h == "::1" or h.startswith("127.") for h in hosts)


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
    if is_local(opts.master) or is_loopback(opts.master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers run this interpreter (the one jetlink is installed in) unless told
    # otherwise; on a cluster every executor needs jetlink installed in PYSPARK_PYTHON.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
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
    user_opts = settings.get("spark.driver.extraJavaOptions", "")
    java_opts = _log_options(user_opts)
    cds = ClassDataSharing.plan() if cds_enabled() else None
    env = {}
    if cds is not None:
        java_opts += cds.driver_flags
        env["SPARK_LAUNCHER_OPTS"] = " ".join(
            [*cds.launcher_flags, os.environ.get("SPARK_LAUNCHER_OPTS", "")]).strip()
    if java_opts:
        # the user's own options last: the JVM takes the last of a repeated flag
        conf.set("spark.driver.extraJavaOptions", " ".join([*java_opts, user_opts]).strip())
    log_path = jvm_log_path()
    log = open(log_path, "wb")  # noqa: SIM115 - the JVM keeps writing to it
    try:
        with _environ(env):
            gateway = launch_gateway(conf, popen_kwargs={"stderr": log, "stdout": log})
    finally:
        log.close()
    if cds is not None:
        cds.started(getattr(gateway, "proc", None), log_path)
    sc = SparkContext(conf=conf, gateway=gateway)
    sc.setLogLevel("ERROR")
    return SparkSession(sc)


class _environ:
    """Environment variables set for a block (then restored)."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values, self.saved = values, {}

    def __enter__(self) -> None:
        for k, v in self.values.items():
            self.saved[k] = os.environ.get(k)
            os.environ[k] = v

    def __exit__(self, *exc: Any) -> None:
        for k, old in self.saved.items():
            if old is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = old


def _log_options(user_opts: str = "") -> list[str]:
    """The driver JVM logs errors only (jetlink's conf/log4j2.properties) unless the user set
    up Spark's logging (SPARK_CONF_DIR or a log4j option of their own)."""
    if os.environ.get("SPARK_CONF_DIR"):
        return []
    for where in (os.environ.get("PYSPARK_SUBMIT_ARGS", ""),
                  os.environ.get("JAVA_TOOL_OPTIONS", ""), user_opts):
        if "log4j" in where:
            return []
    conf = Path(__file__).with_name("conf") / "log4j2.properties"
    return [f"-Dlog4j2.configurationFile={conf.as_uri()}"]


# --------------------------------------------------------------------------------------------
# JVM class-data sharing (start-up)
# --------------------------------------------------------------------------------------------
def cds_enabled() -> bool:
    return os.environ.get("JETLINK_SPARK_CDS", "1").strip().lower() not in ("0", "off", "no",
                                                                           "false")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "jetlink"


def _java_home() -> Path | None:
    """The Java runtime spark-class runs: $JAVA_HOME, else ``java`` on the PATH."""
    import shutil

    home = os.environ.get("JAVA_HOME")
    java = Path(home) / "bin" / "java" if home else None
    if java is None or not java.exists():
        found = shutil.which("java")
        if not found:
            return None
        java = Path(found)
    return Path(os.path.realpath(java)).parent.parent


def _java_release(home: Path) -> tuple[int, str] | None:
    """``(feature version, release file text)`` of a Java home (None when unknown)."""
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("JAVA_VERSION="):
            v = line.split("=", 1)[1].strip().strip('"')
            head = v.split(".")[0].split("-")[0].split("+")[0]
            if head == "1":  # 1.8.0_...
                head = v.split(".")[1]
            try:
                return int(head), text
            except ValueError:
                return None
    return None


def _quote(path: Path) -> str:
    """A path as one JVM option token (Spark splits option strings on blanks, honouring
    double quotes)."""
    text = str(path)
    return f'"{text}"' if any(c.isspace() for c in text) else text


@dataclass
class ClassDataSharing:
    """The CDS archives of one Java runtime + pyspark installation: the flags to pass, and
    the bookkeeping of an archive being made by this run."""

    driver_archive: Path
    launcher_archive: Path
    dynamic: bool  # Java 19+: -XX:+AutoCreateSharedArchive does it all
    driver_flags: list[str] = field(default_factory=list)
    launcher_flags: list[str] = field(default_factory=list)
    driver_tmp: Path | None = None
    launcher_tmp: Path | None = None

    @classmethod
    def plan(cls) -> "ClassDataSharing | None":
        try:
            return cls._plan()
        except (OSError, ValueError, ImportError):
            return None

    @classmethod
    def _plan(cls) -> "ClassDataSharing | None":
        import hashlib

        from pyspark import __version__ as pyspark_version
        from pyspark.find_spark_home import _find_spark_home

        home = _java_home()
        release = _java_release(home) if home else None
        if home is None or release is None or release[0] < 13:
            return None
        feature, text = release
        spark_home = Path(_find_spark_home())
        libjvm = next(iter(sorted(home.glob("lib/server/libjvm.*"))), None)
        stat = libjvm.stat() if libjvm else None
        jars = sorted(os.listdir(spark_home / "jars")) if (spark_home / "jars").is_dir() else []
        key = hashlib.sha256("\0".join([
            str(home), text, f"{stat.st_size}:{stat.st_mtime_ns}" if stat else "",
            pyspark_version, str(spark_home.resolve()), *jars]).encode()).hexdigest()[:16]
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        stem = f"spark-{pyspark_version}-java{feature}-{key}"
        out = cls(folder / f"{stem}-driver.jsa", folder / f"{stem}-launcher.jsa", feature >= 19)
        out._clean_stale(folder)
        if out.dynamic:
            out.driver_flags = ["-XX:+AutoCreateSharedArchive",
                                f"-XX:SharedArchiveFile={_quote(out.driver_archive)}"]
            out.launcher_flags = ["-XX:+AutoCreateSharedArchive",
                                  f"-XX:SharedArchiveFile={_quote(out.launcher_archive)}"]
            return out
        pid = os.getpid()
        for which in ("driver", "launcher"):
            final: Path = getattr(out, f"{which}_archive")
            if final.is_file() and final.stat().st_size > 0:
                flags = [f"-XX:SharedArchiveFile={_quote(final)}"]
            else:
                tmp = final.with_name(f"{final.name}.{pid}.tmp")
                setattr(out, f"{which}_tmp", tmp)
                flags = [f"-XX:ArchiveClassesAtExit={_quote(tmp)}"]
            setattr(out, f"{which}_flags", flags)
        return out

    @staticmethod
    def _clean_stale(folder: Path) -> None:
        """Archives half-written by runs that never finished (a day old)."""
        import time

        for tmp in folder.glob("spark-*.jsa.*.tmp"):
            try:
                if time.time() - tmp.stat().st_mtime > 86_400:
                    tmp.unlink()
            except OSError:
                pass

    def started(self, proc: Any, log_path: Path) -> None:
        """After the driver JVM started: keep the launcher's new archive; when the driver
        writes one, have it written at exit; drop an archive the JVM refused."""
        import atexit

        if self.launcher_tmp is not None:
            self._promote(self.launcher_tmp, self.launcher_archive)
        if not self.dynamic:
            self._drop_refused(log_path)
        if self.driver_tmp is not None and proc is not None:
            atexit.register(self._finish_driver, proc)

    def _drop_refused(self, log_path: Path) -> None:
        """An archive the JVM could not map (it says so on its console): removed, so the next
        run makes a new one."""
        try:
            text = log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        for line in text.splitlines():
            low = line.lower()
            if "[cds" not in low or "warning" not in low:
                continue
            for archive in (self.driver_archive, self.launcher_archive):
                if archive.name in line or "shared archive" in low:
                    try:
                        archive.unlink()
                    except OSError:
                        pass

    @staticmethod
    def _promote(tmp: Path, final: Path) -> None:
        try:
            if tmp.is_file() and tmp.stat().st_size > 0:
                os.replace(tmp, final)
            else:
                tmp.unlink(missing_ok=True)
        except OSError:
            pass

    def _finish_driver(self, proc: Any) -> None:
        """At this process's exit: let the driver JVM exit (its stdin closes; it writes the
        archive as it exits), wait for it, keep the archive when it exited cleanly."""
        assert self.driver_tmp is not None
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            code = proc.wait(timeout=120)
        except Exception:  # noqa: BLE001 - never fail the command for a cache
            code = None
        if code == 0:
            self._promote(self.driver_tmp, self.driver_archive)
        else:
            try:
                self.driver_tmp.unlink(missing_ok=True)
            except OSError:
                pass
