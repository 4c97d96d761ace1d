"""Each implementation is measured in processes of its own (issue 43 item 2): outside code
measured beside torch, as docs/measure-your-kernel.md recommends, cannot reach torch's samples,
results or the module torch is timed through. The attackers: tests/rerun/plugins/intruders.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

for _module in ("torch", "triton", "numpy"):
    pytest.importorskip(_module, reason="rerun measures with torch (numpy: Triton's interpreter)")

PLUGINS = Path(__file__).resolve().parent / "plugins"
sys.path.insert(0, str(PLUGINS))
import intruders  # noqa: E402

sys.path.remove(str(PLUGINS))


def rerun_beside_torch(tmp_path: Path, intruder: str) -> dict:
    """`sitegen rerun --interpret --impl intruders:INTRUDER,torch`: torch's run as written."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")])))
    out = tmp_path / "records"
    done = subprocess.run([sys.executable, "-m", "sitegen", "rerun", "--interpret", "--tokens", "4", "--vocab", "64",
                           "--dtype", "fp32", "--pass", "forward", "--impl", f"intruders:{intruder},torch",
                           "--processes", "1", "--out", str(out), "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    rows = {row["impl"]: row for row in json.loads(done.stdout)["runs"]}
    assert set(rows) == {intruder, "torch"} and rows[intruder]["status"] == "passed", rows
    return json.loads((out / rows["torch"]["file"]).read_text())


def test_an_intruder_that_rewrites_the_process_s_result_cannot_touch_torch_s_samples(tmp_path):
    run = rerun_beside_torch(tmp_path, "ResultRewriter")
    samples = run["spec"]["timing"]["samplesNs"]
    assert samples and intruders.FORGED_NS not in samples, samples
    assert run["spec"]["status"] == "passed"


def test_an_intruder_that_wraps_torch_s_module_cannot_slow_torch(tmp_path):
    run = rerun_beside_torch(tmp_path, "Saboteur")
    # Each torch call would wait SLOWDOWN_S (50 ms) first; torch's own call at 4 x 64 takes well
    # under a millisecond on any CPU, so half the slowdown bounds it with room to spare.
    median = run["spec"]["timing"]["latencyNs"]["median"]
    assert median < intruders.SLOWDOWN_S * 1e9 / 2, median


def test_what_a_process_writes_of_another_implementation_is_dropped():
    from sitegen.rerun.sweep import _own

    # An outside implementation's process controls its own result file: what it says of torch
    # (a gate passed, samples, availability) is not torch's evidence.
    written = {"availability": {"k": {"ok": True}, "torch": {"ok": True, "version": "forged"}},
               "gate": {"k": {"w": {"status": "passed"}}, "torch": {"w": {"status": "passed"}}},
               "timings": {"w/forward/k": {"samplesNs": [5]}, "w/forward/torch": {"samplesNs": [1]}},
               "copyBytesPerS": 1.0}
    kept = _own(written, "k", {"w/forward/k"})
    assert kept["availability"] == {"k": {"ok": True}}
    assert kept["gate"] == {"k": {"w": {"status": "passed"}}}
    assert kept["timings"] == {"w/forward/k": {"samplesNs": [5]}}


def test_an_operation_plugin_cannot_edit_the_records_the_rerun_writes(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")])))
    out = tmp_path / "records"
    done = subprocess.run([sys.executable, "-m", "sitegen", "rerun", "--interpret", "--operation", "tamperop:Tampered",
                           "--axis", "rows=16", "--axis", "cols=64", "--dtype", "fp32", "--pass", "full", "--impl", "eager",
                           "--processes", "1", "--out", str(out), "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["runs"]
    run = json.loads((out / row["file"]).read_text())
    assert row["status"] == "passed" and "tampered" not in run["metadata"]["labels"], run["metadata"]["labels"]
    # Its facts still reached the record: the roofline's bytes for the full pass (3·R·C·4).
    [roofline] = [c for c in run["spec"]["evidence"]["integrity"] if c["name"] == "roofline"]
    assert f"({3 * 16 * 64 * 4} B at measured copy" in roofline["detail"], roofline


def test_an_operation_plugin_cannot_add_a_run_to_the_rerun_journal(tmp_path):
    # Its module runs in the describing process before measuring starts: a journal entry it adds
    # would make `sitegen sign` (by default) sign its planted file as this machine's rerun.
    out = tmp_path / "records"
    env = dict(os.environ, PLANT_OUT=str(out),
               PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "sitegen", "rerun", "--interpret", "--operation", "plantop:Planted",
                           "--axis", "rows=16", "--axis", "cols=64", "--dtype", "fp32", "--pass", "full", "--impl", "eager",
                           "--processes", "1", "--out", str(out), "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["runs"]
    entries = json.loads((out / ".sitegen-rerun-journal").read_text())["files"]
    assert (out / "runs" / "planted.json").exists()  # planted, but not journalled
    assert "runs/planted.json" not in entries and row["file"] in entries, entries
