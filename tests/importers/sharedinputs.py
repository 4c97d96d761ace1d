"""Where the importer tests find Liger-Kernel's CSV: ``tests/data/liger`` in the checkout.

The file is in the repository (tests/data/README.md says where it came from), so a fresh
clone runs these tests. Where it is missing (a copy of tests/ without its data) they skip,
except under CI (``CI`` set), where a missing input is a failure: a test that cannot run must
not look like one that passed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
CSV = CHECKOUT / "tests" / "data" / "liger" / "all_benchmark_data.csv"


def require_csv() -> None:
    """Skip (or, under CI, fail) the calling test or module when the CSV is absent."""
    if CSV.exists():
        return
    message = f"the Liger CSV is missing: expected {CSV} (tests/data/liger in the checkout)"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def needs_csv(test):
    """Decorator: the test runs only with the CSV (and fails under CI without it)."""
    import functools

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        require_csv()
        return test(*args, **kwargs)

    return wrapper
