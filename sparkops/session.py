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
CDS: the first run records with ``-XX:ArchiveClassesAtExit``, which makes it slower, and its
JVM writes the archive as it exits, after the command has returned; later runs map it with
``-XX:SharedArchiveFile``), kept in ``$XDG_CACHE_HOME/jetlink/`` (default ``~/.cache/jetlink``)
under a name keyed by what decides their content: the Java runtime, the pyspark version and
Spark's jars by name and size (Java 19+: ``-XX:+AutoCreateSharedArchive`` does the same by
itself). Installations of the same Spark and Java share one set: an archive holds the class
path it was made with (the jar files' sizes and times, which differ between two
installations of the same Spark), so the JVMs run with SPARK_HOME set to a link in the cache
(``<set>.home``), the same path for every installation, pointing at the Spark of the set's
first installation while it is there with the same jars (:func:`shared_home`), else at this
installation's. At most two sets are kept (this run's and the most recently used other one; a
set used in the last ten minutes is never removed, nor is a file being written), and the sets
earlier versions kept per installation path are removed. A new archive is kept only once a
JVM has started with it (a detached helper checks it after the writing JVM has gone), and used
only while its size is the one recorded then; one the JVM refuses (it says so) is removed; a
JVM that fails to start with the archives is started again without them, and they are
removed. ``JETLINK_SPARK_CDS=0`` turns archives off.

The launcher JVM always runs with the C1 compiler only (``-XX:TieredStopAtLevel=1``), and so
does the driver of a job known to read at most ``QUICK_JIT_ROWS`` rows
(``SparkOptions.expected_rows``, from ``input_rows_hint``; ``JETLINK_SPARK_JIT=quick|full``
forces it). A local job known to be large gets more shuffle partitions and driver memory; a
job of known size on a cluster master gets one shuffle partition per 100,000 rows (at least
one per core) instead of Spark's 200.
docs/benchmarks.md (Spark) has the figures.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
import threading
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
# Local jobs shuffle into 4 partitions (fast for small data), or one per this many input rows
# when the job is known to be larger: 5,000,000 rows of ~300 bytes in 4 partitions ran the
# driver (1 GiB heap) out of memory in the sort before the limits.
ROWS_PER_SHUFFLE_PARTITION = 100_000
# A local driver is the whole cluster: from 2,000,000 input rows on it gets 1 GiB a 1,000,000
# rows (5,000,000 rows of ~300 bytes ran out of memory in Spark's default 1 GiB; with 3 GiB
# the source job's partition-local sort of 1,000,000-row partitions, after the benchmark's
# reference run in the same JVM, ran out of heap reading a Parquet row group), at most half
# of this machine's memory and 8 GiB.
DRIVER_MEMORY_FROM_ROWS = 2_000_000
ROWS_PER_DRIVER_GIB = 1_000_000


