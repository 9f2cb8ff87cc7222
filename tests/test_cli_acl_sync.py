"""ACL sync through the CLI: --acl-filters-json-file on both `links create` forms, the ACLs
on the destination after the command's link step, the AclSync task in `links describe`, a
hostile filter file refused in one line with nothing changed."""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, doc, ok

ALICE = '{"aclFilters":[{"accessFilter":{"principal":"User:alice"}}]}'
ALICE_READ = {"resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
              "principal": "User:alice", "host": "*", "operation": "READ",
              "permission": "ALLOW"}


@pytest.fixture
def two(jl, cli_clock):
    for name in ("west", "east"):
        ok(jl("cluster", "add", name, "--kind", "kafka", "--authorizer"))
    for who in ("alice", "bob"):
        ok(jl("--cluster", "west", "acls", "add", "--principal", f"User:{who}",
              "--operation", "read", "--topic", "orders"))
    # the link's principal (User:ANONYMOUS) may read west's ACLs: DESCRIBE on the cluster
    ok(jl("--cluster", "west", "acls", "add", "--principal", "User:ANONYMOUS", "--operation",
          "describe", "--kafka-cluster"))
    (jl.tmp / "f.json").write_text(ALICE)
    return jl


def test_a_link_that_may_not_describe_the_source_cluster_syncs_nothing(two, cli_clock):
    ok(two("--cluster", "west", "acls", "rm", "--principal", "User:ANONYMOUS",
           "--kafka-cluster", "-f"))
    # validated only: the same warning, and no byte of the data directory changed
    before = data_dir_bytes(two.data)
    r = ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
               "acl.sync.enable=true", "--acl-filters-json-file", str(two.tmp / "f.json"),
               "--validate-only"))
    assert "copies nothing until the source allows it" in r.stderr
    assert data_dir_bytes(two.data) == before
    r = ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
               "acl.sync.enable=true", "--acl-filters-json-file", str(two.tmp / "f.json")))
    # made all the same (as Confluent's), and said at once, not at its first sync
    assert r.stderr == (
        "jetlink: warning: the ACL sync of cluster link L (acl.sync.enable) copies nothing "
        "until the source allows it: User:ANONYMOUS is not authorized to DESCRIBE cluster "
        "kafka-cluster: no ACL matched the resource: allow.everyone.if.no.acl.found=false; "
        "the link needs the ACL DESCRIBE on the cluster of west to sync ACLs "
        "(CLUSTER_AUTHORIZATION_FAILED 31)\n")
    assert east_acls(two) == []
    d = doc(two("--cluster", "east", "links", "describe", "L", "-j"))
    [err] = d["tasks"][0]["errors"]
    assert err["error_code"] == "CLUSTER_AUTHORIZATION_FAILED"
    assert err["error_message"].endswith(
        "the link needs the ACL DESCRIBE on the cluster of west to sync ACLs")
    # the failing sync is the link's error in every replicate until it works (exit 1),
    # said as its last run's between runs (the clock here stands still: 0s ago)
    for _ in range(2):
        r = two("replicate", "-j")
        assert r.exit_code == 1, (r.stdout, r.stderr)
        [link] = json.loads(r.stdout)["links"]
        assert link["errors"] == [f"ACL sync: {err['error_message']} (its run 0s ago; the "
                                  "next in 5s, acl.sync.ms)"]
    ok(two("--cluster", "west", "acls", "add", "--principal", "User:ANONYMOUS", "--operation",
           "describe", "--kafka-cluster"))
    cli_clock.advance_s(60)  # acl.sync.ms (5 s) passed: the sync runs again, and works
    r = ok(two("replicate", "-j"))
    assert "errors" not in json.loads(r.stdout)["links"][0]
    assert east_acls(two) == [ALICE_READ]


def east_acls(jl):
    return doc(jl("--cluster", "east", "acls", "ls", "-j"))["data"]


