"""Refusals added for safety change nothing: each refused command leaves the data
directory's databases byte for byte as they were (a usage error, a Kafka refusal, a
failover refused for making a second primary)."""

from __future__ import annotations

import pytest
from helpers import data_dir_bytes, ok


@pytest.fixture
def world(jl, cli_clock):
    """kw -> ke: link L (a mirror topic orders); west -> east and central: ORDERS mirrored
    on both sides, east's failed over (a primary), west down."""
    for args in (["cluster", "add", "kw", "--kind", "kafka"],
                 ["cluster", "add", "ke", "--kind", "kafka"],
                 ["--cluster", "kw", "topic", "create", "orders"],
                 ["--cluster", "ke", "links", "create", "L", "--source-cluster", "kw"],
                 ["--cluster", "ke", "mirrors", "create", "orders", "--link", "L"],
                 ["cluster", "add", "west"], ["cluster", "add", "east"],
                 ["cluster", "add", "central"],
                 ["--cluster", "west", "stream", "add", "ORDERS", "--subjects", "orders.>",
                  "--defaults"],
                 ["--cluster", "east", "stream", "add", "ORDERS_EAST", "--mirror", "ORDERS",
                  "--mirror-domain", "west", "--defaults"],
                 ["--cluster", "central", "stream", "add", "ORDERS_C", "--mirror", "ORDERS",
                  "--mirror-domain", "west", "--defaults"],
                 ["--cluster", "west", "pub", "orders.a", "x"],
                 ["--cluster", "east", "positions", "sync"],
                 ["--cluster", "central", "positions", "sync"],
                 ["cluster", "down", "west"],
                 ["--cluster", "east", "stream", "failover", "ORDERS_EAST", "-f"]):
        ok(jl(*args))
    return jl


REFUSED = [
    (["--cluster", "ke", "links", "alter", "L", "-c", "link.mode=SOURCE"], 1),
    (["--cluster", "ke", "links", "create", "N", "--source-cluster", "west"], 1),
    (["--cluster", "ke", "kafka-mirrors", "--failover", "--topics", "", "--link", "L"], 2),
    (["--cluster", "ke", "kafka-mirrors", "--pause", "--topics", "orders", "--link", "L",
      "--bootstrap-server", "kw:9092"], 2),
    (["--cluster", "central", "stream", "failover", "ORDERS_C", "-f"], 1),
    (["--cluster", "central", "dr", "failover", "--from", "west", "-f"], 2),
    # this round's: natscli's placement --cluster after the verb, server-only options with
    # no server, a republish of nothing, a mirror topic's link found from a non-mirror, a
    # kafka-configs delete of an unset config, a shift with no committed offset
    (["--cluster", "east", "stream", "add", "P", "--subjects", "p", "--defaults",
      "--cluster", "west"], 2),
    (["--creds", "/nonexistent", "--cluster", "east", "stream", "rm", "ORDERS_EAST", "-f"], 2),
    (["--cluster", "east", "stream", "add", "RH", "--subjects", "rh", "--defaults",
      "--republish-headers"], 2),
    (["--cluster", "kw", "kafka-mirrors", "--failover", "--topics", "orders"], 1),
    (["--cluster", "kw", "topic", "alter", "orders", "--delete-config", "retention.ms"], 1),
    (["--cluster", "kw", "group", "set-offsets", "g", "--topic", "orders", "--shift-by",
      "1"], 1),
    # the refusals added after the sweeps against the real projects' tables: a cluster name
    # no data directory holds, text that is not UTF-8 (refused inside the write's
    # transaction: no replication step follows), natscli's contradicting flags, a pause in
    # the past, Kafka's tools' and broker's refusals, natscli's --cluster after kv add
    (["--cluster", "bad name", "stream", "ls"], 2),
    (["--cluster", "east", "stream", "add", "NU", "--subjects", "nu", "--defaults",
      "--description", "caf\udce9"], 2),
    (["--cluster", "east", "consumer", "add", "ORDERS_EAST", "C", "--defaults",
      "--pinned-groups", "a", "--prioritized-groups", "b"], 2),
    (["--cluster", "east", "consumer", "pause", "ORDERS_EAST", "C", "2020-01-01 00:00:00",
      "-f"], 2),
    (["--cluster", "east", "pub", "orders.x", "x", "--sleep", "1s", "--atomic"], 2),
    (["--cluster", "east", "kv", "add", "K", "--cluster", "west"], 2),
    (["--cluster", "kw", "topic", "create", "t", "--replication-factor", "-1"], 2),
    (["--cluster", "kw", "topic", "create", "t", "--config", "remote.storage.enable=true"], 1),
    (["--cluster", "kw", "topic", "alter", "orders", "--delete-config", "missing_config1"], 1),
    (["--cluster", "kw", "group", "set-offsets", "g", "--topic", "orders", "--by-duration",
      "P99999999999999999D"], 2),
    # Kafka's Utils.getDateTime refuses a date alone: never a reset to midnight
    (["--cluster", "kw", "group", "set-offsets", "g", "--topic", "orders", "--to-datetime",
      "2000-01-01"], 2),
    (["--cluster", "kw", "topic", "create", "orders", "--partitions", "7",
      "--if-not-exists"], 0),  # there already: left as it is
    (["--cluster", "kw", "topic", "rm", "nope", "--if-exists", "-f"], 0),
    # the refusals of the new-user sweeps: an ACL wildcard as a request's principal or host,
    # kafka-configs' comma list of unset configs, the side addressed as a watch's region, a
    # refresh the dashboard never takes, an apply that needs a terminal to ask on
    (["--cluster", "kw", "acls", "check", "--principal", "User:*", "--operation", "Read",
      "--topic", "orders"], 2),
    (["--cluster", "kw", "acls", "check", "--principal", "User:a", "--operation", "Read",
      "--topic", "orders", "--host", "*"], 2),
    (["--cluster", "kw", "topic", "alter", "orders", "--delete-config",
      "retention.ms, segment.ms"], 1),
    (["--cluster", "central", "dr", "watch", "--listen", "127.0.0.1:0", "--from", "central",
      "--failover-after", "1s"], 2),
    (["dashboard", "--refresh", "500ms", "--json"], 2),
    (["--cluster", "east", "dr", "check", "ORDERS_EAST", "--outfile", "/"], 3),
]