def local_driver_memory_mb(rows: int | None) -> int | None:
    """The driver memory (MiB) of a local job of ``rows`` input rows; None: Spark's default."""
    if not rows or rows < DRIVER_MEMORY_FROM_ROWS:
        return None
    want = 1024 * -(-rows // ROWS_PER_DRIVER_GIB)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):
        total = 2048
    return max(1024, min(want, total // 2, 8192))


# A standalone master on a loopback address: the driver is reachable there only.
_LOOPBACK_DEFAULTS = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}
_ALWAYS = {
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    # a Parquet nanosecond timestamp read as its count of nanoseconds (the lake's ts; Spark
    # refuses the type otherwise): sparkops/io.py read_lake
    "spark.sql.legacy.parquet.nanosAsLong": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # no DataFrame call sites recorded for error messages (pyspark.errors.utils
    # ``_with_origin``): each recording is a Python stack walk and about eight Py4J round
    # trips per Column function a job's query is built with (a source job: over 450 of its
    # 1,100); a failed job's line (``failure_text``) never shows the call site
    "spark.python.sql.dataFrameDebugging.enabled": "false",
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
    # the job's input rows when known before the start (``input_rows_hint``): a small job on
    # a local master gets a driver JVM that starts fast (see ``jit_options``)
    expected_rows: int | None = None

    def settings(self) -> dict[str, str]:
        """The configuration the session gets: local defaults, then the properties file, then
        each ``--conf`` (later ones win)."""
        out: dict[str, str] = dict(_ALWAYS)
        if is_local(self.master):
            out.update(_LOCAL_DEFAULTS)
            if self.expected_rows and self.expected_rows > 4 * ROWS_PER_SHUFFLE_PARTITION:
                # a big job: shuffle partitions a sort can hold in a 1 GiB driver
                n = min(2000, -(-self.expected_rows // ROWS_PER_SHUFFLE_PARTITION))
                out["spark.sql.shuffle.partitions"] = str(n)
            memory = local_driver_memory_mb(self.expected_rows)
            if memory:
                out["spark.driver.memory"] = f"{memory}m"
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


def master_unreachable(master: str, timeout: float = 5.0) -> str | None:
    """Why a ``spark://`` master cannot be reached (each ``host:port`` refused a TCP
    connection or did not answer within ``timeout``), or the ``yarn`` ResourceManager
    (:func:`yarn_resource_manager`), or None (one answered; any other master). Asked before
    a driver starts: Spark's own client gives up on an unreachable master only after three
    registration attempts of 20 s each (on a ResourceManager, after minutes)."""
    if master == "yarn":
        return _yarn_unreachable(timeout)
    if not master.startswith("spark://"):
        return None
    why = []
    for hp in master[len("spark://"):].split(","):
        host, _, port = hp.rpartition(":")
        host = host.strip("[]")
        if not host or not port.isdigit():
            return None  # Spark says what is wrong with the URL itself
        problem = _no_answer(host, int(port), timeout)
        if problem is None:
            return None
        why.append(f"{hp}: {problem}")
    return "; ".join(why)


def _no_answer(host: str, port: int, timeout: float) -> str | None:
    """Why ``host:port`` takes no TCP connection within ``timeout`` (None: it takes one)."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except TimeoutError:
        return f"no answer within {timeout:g}s"
    except OSError as exc:
        return (exc.strerror or str(exc)).lower()


def yarn_resource_manager() -> tuple[str, str] | None:
    """``(HOST:PORT, where it was read)`` of the YARN ResourceManager Spark's client will
    ask (Hadoop's yarn-site.xml in YARN_CONF_DIR or HADOOP_CONF_DIR:
    ``yarn.resourcemanager.address``, else ``yarn.resourcemanager.hostname``:8032, else
    Hadoop's default 0.0.0.0:8032), or None when it cannot be told here (ResourceManager HA:
    the client tries each of its ids)."""
    import xml.etree.ElementTree as ET

    props: dict[str, str] = {}
    where = "Hadoop's default"
    for var in ("HADOOP_CONF_DIR", "YARN_CONF_DIR"):
        d = os.environ.get(var)
        site = os.path.join(d, "yarn-site.xml") if d else ""
        if not site or not os.path.isfile(site):
            continue
        try:
            root = ET.parse(site).getroot()
        except (ET.ParseError, OSError):
            return None  # Hadoop's own reading says what is wrong with it
        for prop in root.iter("property"):
            name, value = prop.findtext("name"), prop.findtext("value")
            if name and value is not None:
                props[name.strip()] = value.strip()
        where = site
    if props.get("yarn.resourcemanager.ha.enabled", "").lower() == "true":
        return None
    host = props.get("yarn.resourcemanager.hostname", "0.0.0.0")
    address = props.get("yarn.resourcemanager.address", f"{host}:8032")
    address = address.replace("${yarn.resourcemanager.hostname}", host)
    if "${" in address:
        return None  # another variable: not ours to expand
    return address, where


def _yarn_unreachable(timeout: float) -> str | None:
    """Why the YARN ResourceManager cannot be reached (:func:`yarn_resource_manager`), or
    None: Spark's client would retry it for minutes without a word."""
    found = yarn_resource_manager()
    if found is None:
        return None
    address, where = found
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return None
    problem = _no_answer(host.strip("[]"), int(port), timeout)
    return None if problem is None else f"ResourceManager {address} ({where}): {problem}"


MASTER_FORMS = ("local, local[N], local[*], local[N,F], spark://HOST:PORT[,HOST:PORT...], "
                "yarn (with HADOOP_CONF_DIR or YARN_CONF_DIR set), k8s://URL")
# SparkMasterRegex's LOCAL_N / LOCAL_N_FAILURES / LOCAL_CLUSTER (spaces around the commas)
_LOCAL_MASTER = re.compile(r"local(\[(\*|[1-9][0-9]*)(\s*,\s*[0-9]+)?\])?|"
                           r"local-cluster\[\s*[1-9][0-9]*\s*,\s*[1-9][0-9]*\s*,"
                           r"\s*[1-9][0-9]*\s*\]")


def master_form_error(master: str) -> str | None:
    """Why ``--master`` can never work, as one line naming it, its value and the forms Spark
    takes (:data:`MASTER_FORMS`), or None. Asked before a driver starts: Spark itself says
    so only from inside its JVM (a JVM that exits at start, or a URL it cannot parse)."""
    if _LOCAL_MASTER.fullmatch(master):
        # Spark reads each count as an Int: one larger fails inside the JVM (a
        # NumberFormatException), so it is refused here
        counts = [int(n) for n in re.findall(r"[0-9]+", master)]
        if any(n > 2**31 - 1 for n in counts):
            return (f"--master {master!r}: a thread or worker count is at most "
                    f"{2**31 - 1:,} (Spark reads it as an Int)")
        return None
    if master.startswith("spark://"):
        for hp in master[len("spark://"):].split(","):
            host, _, port = hp.rpartition(":")
            if not host.strip("[]") or not port.isdigit() or not 0 < int(port) < 65536:
                return (f"--master {master!r}: {hp!r} is not HOST:PORT (expected "
                        f"{MASTER_FORMS})")
        return None
    if master == "yarn":
        if os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR"):
            return None
        return ("--master 'yarn': set HADOOP_CONF_DIR or YARN_CONF_DIR to the cluster's "
                "Hadoop configuration directory (Spark finds the resource manager there)")
    if master.startswith("k8s://") and len(master) > len("k8s://"):
        return None
    return f"--master {master!r}: expected {MASTER_FORMS}"


def read_properties(path: str) -> dict[str, str]:
    """A Spark properties file (``spark-defaults.conf`` format: ``key value`` or ``key=value``
    per line, ``#`` comments)."""
    from jetlink.core import limits

    try:
        data = limits.read_capped(path)  # (/dev/zero: refused, never read whole)
    except OSError as e:
        raise SparkConfError(f"--properties-file {path}: {e.strerror or e}") from None
    if data is None:
        raise SparkConfError(f"--properties-file {path}: larger than "
                             f"{limits.MAX_INPUT_FILE:,} bytes: no properties file is that "
                             "large")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SparkConfError(f"--properties-file {path}: not UTF-8 text ({e.reason})") from None
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
    from pyspark import SparkContext

    # this process's context, its session active on another JVM thread than this thread's
    # gateway connection now has (a connection an interrupt closed is made again): the same
    # context, never a second one; or spark-submit's
    if SparkContext._active_spark_context is not None or under_spark_submit():
        return SparkSession.builder.getOrCreate()
    settings = opts.settings()
    if is_local(opts.master) or is_loopback(opts.master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers run this interpreter (the one jetlink is installed in) unless told
    # otherwise; on a cluster every executor needs jetlink installed in PYSPARK_PYTHON.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    spark = _start(opts, settings)
    if (not is_local(opts.master) and opts.expected_rows is not None
            and "spark.sql.shuffle.partitions" not in settings):
        # a cluster's default (200) for a job of known size: one partition per
        # ROWS_PER_SHUFFLE_PARTITION rows, at least one per core the cluster has now
        n = max(spark.sparkContext.defaultParallelism,
                -(-opts.expected_rows // ROWS_PER_SHUFFLE_PARTITION))
        spark.conf.set("spark.sql.shuffle.partitions", str(min(n, 2000)))
    return spark


def failure_text(e: BaseException) -> str:
    """A job that failed inside Spark (py4j / pyspark errors: an executor lost, a file that
    cannot be read...) as one line: ``the Spark job failed: <the cause> (Spark's log:
    <path>)``. The cause is the "Job aborted" line when there is one, else the deepest
    exception line; never a stack trace."""
    from jetlink.core.errors import clip

    text = str(e)
    if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text:
        cause = jvm_exit_cause()
        if cause:
            return (f"the Spark driver JVM exited at start: {clip(cause, 600, 500)} (Spark's "
                    f"log: {jvm_log_path()})")
    lines = [ln.strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("at ", "..."))]
    aborted = [ln for ln in lines if "Job aborted" in ln]
    causes = [ln for ln in lines if "Exception" in ln or "Error" in ln]
    reason = (aborted or causes[-1:] or lines[:1] or [type(e).__name__])[0]
    reason = reason.removeprefix(": ").removeprefix("Caused by: ")
    return f"the Spark job failed: {clip(reason, 600, 500)} (Spark's log: {jvm_log_path()})"


def jvm_exit_cause(path: Path | None = None) -> str:
    """What a driver JVM that exited at start said (its console in Spark's log): the lines
    naming an error, without stack frames or the JVM's generic closing lines, joined; "" when
    the log says nothing of the kind."""
    try:
        text = (path or jvm_log_path()).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    generic = ("Could not create the Java Virtual Machine", "A fatal exception has occurred")
    picked = []
    for raw in text.splitlines()[-200:]:
        line = raw.strip()
        if not line or line.startswith(("at ", "...", "WARNING:")) or any(
                g in line for g in generic):
            continue
        if re.search(r"Exception|Error|Invalid|must be set|[Uu]nrecognized|[Cc]ould not",
                     line):
            line = re.sub(r"^Exception in thread \"main\" ", "", line)
            picked.append(line.removeprefix("Error: "))
    return "; ".join(dict.fromkeys(picked[-3:]))


LOGS_KEPT = 10  # the driver logs of a user kept in $TMPDIR: the newest, this one included


def jvm_log_path() -> Path:
    """Where the driver JVM's own console output goes (its startup notices, its errors in
    full): ``$TMPDIR/jetlink-spark-<uid>-<pid>.log``, one per command (two jobs of one user
    at once each keep their own; an error names its command's), the user's oldest beyond
    :data:`LOGS_KEPT` removed when a driver starts (:func:`prune_logs`)."""
    import tempfile

    return Path(tempfile.gettempdir()) / f"jetlink-spark-{os.getuid()}-{os.getpid()}.log"


def prune_logs(keep: int = LOGS_KEPT) -> None:
    """The user's driver logs beyond the newest ``keep`` (by time) removed; one that cannot
    be is left (another user's directory rules, a log just removed by another command)."""
    mine = jvm_log_path()
    logs = [p for p in mine.parent.glob(f"jetlink-spark-{os.getuid()}-*.log") if p != mine]
    try:
        logs.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in logs[max(keep - 1, 0):]:
        try:
            old.unlink()
        except OSError:
            pass


# A driver out of memory exits (the command then fails with one line): without it, an
# OutOfMemoryError in Spark's task-result threads left a job waiting for ever (seen at
# 5,000,000 rows on a 1 GiB driver).
EXIT_ON_OOM = "-XX:+ExitOnOutOfMemoryError"


def driver_java_options(opts: SparkOptions, user_opts: str = "") -> list[str]:
    """The driver JVM's options jetlink adds (before the user's own): log settings, the JIT
    choice for the job's size, and exit on OutOfMemoryError."""
    return _log_options(user_opts) + jit_options(opts) + [EXIT_ON_OOM]


def _start(opts: SparkOptions, settings: dict[str, str]) -> Any:
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    conf = SparkConf(loadDefaults=False)
    conf.setMaster(opts.master).setAppName(opts.app_name)
    for k, v in settings.items():
        conf.set(k, v)
    user_opts = settings.get("spark.driver.extraJavaOptions", "")
    java_opts = driver_java_options(opts, user_opts)
    cds = ClassDataSharing.plan() if cds_enabled() else None
    # Spark's launcher is a JVM that runs for a fraction of a second: C1 only
    launcher_opts = [QUICK_JIT]
    if cds is not None:
        java_opts += cds.driver_flags
        launcher_opts += cds.launcher_flags
    env = {"SPARK_LAUNCHER_OPTS": " ".join(
        [*launcher_opts, os.environ.get("SPARK_LAUNCHER_OPTS", "")]).strip()}
    if cds is not None and cds.spark_home is not None:
        env["SPARK_HOME"] = str(cds.spark_home)  # the class path the archives were made with
    if java_opts:
        # the user's own options last: the JVM takes the last of a repeated flag
        conf.set("spark.driver.extraJavaOptions", " ".join([*java_opts, user_opts]).strip())
    log_path = jvm_log_path()
    prune_logs()
    _quiet_py4j()
    try:
        gateway = _launch(conf, env, log_path)
    except Exception:
        if cds is None:
            raise
        # Could the JVM not start with its archives (a damaged one can crash it)? Once more
        # without them; when that works, they are forgotten (the next run makes new ones).
        java_opts = [o for o in java_opts if o not in cds.driver_flags]
        conf.set("spark.driver.extraJavaOptions", " ".join([*java_opts, user_opts]).strip())
        env["SPARK_LAUNCHER_OPTS"] = " ".join(
            o for o in env["SPARK_LAUNCHER_OPTS"].split(" ") if o not in cds.launcher_flags)
        env.pop("SPARK_HOME", None)
        gateway = _launch(conf, env, log_path)
        cds.discard()
        cds = None
    if cds is not None:
        cds.started(getattr(gateway, "proc", None), log_path)
    sc = SparkContext(conf=conf, gateway=gateway)
    _plain_interrupts()
    sc.setLogLevel("ERROR")
    return SparkSession(sc)


class _Py4JInterrupted(logging.Filter):
    """Drops py4j's records of a gateway call an interrupt cut short (it logs each with its
    traceback on the root logger)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, KeyboardInterrupt):
                return False
            exc = exc.__context__
        return not (_INTERRUPTED and "py4j" in record.pathname)


_INTERRUPTED: list[int] = []  # the SIGINTs received since the driver started


def interrupted() -> bool:
    """Whether a SIGINT reached the driver (a job's failure after it is that interrupt)."""
    return bool(_INTERRUPTED)


def as_interrupt(exc: BaseException) -> KeyboardInterrupt | None:
    """``exc`` as the interrupt it is: itself when a KeyboardInterrupt; a new one (caused by
    it) for py4j's or PySpark's failure after an interrupt (the clean-up of the gateway call
    the interrupt cut short failing in its turn); None for anything else."""
    if isinstance(exc, KeyboardInterrupt):
        return exc
    if isinstance(exc, Exception) and interrupted() and \
            type(exc).__module__.startswith(("py4j", "pyspark")):
        stop = KeyboardInterrupt()
        stop.__cause__ = exc
        return stop
    return None


def _interrupt(signum: int, frame: Any) -> None:
    _INTERRUPTED.append(signum)
    raise KeyboardInterrupt


def _plain_interrupts() -> None:
    """An interrupt (Ctrl-C) ends a Spark job as it ends any command: exit 130, nothing
    printed (docs/exit-codes.md). PySpark's SIGINT handler cancels the jobs through the
    gateway from inside the gateway call it interrupts (a re-entrant read of the same
    connection, which fails), and py4j logs every interrupted call with a traceback: the
    handler raises KeyboardInterrupt alone, and those records are dropped (``_quiet_py4j``,
    from before the JVM starts). The JVM ignores
    SIGINT (PySpark starts it so) and is killed when this process exits (PySpark's atexit),
    which ends its jobs."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _interrupt)


def _quiet_py4j() -> None:
    """py4j's records of interrupted gateway calls dropped (``_Py4JInterrupted``): a
    logger's filter sees the records of that logger alone, so each logger py4j writes to
    has it (the root logger: py4j's module-level ``logging.exception`` calls)."""
    for name in ("", "py4j.java_gateway", "py4j.clientserver"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _Py4JInterrupted) for f in log.filters):
            log.addFilter(_Py4JInterrupted())


def _launch(conf: Any, env: dict[str, str], log_path: Path) -> Any:
    """The driver JVM and its py4j gateway; the JVM's console goes to ``log_path``."""
    from pyspark.java_gateway import launch_gateway

    log = open(log_path, "wb")  # noqa: SIM115 - the JVM keeps writing to it
    try:
        with _environ(env):
            return launch_gateway(conf, popen_kwargs={"stderr": log, "stdout": log})
    finally:
        log.close()


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
# JIT for small jobs
# --------------------------------------------------------------------------------------------
QUICK_JIT = "-XX:TieredStopAtLevel=1"
# Up to this many input rows a local job runs with the C1 compiler only: it saves about 3 s of
# C2 compiling at start-up on 2 cores, and costs about 20 us a row in the job itself (a
# 1,000,000-row source job took 2.3x as long): the two meet near 150,000 rows.
QUICK_JIT_ROWS = 100_000


def jit_options(opts: SparkOptions) -> list[str]:
    """``-XX:TieredStopAtLevel=1`` for the driver of a small job (the tasks of a local master
    run in the driver JVM: a large local job needs C2), else nothing.
    ``JETLINK_SPARK_JIT=quick`` or ``full`` forces one or the other."""
    mode = os.environ.get("JETLINK_SPARK_JIT", "auto").strip().lower()
    if mode == "quick":
        return [QUICK_JIT]
    if mode == "full":
        return []
    rows = opts.expected_rows
    return [QUICK_JIT] if rows is not None and rows <= QUICK_JIT_ROWS else []


def input_rows_hint(addresses: list[str], data_dir: Any, cluster: str) -> int | None:
    """The rows a job over these input addresses reads, from what is cheap to know before
    Spark starts (a stream's message count in its cluster's database, a dataset's
    ``_jetlink.json``); None when any of them is unknown."""
    from jetlink.core import lake

    from . import io

    total = 0
    for text in addresses:
        try:
            addr = io.parse_address(text, cluster)
            if addr.kind == "parquet":
                meta = lake.read_meta(addr.path)
                total += int(meta["state"]["messages"])  # type: ignore[index]
            elif addr.kind == "stream":
                db = data_dir.cluster_path(addr.cluster)
                if not db.exists():
                    return None
                conn = lake.open_readonly(str(db))
                try:
                    row = conn.execute("SELECT msgs FROM streams WHERE name = ?",
                                       (addr.name,)).fetchone()
                finally:
                    conn.close()
                if row is None:
                    return None
                total += int(row[0])
            else:
                return None
        except Exception:  # noqa: BLE001 - only a hint: the job reports the real errors
            return None
    return total


# --------------------------------------------------------------------------------------------
# JVM class-data sharing (start-up)
# --------------------------------------------------------------------------------------------
KEEP_OTHER_ARCHIVES = 1  # archive sets kept besides the current one (two in all)
IN_USE_SECONDS = 600  # a set used this recently is never removed (a JVM may be starting)
STEM_PREFIX = "cds-spark-"  # cds-spark-<pyspark>-java<feature>-<key>-driver|launcher.jsa
HOME_SUFFIX = ".home"  # <stem>.home: the link the set's JVMs see as SPARK_HOME
# The sets of archives jetlink kept before they were shared, keyed by the installation's path
# (spark-<pyspark>-java<feature>-<16 hex>-driver|launcher.jsa[.size]): removed.
_PATH_KEYED = re.compile(r"spark-.+-java[0-9]+-[0-9a-f]{16}-(?:driver|launcher)\.jsa(?:\.size)?")


def archive_stem(java_home: Path, spark_home: Path, pyspark_version: str
                 ) -> tuple[str, int] | None:
    """The name of the set of archives for this Java runtime and this Spark, and the Java
    feature version; None when the runtime has no dynamic archives (before Java 13). The key
    is what decides the archives' content: the Java runtime (its ``release`` file, the size
    and time of its libjvm), the pyspark version and Spark's jars by name and size. Not
    where they are installed: every installation with the same Spark and Java shares it."""
    import hashlib

    release = _java_release(java_home)
    if release is None or release[0] < 13:
        return None
    feature, text = release
    libjvm = next(iter(sorted(java_home.glob("lib/server/libjvm.*"))), None)
    stat = libjvm.stat() if libjvm else None
    jars = [f"{name}:{size}" for name, size in _jars(spark_home)]
    key = hashlib.sha256("\0".join([
        text, f"{stat.st_size}:{stat.st_mtime_ns}" if stat else "", pyspark_version,
        *jars]).encode()).hexdigest()[:16]
    return f"{STEM_PREFIX}{pyspark_version}-java{feature}-{key}", feature


def _set_of(name: str) -> str | None:
    """The set of archives a file of the cache belongs to (its stem), None for another file
    (or one being written: ``*.tmp``)."""
    if name.endswith(".tmp"):
        return None
    if name.endswith(HOME_SUFFIX):
        stem = name[:-len(HOME_SUFFIX)]
        return stem if stem.startswith(STEM_PREFIX) else None
    base, dot, rest = name.partition(".jsa")
    if not dot or rest not in ("", ".size"):
        return None
    stem, _, part = base.rpartition("-")
    if part not in ("driver", "launcher"):
        return None
    if stem.startswith(STEM_PREFIX) or _PATH_KEYED.fullmatch(name):
        return stem
    return None


def _jars(spark_home: Path) -> list[tuple[str, int]]:
    """Spark's jars by name and size (what the set's key reads of them)."""
    jars_dir = spark_home / "jars"
    return [(name, (jars_dir / name).stat().st_size)
            for name in (sorted(os.listdir(jars_dir)) if jars_dir.is_dir() else [])]


def shared_home(link: Path, spark_home: Path) -> Path:
    """The Spark the set's JVMs see through ``link``: the one it points at already while that
    is still there with the jars of this one (by name and size, the set's key), else this
    installation's. The JVM takes an archive only with the very jar files it was made with
    (their size and modification time), and two installations of the same Spark differ in
    those times: the set's first installation stays the class path of every one (the same
    classes), so they all map its archives instead of making them again in turn."""
    try:
        current = Path(os.readlink(link))
    except OSError:
        return spark_home
    if current == spark_home:
        return spark_home
    try:
        same = current.is_absolute() and _jars(current) == _jars(spark_home)
    except OSError:
        same = False
    return current if same else spark_home


def _point(link: Path, target: Path) -> bool:
    """Make ``link`` a symbolic link to ``target`` (atomically: a new link renamed over the
    old one, so a JVM starting meanwhile sees one or the other, both a Spark of the same
    jars); its time records the set's last use. False when it cannot be made."""
    try:
        if os.readlink(link) == str(target):
            os.utime(link, follow_symlinks=False)
            return True
    except OSError:
        pass
    tmp = link.with_name(f"{link.name}.{os.getpid()}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        os.symlink(target, tmp)
        os.replace(tmp, link)
        return True
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        return False


def _used(*paths: Path) -> None:
    """Record that an archive is used now (its set's last use, :meth:`ClassDataSharing.
    _keep_recent`)."""
    for p in paths:
        try:
            os.utime(p)
        except OSError:
            pass


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


def _sidecar(archive: Path) -> Path:
    return archive.with_name(archive.name + ".size")


def _intact(archive: Path) -> bool:
    """An archive whose size is the one recorded when it was made (a truncated archive can
    crash the JVM that maps it)."""
    try:
        want = int(_sidecar(archive).read_text(encoding="ascii").strip())
        return archive.stat().st_size == want > 0
    except (OSError, ValueError):
        return False


@dataclass
class ClassDataSharing:
    """The CDS archives of one Java runtime and Spark (:func:`archive_stem`): the flags to
    pass, the SPARK_HOME to run the JVMs with, and the bookkeeping of an archive being made
    by this run."""

    driver_archive: Path
    launcher_archive: Path
    dynamic: bool  # Java 19+: -XX:+AutoCreateSharedArchive does it all
    driver_flags: list[str] = field(default_factory=list)
    launcher_flags: list[str] = field(default_factory=list)
    driver_tmp: Path | None = None
    launcher_tmp: Path | None = None
    # SPARK_HOME for the JVMs: the set's link to this installation's Spark (module doc)
    spark_home: Path | None = None

    @classmethod
    def plan(cls) -> ClassDataSharing | None:
        try:
            return cls._plan()
        except (OSError, ValueError, ImportError):
            return None

    @classmethod
    def _plan(cls) -> ClassDataSharing | None:
        from pyspark import __version__ as pyspark_version
        from pyspark.find_spark_home import _find_spark_home

        home = _java_home()
        spark_home = Path(_find_spark_home()).resolve()
        named = archive_stem(home, spark_home, pyspark_version) if home else None
        if named is None:
            return None
        stem, feature = named
        folder = cache_dir()
        if any(c.isspace() for c in str(folder)):
            return None  # SPARK_LAUNCHER_OPTS is split on blanks by spark-class
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        link = folder / f"{stem}{HOME_SUFFIX}"
        if not _point(link, shared_home(link, spark_home)):
            return None
        out = cls(folder / f"{stem}-driver.jsa", folder / f"{stem}-launcher.jsa", feature >= 19,
                  spark_home=link)
        out._clean_stale(folder)
        out._keep_recent(folder, stem)
        # a JVM that crashes while mapping an archive writes its report here, not in the cwd
        import tempfile

        crash = f"-XX:ErrorFile={tempfile.gettempdir()}/jetlink-jvm-crash-%p.log"
        if out.dynamic:
            out.driver_flags = ["-XX:+AutoCreateSharedArchive",
                                f"-XX:SharedArchiveFile={out.driver_archive}", crash]
            out.launcher_flags = ["-XX:+AutoCreateSharedArchive",
                                  f"-XX:SharedArchiveFile={out.launcher_archive}", crash]
            _used(out.driver_archive, out.launcher_archive)
            return out
        pid = os.getpid()
        for which in ("driver", "launcher"):
            final: Path = getattr(out, f"{which}_archive")
            if _intact(final):
                flags = [f"-XX:SharedArchiveFile={final}"]
                _used(_sidecar(final))
            else:
                tmp = final.with_name(f"{final.name}.{pid}.tmp")
                setattr(out, f"{which}_tmp", tmp)
                flags = [f"-XX:ArchiveClassesAtExit={tmp}"]
            setattr(out, f"{which}_flags", [*flags, crash])
        return out

    @staticmethod
    def _clean_stale(folder: Path) -> None:
        """Archives (and links) half-written by runs that never finished (a day old)."""
        import time

        for tmp in folder.glob("*.tmp"):
            if ".jsa." not in tmp.name and f"{HOME_SUFFIX}." not in tmp.name:
                continue
            try:
                if time.time() - tmp.lstat().st_mtime > 86_400:
                    tmp.unlink()
            except OSError:
                pass

    @staticmethod
    def _keep_recent(folder: Path, stem: str, others: int = KEEP_OTHER_ARCHIVES,
                     now: float | None = None) -> None:
        """Besides the set ``stem`` (this run's), the ``others`` most recently used sets of
        archives stay (each set is about 200 MB; the default keeps two sets in all); the sets
        jetlink kept per installation path before they were shared are removed. A set used
        in the last :data:`IN_USE_SECONDS` stays whatever its rank: a JVM may be starting
        with it (one that runs has mapped its archive, which removing the file does not
        change)."""
        import time

        now = time.time() if now is None else now
        files: dict[str, list[Path]] = {}
        for f in folder.iterdir():
            key = _set_of(f.name)
            if key is not None and key != stem:
                files.setdefault(key, []).append(f)
        used: dict[str, float] = {}
        for key, paths in files.items():
            times = []
            for f in paths:
                try:
                    times.append(f.lstat().st_mtime)
                except OSError:
                    continue
            used[key] = max(times, default=0.0)
        shared = sorted((k for k in used if k.startswith(STEM_PREFIX)), key=used.__getitem__,
                        reverse=True)
        drop = [k for k in used if not k.startswith(STEM_PREFIX)] + shared[others:]
        for key in drop:
            if now - used[key] < IN_USE_SECONDS:
                continue
            for f in files[key]:
                try:
                    f.unlink()
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
            if "[cds" not in line or "Unable to use shared archive" not in line:
                continue
            for archive in (self.driver_archive, self.launcher_archive):
                if str(archive) in line:
                    for p in (archive, _sidecar(archive)):
                        try:
                            p.unlink(missing_ok=True)
                        except OSError:
                            pass

    @staticmethod
    def _promote(tmp: Path, final: Path) -> None:
        """A finished archive becomes ``final`` (atomically), then its size is recorded
        beside it (``<archive>.size``): an archive is used only when the two agree."""
        try:
            size = tmp.stat().st_size if tmp.is_file() else 0
            if size > 0:
                os.replace(tmp, final)
                side = _sidecar(final)
                side_tmp = side.with_name(f"{side.name}.{os.getpid()}.tmp")
                side_tmp.write_text(f"{size}\n", encoding="ascii")
                os.replace(side_tmp, side)
            else:
                tmp.unlink(missing_ok=True)
        except OSError:
            pass

    def discard(self) -> None:
        """Forget this runtime's archives (and one being made)."""
        for path in (self.driver_archive, self.launcher_archive, self.driver_tmp,
                     self.launcher_tmp):
            if path is None:
                continue
            for p in (path, _sidecar(path)):
                try:
                    p.unlink(missing_ok=True)
                except OSError:
                    pass

    def _finish_driver(self, proc: Any) -> None:
        """At this process's exit: let the driver JVM exit (its stdin closes; it writes the
        archive as it exits) and leave the archive to a detached helper, which keeps it once a
        JVM has mapped it (``adopt_archive``), so the command does not wait for the writing.
        Where the JVM's command line cannot be read, wait for it here instead."""
        import subprocess

        assert self.driver_tmp is not None
        try:
            argv = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
            java = os.readlink(f"/proc/{proc.pid}/exe")
            classpath = argv[argv.index(b"-cp") + 1].decode()
        except (OSError, ValueError, IndexError):
            java = classpath = ""
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            if java and classpath:
                subprocess.Popen(
                    [sys.executable, "-c", "import sys; from jetlink.sparkops.session import "
                     "adopt_archive; adopt_archive(*sys.argv[1:])", str(proc.pid),
                     str(self.driver_tmp), str(self.driver_archive), java, classpath],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
                return
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


def adopt_archive(pid: str, tmp: str, final: str, java: str, classpath: str) -> None:
    """(Detached helper.) Wait until the JVM ``pid`` has gone, then keep the archive ``tmp``
    it wrote as ``final`` when a JVM on the same class path starts with it (``-Xshare:on``:
    a mismatched or damaged archive fails that start); else remove it."""
    import subprocess
    import tempfile
    import time

    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            break
        if state in ("Z", "X"):
            break
        time.sleep(0.2)
    else:
        return  # still running: the next run's clean-up takes the file away after a day
    archive = Path(tmp)
    ok = False
    if archive.is_file() and archive.stat().st_size > 0:
        try:
            where = tempfile.gettempdir()
            check = subprocess.run(
                [java, "-Xshare:on", f"-XX:SharedArchiveFile={tmp}",
                 f"-XX:ErrorFile={where}/jetlink-jvm-crash-%p.log", "-cp", classpath,
                 "-version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=120, cwd=where)
            ok = check.returncode == 0 and "Unable to use" not in check.stdout + check.stderr
        except (OSError, subprocess.SubprocessError):
            ok = False
    if ok:
        ClassDataSharing._promote(archive, Path(final))
    else:
        try:
            archive.unlink(missing_ok=True)
        except OSError:
            pass