@pytest.mark.parametrize("form", [
    ("links", "create", "L", "--source-cluster", "west", "-c", "acl.sync.enable=true"),
    ("kafka-cluster-links", "--create", "--link", "L", "--cluster-id", "west", "--config",
     "acl.sync.enable=true"),
])
def test_both_create_forms_take_the_filters_file_and_sync(two, form):
    r = ok(two("--cluster", "east", *form, "--acl-filters-json-file", str(two.tmp / "f.json")))
    assert r.stdout == "Cluster link 'L' creation successfully completed.\n"
    assert east_acls(two) == [ALICE_READ]  # the command's link step synced
    d = doc(two("--cluster", "east", "links", "describe", "L", "-j"))
    assert d["tasks"][0] == {"task_name": "AclSync", "state": "ACTIVE", "errors": []}
    assert {c["name"]: c["value"] for c in d["configs"]}["acl.filters"] == ALICE


def test_removed_on_the_source_is_removed_on_the_destination(two):
    ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
           "acl.sync.enable=true", "-c", "acl.sync.ms=0", "--acl-filters-json-file",
           str(two.tmp / "f.json")))
    ok(two("--cluster", "west", "acls", "rm", "--principal", "User:alice", "--topic",
           "orders", "--force"))
    assert east_acls(two) == []


def test_source_without_authorizer_shows_in_the_task(two):
    ok(two("cluster", "authorizer", "west", "--disable"))
    ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
           "acl.sync.enable=true", "--acl-filters-json-file", str(two.tmp / "f.json")))
    d = doc(two("--cluster", "east", "links", "describe", "L", "-j"))
    assert d["tasks"][0] == {"task_name": "AclSync", "state": "IN_ERROR", "errors": [{
        "error_code": "SECURITY_DISABLED",
        "error_message": "No Authorizer is configured on cluster west: add it with jetlink "
                         "cluster authorizer west --enable"}]}


def test_hostile_filters_file_is_one_line_and_changes_nothing(two):
    bad = two.tmp / "bad.json"
    bad.write_text(json.dumps({"aclFilters": [{"accessFilter": {"operation": "x" * 100_000}}]}))
    r = two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
            "acl.sync.enable=true", "--acl-filters-json-file", str(bad))
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr == (
        "jetlink: error: Invalid value for configuration acl.filters: aclFilters[0]."
        "accessFilter.operation: a value of 100000 characters is not one of Kafka's "
        "operation names (INVALID_CONFIG 40)\n")
    assert ok(two("--cluster", "east", "links", "ls")).stderr == "No cluster links found.\n"
    assert east_acls(two) == []


def test_filters_given_twice_is_a_usage_error(two):
    r = two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
            f"acl.filters={ALICE}", "--acl-filters-json-file", str(two.tmp / "f.json"))
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: acl.filters is given twice: by "
                                       "--acl-filters-json-file and by --config / "
                                       "--config-file\n")


def test_narrowing_the_filters_says_which_acls_the_next_sync_deletes(two):
    """acl.filters that no longer select ACLs the link created: the alter warns, DENYs
    counted, before the next sync deletes them (turning the sync off keeps them: no
    warning)."""
    ok(two("--cluster", "west", "acls", "add", "--principal", "User:alice", "--operation",
           "write", "--topic", "orders", "--deny"))
    ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
           "acl.sync.enable=true", "--acl-filters-json-file", str(two.tmp / "f.json")))
    assert len(east_acls(two)) == 2
    (two.tmp / "none.json").write_text('{"aclFilters":[]}')
    r = ok(two("--cluster", "east", "links", "alter", "L", "--acl-filters-json-file",
               str(two.tmp / "none.json")))
    assert r.stderr == (
        "jetlink: warning: the next ACL sync of link L deletes 2 ACLs it created that "
        "acl.filters no longer selects (1 DENY): "
        "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL) "
        "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW); "
        "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL) "
        "(principal=User:alice, host=*, operation=WRITE, permissionType=DENY)\n")
    r = ok(two("--cluster", "east", "links", "alter", "L", "-c", "acl.sync.enable=false"))
    assert r.stderr == ""


