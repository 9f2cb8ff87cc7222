"""`jetlink kafka-acls`, `jetlink acls add|ls|rm|check` and `cluster add|authorizer` on the
embedded engine's Kafka clusters (core/kafka/acls.py): exact output, JSON and exit codes;
hostile input is one line and changes nothing."""

from __future__ import annotations

import json

import pytest
from helpers import data_dir_bytes, doc, ok

PATTERN = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"


def entry(principal: str, op: str, perm: str = "ALLOW", host: str = "*") -> str:
    return f"(principal={principal}, host={host}, operation={op}, permissionType={perm})"


@pytest.fixture
def kw(jl):
    ok(jl("cluster", "add", "kw", "--kind", "kafka", "--authorizer", "--super-users",
          "User:admin"))
    ok(jl("--cluster", "kw", "topic", "create", "orders"))

    def run(*args):
        return jl("--cluster", "kw", *args)

    run.data = jl.data
    return run




def test_kafka_acls_add_and_list_print_what_kafka_acls_prints(kw):
    r = ok(kw("kafka-acls", "--add", "--allow-principal", "User:alice", "--operation", "Read",
              "--operation", "Describe", "--topic", "orders"))
    # AclCommand.addAcls: the block, and no listing after it (the tool stopped listing the
    # resource's ACLs after a change)
    assert r.stdout == (
        f"Adding ACLs for resource `{PATTERN}`: \n"
        f" \t{entry('User:alice', 'READ')}\n\t{entry('User:alice', 'DESCRIBE')} \n\n")
    # an ACL that exists is asked for again: the same block, nothing changes
    r = ok(kw("kafka-acls", "--add", "--allow-principal", "User:alice", "--operation", "Read",
              "--topic", "orders"))
    assert r.stdout == (f"Adding ACLs for resource `{PATTERN}`: \n"
                        f" \t{entry('User:alice', 'READ')} \n\n")
    assert len(doc(kw("acls", "ls", "-j"))["data"]) == 2
    # AclCommand builds a set: an ACL asked for twice is printed once
    r = ok(kw("kafka-acls", "--add", "--allow-principal", "User:alice", "--allow-principal",
              "User:alice", "--operation", "Read", "--operation", "Read", "--topic", "orders"))
    assert r.stdout == (f"Adding ACLs for resource `{PATTERN}`: \n"
                        f" \t{entry('User:alice', 'READ')} \n\n")
    # a removal that matches nothing says so on stderr; one that removes prints nothing
    r = ok(kw("kafka-acls", "--remove", "--allow-principal", "User:nobody", "--operation",
              "Read", "--topic", "orders", "--force"))
    assert r.stdout == ""
    assert "jetlink: notice: no ACL matched: nothing removed\n" in r.stderr
    r = ok(kw("kafka-acls", "--remove", "--allow-principal", "User:alice", "--operation",
              "Read", "--topic", "orders", "--force"))
    assert r.stdout == ""
    assert "no ACL matched" not in r.stderr
    assert [d["operation"] for d in doc(kw("acls", "ls", "-j"))["data"]] == ["DESCRIBE"]
    ok(kw("kafka-acls", "--add", "--allow-principal", "User:alice", "--operation", "Read",
          "--topic", "orders"))
    ok(kw("kafka-acls", "--add", "--deny-principal", "User:bob", "--operation", "Write",
          "--topic", "orders"))
    r = ok(kw("kafka-acls", "--list", "--topic", "orders"))
    # AclCommand's block byte for byte: "R`: ", " \t" first, the last ACL and a space
    assert r.stdout == "\n".join([
        f"Current ACLs for resource `{PATTERN}`: ",
        " \t" + entry("User:alice", "DESCRIBE"), "\t" + entry("User:alice", "READ"),
        "\t" + entry("User:bob", "WRITE", "DENY") + " ", "", ""])
    r = ok(kw("kafka-acls", "--list", "--principal", "User:bob"))
    assert r.stdout.splitlines() == [
        "ACLs for principal `User:bob`", f"Current ACLs for resource `{PATTERN}`: ",
        " \t" + entry("User:bob", "WRITE", "DENY") + " ", ""]
    listed = ok(kw("kafka-acls", "--list", "--topic", "orders")).stdout
    # --principal takes an optional argument (joptsimple withOptionalArg): with none, at the
    # end or before another option, it filters nothing
    assert ok(kw("kafka-acls", "--list", "--topic", "orders", "--principal")).stdout == listed
    assert ok(kw("kafka-acls", "--principal", "--list", "--topic", "orders")).stdout == listed
    r = ok(kw("kafka-acls", "--principal", "--list", "--principal", "User:bob"))
    assert r.stdout.splitlines()[0] == "ACLs for principal `User:bob`"


def test_producer_and_consumer_shortcuts(kw):
    ok(kw("kafka-acls", "--add", "--allow-principal", "User:app", "--producer", "--consumer",
          "--topic", "orders", "--group", "billing", "--idempotent"))
    d = doc(kw("acls", "ls", "-j"))
    got = sorted((x["resource_type"], x["resource_name"], x["operation"]) for x in d["data"])
    assert got == [("CLUSTER", "kafka-cluster", "IDEMPOTENT_WRITE"), ("GROUP", "billing", "READ"),
                   ("TOPIC", "orders", "CREATE"), ("TOPIC", "orders", "DESCRIBE"),
                   ("TOPIC", "orders", "READ"), ("TOPIC", "orders", "WRITE")]
    r = kw("kafka-acls", "--add", "--allow-principal", "User:app", "--consumer", "--topic",
           "orders")
    assert r.exit_code == 2 and "With --consumer you must specify a --topic and a --group" \
        in r.stderr


