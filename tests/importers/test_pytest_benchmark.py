"""`sitegen import pytest-benchmark` on files pytest-benchmark itself wrote (data/pytest-benchmark/README.md)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from harnessruns import DATA, by_digest, documents, edited, run_import, run_of, snapshot, verified

SOURCE = DATA / "pytest-benchmark" / "topk.json"


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("registry")
    result = run_import("pytest-benchmark", SOURCE, out, "--implementation-param", "provider")
    assert result.exit_code == 0, result.output
    assert "imported 4 of 4 benchmark(s)" in result.stderr
    return out



def test_values_are_the_files_own(imported):
    run = run_of(imported, "bench_topk.py::test_topk[sorted-1000]")
    timing = run["spec"]["timing"]
    # stats.data[0] and [1] of the file, in whole ns; 44 rounds.
    assert timing["samplesNs"][:2] == [8202, 7731]
    assert len(timing["samplesNs"]) == 44
    assert timing["primaryStatistic"] == "median"
    assert timing["latencyNs"]["median"] == round(statistics.median(timing["samplesNs"]))
    assert run["spec"]["sourceNative"]["metrics"]["median_s"] == 7.570999969175318e-06
    assert run["spec"]["sourceNative"]["metrics"]["rounds"] == 44
    assert run["spec"]["observedAt"] == "2026-12-07T17:06:14.734792Z"
    # The checkout was dirty: its commit does not name the code that ran.
    assert run["spec"]["evidence"]["details"] == {"commitDirty": True}


def test_identities_come_from_group_params_and_machine_info(imported):
    docs = by_digest(imported)
    run = run_of(imported, "bench_topk.py::test_topk[heapq-4000]")
    spec = run["spec"]
    implementation = docs[spec["implementationDigest"]]
    workload = docs[spec["workloadDigest"]]
    operation = docs[workload["spec"]["operationSpecDigest"]]
    protocol = docs[spec["protocolDigest"]]
    environment = docs[spec["environmentDigest"]]
    assert implementation["spec"]["name"] == "heapq"
    assert "commit" not in implementation["spec"]["projectRevision"]
    assert operation["metadata"]["title"] == "topk"
    assert [a["name"] for a in operation["spec"]["axes"]] == ["n"]
    assert workload["spec"]["axes"] == {"n": 4000}
    assert environment["spec"]["hardware"] == {"vendor": "AuthenticAMD", "product": "AMD EPYC", "architecture": "x86_64"}
    assert environment["spec"]["software"] == {"python": "3.11.7"}
    assert protocol["spec"]["harness"]["version"] == "5.3.1"
    assert protocol["spec"]["measurement"]["timer"] == "perf_counter"
    assert protocol["spec"]["measurement"]["minSamples"] == 5
    assert protocol["spec"]["devicePolicy"]["pytest_benchmark.disable_gc"] is True
    # The four benchmarks: two implementations on two workloads of one operation.
    assert len({docs[r["spec"]["implementationDigest"]]["spec"]["name"] for r in documents(imported, "runs")}) == 2


def test_a_second_source_on_the_same_gpu_imports_beside_the_first(tmp_path):
    # The environment (the GPU alone) and the operation are the same documents under each
    # source's name: the registry's copy serves, where the second import was refused whole
    # ("same identity (digest) as ExecutionEnvironment ...").
    out = tmp_path / "records"
    gpu = ("--gpu", "NVIDIA H100 80GB HBM3")
    assert run_import("pytest-benchmark", SOURCE, out, *gpu).exit_code == 0
    second = run_import("pytest-benchmark", SOURCE, out, *gpu, "--source", "nightly")
    assert second.exit_code == 0, second.output
    assert len(documents(out, "runs")) == 8
    assert len(documents(out, "environments")) == 1
    assert verified(out)


def test_reimport_changes_nothing(imported):
    before = snapshot(imported)
    result = run_import("pytest-benchmark", SOURCE, imported, "--implementation-param", "provider")
    assert result.exit_code == 0
    assert "0 file(s) written" in result.stderr
    assert snapshot(imported) == before
    assert verified(imported)


def test_gpu_names_the_gpu_and_keeps_the_host_cpu(tmp_path):
    result = run_import("pytest-benchmark", SOURCE, tmp_path, "--implementation-param", "provider", "--gpu", "NVIDIA H100 80GB HBM3")
    assert result.exit_code == 0, result.output
    (environment,) = documents(tmp_path, "environments")
    assert environment["spec"]["hardware"] == {"vendor": "nvidia", "product": "NVIDIA H100 80GB HBM3", "architecture": "sm_90"}
    assert environment["spec"]["settings"]["hostCpu"] == "AMD EPYC"



@pytest.mark.parametrize(("edit", "line"), [
    (lambda d: d["benchmarks"][1]["stats"].update(data=[1e-6]), "$.benchmarks[1]: stats.data: 1 samples, but stats.rounds says 16"),
    (lambda d: d["benchmarks"][2]["stats"]["data"].__setitem__(0, -1.0), "$.benchmarks[2]: stats.data[0]: -1.0 is not a finite, non-negative time"),
    (lambda d: d["benchmarks"][0]["params"].pop("provider"), "$.benchmarks[0]: params: no 'provider' (--implementation-param)"),
])
def test_a_bad_benchmark_is_one_line_and_the_others_import(tmp_path, edit, line):
    path = edited(SOURCE, tmp_path, edit)
    out = tmp_path / "records"
    result = run_import("pytest-benchmark", path, out, "--implementation-param", "provider")
    assert result.exit_code == 1
    assert f"{path}: {line}" in result.stderr.splitlines()
    assert "Traceback" not in result.output
    assert len(documents(out, "runs")) == 3


@pytest.mark.parametrize(("edit", "line"), [
    (lambda d: d.pop("benchmarks"), "$.benchmarks: not pytest-benchmark's --benchmark-json output (no benchmarks array)"),
    (lambda d: d.update(datetime="2026-12-07T17:06:14"), "$: datetime: '2026-12-07T17:06:14' has no time zone, so the instant it names is unknown"),
    (lambda d: d["machine_info"].update(cpu={}, processor=""), "$: machine_info records no CPU (cpu.brand_raw, processor): name the GPU with --gpu"),
])
def test_a_bad_file_is_one_line_and_nothing_is_written(tmp_path, edit, line):
    path = edited(SOURCE, tmp_path, edit)
    out = tmp_path / "records"
    result = run_import("pytest-benchmark", path, out, "--implementation-param", "provider")
    assert result.exit_code == 1
    assert f"{path}: {line}" in result.stderr.splitlines()
    assert not out.exists()


def test_not_json_is_one_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("Benchmark results\n")
    result = run_import("pytest-benchmark", path, tmp_path / "records")
    assert result.exit_code == 1
    assert [line for line in result.stderr.splitlines() if line.startswith(str(path))][0].startswith(f"{path}: $")
    assert not (tmp_path / "records").exists()


def test_fresh_output_of_the_tool_imports(tmp_path):
    pytest.importorskip("pytest_benchmark")
    bench = tmp_path / "bench_topk.py"
    bench.write_bytes((DATA / "pytest-benchmark" / "bench_topk.py").read_bytes())
    written = tmp_path / "fresh.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "bench_topk.py", "-q", "-p", "no:cacheprovider", "--rootdir", ".", "-c", "/dev/null",
         f"--benchmark-json={written}", "--benchmark-save-data", "--benchmark-min-rounds=5", "--benchmark-max-time=0.0005"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    source = json.loads(written.read_text())
    out = tmp_path / "records"
    result = run_import("pytest-benchmark", written, out, "--implementation-param", "provider")
    assert result.exit_code == 0, result.output
    runs = {r["spec"]["sourceNative"]["externalId"]: r for r in documents(out, "runs")}
    assert len(runs) == len(source["benchmarks"]) == 4
    for bench in source["benchmarks"]:
        run = runs[bench["fullname"]]
        assert run["spec"]["sourceNative"]["metrics"]["median_s"] == bench["stats"]["median"]
        assert len(run["spec"]["timing"]["samplesNs"]) == bench["stats"]["rounds"]


def test_without_an_implementation_param_the_project_is_measured_at_its_clean_commit(tmp_path):
    # As written (a dirty tree): the project, no commit.
    result = run_import("pytest-benchmark", SOURCE, tmp_path / "dirty")
    assert result.exit_code == 0, result.output
    revisions = {json.dumps(i["spec"]["projectRevision"]) for i in documents(tmp_path / "dirty", "implementations")}
    assert revisions == {json.dumps({"project": "pytest-benchmark"})}
    assert {i["spec"]["name"] for i in documents(tmp_path / "dirty", "implementations")} == {"pytest-benchmark"}
    # The same file from a clean tree names the commit.
    clean = edited(SOURCE, tmp_path, lambda d: d["commit_info"].update(dirty=False))
    result = run_import("pytest-benchmark", clean, tmp_path / "clean")
    assert result.exit_code == 0, result.output
    (implementation,) = {i["spec"]["projectRevision"]["commit"] for i in documents(tmp_path / "clean", "implementations")}
    assert implementation == "f4adf0274bf57be46a737522c22ba3925c3cbf77"
