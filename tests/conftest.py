"""Fixtures shared by the test modules (tests/conformance/conftest.py adds the server's).

- ``clock``: a ManualClock at 2026-01-01T00:00:00Z;
- ``dd``: a DataDir in tmp_path, closed after the test; ``js``: the JetStream API of its
  cluster ``local``, running on ``clock``;
- ``jl``: ``jl(*args, input=None)`` runs the jetlink CLI in-process on a temporary data
  directory (``jl.data``; ``jl.tmp`` is tmp_path), without jetlink's environment variables,
  with XDG_CONFIG_HOME in tmp_path (no context of the machine's user applies) and without a
  terminal; a module adds its own setup by overriding ``jl`` (a fixture ``jl``
  taking ``jl``);
- ``cli_clock``: ``clock``, as the clock of the engine the CLI opens (cli/common.py
  ``make_clock``);
- ``utc``: the local time zone is UTC during the test.

Every test runs with XDG_CONFIG_HOME in an empty temporary directory and without
JETLINK_CONTEXT (``no_user_context``), so a context selected on the machine never applies.

The suite runs in parallel (pytest-xdist; pyproject.toml's addopts: ``-n 3 --dist
loadgroup``); ``pytest -n 0`` runs it in one process (``-p no:xdist`` does not: the
addopts pass -n). Each worker is its own pytest session: session fixtures (the
SparkSession, tests/live's servers, their tmp_path_factory directories) are made once per
worker, under that worker's own base temporary directory, on free ports. Collection
(``pytest_collection_modifyitems`` below):

- every test that uses the SparkSession (the ``spark`` fixture) is in the xdist group
  ``spark``: they run on one worker, one after another, so one JVM driver is started for
  them and no two of their Spark jobs compete for the two cores; the other ``spark``-marked
  tests (jobs on the standalone Spark cluster of ``spark_standalone``) are the group
  ``spark-cluster``, so that cluster is started once;
- the tests that use a module- or class-scoped fixture of their own module (the parity files'
  runs of a script on the engine and on nats-server) are grouped by module, so that fixture
  runs once, not once on each worker that gets some of them;
- the Spark groups, then the tests marked ``slow``, then the other groups are collected
  first, so they start at once on the workers and none of them begins near the end of the
  run (a group is one unit of work: a late one would run on alone).
"""

from __future__ import annotations

import time

import pytest
from helpers import ENV_VARS, NATS_VARS, runner

from jetlink.cli.main import app
from jetlink.core.clock import ManualClock
from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir


def _module_fixture_group(item: pytest.Item) -> str | None:
    """The module's node id when ``item`` uses a module- or class-scoped fixture defined in
    its own module (a parity file's run of its whole script on both sides): its tests then
    share one worker, so that fixture runs once per parameter, not once per worker."""
    info = getattr(item, "_fixtureinfo", None)
    module = item.nodeid.split("::", 1)[0]
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        for fixturedef in defs:
            if fixturedef.scope in ("module", "class") and \
                    str(fixturedef.baseid).split("::", 1)[0] == module:
                return module
    return None


