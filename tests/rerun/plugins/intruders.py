"""The self-test's intruders (sitegen/rerun/selftest/intruders.py) as an outside package would ship
them, for tests/rerun/test_isolation.py and test_guards_hold.py: each class names its operation
in its own body, where the planning process reads it (ast)."""

from __future__ import annotations

import os

from sitegen.operations.base import Implementation
from sitegen.rerun.selftest import intruders
from sitegen.rerun.selftest.intruders import FORGED_NS, SLOWDOWN_S  # noqa: F401  (the tests read them here)

os.environ[intruders.SELFTEST_ENV] = "1"  # this process is a test's measuring process


class ResultRewriter(intruders.ResultRewriter):
    operation = "jsd"


class Saboteur(intruders.Saboteur):
    operation = "jsd"


class Resealer(Implementation):
    """Honest through the gate and warm-up, then halves the clocks and rewrites the guard's
    snapshot and seal to agree (sitegen.rerun.selftest.cheats.ResealedSnapshot)."""

    operation = "jsd"
    needs = ("torch", "triton")

    def build(self, *, dynamic=False):
        from sitegen.rerun.selftest.cheats import ResealedSnapshot

        return ResealedSnapshot()