def test_idempotent_writes_the_literal_cluster_acl_whatever_the_pattern_type(kw):
    """AclCommand's CLUSTER_RESOURCE_FILTER: --producer --idempotent with prefixed topics
    adds (and removes) IDEMPOTENT_WRITE on the literal kafka-cluster."""
    args = ("--allow-principal", "User:app", "--producer", "--idempotent", "--topic", "Test-",
            "--resource-pattern-type", "prefixed")
    r = ok(kw("kafka-acls", "--add", *args))
    assert ("Adding ACLs for resource `ResourcePattern(resourceType=CLUSTER, "
            "name=kafka-cluster, patternType=LITERAL)`: ") in r.stdout.splitlines()
    got = sorted((x["resource_type"], x["pattern_type"], x["operation"])
                 for x in doc(kw("acls", "ls", "-j"))["data"])
    assert got == [("CLUSTER", "LITERAL", "IDEMPOTENT_WRITE"), ("TOPIC", "PREFIXED", "CREATE"),
                   ("TOPIC", "PREFIXED", "DESCRIBE"), ("TOPIC", "PREFIXED", "WRITE")]
    ok(kw("kafka-acls", "--remove", "--force", *args))
    assert doc(kw("acls", "ls", "-j"))["data"] == []


def test_delegation_tokens_and_user_principals_are_resources(kw):
    ok(kw("kafka-acls", "--add", "--delegation-token", "token1", "--allow-principal", "User:a",
          "--operation", "Describe"))
    ok(kw("kafka-acls", "--add", "--user-principal", "User:test-user1", "--allow-principal",
          "User:a", "--operation", "CreateTokens", "--operation", "DescribeTokens"))
    r = ok(kw("kafka-acls", "--list", "--user-principal", "User:test-user1"))
    assert r.stdout.splitlines()[0] == ("Current ACLs for resource `ResourcePattern("
                                        "resourceType=USER, name=User:test-user1, "
                                        "patternType=LITERAL)`: ")
    got = sorted((x["resource_type"], x["resource_name"], x["operation"])
                 for x in doc(kw("kafka-acls", "--list", "--bootstrap-controller", "kw:9093",
                                 "--delegation-token", "token1", "-j"))["data"])
    assert got == [("DELEGATION_TOKEN", "token1", "DESCRIBE")]
    bad = kw("kafka-acls", "--add", "--delegation-token", "t", "--allow-principal", "User:a",
             "--operation", "Read")
    assert bad.exit_code == 2 and ("ResourceType DELEGATION_TOKEN only supports operations "
                                   "[ALL, DESCRIBE]") in bad.stderr


def test_remove_without_a_principal_removes_every_acl_whatever_the_operation(kw):
    """AclCommand validateOperation checks the entries it makes: none without a principal."""
    ok(kw("kafka-acls", "--add", "--allow-principal", "User:a", "--operation", "Alter",
          "--cluster"))
    ok(kw("kafka-acls", "--remove", "--force", "--cluster", "--operation", "Read"))
    assert doc(kw("acls", "ls", "-j"))["data"] == []


def test_acls_check_says_why(kw):
    ok(kw("acls", "add", "--principal", "User:alice", "--operation", "read", "--topic",
          "orders"))
    ok(kw("acls", "add", "--principal", "User:*", "--operation", "read", "--topic", "ord",
          "--prefixed", "--deny", "--host", "10.0.0.9"))
    r = ok(kw("acls", "check", "--principal", "User:alice", "--operation", "Describe",
              "--topic", "orders"))
    assert r.stdout == (
        f"ALLOWED: User:alice DESCRIBE on TOPIC orders from 127.0.0.1: the ALLOW {PATTERN} "
        f"{entry('User:alice', 'READ')} matched (READ implies DESCRIBE)\n")
    r = kw("acls", "check", "--principal", "User:alice", "--operation", "Read", "--topic",
           "orders", "--host", "10.0.0.9")
    assert r.exit_code == 1
    assert r.stdout.startswith("DENIED: User:alice READ on TOPIC orders from 10.0.0.9: the "
                               "DENY ResourcePattern(resourceType=TOPIC, name=ord, "
                               "patternType=PREFIXED)")
    d = json.loads(kw("acls", "check", "--principal", "User:admin", "--operation", "Delete",
                      "--topic", "orders", "-j").stdout)
    assert (d["result"], d["rule"]) == ("ALLOWED", "super user")
    r = kw("acls", "check", "--principal", "User:bob", "--operation", "Read", "--group", "g")
    assert (r.exit_code, r.stdout) == (1, "DENIED: User:bob READ on GROUP g from 127.0.0.1: no "
                                          "ACL matched the resource: "
                                          "allow.everyone.if.no.acl.found=false\n")
    # one resource, once: two never answer for the last one only
    for extra in (["--topic", "secret", "--topic", "orders"],
                  ["--topic", "orders", "--group", "g"], ["--group", "a", "--group", "b"]):
        r = kw("acls", "check", "--principal", "User:alice", "--operation", "Read", *extra)
        assert (r.exit_code, r.stderr) == (2, "jetlink: error: acls check takes one "
                                              "resource: --topic, --group, --kafka-cluster "
                                              "or --transactional-id, once\n")


