"""jsm.go's balancer rules (core/balance.py): the even share of a cluster's servers, groups
moved from servers over it to peers under it, failures passed over or ended on."""

from __future__ import annotations

import random

import pytest

from jetlink.core.balance import Group, balance, even_share, group_of
from jetlink.core.errors import JetlinkError


@pytest.mark.parametrize(
    ("groups", "peers", "share"),
    [
        (0, 0, 0),  # no server: nothing to share
        (0, 3, 0),
        (9, 3, 3),  # divides exactly: the mean
        (3, 3, 1),
        (10, 3, 4),  # else ceil(mean + 0.5): 3.33 -> 4
        (4, 3, 2),  # 1.33 -> 2
        (5, 2, 3),  # 2.5 -> 3
        (1, 3, 1),  # 0.33 -> 1
    ],
)
def test_even_share(groups, peers, share):
    assert even_share(groups, peers) == share


class First(random.Random):
    """Picks the first group left each time: which one is tried is known."""

    def randrange(self, *args, **kwargs):  # type: ignore[override]
        return 0


class Cluster:
    """Groups whose leadership moves to the preferred server when stepped down."""

    def __init__(self, leaders: dict[str, str], servers=("n1", "n2", "n3"), name="east"):
        self.servers, self.name = tuple(servers), name
        self.leaders = dict(leaders)
        self.asked: list[tuple[str, str]] = []
        self.fail: set[str] = set()

    def group(self, key: str) -> Group[str]:
        leader = self.leaders[key]
        return Group(key, self.name, leader, tuple(s for s in self.servers if s != leader))

    def step_down(self, key: str, preferred: str) -> None:
        self.asked.append((key, preferred))
        if key in self.fail:
            raise JetlinkError(f"step down of {key} refused")
        self.leaders[key] = preferred

    def run(self, rng=None):
        lines: list[str] = []
        moved = balance([self.group(k) for k in sorted(self.leaders)], read=self.group,
                        step_down=self.step_down, log=lines.append,
                        rng=rng or random.Random(7))
        return moved, lines

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for v in self.leaders.values() if v == s) for s in self.servers}


def test_all_leaders_on_one_server_spread_to_the_share():
    c = Cluster({f"S{i}": "n1" for i in range(9)})
    moved, lines = c.run()
    assert c.counts() == {"n1": 3, "n2": 3, "n3": 3}
    assert len(moved) == 6 and len(set(moved)) == 6
    assert lines[0] == "Cluster east: 3 servers, a balanced share of 3 leaders each"
    assert all(p in {"n2", "n3"} for _, p in c.asked)


def test_within_the_share_nothing_moves():
    # 10 over 3 servers: a share of 4 each; 4, 3, 3 is balanced
    c = Cluster({**{f"A{i}": "n1" for i in range(4)}, **{f"B{i}": "n2" for i in range(3)},
                 **{f"C{i}": "n3" for i in range(3)}})
    assert c.run()[0] == [] and c.asked == []


def test_a_peer_outside_the_group_is_never_preferred():
    # R2 groups on n1 and n2 only; n3 (a peer of the cluster by T0), under its share too,
    # cannot take them
    leaders = {**{f"S{i}": "n1" for i in range(6)}, "T0": "n3"}

    def group(key: str) -> Group[str]:
        peers = ("n1", "n2") if key.startswith("S") else ("n1", "n2", "n3")
        return Group(key, "east", leaders[key], tuple(p for p in peers if p != leaders[key]))

    def step_down(key: str, preferred: str) -> None:
        asked.append(preferred)
        leaders[key] = preferred

    asked: list[str] = []
    moved = balance([group(k) for k in sorted(leaders)], read=group, step_down=step_down,
                    log=[].append, rng=random.Random(1))
    assert set(asked) == {"n2"} and len(moved) == 3  # a share of ceil(7/3 + 0.5) = 3
    assert sorted(leaders.values()) == ["n1"] * 3 + ["n2"] * 3 + ["n3"]


def test_clusters_are_balanced_apart_and_one_server_is_left_alone():
    east = Cluster({f"E{i}": "e1" for i in range(4)}, servers=("e1", "e2"), name="east")
    single = [Group(f"L{i}", "", "solo") for i in range(5)]
    groups = [east.group(k) for k in sorted(east.leaders)] + single
    lines: list[str] = []
    moved = balance(groups, read=lambda k: east.group(k) if k.startswith("E") else single[0],
                    step_down=east.step_down, log=lines.append, rng=random.Random(3))
    assert east.counts() == {"e1": 2, "e2": 2} and len(moved) == 2
    assert lines == ["Cluster east: 2 servers, a balanced share of 2 leaders each",
                     *(ln for ln in lines[1:] if ln.startswith("Requesting"))]


def test_a_group_without_a_leader_is_said_and_left():
    groups = [Group("S0", "east", "", ("n1", "n2"))]
    lines: list[str] = []
    assert balance(groups, read=lambda k: groups[0], step_down=lambda k, p: None,
                   log=lines.append) == []
    assert lines[0] == "Found S0 without a leader: left as it is"


def test_an_unreadable_group_is_passed_over():
    c = Cluster({f"S{i}": "n1" for i in range(6)})
    real = c.group

    def read(key):
        if key == "S0":
            raise JetlinkError("stream not found")
        return real(key)

    lines: list[str] = []
    balance([real(k) for k in sorted(c.leaders)], read=read, step_down=c.step_down,
            log=lines.append, rng=First())
    assert c.leaders["S0"] == "n1"
    assert "Could not read the state of stream S0: stream not found" in lines


def test_one_failed_step_down_is_passed_over_two_in_a_row_end_it():
    c = Cluster({f"S{i}": "n1" for i in range(6)})
    c.fail = {"S0"}
    moved, lines = c.run(First())
    assert "S0" not in moved and c.leaders["S0"] == "n1"
    assert any(ln.startswith("Could not step down the leader of stream S0") for ln in lines)
    c = Cluster({f"S{i}": "n1" for i in range(6)})
    c.fail = set(c.leaders)
    with pytest.raises(JetlinkError, match="refused"):
        c.run(First())
    assert len(c.asked) == 2


def test_group_of_an_info_document():
    info = {"cluster": {"name": "east", "leader": "n1",
                        "replicas": [{"name": "n2", "current": True}, {"name": "n3"}]}}
    assert group_of("S", info) == Group("S", "east", "n1", ("n2", "n3"))
    assert group_of("S", {}) == Group("S", "", "", ())
