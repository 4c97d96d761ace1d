"""`sitegen import nvbench` on NVBench's own output (data/nvbench/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessruns import DATA, by_digest, documents, edited, run_import, run_of, snapshot, verified

SOURCE = DATA / "nvbench" / "test_ref.json"
GPU_RUN = DATA / "nvbench" / "cuda_bench_axpy.json"
WHEN = ("--observed-at", "2026-01-28T19:13:24-06:00")


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("registry")
    result = run_import("nvbench", SOURCE, out, *WHEN)
    assert result.exit_code == 0, result.output
    return out



def test_cold_gpu_time_and_the_tools_numbers(imported):
    spec = run_of(imported, "simple/Device=0")["spec"]
    # nv/cold/time/gpu/mean = "0.0010034715849794225" s; relative stdev "0.0005782350585973689" of it.
    assert spec["timing"] == {"latencyNs": {"mean": 1003472, "stdev": 580}, "primaryStatistic": "mean"}
    assert spec["sourceNative"]["metrics"]["nv.cold.sample_size"] == 499
    assert spec["sourceNative"]["metrics"]["nv.batch.time.gpu.mean"] == 0.001001475909284053
    assert spec["observedAt"] == "2026-01-29T01:13:24Z"


def test_identities_from_devices_axes_and_meta(imported):
    docs = by_digest(imported)
    spec = run_of(imported, "copy_sweep_grid_shape/Device=0 BlockSize=2^8 NumBlocks=2^6")["spec"]
    assert docs[spec["workloadDigest"]]["spec"]["axes"] == {"BlockSize": 256, "NumBlocks": 64}
    assert docs[spec["implementationDigest"]]["spec"]["name"] == "nvbench.example.axes"
    hardware = docs[spec["environmentDigest"]]["spec"]["hardware"]
    assert hardware == {"vendor": "nvidia", "product": "Quadro GV100", "architecture": "sm_70", "memoryBytes": 34086060032,
                        "smCount": 80, "maxClocksMHz": {"sm": 1627}, "ecc": False}
    protocol = docs[spec["protocolDigest"]]["spec"]
    assert protocol["harness"] == {"name": "NVBench", "repository": "https://github.com/NVIDIA/nvbench", "version": "0.1.0",
                                   "commit": "348acbd6eb752a87e15c28fe1ad1cb827eaaadec"}
    assert protocol["measurement"] == {"timer": "cuda_events", "primaryStatistic": "mean", "minSamples": 10}
    assert protocol["devicePolicy"]["nvbench.max_noise"] == 0.005
    typed = run_of(imported, "copy_type_sweep/Device=0 T=U16")["spec"]
    assert docs[typed["workloadDigest"]]["spec"]["axes"] == {"T": "U16"}
    other_gpu = run_of(imported, "simple/Device=1")["spec"]
    assert docs[other_gpu["environmentDigest"]]["spec"]["hardware"]["architecture"] == "sm_60"


def test_each_skipped_state_is_one_line_with_nvbenchs_reason(tmp_path):
    data = json.loads(SOURCE.read_text())
    skipped = [(b, s) for b, bench in enumerate(data["benchmarks"]) for s, state in enumerate(bench["states"]) if state["is_skipped"]]
    result = run_import("nvbench", SOURCE, tmp_path, *WHEN)
    lines = [line for line in result.stderr.splitlines() if ": skipped: " in line]
    assert len(lines) == len(skipped) > 0
    assert (f"{SOURCE}: $.benchmarks[4].states[71]: skipped: NVBench skipped 'Device=1 In=F64 Out=F64': "
            "Not a conversion: InputType == OutputType.") in lines
    total = sum(len(bench["states"]) for bench in data["benchmarks"])
    assert f"imported {total - len(skipped)} of {total - len(skipped)} state(s)" in result.stderr


def test_reimport_changes_nothing(imported):
    before = snapshot(imported)
    result = run_import("nvbench", SOURCE, imported, *WHEN)
    assert "0 file(s) written" in result.stderr
    assert snapshot(imported) == before
    assert verified(imported)


def test_without_a_date_nothing_is_written(tmp_path):
    result = run_import("nvbench", SOURCE, tmp_path / "records")
    assert result.exit_code == 1
    assert f"{SOURCE}: $: NVBench's JSON records no date: pass --observed-at, when it was measured" in result.stderr.splitlines()
    assert not (tmp_path / "records").exists()



def _gpu_mean(state: dict) -> dict:
    (summary,) = [s for s in state["summaries"] if s["tag"] == "nv/cold/time/gpu/mean"]
    return summary["data"][0]


@pytest.mark.parametrize(("edit", "line"), [
    (lambda d: d["benchmarks"][0]["states"][0].update(device=7), "$.benchmarks[0].states[0]: device: 7 is not a device the file lists"),
    (lambda d: _gpu_mean(d["benchmarks"][0]["states"][1]).update(value="fast"),
     "$.benchmarks[0].states[1]: nv/cold/time/gpu/mean: 'fast' is not a float64"),
    (lambda d: _gpu_mean(d["benchmarks"][0]["states"][1]).update(value="-1"),
     "$.benchmarks[0].states[1]: nv/cold/time/gpu/mean: -1.0 is not a finite, non-negative time"),
])
def test_a_bad_state_is_one_line_and_the_others_import(tmp_path, edit, line):
    path = edited(SOURCE, tmp_path, edit)
    out = tmp_path / "records"
    result = run_import("nvbench", path, out, *WHEN)
    assert result.exit_code == 1
    assert f"{path}: {line}" in result.stderr.splitlines()
    assert "Traceback" not in result.output
    assert len(documents(out, "runs")) == 87


def test_not_nvbench_output_is_one_line(tmp_path):
    path = edited(SOURCE, tmp_path, lambda d: d.pop("devices"))
    result = run_import("nvbench", path, tmp_path / "records", *WHEN)
    assert result.exit_code == 1
    assert f"{path}: $: not NVBench's JSON output (no devices and benchmarks arrays)" in result.stderr.splitlines()
    assert not (tmp_path / "records").exists()


@pytest.mark.skipif(not GPU_RUN.exists(), reason=f"{GPU_RUN} is written on a GPU by benchmarks/harness_outputs_gpu.sh")
def test_cuda_bench_output_from_a_gpu_imports(tmp_path):
    data = json.loads(GPU_RUN.read_text())
    result = run_import("nvbench", GPU_RUN, tmp_path, "--observed-at", "2026-12-07T18:00:00Z")
    assert result.exit_code == 0, result.output
    runs = documents(tmp_path, "runs")
    assert len(runs) == sum(len(b["states"]) for b in data["benchmarks"]) == 2
    for run in runs:
        (state,) = [s for b in data["benchmarks"] for s in b["states"]
                    if run["spec"]["sourceNative"]["externalId"] == f"{b['name']}/{s['name']}"]
        assert run["spec"]["sourceNative"]["metrics"]["nv.cold.time.gpu.mean"] == float(_gpu_mean(state)["value"])


def test_a_skip_reason_with_a_line_break_and_a_terminal_escape_stays_one_plain_line(tmp_path):
    # The reason is the file's text: unescaped, it could forge a line of the report or recolour
    # the terminal.
    path = edited(SOURCE, tmp_path, lambda data: data["benchmarks"][4]["states"][71].update(
        skip_reason="Not a conversion.\nimported 999 of 999 state(s)\x1b[31m"))
    result = run_import("nvbench", path, tmp_path / "records", *WHEN)
    lines = result.stderr.splitlines()
    assert (f"{path}: $.benchmarks[4].states[71]: skipped: NVBench skipped 'Device=1 In=F64 Out=F64': "
            "Not a conversion.\\nimported 999 of 999 state(s)\\u001b[31m") in lines
    assert "\x1b" not in result.stderr
    assert not any(line.startswith("imported 999") for line in lines)