DRY_RUNS = [
    ["--cluster", "kw", "group", "set-offsets", "g", "--topic", "orders", "--to-current",
     "--dry-run"],
    ["--cluster", "kw", "group", "set-offsets", "g", "--topic", "orders", "--by-duration",
     "PT1H", "--dry-run"],
    ["--cluster", "kw", "group", "set-offsets", "g", "--topic", "orders", "--to-datetime",
     "2026-01-01T00:00:00.000Z", "--dry-run"],
    ["--cluster", "kw", "group", "set-offsets", "g", "--topic", "orders", "--to-datetime",
     "2026-01-01T00:00:00.000", "--dry-run"],
    ["--cluster", "kw", "group", "set-offsets", "g", "--topic", "orders", "--by-duration",
     "-PT1H", "--dry-run"],
]


@pytest.mark.parametrize("args", DRY_RUNS, ids=[" ".join(a[4:8]) for a in DRY_RUNS])
def test_a_dry_run_changes_no_byte(world, args):
    before = data_dir_bytes(world.data, databases_only=True)
    ok(world(*args))
    assert data_dir_bytes(world.data, databases_only=True) == before


@pytest.mark.parametrize(("args", "code"), REFUSED,
                         ids=[" ".join(a[2:5]) + f" {i}" for i, (a, _c) in enumerate(REFUSED)])
def test_a_refused_command_changes_no_byte(world, args, code):
    before = data_dir_bytes(world.data, databases_only=True)
    r = world(*args)
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert data_dir_bytes(world.data, databases_only=True) == before


def test_a_check_leaves_every_file_as_it_was(world):
    """``cluster check`` reads: no database changes, and no file is left beside one (a
    read-only open of a database in WAL mode makes its -wal and -shm and can not remove
    them)."""
    before = data_dir_bytes(world.data)
    files = sorted(p.name for p in world.data.iterdir())  # (the logs folded in: none beside)
    r = world("cluster", "check")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert sorted(p.name for p in world.data.iterdir()) == files
    assert data_dir_bytes(world.data) == before


def test_a_reset_plan_or_an_export_on_a_dry_run_changes_no_byte(world):
    """group set-offsets' --from-file and --export with --dry-run read the plan and print it;
    the data directory's databases stay byte for byte as they were."""
    plan = world.tmp / "plan.csv"
    plan.write_text("orders,0,0\n")
    before = data_dir_bytes(world.data, databases_only=True)
    ok(world("--cluster", "kw", "group", "set-offsets", "g", "--from-file", str(plan),
             "--dry-run"))
    ok(world("--cluster", "kw", "group", "set-offsets", "g", "--all-topics", "--to-earliest",
             "--export", "--dry-run"))
    assert data_dir_bytes(world.data, databases_only=True) == before