def test_rm_removes_what_matches(kw):
    ok(kw("acls", "add", "--principal", "User:alice", "--operation", "read", "--operation",
          "write", "--topic", "orders"))
    r = kw("acls", "rm", "--topic", "orders", "--operation", "write")
    assert r.exit_code == 2 and "pass -f/--force" in r.stderr
    d = doc(kw("acls", "rm", "--topic", "orders", "--operation", "write", "-f", "-j"))
    assert [x["operation"] for x in d["data"]] == ["WRITE"]
    ok(kw("kafka-acls", "--remove", "--topic", "orders", "--force"))
    assert doc(kw("acls", "ls", "-j"))["data"] == []


def test_the_authorizer_is_changed_later(jl):
    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    r = jl("--cluster", "k", "acls", "ls")
    assert r.exit_code == 1
    assert r.stderr == ("jetlink: error: No Authorizer is configured on cluster k: add it with "
                        "jetlink cluster authorizer k --enable (SECURITY_DISABLED 54)\n")
    d = doc(jl("cluster", "authorizer", "k", "--enable", "--super-users", "User:a;User:b",
               "-j"))
    assert d == {"cluster": "k", "authorizer": True, "super.users": "User:a;User:b",
                 "allow.everyone.if.no.acl.found": False}
    assert ok(jl("cluster", "authorizer", "k")).stdout == (
        "Cluster k: authorizer on, super.users=User:a;User:b, "
        "allow.everyone.if.no.acl.found=false\n")
    assert doc(jl("--cluster", "k", "acls", "ls", "-j")) == {"kind": "KafkaAclList",
                                                           "data": []}
    # both sides of a pair: refused, nothing changed (the last flag no longer wins)
    before = data_dir_bytes(jl.data)
    for pair, said in (
            (["--enable", "--disable"], "--enable or --disable"),
            (["--deny-if-no-acl-found", "--allow-everyone-if-no-acl-found"],
             "--allow-everyone-if-no-acl-found or --deny-if-no-acl-found")):
        r = jl("cluster", "authorizer", "k", *pair)
        assert (r.exit_code, r.stderr) == (2, f"jetlink: error: give {said}, not both\n")
    assert data_dir_bytes(jl.data) == before
    assert doc(jl("cluster", "authorizer", "k", "--disable", "--allow-everyone-if-no-acl-found",
                  "-j")) == {"cluster": "k", "authorizer": False, "super.users": "User:a;User:b",
                             "allow.everyone.if.no.acl.found": True}


