"""`jetlink bench demo`: a drill counts only when it exits 0 and its summary shows the work
done (core/bench/demo.py); the whole drill's own check is in tests/test_demo.py."""

from __future__ import annotations

import sys

import pytest

from jetlink.core.bench.demo import bench_demo, drill_counts
from jetlink.core.errors import JetlinkError

GOOD = {"steps": [{"step": i} for i in range(1, 10)],
        "moved": [{"what": "west ORDERS -> west MONITOR", "messages": 20},
                  {"what": "kwest orders -> keast orders", "records": 5}],
        "spark": {"rows_in": 1000, "rows_out": 1000},
        "recovery_point": {"predicted": 7, "tail_saved": 7}}


def test_the_counts_of_a_drill():
    assert drill_counts(GOOD) == {"steps": 9, "moved": 25, "spark_rows": 1000,
                                  "tail_saved": 7}


@pytest.mark.parametrize("change, message", [
    ({"steps": [{"step": 1}, {"step": 2}]}, "the drill ran steps [1, 2], not 1 to 9"),
    ({"moved": [{"what": "a -> b", "messages": 0}]}, "'a -> b' moved 0"),
    ({"spark": {"rows_in": 1000, "rows_out": 999}},
     "the Spark seed read 1000 rows and wrote 999"),
    ({"recovery_point": {"predicted": 7, "tail_saved": 6}},
     "the tail saved (6) is not the one predicted (7)"),
])
def test_a_drill_that_did_not_do_its_work_is_an_error(change, message):
    with pytest.raises(JetlinkError) as err:
        drill_counts({**GOOD, **change})
    assert str(err.value) == f"bench demo: {message}"


def test_a_drill_that_fails_is_an_error_naming_its_status_and_last_line():
    # a process in jetlink's place that ends as a failed drill does: its last line, status 1
    fails = [sys.executable, "-c", "import sys; sys.stderr.write('x\\nstep 3 failed\\n'); "
                                   "sys.exit(1)"]
    with pytest.raises(JetlinkError) as err:
        bench_demo(1, command=fails)
    assert str(err.value).endswith("demo --json` exited 1: step 3 failed")
