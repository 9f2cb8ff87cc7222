"""Running a job end to end: resolve the addresses, read, run the job, write, record cursors.

A job writing into the embedded store seeds a NEW target: the target stream is created (from
the addresses and ``--config``, checked and planned first, created only when the job writes,
removed again when the writing fails) or, when it exists, must never have stored anything. The
rows are written through the engine in large transactions; each transaction also records the
agreement's progress (core/replication.py ``seed_agreement``), and the last one records the
exact cursor: the last origin sequence the job's cut covered. The online pump continues from
there, without a gap and without a duplicate, and a job interrupted half-way leaves a target
the pump resumes like one it filled itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jetlink.core import lake
from jetlink.core.clock import Clock, format_rfc3339_nano
from jetlink.core.config.stream import StreamConfig, StreamSource
from jetlink.core.errors import JetlinkError
from jetlink.core.jetstream import JetStream
from jetlink.core.replication import identity, iname_of, origin_cluster
from jetlink.core.store import DataDir

from . import io
from . import jobs as J
from .session import as_interrupt


class SparkJobError(JetlinkError):
    """A job refused its input, target or addresses (exit status 1)."""


@dataclass
class Input:
    """One resolved input: its rows and what the job needs to know of the stream. The rows
    of a stream of the store are a DataFrame made when first asked for (``load``): a job
    refused by its target or config checks no Spark session for it."""

    address: io.Address
    load: Callable[[], Any] = field(repr=False)
    name: str = ""
    identity: str = ""
    last_seq: int = 0  # the job's cut: the origin's last sequence when the job read it
    msgs: int = 0
    config: StreamConfig | None = None  # the origin's (None: a dataset that records none)
    _df: Any = field(default=None, repr=False)

    @property
    def df(self) -> Any:
        if self._df is None:
            self._df = self.load()
        return self._df


@dataclass
class Summary:
    job: str
    target: str
    rows_in: int = 0
    rows_out: int = 0
    seconds: float = 0.0
    cursors: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""

    def to_json(self) -> dict[str, Any]:
        rate = self.rows_in / self.seconds if self.seconds > 0 else 0.0
        return {"job": self.job, "target": self.target, "output": self.output,
                "rows_in": self.rows_in, "rows_out": self.rows_out,
                "seconds": round(self.seconds, 3), "rows_per_second": round(rate, 1),
                "cursor_set": bool(self.cursors), "cursors": self.cursors}


class Runner:
    """Jobs over one data directory, one clock and one Spark session: ``spark`` is the
    session, or a function making it, called when a job first needs it (after its
    addresses, inputs of the store, target and config were checked: a refused job starts
    no driver)."""

    def __init__(self, spark: Any, datadir: DataDir, clock: Clock, cluster: str,
                 defaults: Callable[[StreamConfig, set[str]], StreamConfig] | None = None
                 ) -> None:
        self._spark, self.dd, self.clock, self.cluster = spark, datadir, clock, cluster
        # the defaults of a new target: ``defaults(config, fields --config gives)``
        self.defaults = defaults

    @property
    def spark(self) -> Any:
        if callable(self._spark) and not hasattr(self._spark, "sparkContext"):
            self._spark = self._spark()
        return self._spark

    # -- addresses -------------------------------------------------------------------------
    def address(self, text: str, what: str) -> io.Address:
        try:
            return io.parse_address(text, self.cluster, what=what)
        except io.AddressError as e:
            raise SparkJobError(str(e)) from None

    def _js(self, cluster: str) -> JetStream:
        if not self.dd.has_cluster(cluster) and cluster != "local":
            raise SparkJobError(f"cluster {cluster} not found")
        if self.dd.has_cluster(cluster) and self.dd.is_down(cluster):
            # a cluster marked unreachable (`cluster down`) is so for a job as for the pump:
            # a rehearsed outage is never copied across
            raise SparkJobError(f"cluster {cluster} is down (jetlink cluster up {cluster} "
                                "brings it back)")
        try:  # streams live in a NATS cluster: a Kafka cluster's is refused, naming it
            return JetStream(self.dd.open_kind(cluster, "nats", "streams"), self.clock)
        except JetlinkError as e:
            raise SparkJobError(e.description) from None

    def read(self, addr: io.Address) -> Input:
        if addr.kind == "topic":
            raise SparkJobError(f"{addr} is a topic: this job reads streams")
        if addr.kind == "parquet":
            if not io.path_exists(self.spark, addr.path):
                raise SparkJobError(f"{addr}: no such dataset")
            meta = io.read_meta(self.spark, addr.path)
            if meta is None:
                raise SparkJobError(f"{addr} has no {lake.META_FILE} (write it with `jetlink "
                                    "stream export` or a jetlink job)")
            if meta.get("kind", "stream") != "stream":
                raise SparkJobError(f"{addr} holds a {meta['kind']} ({lake.META_FILE}: "
                                    "\"kind\"), not a stream")
            state = meta.get("state") or {}
            try:  # (an empty one: no files to check)
                df = (io.read_lake(self.spark, addr.path) if int(state.get("messages", 0))
                      else io.read_parquet(self.spark, addr.path))
            except io.LakeColumnsError as e:
                raise SparkJobError(f"{addr} {e}") from None
            return Input(addr, lambda: df, meta["name"], meta.get("identity", ""),
                         int(state.get("last_seq", 0)), io.dataset_rows(df, addr.path),
                         _recorded_config(meta))
        js = self._js(addr.cluster)
        try:
            info = js.stream_info(addr.name)  # due expiry first, as the pump's read does
        except JetlinkError as e:
            raise SparkJobError(f"{addr}: {e}") from None
        with js.cluster.read() as conn:
            sid, first, last, msgs, created = conn.execute(
                "SELECT id, first_seq, last_seq, msgs, created_ns FROM streams WHERE name = ?",
                (addr.name,)).fetchone()
        if info.config.retention in ("workqueue", "interest"):
            raise SparkJobError(f"{addr}: an origin with {info.config.retention} retention "
                                "is consumed through a durable consumer; use `jetlink "
                                "replicate`")
        db = str(self.dd.cluster_path(addr.cluster))
        return Input(addr, lambda: io.read_store_stream(self.spark, db, addr.name, sid, first,
                                                        last, msgs),
                     addr.name, identity(created), last, msgs, info.config)

    # -- targets ---------------------------------------------------------------------------
    def _plan_target(self, addr: io.Address, make: Callable[[], StreamConfig]
                     ) -> tuple[StreamConfig, int, StreamConfig | None]:
        """The target's config, its next sequence and, when it does not exist yet, the
        config to create it with (``make()``, checked here as the engine's add_stream checks
        it, defaults filled in; created only when the job writes: :meth:`_finish`). An
        existing target must never have stored anything (:func:`stored_already`)."""
        from jetlink.core.config.validate import check_stream_create
        from jetlink.core.streams import empty_last_seq

        js = self._js(addr.cluster)
        if addr.name in js.stream_names():
            info = js.stream_info(addr.name)
            empty = empty_last_seq(info.config)
            if info.state.last_seq != empty:
                raise SparkJobError(stored_already(addr, info.state.messages,
                                                   info.state.first_seq, info.state.last_seq))
            return info.config, empty + 1, None
        request = make()
        with js.read() as (_conn, catalog):
            try:
                cfg = check_stream_create(request, catalog.configs)
            except JetlinkError as e:
                raise _refused(addr, e) from None
        return cfg, empty_last_seq(cfg) + 1, request

    def _checked(self, cfg: StreamConfig, addr: io.Address, origin: Input) -> StreamConfig:
        """A dataset target's config (written into its ``_jetlink.json``, what `stream
        import` creates a stream from) as the engine checks a create beside its origin as
        the job read it (its config known: the server's rules against the origin, such as
        ``mirror_direct`` from its ``allow_direct``): a config the import would refuse is
        refused before the job."""
        import dataclasses

        from jetlink.core.config.validate import check_stream_create

        # a mirror's dataset keeps its origin's name until `stream import NAME` names it: the
        # config is checked as the import's stream (another name), not as a self-mirror
        renamed = cfg.mirror is not None and cfg.mirror.name == cfg.name
        probe = dataclasses.replace(cfg, name="IMPORTED") if renamed else cfg
        known = {origin.name: origin.config} if origin.config is not None and \
            origin.name != probe.name else {}
        try:
            checked = check_stream_create(probe, known)
        except JetlinkError as e:
            raise _refused(addr, e) from None
        return dataclasses.replace(checked, name=cfg.name) if renamed else checked

    def _create_target(self, js: JetStream, addr: io.Address, request: StreamConfig) -> None:
        """Create the target a job planned (:meth:`_plan_target`) just before it writes."""
        if addr.name in js.stream_names():
            raise SparkJobError(f"{addr} was created by another command while the job ran: "
                                "nothing was written")
        js.add_stream(request.to_json())

    def _drop_target(self, js: JetStream, addr: io.Address) -> None:
        """Remove a target this run created, after the job failed (a failed job leaves the
        store as it found it)."""
        try:
            js.delete_stream(addr.name)
        except JetlinkError:
            pass

    def _config(self, doc: dict[str, Any]) -> StreamConfig:
        """A target config from its JSON document (the job's fields over ``--config``), with
        the defaults of a stream ``jetlink stream add --defaults`` creates for every field
        ``--config`` does not give (``self.defaults``)."""
        cfg = StreamConfig.from_json(doc)
        return self.defaults(cfg, set(doc)) if self.defaults is not None else cfg

    def _external(self, origin: Input, target_cluster: str) -> dict[str, Any]:
        oc = origin.address.cluster if origin.address.kind != "parquet" else target_cluster
        if oc == target_cluster:
            return {}
        return {"external": {"api": f"$JS.{oc}.API"}}

    # -- the jobs --------------------------------------------------------------------------
    def mirror(self, origin_text: str, target_text: str, *, config: dict[str, Any] | None,
               progress: Callable[[str], None] | None = None) -> Summary:
        t0 = time.perf_counter()
        origin = self.read(self.address(origin_text, "ORIGIN"))
        target = self.address(target_text, "TARGET")

        def make() -> StreamConfig:
            doc = dict(config or {})
            mirror = {"name": origin.name, **self._external(origin, target.cluster),
                      **doc.pop("mirror", {})}
            return self._config({**doc, "name": target.name or origin.name, "mirror": mirror})

        create = None
        if target.kind == "parquet":  # checked as a stream created from it would be
            cfg, first_seq = self._checked(make(), target, origin), 1
        elif target.kind == "stream":
            cfg, first_seq, create = self._plan_target(target, make)
        else:
            raise SparkJobError(f"TARGET {target} is a topic: use `jetlink spark mirror-topic`")
        if cfg.mirror is None or cfg.mirror.name != origin.name:
            got = (f"--config's mirror names {cfg.mirror.name}" if create and cfg.mirror
                   else f"it mirrors {cfg.mirror.name}" if cfg.mirror
                   else "it has no mirror in its configuration")
            raise SparkJobError(f"{target} is not a mirror of {origin.name}: {got}")
        return self._execute("mirror", target, cfg, first_seq, [("mirror", cfg.mirror, origin)],
                             t0, progress, create)

    def source(self, target_text: str, origin_texts: list[str], *,
               transforms: list[tuple[str, str]], config: dict[str, Any] | None,
               progress: Callable[[str], None] | None = None) -> Summary:
        t0 = time.perf_counter()
        if not origin_texts:
            raise SparkJobError("--from: at least one origin is required")
        origins = [self.read(self.address(t, "--from")) for t in origin_texts]
        target = self.address(target_text, "TARGET")

        def make() -> StreamConfig:
            doc = dict(config or {})
            return self._config({**doc, "name": target.name,
                                 "sources": self._sources(doc, origins, transforms, target)})

        if target.kind != "stream":
            raise SparkJobError(f"TARGET {target}: a source job writes into a stream of the "
                                "store (its sequences continue the target's)")
        cfg, first_seq, create = self._plan_target(target, make)
        pairs: list[tuple[str, StreamSource, Input]] = []
        for o in origins:
            match = [s for s in cfg.sources
                     if s.name == o.name and (o.address.kind == "parquet" or origin_cluster(
                         s, target.cluster)[0] == o.address.cluster)]
            if not match:
                raise SparkJobError(f"--from {o.address}: {target} has no source {o.name} "
                                    "from that cluster")
            pairs += [("source", s, o) for s in match]
        return self._execute("source", target, cfg, first_seq, pairs, t0, progress, create)

    def _sources(self, doc: dict[str, Any], origins: list[Input],
                 transforms: list[tuple[str, str]], target: io.Address) -> list[Any]:
        """The sources of a new sourcing target: ``--config``'s own (their filters,
        transforms and start options kept), each ``--from`` matching one of them by name and
        each of them one ``--from``; else one per ``--from``, each with the ``--transform``
        rules."""
        given = doc.get("sources")
        if not given:
            out = []
            for o in origins:
                s: dict[str, Any] = {"name": o.name, **self._external(o, target.cluster)}
                if transforms:
                    s["subject_transforms"] = [{"src": a, "dest": b} for a, b in transforms]
                out.append(s)
            return out
        if not isinstance(given, list) or not all(isinstance(s, dict) for s in given):
            raise SparkJobError("--config: sources must be a list of StreamSource objects")
        if transforms:
            raise SparkJobError("--transform: --config gives sources (with their own "
                                "subject_transforms); give the transforms in one place")
        names = [str(s.get("name", "")) for s in given]
        for o in origins:
            if o.name not in names:
                raise SparkJobError(f"--from {o.address}: --config's sources name no "
                                    f"{o.name} (they name {', '.join(names)})")
        have = {o.name for o in origins}
        for name in names:
            if name not in have:
                raise SparkJobError(f"--config: source {name} has no --from origin (give "
                                    "--from for every source of the config)")
        return given

    def seed(self, target_text: str, *, job: str = "seed",
             progress: Callable[[str], None] | None = None) -> Summary:
        """Fill an existing, never-written target from the origins its own config names
        (its mirror, or each of its sources), read from the store."""
        from jetlink.core.replication import agreements_of

        t0 = time.perf_counter()
        target = self.address(target_text, "TARGET")
        if target.kind != "stream":
            raise SparkJobError(f"TARGET {target}: expected a stream of the store")

        def absent() -> StreamConfig:
            raise SparkJobError(f"{target}: no such stream")

        cfg, first_seq, _create = self._plan_target(target, absent)
        agreements = agreements_of(cfg)
        if not agreements:
            raise SparkJobError(f"{target} is neither a mirror nor a sourcing stream")
        pairs: list[tuple[str, StreamSource, Input]] = []
        for kind, src in agreements:
            ocluster, err = origin_cluster(src, target.cluster)
            if err is not None:
                raise SparkJobError(f"{target}: {err.description}")
            if self.dd.is_down(ocluster):
                raise SparkJobError(f"origin cluster {ocluster} is down")
            pairs.append((kind, src, self.read(io.Address("stream", src.name, ocluster))))
        return self._execute(job, target, cfg, first_seq, pairs, t0, progress)

    def _execute(self, job: str, target: io.Address, cfg: StreamConfig, first_seq: int,
                 pairs: list[tuple[str, StreamSource, Input]], t0: float,
                 progress: Callable[[str], None] | None,
                 create: StreamConfig | None = None) -> Summary:
        """Run the mirror or source job ``cfg`` calls for over ``pairs`` (its agreements
        and their inputs), then write the result (:meth:`_finish`; ``create``: the config of
        a target to create first)."""
        try:
            summary = self._run_job(job, target, cfg, first_seq, pairs, progress, create)
        except BaseException as exc:
            stop = as_interrupt(exc)
            if stop is None:
                raise
            if not hasattr(stop, "left"):  # before the writing began: nothing was written
                stop.left = (f"the job stopped before it wrote {target}: "  # type: ignore[attr-defined]
                             "nothing was changed (run the job again)")
            raise stop from stop.__cause__
        summary.seconds = time.perf_counter() - t0
        return summary

    def _run_job(self, job: str, target: io.Address, cfg: StreamConfig, first_seq: int,
                 pairs: list[tuple[str, StreamSource, Input]],
                 progress: Callable[[str], None] | None,
                 create: StreamConfig | None) -> Summary:
        now = self.clock.now_ns()
        facts: dict[str, Any] = {}  # the output's count and last sequence, when planned
        _check_origins_readable(pairs)
        try:
            J.check_target(J.target_def(cfg))  # before the inputs' rows: before a driver
            if cfg.mirror is not None:
                df = J.mirror(pairs[0][2].df, cfg, now_ns=now)
            else:
                # a Parquet dataset's files have no order: partitions in order are enough
                df = J.source([J.Origin(o.df, s, o.identity) for _k, s, o in pairs], cfg,
                              now_ns=now, first_seq=first_seq,
                              ordered=target.kind != "parquet", facts=facts)
        except Exception as e:  # noqa: BLE001 - job refusals carry the rule
            raise _job_error(e) from None
        inputs = {id(o): o for _k, _s, o in pairs}
        summary = Summary(job, str(target), rows_in=sum(o.msgs for o in inputs.values()))
        self._finish(summary, df, cfg, target, now, pairs, progress, facts, create)
        return summary

    def kv(self, create: Callable[[Any], Any], progress: Callable[[str], None] | None = None,
           *, origins: list[tuple[str, str, StreamSource]] | None = None) -> Summary:
        """A KV mirror or aggregate: ``create(KV)`` makes the bucket through core (it must
        not exist yet), then the job fills its stream from the origins' streams. Each of
        ``origins`` (``(option, bucket, source)``: ``("--source NOPE", "NOPE", ...)``) must
        exist before the bucket is made; a job that fails after it removes the bucket again."""
        from jetlink.core.kv import KV

        check_kv_origins(self.dd, self.cluster, origins or [])
        kv = KV(self.dd, self.cluster, self.clock)
        js = self._js(self.cluster)
        before = set(js.stream_names())
        stream = create(kv).config.name
        try:
            return self.seed(f"store:{self.cluster}/{stream}", job="kv-aggregate",
                             progress=progress)
        except BaseException as exc:
            # only a bucket this job made: one that existed before it (create answers an
            # existing bucket of the same config as the server does) is never removed
            if stream not in before:
                from jetlink.core.interrupts import no_interrupt

                with no_interrupt():  # (a second Ctrl-C must not cut the removal short)
                    self._drop_target(js, io.Address("stream", stream, self.cluster))
                if isinstance(exc, KeyboardInterrupt):  # what it left, for the line said
                    exc.left = (  # type: ignore[attr-defined]
                        f"the job stopped before it finished filling {stream}, the bucket's "
                        "stream: the bucket it created was removed (run the job again)")
            raise

    # -- writing ---------------------------------------------------------------------------
    def _finish(self, summary: Summary, df: Any, cfg: StreamConfig, target: io.Address,
                now: int, pairs: list[tuple[str, StreamSource, Input]],
                progress: Callable[[str], None] | None,
                facts: dict[str, Any] | None = None,
                create: StreamConfig | None = None) -> None:
        """Count the job's rows (unless its plan counted them), then write them: a Parquet
        dataset, or the store's target (created first from ``create`` when the job planned
        it; removed again when the writing fails, so a failed job leaves no target)."""
        from pyspark import StorageLevel

        known = bool(facts)  # counted by the job's plan: the rows are read once, no cache
        if not known:
            df = df.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            if known:
                summary.rows_out, final_last = facts["rows_out"], facts["last_seq"]
            else:
                agg = df.selectExpr("count(1) AS n", "max(seq) AS last").first()
                summary.rows_out, final_last = int(agg["n"]), agg["last"]
            if target.kind == "parquet":
                meta = {"kind": "stream", "name": cfg.name, "cluster": "",
                        "config": cfg.to_json(), "created": format_rfc3339_nano(now),
                        "created_ns": now, "identity": identity(now),
                        "state": {"messages": summary.rows_out, "last_seq": final_last or 0}}
                try:
                    io.write_parquet(df, target.path, meta)
                except BaseException as exc:
                    stop = as_interrupt(exc)
                    if stop is None:
                        raise
                    stop.left = (  # type: ignore[attr-defined]
                        f"the job stopped while it wrote {target}: the dataset was not "
                        f"finished (no {lake.META_FILE}: stream import refuses it); run the "
                        "job again (a directory left there is named with how to clear it)")
                    raise stop from stop.__cause__
                summary.output = str(target)
                return
            js = self._js(target.cluster)
            if create is not None:
                self._create_target(js, target, create)
            try:
                # a source job's messages are stored now, as the pump stamps what it copies
                # (after the target was made: its max_age counts from there, never from the
                # job's start); a mirror keeps its origin's times
                stamp = self.clock.now_ns() if cfg.mirror is None else None
                self._write(summary, df, js, target, final_last, pairs, progress, stamp)
            except BaseException as exc:  # a failure, or an interrupt: no half target
                if create is not None:
                    from jetlink.core.interrupts import no_interrupt

                    with no_interrupt():  # (a second Ctrl-C must not cut the removal short)
                        self._drop_target(js, target)
                stop = as_interrupt(exc)
                if stop is None:
                    raise
                stop.left = (  # type: ignore[attr-defined]  # what it left, for the line said
                    f"the job stopped while it wrote {target}: the target it created "
                    "was removed (run the job again)" if create is not None else
                    f"the job stopped while it wrote {target}: it keeps what the job "
                    "committed (jetlink replicate continues it)")
                raise stop from stop.__cause__
        finally:
            if not known:
                df.unpersist()

    def _write(self, summary: Summary, df: Any, js: JetStream, target: io.Address,
               final_last: int | None, pairs: list[tuple[str, StreamSource, Input]],
               progress: Callable[[str], None] | None, stamp: int | None = None) -> None:
        """The job's rows into the store's target, each transaction with the agreements'
        progress, the last one with their cursors (the module doc); ``stamp``: every row's
        time (a source job's: the time of the write)."""
        from jetlink.core.replication import prepare_seed, seed_agreement

        prepare_seed(js.cluster)

        def seed(txn: Any, d: Any, final: bool) -> None:
            for kind, src, o in pairs:
                seed_agreement(txn, target.cluster, d, kind, src, o.identity,
                               cursor=o.last_seq if final else None)

        def on_txn(txn: Any, d: Any, last_written: int) -> None:
            seed(txn, d, last_written == final_last)
            if progress is not None:
                progress(f"{last_written}")

        if summary.rows_out:
            try:
                batches = io.iter_arrow(df, total=summary.rows_out)
                lake.write_stream_rows(js, target.name, batches if stamp is None
                                       else _stamped(batches, stamp), on_txn=on_txn)
            except JetlinkError as e:
                raise SparkJobError(f"writing {target}: {e}") from None
        else:
            with js.write() as txn:
                d = txn.catalog.by_name.get(target.name)
                if d is not None:
                    seed(txn, d, True)
        summary.cursors = [{"origin": o.name, "agreement": iname_of(src), "kind": kind,
                            "cursor": o.last_seq} for kind, src, o in pairs]


def _stamped(batches: Any, ts: int) -> Any:
    """The lake rows of ``batches`` (pyarrow RecordBatches) with every ``ts`` set to ``ts``."""
    import pyarrow as pa

    for b in batches:
        i = b.schema.get_field_index("ts")
        yield b.set_column(i, b.schema.field(i), pa.array([ts] * b.num_rows, pa.int64()))


def check_kv_origins(dd: DataDir, cluster: str,
                     origins: list[tuple[str, str, StreamSource]]) -> None:
    """Each origin bucket of a KV job (``(option, bucket, source)``: ``("--source NOPE",
    "NOPE", ...)``) exists, read only (asked before a Spark driver starts, and again by the
    job): a missing one is refused naming its option, and nothing is created."""
    from jetlink.core.errors import did_you_mean

    for option, bucket, src in origins:
        ocluster, err = origin_cluster(src, cluster)
        if err is not None:
            raise SparkJobError(f"{option}: {err.description}")
        where = f" in cluster {ocluster}" if ocluster != cluster else ""
        if not dd.has_cluster(ocluster) and ocluster != "local":
            hint = did_you_mean(ocluster, dd.cluster_names())
            raise SparkJobError(f"{option}: cluster {ocluster} not found"
                                + (f": {hint}" if hint else "") + "; nothing was created")
        if src.name not in io.store_names(dd, ocluster, "streams"):
            raise SparkJobError(f"{option}: bucket {bucket} not found{where}; nothing "
                                "was created")


def _refused(addr: io.Address, e: JetlinkError) -> SparkJobError:
    """The engine's refusal of a job's target config, naming the target, with the server's
    error code and the offending value (as `stream add` says it)."""
    code = getattr(e, "err_code", 0)
    text = f"{addr}: {e}" + (f" ({code})" if code else "")
    return SparkJobError(text + (f": {e.detail}" if getattr(e, "detail", None) else ""))


def stored_already(addr: io.Address, messages: int, first: int, last: int) -> str:
    """The refusal of a target that holds messages, with the two ways on: a job interrupted
    while writing it (a killed process) left a target the pump continues; or start over."""
    held = (f"holds {messages:,} messages (sequences {first:,} to {last:,})" if messages
            else f"has stored messages already (its last sequence is {last:,})")
    where = "" if addr.cluster == "local" else f"--cluster {addr.cluster} "
    return (f"{addr} {held}: a bulk job seeds only a new or never-written target. If they "
            "are an interrupted job's, `jetlink replicate` continues it from there; or "
            f"remove the target (`jetlink {where}stream rm {addr.name} -f`) and run the job "
            "again")


def _check_origins_readable(pairs: list[tuple[str, StreamSource, Input]]) -> None:
    """A store origin the server could never read for this agreement (core.copyrules
    ``origin_read_refusal``: its consumer_limits.max_ack_pending refuses the consumer a
    mirror or source reads it through) is refused before anything is made: seeded by the
    job, the target would hold what no server ever copies, and its pump would stop there."""
    from jetlink.core.copyrules import origin_read_refusal

    for _kind, src, origin in pairs:
        cfg = origin.config
        if origin.address.kind != "stream" or cfg is None:
            continue
        refused = origin_read_refusal(cfg, src)
        if refused is not None:
            raise SparkJobError(
                f"ORIGIN {origin.address}: {refused.description} ({refused.err_code}): its "
                f"consumer_limits.max_ack_pending ({cfg.consumer_limits.max_ack_pending}) "
                "refuses the consumer a mirror or source reads it through, as on a server: "
                "nothing would ever be copied; nothing was created")


def _job_error(e: BaseException) -> SparkJobError:
    from .limits import LimitError

    if isinstance(e, (J.JobError, LimitError)):
        return SparkJobError(str(e))
    from .session import failure_text, interrupted

    if interrupted():  # py4j's clean-up after an interrupt failed: the interrupt it is
        raise KeyboardInterrupt from e
    return SparkJobError(failure_text(e))


def _recorded_config(meta: dict[str, Any]) -> StreamConfig | None:
    """The stream config a dataset's ``_jetlink.json`` records (None when it records none
    a stream could be made of: the job then knows no more of its origin than its name)."""
    doc = meta.get("config")
    if not isinstance(doc, dict):
        return None
    try:
        return StreamConfig.from_json({**doc, "name": meta.get("name") or doc.get("name")},
                                      strict=False)
    except (JetlinkError, ValueError, TypeError):
        return None