@pytest.mark.parametrize(("args", "message"), [
    (["acls", "add", "--principal", "alice", "--operation", "read", "--topic", "orders"],
     "jetlink: error: principal 'alice' is not TYPE:NAME (e.g. User:alice, or User:* for every "
     "user)"),
    (["acls", "add", "--principal", "User:a", "--operation", "Reed", "--topic", "orders"],
     "jetlink: error: operation 'Reed' is not one of ALL, READ, WRITE, CREATE, DELETE, ALTER, "
     "DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, "
     "CREATE_TOKENS, DESCRIBE_TOKENS (Kafka's names, in any case: the kafka-acls spellings "
     "Read, DescribeConfigs ... too)"),
    (["acls", "add", "--principal", "User:a", "--operation", "read", "--topic", "x" * 100_000],
     "jetlink: error: resource name of 100000 characters: at most 32767 (a Kafka protocol "
     "string)"),
    (["acls", "add", "--principal", "User:a", "--operation", "read"],
     "jetlink: error: give a resource: --topic, --group, --kafka-cluster or "
     "--transactional-id"),
    (["kafka-acls", "--add", "--operation", "Read", "--topic", "orders"],
     "jetlink: error: You must specify one of: --allow-principal, --deny-principal when trying "
     "to add ACLs."),
    (["kafka-acls", "--add", "--list"], "jetlink: error: Command must include exactly one "
                                        "action: --list, --add, --remove."),
    (["kafka-acls", "--topic", "orders"], "jetlink: error: Command must include exactly one "
                                          "action: --list, --add, --remove."),
    (["kafka-acls", "--list", "--bootstrap-server", "kw:9092", "--bootstrap-controller",
      "kw:9093"], "jetlink: error: Only one of --bootstrap-server or --bootstrap-controller "
                  "must be specified"),
    (["kafka-acls", "--add", "--allow-principal", "User:a", "--topic", "orders",
      "--resource-pattern-type", "match"],
     "jetlink: error: A '--resource-pattern-type' value of 'MATCH' is not valid when adding "
     "acls."),
    # AclCommand checkArgs: options that exclude each other, what the shortcuts need
    (["kafka-acls", "--add", "--allow-principal", "User:c", "--producer", "--group", "g1"],
     "jetlink: error: With --producer you must specify a --topic"),
    (["kafka-acls", "--add", "--allow-principal", "User:c", "--consumer", "--group", "g1"],
     "jetlink: error: With --consumer you must specify a --topic and a --group and no "
     "--cluster or --transactional-id option should be specified."),
    (["kafka-acls", "--add", "--allow-principal", "User:c", "--consumer", "--topic", "orders",
      "--group", "g1", "--cluster"],
     "jetlink: error: With --consumer you must specify a --topic and a --group and no "
     "--cluster or --transactional-id option should be specified."),
    (["kafka-acls", "--add", "--allow-principal", "User:c", "--producer", "--topic", "orders",
      "--operation", "Read"],
     'jetlink: error: Option "[producer]" can\'t be used with option "[operation]"'),
    (["kafka-acls", "--add", "--deny-principal", "User:c", "--consumer", "--topic", "orders",
      "--group", "g"],
     'jetlink: error: Option "[consumer]" can\'t be used with option "[deny-principal]"'),
    (["kafka-acls", "--add", "--allow-principal", "User:c", "--idempotent", "--topic",
      "orders", "--operation", "Write"],
     "jetlink: error: The --idempotent option is only available if --producer is set"),
    (["kafka-acls", "--add", "--allow-principal", "User:c", "--principal", "User:c", "--topic",
      "orders"], "jetlink: error: The --principal option is only available if --list is set"),
    (["kafka-acls", "--add", "--allow-principal", "User:c", "--principal", "--topic",
      "orders"], "jetlink: error: The --principal option is only available if --list is set"),
    (["kafka-acls", "--list", "--allow-principal", "User:c", "--topic", "orders"],
     'jetlink: error: Option "[list]" can\'t be used with option "[allow-principal]"'),
    (["kafka-acls", "--list", "--producer"],
     'jetlink: error: Option "[list]" can\'t be used with option "[producer]"'),
    (["kafka-acls", "--add", "--allow-principal", "User:x", "--operation", "Alter", "--cluster",
      "--resource-pattern-type", "prefixed"],
     "jetlink: error: --cluster is the cluster resource kafka-cluster, a literal name: with "
     "--resource-pattern-type prefixed it is no resource"),
    (["acls", "check", "--principal", "User:a", "--operation", "All", "--topic", "orders"],
     "jetlink: error: acls check asks about one operation a request needs"),
    (["acls", "check", "--principal", "User:a", "--operation", "Read", "--kafka-cluster"],
     "jetlink: error: operation READ on a CLUSTER resource: ResourceType CLUSTER only supports"),
    (["acls", "check", "--principal", "User:a", "--operation", "Read", "--topic", "orders",
      "--host", ""], "jetlink: error: host '' is empty"),
    # a request's principal and address are one each: the ACL wildcards are no request's
    (["acls", "check", "--principal", "User:*", "--operation", "Read", "--topic", "orders"],
     "jetlink: error: acls check --principal User:*: a request comes from one principal "
     "(User:alice); User:* is the ACL wildcard that matches every user"),
    (["acls", "check", "--principal", "User:a", "--operation", "Read", "--topic", "orders",
      "--host", "*"],
     "jetlink: error: acls check --host *: a request comes from one address (127.0.0.1, the "
     "default); * is the ACL wildcard that matches every host"),
    (["acls", "add", "--principal", "User:a", "--operation", "Read", "--topic", "t",
      "--host", ""],
     "jetlink: error: host '' is empty, longer than 255 characters or holds a space: the "
     "client's address (Kafka compares it as a string), or * for every host"),
    # an operation the resource type does not take (Kafka's AclCommand validateOperation)
    (["kafka-acls", "--add", "--allow-principal", "User:a", "--operation", "Read", "--cluster"],
     "jetlink: error: operation READ on a CLUSTER resource: ResourceType CLUSTER only supports "
     "operations [ALL, CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, "
     "IDEMPOTENT_WRITE, ALTER, DESCRIBE]"),
    (["kafka-acls", "--add", "--allow-principal", "User:a", "--operation", "IdempotentWrite",
      "--topic", "orders"],
     "jetlink: error: operation IDEMPOTENT_WRITE on a TOPIC resource: ResourceType TOPIC only "
     "supports operations [ALL, READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, "
     "DESCRIBE_CONFIGS, ALTER_CONFIGS]"),
    (["acls", "add", "--principal", "User:a", "--operation", "Write", "--group", "g"],
     "jetlink: error: operation WRITE on a GROUP resource: ResourceType GROUP only supports "
     "operations [ALL, READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS]"),
    (["acls", "add", "--principal", "User:a", "--operation", "Read", "--transactional-id", "t"],
     "jetlink: error: operation READ on a TRANSACTIONAL_ID resource: ResourceType "
     "TRANSACTIONAL_ID only supports operations [ALL, DESCRIBE, WRITE]"),
])
def test_hostile_input_is_one_line_and_changes_nothing(kw, args, message):
    before = data_dir_bytes(kw.data)
    r = kw(*args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.splitlines()[-1].startswith(message)
    assert "Traceback" not in r.stderr
    assert data_dir_bytes(kw.data) == before


@pytest.mark.parametrize(("args", "message"), [
    (["--add", "--allow-principal", "alice", "--operation", "Read", "--topic", "orders"],
     "principal 'alice' is not TYPE:NAME"),
    (["--add", "--allow-principal", "User:a", "--operation", "Reed", "--topic", "orders"],
     "operation 'Reed' is not one of All, Read, Write, Create, Delete, Alter, Describe, "
     "ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, "
     "DescribeTokens (kafka-acls takes Kafka's names so, in any case, without underscores; "
     "jetlink acls takes DESCRIBE_CONFIGS too)"),
    # the tool's SecurityUtils.operation: the PascalCase name, or it in any case without
    # its underscores (valueFromMap's upper-cased lookup); underscores are no name of it
    (["--add", "--allow-principal", "User:a", "--operation", "DESCRIBE_CONFIGS", "--topic",
      "orders"], "operation 'DESCRIBE_CONFIGS' is not one of All, Read,"),
    (["--add", "--allow-principal", "User:a", "--operation", "Read"],
     "You must provide at least one resource: --topic <topic> or --cluster or --group <group> "
     "or --delegation-token <Delegation Token ID>"),
    (["--add", "--operation", "Read", "--topic", "orders"],
     "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."),
    (["--add", "--allow-principal", "User:a", "--topic", "orders", "--resource-pattern-type",
      "match"], "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."),
    (["--add", "--allow-principal", "User:a", "--topic", "orders", "--resource-pattern-type",
      "bogus"], "pattern type 'bogus' is not one of LITERAL, PREFIXED"),
    (["--remove", "--topic", "orders", "--resource-pattern-type", "bogus", "--force"],
     "pattern type 'bogus' is not one of LITERAL, PREFIXED, ANY, MATCH"),
    (["--list", "--principal", "bob"], "principal 'bob' is not TYPE:NAME"),
    # no resource named: the type filters nothing, yet joptsimple refuses it as it parses
    (["--list", "--resource-pattern-type", "bogus"],
     "pattern type 'bogus' is not one of LITERAL, PREFIXED, ANY, MATCH"),
])
def test_kafka_acls_checks_its_arguments_before_the_authorizer(jl, args, message):
    """kafka-acls checks its arguments before the broker answers: on a cluster without an
    authorizer a mistyped argument is named (exit 2), not hidden behind SECURITY_DISABLED."""
    ok(jl("cluster", "add", "k", "--kind", "kafka"))
    before = data_dir_bytes(jl.data)
    r = jl("--cluster", "k", "kafka-acls", *args)
    assert data_dir_bytes(jl.data) == before
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith(f"jetlink: error: {message}"), r.stderr
    assert r.stderr.count("\n") == 1 and "SECURITY_DISABLED" not in r.stderr
    good = jl("--cluster", "k", "kafka-acls", "--list")
    assert (good.exit_code, good.stderr) == (1, (
        "jetlink: error: No Authorizer is configured on cluster k: add it with jetlink cluster "
        "authorizer k --enable (SECURITY_DISABLED 54)\n"))


@pytest.mark.parametrize(("spelt", "shown"), [
    ("Read", "READ"), ("READ", "READ"), ("read", "READ"), (" rEaD ", "READ"),
    ("DescribeConfigs", "DESCRIBE_CONFIGS"), ("DESCRIBECONFIGS", "DESCRIBE_CONFIGS"),
    ("describeconfigs", "DESCRIBE_CONFIGS"), ("idempotentwrite", "IDEMPOTENT_WRITE")])
def test_kafka_acls_takes_an_operation_as_kafkas_security_utils_reads_it(kw, spelt, shown):
    """AclCommand reads --operation with SecurityUtils.operation: the PascalCase name, else
    the value upper-cased looked up again (valueFromMap), so READ and read are Read; a name
    with underscores is none (the refusal above)."""
    resource = ["--cluster"] if shown == "IDEMPOTENT_WRITE" else ["--topic", "orders"]
    ok(kw("kafka-acls", "--add", "--allow-principal", "User:a", "--operation", spelt,
          *resource))
    [acl] = doc(kw("acls", "ls", "--principal", "User:a", "-j"))["data"]
    assert acl["operation"] == shown


def test_cluster_add_refuses_authorizer_flags_on_nats_and_bad_super_users(jl):
    r = jl("cluster", "add", "n", "--authorizer")
    assert r.exit_code == 2 and "are for a Kafka cluster (--kind kafka)" in r.stderr
    r = jl("cluster", "add", "k", "--kind", "kafka", "--authorizer", "--super-users", "admin")
    assert (r.exit_code, r.stderr) == (2, (
        "jetlink: error: super user 'admin' is not TYPE:NAME (e.g. User:admin)\n"))
    assert "k" not in [c["name"] for c in doc(jl("cluster", "ls", "-j"))]


@pytest.mark.parametrize("value", ["", ";;", " ; "])
def test_an_empty_super_users_is_refused_and_no_super_users_clears_them(jl, value):
    """An unset $SUPERS in a runbook gives --super-users '': refused (exit status 2, the
    super users kept, no byte changed) on cluster add and authorizer alike;
    --no-super-users is how they are removed."""
    ok(jl("cluster", "add", "k", "--kind", "kafka", "--authorizer", "--super-users",
          "User:admin"))
    said = (f"jetlink: error: --super-users {value!r} names no principal (give "
            "'User:a;User:b'; to remove every super user: jetlink cluster authorizer NAME "
            "--no-super-users)\n")
    before = data_dir_bytes(jl.data)
    r = jl("cluster", "authorizer", "k", "--super-users", value)
    assert (r.exit_code, r.stderr) == (2, said)
    r = jl("cluster", "add", "k2", "--kind", "kafka", "--super-users", value)
    assert (r.exit_code, r.stderr) == (2, said)
    assert data_dir_bytes(jl.data) == before
    r = jl("cluster", "authorizer", "k", "--super-users", "User:a", "--no-super-users")
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: give --super-users or "
                                          "--no-super-users, not both\n")
    assert doc(jl("cluster", "authorizer", "k", "-j"))["super.users"] == "User:admin"
    assert doc(jl("cluster", "authorizer", "k", "--no-super-users", "-j"))["super.users"] == ""


