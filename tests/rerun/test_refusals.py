"""Refusals leave nothing behind: a busy GPU, an interrupted sweep, a name already taken."""

from pathlib import Path

import pytest

from sitegen.core.problems import InputError
from sitegen.rerun.measure import gpustate
from sitegen.rerun import sweep
from sitegen.operations import load
from sitegen.rerun.plan.plugins import resolve
from sitegen.rerun.outcome.records import plan_writes, render


def options(out: Path, interpret: bool) -> sweep.Options:
    op = load("jsd")
    return sweep.Options(op=op, loads=[op.workload("fp32", tokens=4, vocab=64)], passes=("forward",),
                         impls=resolve(op, ("torch",)),
                         out=out, records=out, interpret=interpret)


def test_busy_gpu_is_refused_before_any_measurement(tmp_path, monkeypatch):
    monkeypatch.setattr(gpustate, "facts", lambda: None)
    monkeypatch.setattr(gpustate, "compute_processes", lambda: 2)
    monkeypatch.setattr(sweep, "_spawn", lambda *a, **k: pytest.fail("measured on a busy GPU"))
    with pytest.raises(InputError) as err:
        sweep.run(options(tmp_path, interpret=False))
    assert "refusing to time" in err.value.problems[0].message
    assert list(tmp_path.iterdir()) == []


def test_interrupt_during_measurement_writes_nothing(tmp_path, monkeypatch):
    calls = []

    def spawn(plan, workdir, k, interpret, **_):
        calls.append(k)
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "_spawn", spawn)
    with pytest.raises(KeyboardInterrupt):
        sweep.run(options(tmp_path, interpret=True))
    assert calls == [0] and list(tmp_path.iterdir()) == []


def test_existing_run_or_renamed_shared_document_is_never_overwritten(tmp_path):
    from sitegen.core.identity import jsd_workload_document, operation_document

    run = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun", "metadata": {"name": "r"}, "spec": {"x": 1}}
    path = tmp_path / "runs" / "jsd" / "r.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{}")
    with pytest.raises(InputError):
        plan_writes(tmp_path, [operation_document("jsd")], [run], "jsd")
    assert path.read_bytes() == b"{}" and not (tmp_path / "operations").exists()

    # A shared document of the same name but other content is a conflict, not an overwrite.
    other = tmp_path / "other"
    doc = jsd_workload_document(4, 64, "fp32")
    changed = {**doc, "spec": {**doc["spec"], "axes": {"vocab": 64, "tokens": 5}}}
    target = other / "workloads" / "jsd" / f"{doc['metadata']['name']}.json"
    target.parent.mkdir(parents=True)
    target.write_bytes(render(changed))
    with pytest.raises(InputError) as err:
        plan_writes(other, [doc], [], "jsd")
    assert "exists with other content" in err.value.problems[0].message
    # The same document already there (under any file) is simply not written again.
    assert plan_writes(other, [changed], [], "jsd") == []
