"""The reset plan's CSV and the --topic scope grammar of kafka-consumer-groups
(core/kafka/group_reset.py): what --export prints, --from-file reads back the same."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jetlink.core.errors import JetlinkError
from jetlink.core.kafka.group_reset import export_csv, parse_topic_scope, reset_plan
from jetlink.core.numbers import INT32_MAX, INT64_MAX, INT64_MIN

TOPIC = st.text(alphabet="abcxyzABC019._-", min_size=1, max_size=20)
ROWS = st.dictionaries(st.tuples(TOPIC, st.integers(0, INT32_MAX)),
                       st.integers(INT64_MIN, INT64_MAX), min_size=1, max_size=20)


@given(ROWS)
def test_an_exported_plan_reads_back_the_same(plan):
    rows = [(t, p, None, o) for (t, p), o in sorted(plan.items())]
    text = "\n".join(export_csv(rows)) + "\n\n"  # as printed: a blank line after them
    assert reset_plan(text, "g", "f") == plan


@given(ROWS, st.text(alphabet="gh", min_size=1, max_size=2))
def test_a_plan_of_groups_gives_each_group_its_lines(plan, other):
    lines = [f"{grp},{t},{p},{o}" for (t, p), o in sorted(plan.items())
             for grp in ("g", other)]
    assert reset_plan("\n".join(lines), "g", "f") == plan


@pytest.mark.parametrize(("text", "plan"), [
    ('"t",0,3\n', {("t", 0): 3}),
    ('"t","0","3"\n', {("t", 0): 3}),
    ('g,"t",1,4\nh,"t",1,5\n', {("t", 1): 4}),
    ('"a""b",0,1\n', {('a"b', 0): 1}),
])
def test_quoted_fields_are_read_as_the_tools_csv_reader_reads_them(text, plan):
    """The tool reads --from-file with Jackson's CSV reader: a quoted field is its text."""
    assert reset_plan(text, "g", "f") == plan


@given(TOPIC, st.lists(st.integers(0, INT32_MAX), min_size=1, max_size=5))
def test_a_topic_with_partitions_is_those_partitions(topic, partitions):
    text = f"{topic}:{','.join(map(str, partitions))}"
    assert parse_topic_scope(text) == [(topic, p) for p in partitions]
    assert parse_topic_scope(topic) == [(topic, None)]


@pytest.mark.parametrize("text", ["t:", "t:1,", "t:a", "t:-1", f"t:{INT32_MAX + 1}", "t:1:2",
                                  ":"])
def test_a_topic_scope_of_another_form_is_refused(text):
    with pytest.raises(JetlinkError) as exc:
        parse_topic_scope(text)
    assert exc.value.field == "topic"
    assert f"topic arg '{text}'" in exc.value.description