def test_super_users_joined_with_commas_are_kept_with_a_warning(jl):
    """Kafka separates super.users with ';': ``User:alice,User:bob`` is one principal (kept, as
    Kafka keeps it) and a warning on stderr says so; a comma inside a name (a DN) is not
    warned about."""
    warning = ("jetlink: warning: super user 'User:alice,User:bob' is one principal whose "
               "name holds ',User:': Kafka separates super.users with ';' (for several: "
               "'User:alice;User:bob')\n")
    r = ok(jl("cluster", "add", "kw", "--kind", "kafka", "--super-users",
              "User:alice,User:bob"))
    assert (r.stdout, r.stderr) == ("Cluster kw was created\n", warning)
    r = ok(jl("cluster", "authorizer", "kw", "--super-users", "User:alice,User:bob", "-j"))
    assert (json.loads(r.stdout)["super.users"], r.stderr) == ("User:alice,User:bob", warning)
    r = ok(jl("cluster", "authorizer", "kw", "--super-users", "User:carol; Group:ops, User:dan"))
    assert r.stderr == ("jetlink: warning: super user 'Group:ops, User:dan' is one principal "
                        "whose name holds ',User:': Kafka separates super.users with ';' (for "
                        "several: 'Group:ops;User:dan')\n")
    r = ok(jl("cluster", "authorizer", "kw", "--super-users", "User:CN=a,OU=b;User:alice"))
    assert r.stderr == ""
    assert ok(jl("cluster", "authorizer", "kw")).stderr == ""


