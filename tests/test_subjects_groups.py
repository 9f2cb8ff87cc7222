"""core/subjects.py ``disjoint_groups``: patterns as consumers' filter_subjects groups (no
two of a group overlap: nats-server's 10138), every matched subject still matched."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
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


_TOKEN = st.sampled_from(["a", "b", "c", "*", "d"])
_FILTER = st.builds(lambda toks, tail: ".".join(toks + ([">"] if tail else [])),
                    st.lists(_TOKEN, min_size=1, max_size=4), st.booleans())


@settings(max_examples=400, deadline=None)
@given(st.lists(_FILTER, min_size=1, max_size=10))
def test_first_overlapping_is_the_pairwise_rule_in_linear_time(filters):
    """A consumer's filter that lies within another (10138): the first one the pairwise
    definition finds, found with the literals counted instead of compared (5,000 filters
    of a consumer checked at once, not in 12.5 million comparisons)."""
    from jetlink.core.config.consumer import first_overlapping
    from jetlink.core.subjects import is_subset

    def overlapping_filter(i):  # nats-server's rule, pair by pair
        return any(j != i and is_subset(filters[i], f) for j, f in enumerate(filters))

    pairwise = next((i for i in range(len(filters)) if overlapping_filter(i)), None)
    assert first_overlapping(filters) == pairwise
