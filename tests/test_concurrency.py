"""Several processes on one data directory: writers queue, readers see consistent snapshots."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import WAIT_TIMEOUT

from jetlink.core.jetstream import JetStream
from jetlink.core.store import DataDir
from jetlink.core.streams import recount

WRITER = textwrap.dedent(
    """
    import sys
    from jetlink.core.store import DataDir
    from jetlink.core.jetstream import JetStream
    js = JetStream(DataDir(sys.argv[1]).open())
    tag, n, batch = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    seqs = []
    for start in range(0, n, batch):
        msgs = [(f"q.{tag}.{i % 5}", f"{tag}:{i}".encode(), {"Nats-Msg-Id": f"{tag}-{i}"})
                for i in range(start, min(n, start + batch))]
        acks = js.publish_batch(msgs) if batch > 1 else [js.publish(*msgs[0])]
        seqs.extend(a.seq for a in acks)
    assert seqs == sorted(seqs), "sequences of one writer are increasing"
    print(" ".join(map(str, seqs)))
    """
)

READER = textwrap.dedent(
    """
    import sys
    from jetlink.core.store import DataDir
    from jetlink.core.jetstream import JetStream
    js = JetStream(DataDir(sys.argv[1]).open())
    total = int(sys.argv[2])
    last = 0
    rounds = 0
    while True:
        rounds += 1
        st = js.stream_info("Q", subjects_filter=">").state
        # one snapshot: counters agree with each other
        assert st.messages == st.last_seq - st.first_seq + 1 or st.messages == 0, st
        assert sum(st.subjects.values() if st.subjects else []) == st.messages, st
        assert st.last_seq >= last, "never goes back"
        last = st.last_seq
        if st.messages:
            m = js.get_msg("Q", st.last_seq)
            tag, i = m.data.decode().split(":")
            assert m.subject == f"q.{tag}.{int(i) % 5}"
        if st.messages >= total:
            break
    print(rounds)
    """
)


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_writers_and_a_reader_at_once(tmp_path):
    path = str(tmp_path / "data")
    dd = DataDir(path)
    js = JetStream(dd.open())
    js.add_stream({"name": "Q", "subjects": ["q.>"]})
    n_batch, n_single = 1500, 150
    procs = [
        _spawn(READER, path, str(n_batch + n_single)),
        _spawn(WRITER, path, "a", str(n_batch), "50"),
        _spawn(WRITER, path, "b", str(n_single), "1"),
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        outs.append(out)
    seqs_a = [int(s) for s in outs[1].split()]
    seqs_b = [int(s) for s in outs[2].split()]
    assert len(seqs_a) == n_batch and len(seqs_b) == n_single
    assert sorted(seqs_a + seqs_b) == list(range(1, n_batch + n_single + 1))
    assert int(outs[0]) >= 1
    # the final state agrees with a recount, and each message is where its ack said
    st = js.stream_info("Q").state
    assert (st.messages, st.first_seq, st.last_seq) == (n_batch + n_single, 1,
                                                        n_batch + n_single)
    with js.cluster.read() as conn:
        sid = conn.execute("SELECT id FROM streams WHERE name='Q'").fetchone()[0]
        rc = recount(conn, sid)
    assert (rc["msgs"], rc["bytes"]) == (st.messages, st.bytes)
    assert js.get_msg("Q", seqs_b[-1]).data == f"b:{n_single - 1}".encode()
    assert js.get_msg("Q", seqs_a[0]).data == b"a:0"
    # the dedupe window saw every id: publishing one again is a duplicate
    assert js.publish("q.a.0", b"again", {"Nats-Msg-Id": "a-0"}).duplicate
    dd.close()


def test_config_changes_are_seen_by_other_processes(tmp_path):
    path = str(tmp_path / "data")
    dd = DataDir(path)
    js = JetStream(dd.open())
    js.add_stream({"name": "Q", "subjects": ["q.>"]})
    assert js.publish("q.x", b"1").seq == 1  # the catalog is now cached in this process
    code = textwrap.dedent(
        """
        import sys
        from jetlink.core.store import DataDir
        from jetlink.core.jetstream import JetStream
        js = JetStream(DataDir(sys.argv[1]).open())
        js.update_stream({"name": "Q", "subjects": ["q.>"], "max_msgs": 1})
        js.add_stream({"name": "R", "subjects": ["r.>"]})
        """
    )
    p = _spawn(code, path)
    _, err = p.communicate(timeout=WAIT_TIMEOUT)
    assert p.returncode == 0, err
    js.publish("q.y", b"2")
    assert js.stream_info("Q").state.messages == 1  # the new limit applies here too
    assert js.publish("r.z", b"3").stream == "R"
    dd.close()


def test_subscriber_in_another_process_sees_core_messages(tmp_path):
    path = str(tmp_path / "data")
    dd = DataDir(path)
    js = JetStream(dd.open())
    code = textwrap.dedent(
        """
        import sys
        from jetlink.core.store import DataDir
        from jetlink.core.jetstream import JetStream
        js = JetStream(DataDir(sys.argv[1]).open())
        sub = js.subscribe("news.>")
        print("READY", flush=True)
        got = []
        while len(got) < 3:
            m = sub.next(timeout=120)
            assert m is not None
            got.append(m.data.decode())
        print(",".join(got))
        """
    )
    p = _spawn(code, path)
    assert p.stdout.readline().strip() == "READY"
    for word in ("one", "two", "three"):
        js.publish_core("news.x", word.encode())
    js.publish_core("other", b"no")
    out, err = p.communicate(timeout=WAIT_TIMEOUT)
    assert p.returncode == 0, err
    assert out.strip() == "one,two,three"
    dd.close()
