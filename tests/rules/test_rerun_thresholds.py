"""The thresholds behind a rerun's committed verdicts, as docs/rerun.md and the published protocol
state them: processes whose medians differ by more than 5% mark the run noisy; a repeated-input
median more than 10% faster than the fresh calls' flags the run.

Measured on the JSD operation through the operation interface (issue 28).
"""

from __future__ import annotations

import pytest

from sitegen.rules import integrity
from sitegen.rerun.outcome.assemble import outcome
from sitegen.core.workload import Case, Workload
from sitegen.operations.jsd import JSD

CASE = Case(Workload.of({"tokens": 2048, "vocab": 128256}, "fp32"), "forward", "x")
GATE = {"status": "passed", "maxAbsError": 0.0, "maxRelError": 0.0,
        "cases": [{"shape": [2048, 128256], "seed": 0, "maxAbsError": 0.0, "maxRelError": 0.0, "fullyWritten": True, "passed": True}]}
CHECKED = {"calls": 12, "checkedGradients": 3, "lossFailures": 0, "gradientFailures": 0,
           "worstLossRelError": 1e-7, "worstGradientRelError": 2e-7, "fullPassNs": []}


def _process(median_ns: int) -> dict:
    return {"samplesNs": [median_ns] * 12, "hostTimedNs": median_ns, "warmupCalls": 4, "timedCheck": CHECKED,
            "gpuBefore": {"smClockMHz": 1980, "throttleReasons": []}, "gpuAfter": {"smClockMHz": 1980, "throttleReasons": []}}


def _details(medians: list[int]) -> dict:
    result = outcome(CASE, GATE, [_process(m) for m in medians], copy_bytes_per_s=4.3e12, op=JSD(),
                     process_counts=[0, 1], expected_counts=[0, 1], repeated_probe=False)
    return result["details"]


@pytest.mark.parametrize("medians, noisy", [
    ([1_000_000, 1_020_000, 1_040_000], False),  # 4% apart: they agree
    ([1_000_000, 1_030_000, 1_060_000], True),   # 6% apart: noisy
])
def test_processes_more_than_5_percent_apart_mark_the_run_noisy(medians, noisy):
    details = _details(medians)
    assert details["noisy"] is noisy
    # Recorded to five places: (max − min) / median of the processes' medians.
    assert details["processSpreadRel"] == pytest.approx((max(medians) - min(medians)) / sorted(medians)[1], abs=1e-5)


@pytest.mark.parametrize("fresh_ns, repeated_ns, flagged", [
    (1_080_000, 1_000_000, False),  # 8% faster on repeated input: within the 10%
    (1_120_000, 1_000_000, True),   # 12% faster: a cache or a data-dependent shortcut
    (1_000_000, 1_100_000, False),  # slower on repeated input is never a cheat
])
def test_a_repeated_input_speed_up_over_10_percent_is_flagged(fresh_ns, repeated_ns, flagged):
    check = integrity.repeated_input(fresh_ns, repeated_ns)
    assert check["passed"] is not flagged


def test_a_repeated_input_probe_that_did_not_run_never_passes():
    assert integrity.repeated_input(1_000_000, None)["passed"] is False