def test_kafka_acls_trims_principals_hosts_and_names_as_kafka_acls_does(kw):
    """A principal pasted with spaces is the principal (AclCommand trims principals, hosts,
    topic and group names): a DENY of ``'User:eve '`` denies eve."""
    ok(kw("kafka-acls", "--add", "--allow-principal", "User:*", "--operation", "Read",
          "--topic", "orders"))
    r = ok(kw("kafka-acls", "--add", "--deny-principal", " User:eve ", "--deny-host", " * ",
              "--operation", "All", "--topic", " orders "))
    assert r.stdout.splitlines()[1] == " \t" + entry("User:eve", "ALL", "DENY") + " "
    r = kw("acls", "check", "--principal", "User:eve ", "--operation", "Read", "--topic",
           "orders")
    assert r.exit_code == 1 and r.stdout.startswith("DENIED: User:eve READ on TOPIC orders")
    r = ok(kw("kafka-acls", "--list", "--principal", "User:eve "))
    assert r.stdout.splitlines()[:3] == [
        "ACLs for principal `User:eve`", f"Current ACLs for resource `{PATTERN}`: ",
        " \t" + entry("User:eve", "ALL", "DENY") + " "]


def test_a_change_for_a_bootstrap_server_naming_no_cluster_is_refused(jl):
    """A runbook line's broker names no cluster and no --cluster was given: a change is not
    made on the default cluster (the real tool would not have connected); a read answers
    for it with a notice."""
    ok(jl("cluster", "add", "local", "--kind", "kafka", "--authorizer"))
    before = data_dir_bytes(jl.data)
    r = jl("kafka-acls", "--add", "--allow-principal", "User:x", "--operation", "Read",
           "--topic", "q", "--bootstrap-server", "kafka-dr.example.com:9092")
    assert (r.exit_code, r.stderr) == (2, (
        "jetlink: error: --bootstrap-server kafka-dr.example.com:9092: no cluster of the data "
        "directory is named 'kafka-dr.example.com' (its host selects the cluster); give "
        "--cluster NAME to change cluster local\n"))
    assert data_dir_bytes(jl.data) == before
    r = jl("kafka-acls", "--list", "--bootstrap-server", "kafka-dr.example.com:9092")
    assert (r.exit_code, r.stderr) == (2, (
        "jetlink: error: --bootstrap-server kafka-dr.example.com:9092: no cluster of the data "
        "directory is named 'kafka-dr.example.com' (its host selects the cluster); give "
        "--cluster NAME to read cluster local\n"))
    # a cluster the context in force names is a cluster named: the change is made there
    from helpers import runner

    from jetlink.cli.main import app

    ok(jl("context", "add", "kc", "--data-dir", str(jl.data), "--cluster", "local",
          "--select"))
    r = ok(runner.invoke(app, ["kafka-acls", "--add", "--allow-principal", "User:x",
                               "--operation", "Read", "--topic", "q", "--bootstrap-server",
                               "kafka-dr.example.com:9092"], prog_name="jetlink"))
    assert r.stderr == ("jetlink: notice: cluster local (jetlink context kc); "
                        "--bootstrap-server and --command-config are ignored\n")
    assert "name=q" in r.stdout


