"""Special files, malformed values and unportable names: one clear line each, never a hang."""

from __future__ import annotations

import pytest

from hostile import CASES, run_case


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_refused_with_one_line(case, tmp_path):
    ok, output = run_case(case, tmp_path)
    assert ok, output