def test_an_acl_the_source_deleted_is_not_blamed_on_unchanged_filters(two):
    """The next sync deletes an ACL the source no longer has whatever the filters say: an
    alter keeping the same filters warns of nothing."""
    ok(two("--cluster", "west", "acls", "add", "--principal", "User:alice", "--operation",
           "write", "--topic", "orders", "--deny"))
    ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
           "acl.sync.enable=true", "-c", "acl.sync.ms=3600000", "--acl-filters-json-file",
           str(two.tmp / "f.json")))
    assert len(east_acls(two)) == 2
    ok(two("--cluster", "west", "acls", "rm", "--topic", "orders", "--operation", "write",
           "-f"))
    r = ok(two("--cluster", "east", "links", "alter", "L", "--acl-filters-json-file",
               str(two.tmp / "f.json")))
    assert r.stderr == ""


@pytest.mark.parametrize("tool", ["acls", "kafka-acls"])
def test_removing_an_acl_the_sync_made_warns_that_the_next_run_makes_it_again(two, tool):
    """An ACL a link's sync created, removed on the destination: the link's next run
    creates it again while the source holds it (Confluent's migrated ACLs): said."""
    ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
           "acl.sync.enable=true", "--acl-filters-json-file", str(two.tmp / "f.json")))
    ok(two("--cluster", "east", "acls", "add", "--principal", "User:carol", "--operation",
           "read", "--topic", "orders"))
    if tool == "acls":
        r = ok(two("--cluster", "east", "acls", "rm", "--topic", "orders", "--force"))
    else:
        r = ok(two("--cluster", "east", "kafka-acls", "--remove", "--topic", "orders",
                   "--force"))
    assert r.stderr.splitlines()[-1] == (
        "jetlink: warning: 1 of the ACLs removed is created again by the next run of the ACL "
        "sync of cluster link L (acl.sync.enable): its acl.filters select them and the "
        "source cluster holds them; change the link's acl.filters, or remove them on the "
        "source, to keep them removed")
    ok(two("--cluster", "east", "acls", "add", "--principal", "User:carol", "--operation",
           "read", "--topic", "orders"))
    r = ok(two("--cluster", "east", "acls", "rm", "--principal", "User:carol", "--topic",
               "orders", "--force"))
    assert "warning" not in r.stderr  # the source does not hold it: nothing to say


def test_removing_a_hand_made_acl_the_sync_selects_warns_too(two):
    """An ACL made by hand on the destination that the source also holds and the link's
    filters select: removed, the next sync copies it (the destination lacks it), so the
    removal says so, as for one the sync made."""
    ok(two("--cluster", "east", "acls", "add", "--principal", "User:alice", "--operation",
           "read", "--topic", "orders"))  # by hand, before the link: not the link's
    ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
           "acl.sync.enable=true", "--acl-filters-json-file", str(two.tmp / "f.json")))
    r = ok(two("--cluster", "east", "acls", "rm", "--principal", "User:alice", "--topic",
               "orders", "--force"))
    assert r.stderr.splitlines()[-1] == (
        "jetlink: warning: 1 of the ACLs removed is created again by the next run of the ACL "
        "sync of cluster link L (acl.sync.enable): its acl.filters select them and the "
        "source cluster holds them; change the link's acl.filters, or remove them on the "
        "source, to keep them removed")


