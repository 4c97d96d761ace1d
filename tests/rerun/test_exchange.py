"""The plan a measuring process is given and the result it writes (sitegen.rerun.measure.exchange):
versioned, each refused in one line when of another format, and the result checked by the parent
(it is written by a process that ran outside code)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from sitegen.rerun.measure.exchange import FORMAT, PlannedImpl, Unreadable, WorkerPlan, WorkerResult

PLAN = WorkerPlan(operation="sitegen.operations.jsd:JSD", device="cpu", interpret=True,
                  workloads=({"axes": {"tokens": 8, "vocab": 64}, "dtype": "fp32"},), passes=("forward",),
                  mode="controlled", impls=(PlannedImpl("torch", "sitegen.operations.jsd_torch:Torch"),), process=0,
                  processes=1, gate=True, skip=(), seed=100_000, repeated_probe=True, min_samples=3, min_time_ms=1.0,
                  max_time_ms=2.0, warmup=(1, 0.0), rtol={"fp32": 1e-5}, max_sm_mhz=None, pool=None)


def result(**change) -> dict:
    raw = {"format": FORMAT, "software": {}, "device": {}, "processCount": None, "processCountAfter": None,
           "copyBytesPerS": 1.5e9, "availability": {"torch": {"ok": True, "version": "2", "reason": None}},
           "gate": {"torch": {"w": {"status": "passed"}}},
           "timings": {"w/forward/torch": {"samplesNs": [5, 6, 7], "guards": {}}}}
    raw.update(change)
    return raw


def test_a_plan_goes_through_json_unchanged():
    assert WorkerPlan.from_json(json.loads(json.dumps(PLAN.to_json()))) == PLAN


def test_the_plan_keeps_its_wire_keys():
    assert set(PLAN.to_json()) == {"format", "operation", "device", "interpret", "workloads", "passes", "mode", "impls",
                                   "process", "processes", "gate", "skip", "seed", "repeatedProbe", "minSamples",
                                   "minTimeMs", "maxTimeMs", "warmup", "rtol", "maxSmMHz", "pool", "progressEvents"}


def test_a_result_goes_through_json_unchanged():
    raw = result()
    assert WorkerResult.from_json(raw).to_json() == raw


@pytest.mark.parametrize("raw", [{**PLAN.to_json(), "format": FORMAT + 1}, {k: v for k, v in PLAN.to_json().items() if k != "format"}])
def test_a_plan_of_another_format_is_refused_in_one_line(raw):
    with pytest.raises(Unreadable) as caught:
        WorkerPlan.from_json(raw)
    assert f"this sitegen reads format {FORMAT}" in str(caught.value) and "\n" not in str(caught.value)


def test_a_measuring_process_refuses_a_plan_of_another_format_before_it_measures(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({**PLAN.to_json(), "format": FORMAT + 1}))
    done = subprocess.run([sys.executable, "-m", "sitegen.rerun.measure.worker", str(plan), str(tmp_path / "result.json")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and not (tmp_path / "result.json").exists()
    [line] = done.stderr.strip().splitlines()
    assert f"is of format {FORMAT + 1}; this sitegen reads format {FORMAT}" in line, line


@pytest.mark.parametrize("change, why", [
    ({"format": FORMAT + 1}, f"this sitegen reads format {FORMAT}"),
    ({"copyBytesPerS": math.nan}, "copyBytesPerS"),
    ({"copyBytesPerS": -1.0}, "copyBytesPerS"),
    ({"processCount": -1}, "processCount"),
    ({"processCount": True}, "processCount"),
    ({"availability": {"torch": {"ok": "yes"}}}, "availability.torch.ok"),
    ({"gate": {"torch": {"w": {}}}}, "status"),
    ({"timings": {"w/forward/torch": {"samplesNs": [5, -6]}}}, "sample"),
    ({"timings": {"w/forward/torch": {"samplesNs": [5, 6.5]}}}, "sample"),
    ({"timings": {"w/forward/torch": {"samplesNs": []}}}, "empty"),
    ({"timings": {"w/forward/torch": {}}}, "samplesNs"),
    ({"timings": {"w/forward/torch": {"error": 3}}}, "error"),
    ({"timings": []}, "timings"),
])
def test_a_result_no_measuring_process_writes_is_refused_in_one_line(change, why):
    with pytest.raises(Unreadable) as caught:
        WorkerResult.from_json(result(**change))
    assert why in str(caught.value) and "\n" not in str(caught.value)


def test_a_result_that_is_not_an_object_is_refused():
    with pytest.raises(Unreadable):
        WorkerResult.from_json([1, 2])


def test_the_parent_refuses_a_result_of_another_format_in_one_line(tmp_path, monkeypatch):
    from sitegen.core.problems import InputError
    from sitegen.rerun import sweep

    real = subprocess.Popen

    def forger(args, **kwargs):  # what a process whose outside code rewrote its result file leaves
        if "sitegen.rerun.measure.worker" not in args:
            return real(args, **kwargs)  # the judge process
        code = f"import json; open({args[-1]!r}, 'w').write(json.dumps({{'format': 99, 'timings': {{}}}}))"
        return real([sys.executable, "-c", code], **kwargs)

    monkeypatch.setattr(sweep.subprocess, "Popen", forger)
    with pytest.raises(InputError) as caught:
        sweep._spawn(PLAN.to_json(), tmp_path / "p", 0, True)
    [problem] = caught.value.problems
    assert problem.file == "torch process 1" and "the result is of format 99" in problem.message, problem.line()
