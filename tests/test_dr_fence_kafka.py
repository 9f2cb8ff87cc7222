"""`jetlink dr fence --from REGION` on Kafka mirror topics (core/dr/fence.py,
core/kafka/acl_fence.py): the old source topic gets a DENY WRITE ACL for User:* in its
cluster when that cluster enforces ACLs, refused saying so when it does not; the mirror
topic's failback (truncate-and-restore) removes that ACL, and only it."""

from __future__ import annotations

import pytest
from helpers import doc, ok

from jetlink.core.kafka.acl_fence import FENCE_OWNER, fence_binding
from jetlink.core.kafka.acls import AclBinding, AclStore
from jetlink.core.store import DataDir

FENCE = "DENY WRITE for User:* (host *) on topic orders"


def link_may_mirror(jl):
    """The link's principal (no sasl.jaas.config: User:ANONYMOUS) may mirror orders from
    west: READ and DESCRIBE_CONFIGS on the topic (Confluent's Mirror Topics)."""
    ok(jl("--cluster", "west", "acls", "add", "--principal", "User:ANONYMOUS", "--operation",
          "read", "--operation", "describe-configs", "--topic", "orders"))


def failed_over(jl, *, authorizer: bool):
    """west (the region) mirrored to east; east failed over; west back."""
    ok(jl("cluster", "add", "west", "--kind", "kafka", *(["--authorizer"] if authorizer
                                                          else [])))
    ok(jl("cluster", "add", "east", "--kind", "kafka"))
    ok(jl("--cluster", "west", "topic", "create", "orders"))
    if authorizer:
        link_may_mirror(jl)
    ok(jl("--cluster", "east", "links", "create", "L", "--source-cluster", "west"))
    ok(jl("--cluster", "west", "links", "create", "L", "--source-cluster", "east"))
    ok(jl("--cluster", "east", "mirrors", "create", "orders", "--link", "L"))
    ok(jl("--cluster", "east", "mirrors", "failover", "orders", "--link", "L"))
    return jl


def west(jl):
    return AclStore(DataDir(jl.data).open("west"))


def others(jl):
    """west's ACLs but the link's own (what link_may_mirror added)."""
    return [b for b in west(jl).find() if b.principal != "User:ANONYMOUS"]


@pytest.fixture
def fenced_world(jl, cli_clock):
    return failed_over(jl, authorizer=True)


def test_fence_denies_writes_to_the_old_source_topic(fenced_world):
    jl = fenced_world
    # the link's ACLs name the topic: a client without one is refused by default, not by a DENY
    assert west(jl).authorize("User:x", "WRITE", "TOPIC", "orders").rule == "default deny"
    r = ok(jl("dr", "fence", "--from", "west", "--dry-run"))
    assert r.stdout == ("topic orders@west (failed over to L/orders@east): to fence "
                        f"({FENCE})\nDry run: nothing changed\n")
    assert others(jl) == []
    d = doc(jl("dr", "fence", "--from", "west", "-f", "-j"))
    assert d["objects"] == [{
        "kind": "topic", "name": "orders", "region": "west",
        "failed_over_to": "L/orders@east", "subjects_before": None, "subjects_after": None,
        "action": "fenced", "detail": f"{FENCE}: producers get TOPIC_AUTHORIZATION_FAILED"}]
    assert (d["fenced"], d["complete"]) == (1, True)
    assert west(jl).owned(FENCE_OWNER) == [fence_binding("orders")]
    got = west(jl).authorize("User:x", "WRITE", "TOPIC", "orders")
    assert (got.allowed, got.rule, got.binding) == (False, "deny", fence_binding("orders"))
    again = doc(jl("dr", "fence", "--from", "west", "-f", "-j"))
    assert (again["objects"][0]["action"], again["nothing_to_do"]) == ("already fenced", True)


def test_failback_removes_the_fence_and_only_it(fenced_world):
    jl = fenced_world
    mine = AclBinding("TOPIC", "orders", "LITERAL", "User:ops", "*", "WRITE", "DENY")
    west(jl).add([mine])
    ok(jl("dr", "fence", "--from", "west", "-f"))
    ok(jl("--cluster", "west", "mirrors", "truncate-and-restore", "orders", "--link", "L",
          "--dry-run"))
    assert fence_binding("orders") in west(jl).find()  # a dry run keeps it
    ok(jl("--cluster", "west", "mirrors", "truncate-and-restore", "orders", "--link", "L"))
    assert others(jl) == [mine]
    got = west(jl).authorize("User:x", "WRITE", "TOPIC", "orders")
    assert (got.allowed, got.rule) == (False, "default deny")  # mine still names the topic


