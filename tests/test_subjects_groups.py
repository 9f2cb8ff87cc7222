"""core/subjects.py ``disjoint_groups``: patterns as consumers' filter_subjects groups (no
two of a group overlap: nats-server's 10138), every matched subject still matched."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jetlink.core.subjects import disjoint_groups, matches, overlaps


@pytest.mark.parametrize(("patterns", "groups"), [
    ([], []),
    (["a.b"], [["a.b"]]),
    (["a.*", "a.b", ">"], [[">"]]),  # subsets dropped
    (["a.*", "*.b"], [["a.*"], ["*.b"]]),  # overlapping, neither a subset: two groups
    (["a.b", "c.d"], [["a.b", "c.d"]]),
    (["x", "x"], [["x"]]),
    (["a.>", "a.b.c", "b.*", "b.c"], [["a.>", "b.*"]]),
])
def test_groups(patterns, groups):
    assert disjoint_groups(patterns) == groups


TOKENS = st.sampled_from(["a", "b", "*"])
PATTERNS = st.lists(st.builds(lambda ts, tail: ".".join(ts) + tail,
                              st.lists(TOKENS, min_size=1, max_size=3),
                              st.sampled_from(["", ".>"])), max_size=5)
SUBJECTS = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=4).map(".".join)


@given(PATTERNS, SUBJECTS)
def test_no_group_overlaps_and_every_subject_is_still_matched(patterns, subject):
    groups = disjoint_groups(patterns)
    for g in groups:
        assert not any(overlaps(p, q) for i, p in enumerate(g) for q in g[i + 1:])
    before = any(matches(p, subject) for p in patterns)
    after = any(matches(p, subject) for g in groups for p in g)
    assert before == after