@pytest.mark.parametrize("args", [
    ["kafka-acls", "--list", "--principal", "User:\udcff"],
    ["kafka-acls", "--list", "--topic", "t\udcff"],
    ["kafka-acls", "--add", "--allow-principal", "User:a", "--allow-host", "h\udcff",
     "--operation", "Read", "--topic", "orders"],
    ["acls", "check", "--principal", "User:\udcff", "--operation", "Read", "--topic", "t"],
    ["acls", "check", "--principal", "User:a", "--operation", "Read", "--topic", "t\udcff"],
    ["acls", "check", "--principal", "User:a", "--operation", "Read", "--group", "g\udcff"],
    ["acls", "ls", "--principal", "User:\udcff"],
    ["topic", "produce", "orders", "x", "--principal", "User:\udcff"],
])
def test_a_principal_or_name_that_is_not_utf8_is_a_usage_error_even_to_read(kw, args):
    """Bytes that are not UTF-8 in a principal, a resource name or a host are refused
    naming the argument (exit 2), for a read or a check as for a change: none such can
    be stored, so none matches."""
    before = data_dir_bytes(kw.data)
    r = kw(*args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    bad = next(a for a in args if "\udcff" in a)
    shown = bad.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    assert r.stderr.splitlines()[-1] == (
        f"jetlink: error: argument '{shown}' is not UTF-8 text (byte 0xff): names, "
        "subjects and keys are UTF-8")
    assert data_dir_bytes(kw.data) == before


def test_kafka_acls_cluster_with_a_value_names_both_clusters(jl):
    """kafka-acls' --cluster is the cluster resource and takes no value; jetlink's own
    --cluster given after the verb is said as such (exit 2), not as an extra argument."""
    r = jl("kafka-acls", "--cluster", "west", "--list")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        "jetlink: error: kafka-acls' --cluster is the cluster resource (the ACLs of the cluster "
        "itself) and takes no value: select cluster west with jetlink --cluster west "
        "kafka-acls ..., or --bootstrap-server west\n")


def test_kafka_acls_remove_asks_per_resource_filter_and_reads_the_answer_on_stdin(jl):
    """AclCommand's confirmAction: the question per resource filter on stdout, the answer
    one line of stdin, a terminal or not (a runbook pipes `echo y`): y (any case) removes,
    anything else leaves them; stdin at its end: nothing removed, a usage error."""
    from helpers import data_dir_bytes

    ok(jl("cluster", "add", "kw", "--kind", "kafka", "--authorizer"))
    ok(jl("--cluster", "kw", "kafka-acls", "--add", "--allow-principal", "User:a",
          "--operation", "Read", "--operation", "Write", "--topic", "orders"))
    before = data_dir_bytes(jl.data)
    ask = ["Are you sure you want to remove ACLs: ",
           f" \t{entry('User:a', 'READ')} ",
           f" from resource filter `{PATTERN}`? (y/n)"]
    remove_read = ("--cluster", "kw", "kafka-acls", "--remove", "--allow-principal", "User:a",
                   "--operation", "Read", "--topic", "orders")
    r = ok(jl(*remove_read, input="n\n"))
    assert (r.stdout.splitlines(), r.stderr) == (ask, "")
    r = jl(*remove_read, input="")
    assert (r.exit_code, r.stdout.splitlines()) == (2, ask)
    assert r.stderr.endswith("no answer on stdin to confirm the removal: answer y, or pass "
                             "--force (nothing was removed)\n")
    assert data_dir_bytes(jl.data) == before  # neither removed anything
    ok(jl(*remove_read, input="y\n"))
    assert [d["operation"] for d in doc(jl("--cluster", "kw", "acls", "ls", "-j"))["data"]] \
        == ["WRITE"]
    r = ok(jl("--cluster", "kw", "kafka-acls", "--remove", "--topic", "orders", input="Y\n"))
    assert r.stdout == ("Are you sure you want to delete all ACLs for resource filter "
                        f"`{PATTERN}`? (y/n)\n")
    assert doc(jl("--cluster", "kw", "acls", "ls", "-j"))["data"] == []


@pytest.mark.parametrize(("args", "warnings"), [
    (("acls", "add", "--principal", "user:alice", "--operation", "Read", "--topic", "orders"),
     ["principal 'user:alice' has the type 'user': Kafka's is 'User' (compared "
      "case-sensitively), so this ACL matches no client; meant User:alice?"]),
    (("acls", "add", "--principal", "User:bob", "--operation", "Read", "--topic", "orders",
      "--host", "10.0.0.0/8"),
     ["host '10.0.0.0/8' is compared as one client address (Kafka's ACLs take an address or "
      "*, no ranges or patterns), so this ACL matches no client"]),
    (("kafka-acls", "--add", "--allow-principal", "User:x", "--operation", "Read", "--topic",
      "orders", "--deny-host", "1.2.3.4"),
     ["--deny-host 1.2.3.4 is not used: it is the host of --deny-principal, and none is "
      "given"]),
    (("kafka-acls", "--add", "--allow-host", "1.2.3.4", "--deny-principal", "User:y",
      "--operation", "Read", "--topic", "orders"),
     ["--allow-host 1.2.3.4 is not used: it is the host of --allow-principal, and none is "
      "given", "--deny-principal without --deny-host denies from every host (*): "
      "--allow-host is the host of --allow-principal only"]),
    (("acls", "add", "--principal", "User:carol", "--operation", "Read", "--topic", "orders",
      "--host", "10.1.2.3"), []),
    # Kafka compares the host with the client's address as Java writes it
    (("acls", "add", "--principal", "User:d", "--operation", "Read", "--topic", "orders",
      "--host", "::1"),
     ["host '::1' is compared as text with the client's address as Java writes it "
      "(0:0:0:0:0:0:0:1), so this ACL matches no client; meant 0:0:0:0:0:0:0:1?"]),
    (("kafka-acls", "--add", "--allow-principal", "User:e", "--allow-host", "::ffff:10.0.0.1",
      "--operation", "Read", "--topic", "orders"),
     ["host '::ffff:10.0.0.1' is compared as text with the client's address as Java writes "
      "it (10.0.0.1), so this ACL matches no client; meant 10.0.0.1?"]),
    (("acls", "add", "--principal", "User:f", "--operation", "Read", "--topic", "orders",
      "--host", "fe80:0:0:0:0:0:0:1"), []),
])
def test_acls_kafka_takes_that_match_no_client_are_warned_about(kw, args, warnings):
    """Kafka takes these ACLs and says nothing; each is added as Kafka adds it (exit status
    0), and a warning on stderr says why it matches no client (or what a host flag did)."""
    r = ok(kw(*args))
    assert r.stderr.splitlines() == [f"jetlink: warning: {w}" for w in warnings]


