"""Where the KernelBench tests find the nine snapshots: ``tests/data/kernelbench`` in the checkout.

As with the Liger CSV, a missing folder skips the tests, except under CI (``CI`` set),
where it is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
KERNELBENCH = CHECKOUT / "tests" / "data" / "kernelbench"
SNAPSHOTS = ("01cad80", "129232e", "1f8d20f", "47f78d7", "752dd45", "7dd9cfa", "a147f37", "a6dea99", "fcc5b17")


def require_kernelbench() -> None:
    """Skip (or, under CI, fail) the calling test or module when the snapshots are absent."""
    missing = [s for s in SNAPSHOTS if not (KERNELBENCH / s / "COMMIT").is_file()]
    if not missing:
        return
    message = f"KernelBench snapshots missing: expected {', '.join(missing)} under {KERNELBENCH} (tests/data/kernelbench in the checkout)"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
