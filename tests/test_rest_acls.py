"""``acls add|ls|rm --rest-url``: the same verbs over ``jetlink serve``'s ACL operations.

Each verb runs twice through CliRunner: against the served data directory over REST (a
``jetlink serve`` subprocess, as the links / mirrors end-to-end tests run it) and on a copy
of it locally; both must print the same (exit status, stdout, stderr). Errors keep the
engine's text; only the parenthesis differs (the local run names the Kafka error, the remote
one the HTTP status and Confluent's error_code). Hostile input is refused before any request
with the local run's one line, and nothing changes on the server.
"""

from __future__ import annotations

import itertools
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import data_dir_bytes, ok
from test_rest_client import TOKEN, cli, same, start_server, stop_server  # noqa: F401 (cli: the fixture)

from jetlink.core.kafka.acls import AclStore
from jetlink.core.store import DataDir

_numbers = itertools.count(1)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("served-acls")
    data = root / "data"
    data.mkdir(mode=0o700)
    served = start_server(root, data)
    yield served
    stop_server(served)


@dataclass
class Pair:
    secured: str  # a cluster with an authorizer
    open: str  # a cluster without one
    local: Path  # a copy of the served data directory, for the local runs


@pytest.fixture
def pair(server, tmp_path):
    """Clusters k<N> (an authorizer, User:alice allowed to read topic orders) and o<N> (no
    authorizer) in the served data directory, copied for the local runs."""
    n = next(_numbers)
    secured, open_ = f"k{n}", f"o{n}"
    dd = DataDir(server.data)
    try:
        dd.add_cluster(secured, kind="kafka")
        dd.add_cluster(open_, kind="kafka")
        store = AclStore(dd.open(secured))
        store.configure(enabled=True)
        from jetlink.core.kafka.acls import AclBinding

        store.add([AclBinding.make("TOPIC", "orders", "LITERAL", "User:alice", "*", "READ",
                                   "ALLOW")])
    finally:
        dd.close()
    local = tmp_path / f"local-{n}"
    shutil.copytree(server.data, local)
    return Pair(secured, open_, local)


@pytest.fixture
def both(server, cli, tmp_path):  # noqa: F811 (the fixture imported above)
    """``both(cluster, local_data, *args)``: (local result, remote result) of ``jetlink
    --cluster C acls ARGS``."""
    nowhere = tmp_path / "no-data-dir-for-remote-runs"

    def run(cluster: str, local: Path, *args: str):
        remote = cli(nowhere, "--cluster", cluster, "acls", "--rest-url", server.url,
                     "--rest-token", TOKEN, *args)
        here = cli(local, "--cluster", cluster, "acls", *args)
        assert not nowhere.exists(), "a remote run touched the local store"
        return here, remote

    return run


ALICE = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL) " \
        "(principal=User:alice, host=*, operation={op}, permissionType=ALLOW)"


def test_add_ls_rm_print_the_same_over_rest(pair, both):
    k, local = pair.secured, pair.local
    out = ok(same(*both(k, local, "add", "--principal", "User:alice", "--operation", "Read",
                        "--operation", "Write", "--operation", "Describe", "--topic",
                        "orders"))).stdout
    assert out == "".join(f"{said}: {ALICE.format(op=op)}\n" for said, op in
                          (("Exists", "READ"), ("Added", "WRITE"), ("Added", "DESCRIBE")))
    doc = json.loads(ok(same(*both(k, local, "add", "--principal", "User:*", "--operation",
                                   "Read", "--group", "billing-", "--prefixed", "--deny",
                                   "-j"))).stdout)
    assert doc == {"kind": "KafkaAclList", "data": [{
        "resource_type": "GROUP", "resource_name": "billing-", "pattern_type": "PREFIXED",
        "principal": "User:*", "host": "*", "operation": "READ", "permission": "DENY"}]}
    for args in (["ls"], ["ls", "-j"], ["ls", "--topic", "orders"],
                 ["ls", "--group", "billing-eu", "--resource-pattern-type", "match", "-j"],
                 ["ls", "--principal", "User:*"]):
        ok(same(*both(k, local, *args)))
    out = ok(same(*both(k, local, "rm", "--topic", "orders", "--operation", "Write",
                        "-f"))).stdout
    assert out == f"Removed: {ALICE.format(op='WRITE')}\n"
    doc = json.loads(ok(same(*both(k, local, "rm", "--topic", "orders", "-f", "-j"))).stdout)
    assert [d["operation"] for d in doc["data"]] == ["DESCRIBE", "READ"]
    assert ok(same(*both(k, local, "ls", "--topic", "orders"))).stderr == "No ACLs\n"