def test_acls_check_asks_from_the_address_as_kafka_compares_it(kw):
    """A request from ::1 reaches Kafka's authorizer as 0:0:0:0:0:0:0:1 (Java's
    getHostAddress): an ACL of host ::1 does not match it, one of that form does."""
    ok(kw("acls", "add", "--principal", "User:a", "--operation", "Read", "--topic", "orders",
          "--host", "::1"))
    asked = ("acls", "check", "--principal", "User:a", "--operation", "Read", "--topic",
             "orders", "--host", "::1", "-j")
    said = kw(*asked)
    got = json.loads(said.stdout)
    assert (said.exit_code, got["result"], got["host"]) == (1, "DENIED", "0:0:0:0:0:0:0:1")
    ok(kw("acls", "add", "--principal", "User:a", "--operation", "Read", "--topic", "orders",
          "--host", "0:0:0:0:0:0:0:1"))
    assert doc(ok(kw(*asked)))["result"] == "ALLOWED"


def test_acls_add_says_each_binding_once_however_often_a_flag_repeats_it(kw):
    r = ok(kw("acls", "add", "--principal", "User:a", "--operation", "Read", "--operation",
              "read", "--topic", "orders", "--topic", "orders"))
    assert r.stdout == (f"Added: {PATTERN} (principal=User:a, host=*, operation=READ, "
                        "permissionType=ALLOW)\n")
    r = ok(kw("acls", "add", "--principal", "User:a", "--operation", "Read", "--operation",
              "Read", "--topic", "orders"))
    assert r.stdout.count("\n") == 1 and r.stdout.startswith("Exists: ")


def test_acls_ls_and_rm_take_add_s_prefixed(kw):
    """acls add takes --prefixed; ls and rm take it too (--resource-pattern-type prefixed),
    and refuse it with another --resource-pattern-type."""
    ok(kw("acls", "add", "--principal", "User:a", "--operation", "Read", "--topic", "ord",
          "--prefixed"))
    ok(kw("acls", "add", "--principal", "User:a", "--operation", "Read", "--topic", "ord"))
    got = doc(kw("acls", "ls", "--topic", "ord", "--prefixed", "-j"))
    assert got == doc(kw("acls", "ls", "--topic", "ord", "--resource-pattern-type", "prefixed",
                         "-j"))
    assert [d["pattern_type"] for d in got["data"]] == ["PREFIXED"]
    r = kw("acls", "rm", "--topic", "ord", "--prefixed", "--resource-pattern-type", "literal",
           "-f")
    assert (r.exit_code, r.stderr) == (2, "jetlink: error: --prefixed and "
                                          "--resource-pattern-type literal: give one of them\n")
    gone = doc(kw("acls", "rm", "--topic", "ord", "--prefixed", "-f", "-j"))
    assert [d["pattern_type"] for d in gone["data"]] == ["PREFIXED"]
    assert [d["pattern_type"] for d in doc(kw("acls", "ls", "--topic", "ord", "-j"))["data"]] \
        == ["LITERAL"]


def test_a_reader_going_away_cuts_the_report_short_never_the_change(kw):
    """`kafka-acls --add ... | head -1`: the reader closes the pipe after the first line;
    every resource's ACLs are created all the same (the tool's PrintStream swallows the
    broken pipe and goes on), none half."""
    import subprocess
    import sys
    from pathlib import Path

    jetlink = str(Path(sys.executable).with_name("jetlink"))
    principals = [a for i in range(400) for a in ("--allow-principal", f"User:u{i}")]
    cmd = [jetlink, "--data-dir", str(kw.data), "--cluster", "kw", "kafka-acls", "--add",
           *principals, "--operation", "Read", "--topic", "A1", "--topic", "B1"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        proc.stdout.readline()
        proc.stdout.close()  # as head -1 does
        proc.wait(timeout=120)
    listed = doc(kw("acls", "ls", "-j"))["data"]
    per_topic = {t: sum(1 for b in listed if b["resource_name"] == t) for t in ("A1", "B1")}
    assert per_topic == {"A1": 400, "B1": 400}, per_topic
