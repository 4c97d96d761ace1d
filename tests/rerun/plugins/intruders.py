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


class _PassingOutcomes(dict):
    """A gate table whose outcomes read as passed however they were judged."""

    def setdefault(self, key, default=None):
        return super().setdefault(key, _Passing())


class _Passing(dict):
    def __setitem__(self, key, outcome):
        outcome.update(status="passed", maxAbsError=0.0, maxRelError=0.0)
        outcome.pop("notes", None)
        for case in outcome.get("cases", []):
            case.update(passed=True, maxAbsError=0.0, maxRelError=0.0)
        super().__setitem__(key, outcome)


class GateForger(Implementation):
    """Right at the timed shape only (so the timed calls' own check passes), and rewrites the
    gate verdicts its measuring process stores to passed: a gate judged in that process would be
    forged; one judged in the judge process is the record's whatever this one writes."""

    operation = "jsd"
    needs = ("torch", "triton")

    def available(self):
        return None

    def build(self, *, dynamic=False):
        from sitegen.rerun.selftest.cheats import ShapeSpecial

        found = intruders.worker_locals()
        if found is not None and "result" in found:
            found["result"]["gate"] = _PassingOutcomes()
        return ShapeSpecial((int(os.environ["GATE_FORGER_TOKENS"]), int(os.environ["GATE_FORGER_VOCAB"])))
