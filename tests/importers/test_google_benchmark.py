"""`sitegen import google-benchmark` on files Google Benchmark itself wrote (data/google-benchmark/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnessruns import DATA, by_digest, documents, edited, run_import, run_of, snapshot, verified

SOURCE = DATA / "google-benchmark" / "sum.json"


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("registry")
    result = run_import("google-benchmark", SOURCE, out, "--split-family")
    assert result.exit_code == 0, result.output
    assert "imported 4 of 4 benchmark(s)" in result.stderr
    return out



def test_repetitions_are_the_samples_and_aggregates_stay_the_tools(imported):
    spec = run_of(imported, "sum/builtin/n:1000")["spec"]
    # The five repetitions' real_time (ns per iteration): 3838.317926708952, 3899.542048247624, ...
    assert spec["timing"]["samplesNs"] == [3838, 3900, 3458, 3496, 3419]
    assert spec["timing"]["primaryStatistic"] == "mean"
    assert spec["timing"]["latencyNs"]["mean"] == 3622
    metrics = spec["sourceNative"]["metrics"]
    assert metrics["mean_real_time"] == 3622.1612281875155
    assert metrics["median_real_time"] == 3495.7788415583973
    assert metrics["iterations"] == 3018
    assert spec["observedAt"] == "2026-12-07T17:07:35Z"


def test_identities_come_from_the_name_and_context(imported):
    docs = by_digest(imported)
    spec = run_of(imported, "sum/fsum/n:8000")["spec"]
    workload = docs[spec["workloadDigest"]]
    assert docs[spec["implementationDigest"]]["spec"]["name"] == "fsum"
    assert docs[workload["spec"]["operationSpecDigest"]]["metadata"]["title"] == "sum"
    assert workload["spec"]["axes"] == {"n": 8000}
    protocol = docs[spec["protocolDigest"]]["spec"]
    assert protocol["harness"]["version"] == "1.9.5"
    assert protocol["measurement"] == {"timer": "wall clock (real_time)", "primaryStatistic": "mean", "minSamples": 5}
    environment = docs[spec["environmentDigest"]]["spec"]
    assert environment["hardware"]["product"] == "host CPU: 2 × 2596 MHz"
    assert environment["settings"] == {"library_build_type": "release", "cpu_scaling_enabled": False, "aslr_enabled": True}


def test_without_split_the_family_is_the_operation_and_the_executable_the_implementation(tmp_path):
    result = run_import("google-benchmark", SOURCE, tmp_path)
    assert result.exit_code == 0, result.output
    assert {d["spec"]["name"] for d in documents(tmp_path, "implementations")} == {"bench_sum.py"}
    assert {d["metadata"]["title"] for d in documents(tmp_path, "operations")} == {"sum/builtin", "sum/fsum"}


def test_reimport_changes_nothing(imported):
    before = snapshot(imported)
    result = run_import("google-benchmark", SOURCE, imported, "--split-family")
    assert "0 file(s) written" in result.stderr
    assert snapshot(imported) == before
    assert verified(imported)



def test_a_benchmark_that_reported_an_error_is_skipped_whole_with_one_line(tmp_path):
    path = edited(SOURCE, tmp_path, lambda d: d["benchmarks"][2].update(error_occurred=True, error_message="out of memory"))
    out = tmp_path / "records"
    result = run_import("google-benchmark", path, out, "--split-family")
    assert result.exit_code == 0, result.output
    assert f"{path}: $.benchmarks[2]: skipped: sum/builtin/n:1000 reported an error: out of memory" in result.stderr.splitlines()
    assert "sum/builtin/n:1000" not in {r["spec"]["sourceNative"]["externalId"] for r in documents(out, "runs")}
    assert len(documents(out, "runs")) == 3


def test_a_bad_benchmark_is_one_line_and_the_others_import(tmp_path):
    path = edited(SOURCE, tmp_path, lambda d: [b.update(time_unit="fortnights") for b in d["benchmarks"] if b["run_name"] == "sum/fsum/n:1000"])
    out = tmp_path / "records"
    result = run_import("google-benchmark", path, out, "--split-family")
    assert result.exit_code == 1
    (line,) = [x for x in result.stderr.splitlines() if x.startswith(str(path))]
    assert line == f"{path}: $.benchmarks[18]: time_unit: 'fortnights' is not one of ns, us, ms, s"
    assert len(documents(out, "runs")) == 3


def test_a_benchmark_without_its_time_unit_is_one_line_not_a_guess(tmp_path):
    path = edited(SOURCE, tmp_path, lambda d: [b.pop("time_unit") for b in d["benchmarks"] if b["run_name"] == "sum/fsum/n:1000"])
    out = tmp_path / "records"
    result = run_import("google-benchmark", path, out, "--split-family")
    assert result.exit_code == 1
    (line,) = [x for x in result.stderr.splitlines() if x.startswith(str(path))]
    assert line == f"{path}: $.benchmarks[18]: time_unit: missing, so the times have no unit"
    assert len(documents(out, "runs")) == 3


def test_an_entry_with_run_name_but_no_name_imports(tmp_path):
    # run_name is what groups repetitions; an entry without the display name is still readable, not a traceback.
    path = edited(SOURCE, tmp_path, lambda d: [b.pop("name") for b in d["benchmarks"]])
    out = tmp_path / "records"
    result = run_import("google-benchmark", path, out, "--split-family")
    assert result.exit_code == 0, result.output
    assert "imported 4 of 4 benchmark(s)" in result.stderr


@pytest.mark.parametrize(("edit", "line"), [
    (lambda d: d.pop("context"), "$: not Google Benchmark's JSON output (no context object and benchmarks array)"),
    (lambda d: d["context"].update(date="yesterday"), "$.context: date: 'yesterday' is not an ISO 8601 date and time"),
    (lambda d: d["context"].pop("num_cpus"), "$.context: no num_cpus and mhz_per_cpu, the host the context describes"),
])
def test_a_bad_file_is_one_line_and_nothing_is_written(tmp_path, edit, line):
    path = edited(SOURCE, tmp_path, edit)
    out = tmp_path / "records"
    result = run_import("google-benchmark", path, out)
    assert result.exit_code == 1
    assert f"{path}: {line}" in result.stderr.splitlines()
    assert "Traceback" not in result.output
    assert not out.exists()


def test_fresh_output_of_the_tool_imports(tmp_path):
    pytest.importorskip("google_benchmark")
    written = tmp_path / "fresh.json"
    done = subprocess.run(
        [sys.executable, str(DATA / "google-benchmark" / "bench_sum.py"), "--benchmark_repetitions=3", "--benchmark_min_time=0.005s",
         f"--benchmark_out={written}", "--benchmark_out_format=json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    source = json.loads(written.read_text())
    out = tmp_path / "records"
    result = run_import("google-benchmark", written, out, "--split-family")
    assert result.exit_code == 0, result.output
    means = {b["run_name"]: b["real_time"] for b in source["benchmarks"] if b.get("aggregate_name") == "mean"}
    runs = {r["spec"]["sourceNative"]["externalId"]: r for r in documents(out, "runs")}
    assert set(runs) == set(means) and len(means) == 4
    for name, mean in means.items():
        assert runs[name]["spec"]["sourceNative"]["metrics"]["mean_real_time"] == mean
        assert len(runs[name]["spec"]["timing"]["samplesNs"]) == 3