def test_failback_after_the_fence_allows_writes_again(fenced_world):
    jl = fenced_world
    west(jl).add([AclBinding("TOPIC", "orders", "LITERAL", "User:x", "*", "WRITE", "ALLOW")])
    ok(jl("dr", "fence", "--from", "west", "-f"))
    assert not west(jl).authorize("User:x", "WRITE", "TOPIC", "orders").allowed
    ok(jl("--cluster", "west", "mirrors", "truncate-and-restore", "orders", "--link", "L"))
    got = west(jl).authorize("User:x", "WRITE", "TOPIC", "orders")
    assert (got.allowed, got.rule) == (True, "allow")


def test_a_region_without_authorizer_is_refused_saying_so(jl, cli_clock):
    failed_over(jl, authorizer=False)
    r = jl("dr", "fence", "--from", "west", "-f")
    why = ("cluster west has no authorizer: a topic is fenced by a DENY WRITE ACL, which only "
           "a cluster that enforces ACLs applies; jetlink cluster authorizer west --enable "
           "first (or stop the producers of orders yourself)")
    assert (r.exit_code, r.stdout) == (
        1, f"topic orders@west (failed over to L/orders@east): refused ({why})\n")
    assert r.stderr == f"jetlink: error: not fenced: orders@west (refused: {why})\n"
    assert others(jl) == []
    ok(jl("cluster", "authorizer", "west", "--enable"))
    assert doc(jl("dr", "fence", "--from", "west", "-f", "-j"))["fenced"] == 1


def test_region_failover_with_fence_fences_the_topics(jl, cli_clock):
    ok(jl("cluster", "add", "west", "--kind", "kafka", "--authorizer"))
    ok(jl("cluster", "add", "east", "--kind", "kafka"))
    ok(jl("--cluster", "west", "topic", "create", "orders"))
    link_may_mirror(jl)
    ok(jl("--cluster", "east", "links", "create", "L", "--source-cluster", "west"))
    ok(jl("--cluster", "east", "mirrors", "create", "orders", "--link", "L"))
    dry = ok(jl("dr", "failover", "--from", "west", "--fence", "--dry-run"))
    assert dry.stdout.endswith(  # the fence it would make, as dr fence --dry-run says it
        f"topic orders@west (failed over to L/orders@east): to fence ({FENCE})\n"
        "Dry run: nothing changed\n")
    r = ok(jl("dr", "failover", "--from", "west", "--fence", "-f"))
    assert r.stdout.endswith(
        f"topic orders@west (failed over to L/orders@east): fenced ({FENCE}: producers get "
        "TOPIC_AUTHORIZATION_FAILED)\nFenced 1 old origin of west: mirrors truncate-and-restore "
        "TOPIC --link LINK undoes it\n")
    assert others(jl) == [fence_binding("orders")]


def _late_records(jl, cli_clock, n):
    """``n`` records produced on west's orders by the engine itself (a command would end
    with a replication step, which would copy them): the mirror is behind by ``n``."""
    from jetlink.core.kafka.topics import Kafka

    dd = DataDir(jl.data)
    try:
        Kafka(dd.open("west"), cli_clock).produce("orders", [(None, f"late{i}".encode())
                                                             for i in range(n)], partition=0)
    finally:
        dd.close()


def _mirror(jl):
    return doc(jl("--cluster", "east", "mirrors", "describe", "orders", "--link", "L", "-j"))


def test_region_failover_with_fence_fences_a_topic_first_and_copies_its_last_records(
        jl, cli_clock):
    """--fence: west's topic is fenced (DENY WRITE) before its mirror is failed over, and the
    mirror copies what west holds first: the records produced since the last copy are not
    left behind (a truncate-and-restore would drop them); without the fence the failover
    stops the mirror where it is."""
    import shutil

    ok(jl("cluster", "add", "west", "--kind", "kafka", "--authorizer"))
    ok(jl("cluster", "add", "east", "--kind", "kafka"))
    ok(jl("--cluster", "west", "topic", "create", "orders", "--partitions", "1"))
    link_may_mirror(jl)
    ok(jl("--cluster", "east", "links", "create", "L", "--source-cluster", "west"))
    ok(jl("--cluster", "east", "mirrors", "create", "orders", "--link", "L"))
    _late_records(jl, cli_clock, 3)
    unfenced = jl.tmp / "unfenced"
    shutil.copytree(jl.data, unfenced)
    d = doc(jl("dr", "failover", "--from", "west", "--fence", "-f", "-j"))
    (o,) = d["objects"]
    assert (o["state"], o["detail"]) == ("done", "origin orders@west fenced first"), o
    end = doc(jl("--cluster", "east", "topic", "describe", "orders", "-j"))
    assert [p["log_end_offset"] for p in end["partitions"]] == [3], end
    assert others(jl) == [fence_binding("orders")]
    d = doc(jl("--data-dir", str(unfenced), "dr", "failover", "--from", "west", "-f", "-j"))
    end = doc(jl("--data-dir", str(unfenced), "--cluster", "east", "topic", "describe",
                 "orders", "-j"))
    assert [p["log_end_offset"] for p in end["partitions"]] == [0], end