def test_a_cluster_without_an_authorizer_says_so_on_both_sides(pair, both):
    for args in (["ls"], ["add", "--principal", "User:a", "--operation", "Read", "--topic",
                          "t"], ["rm", "--topic", "t", "-f"]):
        local, remote = both(pair.open, pair.local, *args)
        assert local.exit_code == remote.exit_code == 1
        assert local.stderr.endswith(" (SECURITY_DISABLED 54)\n")
        assert remote.stderr.endswith(" (HTTP 400, error_code 40002)\n")
        assert local.stderr.rsplit(" (", 1)[0] == remote.stderr.rsplit(" (", 1)[0] == (
            f"jetlink: error: No Authorizer is configured on cluster {pair.open}: add it "
            f"with jetlink cluster authorizer {pair.open} --enable")


@pytest.mark.parametrize(("args", "line"), [
    (["add", "--principal", "User:a", "--operation", "Peek", "--topic", "t"],
     "jetlink: error: operation 'Peek' is not one of ALL, READ, WRITE, CREATE, DELETE, ALTER, "
     "DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, "
     "CREATE_TOKENS, DESCRIBE_TOKENS (Kafka's names, in any case: the kafka-acls spellings "
     "Read, DescribeConfigs ... too)\n"),
    (["add", "--principal", "alice", "--operation", "Read", "--topic", "t"],
     "jetlink: error: principal 'alice' is not TYPE:NAME (e.g. User:alice, or User:* for "
     "every user)\n"),
    (["add", "--principal", "User:a", "--operation", "Read", "--topic", "t" * 100_000],
     "jetlink: error: resource name of 100000 characters: at most 32767 (a Kafka protocol "
     "string)\n"),
    (["ls", "--topic", "t" * 100_000],
     "jetlink: error: resource name of 100000 characters: at most 32767 (a Kafka protocol "
     "string)\n"),
    (["rm", "--topic", "t", "--principal", "bob", "-f"],
     "jetlink: error: principal 'bob' is not TYPE:NAME (e.g. User:alice, or User:* for "
     "every user)\n"),
])
def test_hostile_input_is_one_line_and_changes_nothing(server, pair, both, args, line):
    before = data_dir_bytes(server.data, databases_only=True)
    local, remote = both(pair.secured, pair.local, *args)
    assert same(local, remote).exit_code == 2
    assert remote.stderr == line
    assert data_dir_bytes(server.data, databases_only=True) == before


def test_a_filter_that_matches_nothing_removes_nothing(server, pair, both):
    before = data_dir_bytes(server.data, databases_only=True)
    res = ok(same(*both(pair.secured, pair.local, "rm", "--topic", "nothing", "-f")))
    assert (res.stdout, res.stderr) == ("", "jetlink: notice: no ACL matched: nothing removed\n")
    doc = json.loads(ok(same(*both(pair.secured, pair.local, "rm", "--group", "g", "-f",
                                   "-j"))).stdout)
    assert doc == {"kind": "KafkaAclList", "data": []}
    assert data_dir_bytes(server.data, databases_only=True) == before


def test_acls_check_is_refused_with_a_rest_url(server, pair, cli, tmp_path):  # noqa: F811
    result = cli(tmp_path / "none", "--cluster", pair.secured, "acls", "--rest-url",
                 server.url, "check", "--principal", "User:alice", "--operation", "Read",
                 "--topic", "orders")
    assert result.exit_code == 2
    assert result.stderr == ("jetlink: error: acls check runs on the data directory's "
                             "cluster: REST API v3 has no operation for it (leave out "
                             "--rest-url and the context's rest_url)\n")