@pytest.mark.parametrize("side", ["east", "west"])
def test_a_link_pair_never_syncs_back_an_acl_removed_where_it_was_made(two, cli_clock, side):
    """west -> east and east -> west, both syncing every ACL: an ACL made on one side and
    removed there is not brought back from the other side's copy of it (its own ACL
    echoed), whichever side's links run first; the copy goes at the next sync, as a
    removal on the source does."""
    (two.tmp / "all.json").write_text('{"aclFilters":[{}]}')
    ok(two("--cluster", "east", "acls", "add", "--principal", "User:ANONYMOUS", "--operation",
           "describe", "--kafka-cluster"))
    for here, there in (("east", "west"), ("west", "east")):
        ok(two("--cluster", here, "links", "create", f"from-{there}", "--source-cluster",
               there, "-c", "acl.sync.enable=true", "-c", "acl.sync.ms=0",
               "--acl-filters-json-file", str(two.tmp / "all.json")))
    ok(two("--cluster", side, "acls", "add", "--principal", "User:dave", "--operation",
           "read", "--topic", "orders", "--deny"))
    ok(two("replicate"))

    def has_dave(cluster):
        return any(a["principal"] == "User:dave"
                   for a in doc(two("--cluster", cluster, "acls", "ls", "-j"))["data"])

    assert has_dave("west") and has_dave("east")
    ok(two("--cluster", side, "kafka-acls", "--remove", "--deny-principal", "User:dave",
           "--operation", "Read", "--topic", "orders", "--force"))
    for _ in range(3):
        cli_clock.advance_s(1)
        ok(two("replicate"))
    assert (has_dave("west"), has_dave("east")) == (False, False)


@pytest.mark.parametrize("change", [
    ["--acl-filters-json-file", "empty.json"],  # the filters no longer select them
    ["--config", "acl.sync.enable=false"],      # the sync is off: nothing runs again
])
def test_removing_an_acl_the_sync_will_not_make_again_warns_of_nothing(two, change):
    """A synced ACL removed after the link's filters stopped selecting it (or its sync was
    turned off): no run creates it again, and the removal does not say one will."""
    (two.tmp / "empty.json").write_text('{"aclFilters":[]}')
    ok(two("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
           "acl.sync.enable=true", "-c", "acl.sync.ms=3600000", "--acl-filters-json-file",
           str(two.tmp / "f.json")))
    assert east_acls(two) == [ALICE_READ]
    ok(two("--cluster", "east", "links", "alter", "L",
           *[str(two.tmp / a) if a.endswith(".json") else a for a in change]))
    r = ok(two("--cluster", "east", "acls", "rm", "--topic", "*", "--force"))
    assert "warning" not in r.stderr, r.stderr


@pytest.mark.parametrize("side", ["east", "north", "west"])
def test_a_ring_of_three_links_never_syncs_back_an_acl_removed_where_it_was_made(
        two, cli_clock, side):
    """west -> east -> north -> west, every link syncing every ACL: an ACL made on one
    cluster and removed there is not brought back from the copy the cluster before it
    holds (a copy of a copy of its own ACL), whichever cluster's links run first; the
    copies go around the ring."""
    ok(two("cluster", "add", "north", "--kind", "kafka", "--authorizer"))
    (two.tmp / "all.json").write_text('{"aclFilters":[{}]}')
    for cluster in ("east", "north"):
        ok(two("--cluster", cluster, "acls", "add", "--principal", "User:ANONYMOUS",
               "--operation", "describe", "--kafka-cluster"))
    for here, there in (("east", "west"), ("north", "east"), ("west", "north")):
        ok(two("--cluster", here, "links", "create", f"from-{there}", "--source-cluster",
               there, "-c", "acl.sync.enable=true", "-c", "acl.sync.ms=0",
               "--acl-filters-json-file", str(two.tmp / "all.json")))
    ok(two("--cluster", side, "acls", "add", "--principal", "User:dave", "--operation",
           "read", "--topic", "orders", "--deny"))

    def holders():
        return [c for c in ("east", "north", "west")
                if any(a["principal"] == "User:dave"
                       for a in doc(two("--cluster", c, "acls", "ls", "-j"))["data"])]

    for _ in range(3):
        cli_clock.advance_s(1)
        ok(two("replicate"))
    assert holders() == ["east", "north", "west"]
    ok(two("--cluster", side, "kafka-acls", "--remove", "--deny-principal", "User:dave",
           "--operation", "Read", "--topic", "orders", "--force"))
    for _ in range(4):
        cli_clock.advance_s(1)
        ok(two("replicate"))
    assert holders() == []