_CHECKOUT = __import__("pathlib").Path(__file__).resolve().parent.parent
_CACHES = {".pytest_cache", ".hypothesis", "__pycache__", ".coverage", ".mypy_cache",
           ".ruff_cache", "site"}


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller (or a run without xdist)
        session.config.stash[_TOP_KEY] = {p.name for p in _CHECKOUT.iterdir()}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test that writes into the checkout (a failback tail, an output file given
    relative) fails the run: the next `git add` would commit it."""
    before = session.config.stash.get(_TOP_KEY, None)
    if before is None:
        return
    new = sorted(p.name for p in _CHECKOUT.iterdir()
                 if p.name not in before and p.name not in _CACHES)
    if new:
        session.config.get_terminal_writer().line(
            f"tests wrote into the checkout ({_CHECKOUT}): {', '.join(new)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_TOP_KEY = pytest.StashKey[set]()


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the xdist_group markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))
        elif item.get_closest_marker("spark"):  # the suite's standalone Spark cluster (JVMs)
            item.add_marker(pytest.mark.xdist_group("spark-cluster"))
        elif (group := _module_fixture_group(item)) is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    # the longest units first (stable): the two Spark groups, the slow tests, the other
    # groups; a group is one unit of work for xdist, and one handed out near the end would
    # run on alone while the other workers idle
    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("spark"):
            return 0
        if item.get_closest_marker("slow"):
            return 1
        return 2 if item.get_closest_marker("xdist_group") else 3

    items.sort(key=rank)


@pytest.fixture(scope="session")
def spark_standalone(tmp_path_factory):
    """A Spark standalone cluster on 127.0.0.1 for the tests of the ``spark-cluster`` group:
    a master and two workers (1 core, 1 GiB each) started from the installed pyspark
    (sparkops/cluster.py LocalCluster), stopped by PID at the end. Skipped without Java."""
    from jetlink.sparkops.cluster import ClusterError, LocalCluster

    cluster = LocalCluster(workers=2, cores=1, memory="1g",
                           root=tmp_path_factory.mktemp("spark-standalone"))
    try:
        cluster.start()
    except ClusterError as exc:
        if "no Java runtime" in str(exc):
            pytest.skip(str(exc))
        pytest.fail(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def _empty_config_home(tmp_path_factory):
    return tmp_path_factory.mktemp("config-home")


@pytest.fixture(autouse=True)
def no_user_context(_empty_config_home, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(_empty_config_home))
    monkeypatch.delenv("JETLINK_CONTEXT", raising=False)
    for var in NATS_VARS:  # a NATS_URL of the machine must not send the tests to a server
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def dd(tmp_path):
    d = DataDir(tmp_path / "data")
    yield d
    d.close()


@pytest.fixture
def js(dd, clock):
    return JetStream(dd.open(), clock)


@pytest.fixture
def other(tmp_path, clock):
    """A second data directory (an import's side), its JetStream on ``clock``."""
    d = DataDir(tmp_path / "other")
    yield JetStream(d.open(), clock)
    d.close()


@pytest.fixture
def jl(tmp_path, monkeypatch):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr("jetlink.cli.output.is_interactive", lambda: False)
    # What a command writes beside the working directory (a failback's tail dataset, an
    # --outfile given relative) lands in the test's directory, never in the checkout.
    monkeypatch.chdir(tmp_path)
    # An existing, empty data directory, as a machine has after jetlink's first use: a read
    # there works (empty) and creates nothing; the first write makes the default cluster.
    data = tmp_path / "data"
    data.mkdir(mode=0o700, exist_ok=True)

    def run(*args, input=None):
        # a test naming its own data directory first addresses that one (an option of one
        # value is given once: cli/root.py _one_value)
        own = bool(args) and (args[0] == "--data-dir" or str(args[0]).startswith("--data-dir="))
        return runner.invoke(
            app, [*(() if own else ("--data-dir", str(data))), *args], input=input,
            prog_name="jetlink")

    run.data = data
    run.tmp = tmp_path
    return run


@pytest.fixture
def cli_clock(clock, monkeypatch):
    monkeypatch.setattr("jetlink.cli.common.make_clock", lambda: clock)
    return clock


@pytest.fixture
def utc():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TZ", "UTC")
        time.tzset()
        yield
    time.tzset()


@pytest.fixture(scope="session")
def spark():
    """One SparkSession for the whole suite (local[2], quiet), stopped at the end. Every job
    of the suite is small: the session is the one jetlink starts for a small local job (C1
    JIT only: sparkops/session.py jit_options), with the serial garbage collector, which
    spends less CPU than G1's threads on a heap this size (the suite is CPU-bound on two
    cores: 131 -> 95 CPU-seconds for the Spark job tests). Neither changes what a job
    computes."""
    from jetlink.sparkops.session import QUICK_JIT_ROWS, SparkOptions, get_session

    session = get_session(SparkOptions(
        master="local[2]", expected_rows=QUICK_JIT_ROWS,
        conf=["spark.driver.extraJavaOptions=-XX:+UseSerialGC"]))
    yield session
    session.stop()