def test_a_links_acl_sync_never_copies_the_fence_to_the_side_that_took_over(jl, cli_clock):
    """east's link from west syncs every ACL (Confluent's match-all acl.filters): the fence
    ``dr fence`` puts on west's topic is west's own write stop, not copied, so east's
    producers keep writing; west's other ACLs are copied as before."""
    ok(jl("cluster", "add", "west", "--kind", "kafka", "--authorizer"))
    ok(jl("cluster", "add", "east", "--kind", "kafka", "--authorizer"))
    ok(jl("--cluster", "west", "topic", "create", "orders"))
    link_may_mirror(jl)
    ok(jl("--cluster", "west", "acls", "add", "--principal", "User:ANONYMOUS", "--operation",
          "describe", "--kafka-cluster"))
    ok(jl("--cluster", "west", "acls", "add", "--principal", "User:bob", "--operation",
          "write", "--topic", "orders"))
    every = ('{"aclFilters":[{"resourceFilter":{"resourceType":"any","patternType":"any"},'
             '"accessFilter":{"principal":"any","host":"any","operation":"any",'
             '"permissionType":"any"}}]}')
    (jl.tmp / "all.json").write_text(every)
    ok(jl("--cluster", "east", "links", "create", "L", "--source-cluster", "west", "-c",
          "acl.sync.enable=true", "-c", "acl.sync.ms=0", "--acl-filters-json-file",
          str(jl.tmp / "all.json")))
    ok(jl("--cluster", "west", "links", "create", "L", "--source-cluster", "east"))
    ok(jl("--cluster", "east", "mirrors", "create", "orders", "--link", "L"))
    ok(jl("--cluster", "east", "mirrors", "failover", "orders", "--link", "L"))
    ok(jl("dr", "fence", "--from", "west", "-f"))
    ok(jl("replicate"))
    east = AclStore(DataDir(jl.data).open("east"))
    assert fence_binding("orders") not in east.find()
    assert AclBinding("TOPIC", "orders", "LITERAL", "User:bob", "*", "WRITE",
                      "ALLOW") in east.find()  # (the sync still copies west's own ACLs)
    ok(jl("--cluster", "east", "topic", "produce", "orders", "E1", "--principal", "User:bob"))


def test_failback_names_the_command_and_the_link_that_take_a_topic_back(fenced_world):
    """dr failback leaves a failed-over mirror topic to its per-link step, named as it is
    typed: truncate-and-restore on the cluster it failed over from, through that cluster's
    link from the one that took over (L here); never reverse-and-start, which refuses a
    mirror that stopped."""
    jl = fenced_world
    d = doc(jl("--cluster", "east", "dr", "failback", "--from", "west", "-f", "-j"))
    assert d["objects"][0]["detail"] == (
        "a mirror topic goes back per link: jetlink --cluster west mirrors truncate-and-"
        "restore orders --link L (it removes the records orders took on west after the "
        "failover, keeping no copy: run it with --dry-run first to count them), with west "
        "answering")


def test_dr_check_flags_a_returned_unfenced_old_source_topic(fenced_world):
    """After a failover, the old source topic answering again and writable is a split brain:
    dr check is CRITICAL naming the fix; once fenced, OK; its cluster down, the failed-over
    topic is named beside "no mirrors" (as a failed-over stream's silent origin)."""
    jl = fenced_world
    r = jl("--cluster", "east", "dr", "check")
    assert r.exit_code == 2, r.stdout
    assert r.stdout.startswith(
        "CRITICAL dr Crit:L/orders@east: Old source orders@west answers again and takes "
        "writes: what producers write there is not on L/orders@east (a split brain): fence it "
        "(jetlink dr fence --from west) or take it back (jetlink dr failback --from west "
        "names the command)"), r.stdout
    import json

    r = jl("--cluster", "east", "dr", "check", "--format", "json")
    assert r.exit_code == 2
    d = json.loads(r.stdout)
    assert d["mirrors"][0]["readiness"]["returned_origin"] == {
        "state": "unfenced", "origin": "orders", "region": "west"}
    ok(jl("dr", "fence", "--from", "west", "-f"))
    r = ok(jl("--cluster", "east", "dr", "check"))
    assert r.stdout.startswith("OK dr OK:L/orders@east: Old source orders@west is fenced "
                               "(DENY WRITE for User:*)"), r.stdout
    ok(jl("cluster", "down", "west"))
    r = jl("--cluster", "east", "dr", "check")
    assert r.exit_code == 3
    assert r.stdout.startswith(
        "UNKNOWN dr no mirrors in cluster east (failed over, their old origin silent: "
        "L/orders@east from orders@west; fence each when its region returns)"), r.stdout
    assert d["status"] == "CRITICAL"
