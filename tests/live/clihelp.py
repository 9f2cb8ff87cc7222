"""Small helpers of the live CLI tests: a run that must succeed, and its JSON document."""

from __future__ import annotations

import json
from typing import Any


def ok(res: Any) -> Any:
    """A CLI result that exited 0 (else the assertion shows its status and output)."""
    assert res.exit_code == 0, (res.exit_code, res.stdout, res.stderr)
    return res


def doc(res: Any) -> Any:
    """The JSON document a successful CLI run printed."""
    return json.loads(ok(res).stdout)
