"""`sitegen import tritonbench` on TritonBench's own JSON and CSV output (data/tritonbench/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessruns import DATA, by_digest, documents, run_import, snapshot, verified

JSON_FILE = DATA / "tritonbench" / "layer_norm_fwd.json"
CSV_FILE = DATA / "tritonbench" / "layer_norm_fwd.csv"
WHERE = ("--gpu", "AMD EPYC", "--observed-at", "2026-12-07T17:20:00Z")


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("registry")
    result = run_import("tritonbench", JSON_FILE, out, *WHERE)
    assert result.exit_code == 0, result.output
    return out


def _by_x(out: Path) -> dict[int, dict]:
    docs = by_digest(out)
    return {docs[r["spec"]["workloadDigest"]]["spec"]["axes"]["x_val"]: r for r in documents(out, "runs")}


def test_latency_and_metrics_are_the_files_own(imported):
    runs = _by_x(imported)
    assert sorted(runs) == [1024, 1536, 2048]
    spec = runs[1536]["spec"]
    # "tritonbench_layer_norm_fwd[x_1536-torch_layer_norm]_latency": "19.17587661743164" (ms)
    assert spec["timing"] == {"latencyNs": {"median": 19175877}, "primaryStatistic": "median"}
    assert spec["sourceNative"]["metrics"] == {"latency_ms": 19.17587661743164, "gbps": 2.6247377892620833}
    assert spec["timedPass"] == "forward"
    assert spec["sourceNative"]["externalId"] == "layer_norm_fwd[x_1536-torch_layer_norm]"


def test_identities(imported):
    docs = by_digest(imported)
    spec = _by_x(imported)[1024]["spec"]
    assert docs[spec["implementationDigest"]]["spec"]["name"] == "torch_layer_norm"
    operation = docs[docs[spec["workloadDigest"]]["spec"]["operationSpecDigest"]]
    assert operation["metadata"]["title"] == "layer_norm"
    assert docs[spec["protocolDigest"]]["spec"]["measurement"] == {"timer": "unrecorded", "primaryStatistic": "median"}
    assert docs[spec["environmentDigest"]]["spec"]["hardware"]["product"] == "AMD EPYC"


def test_averages_are_skipped_one_line_each(tmp_path):
    result = run_import("tritonbench", JSON_FILE, tmp_path, *WHERE)
    skipped = [line for line in result.stderr.splitlines() if ": skipped: " in line]
    averages = [k for k in json.loads(JSON_FILE.read_text()) if "x_average" in k or k.endswith("-avg")]
    assert len(skipped) == len(averages) == 3
    assert f"{JSON_FILE}: $['tritonbench_layer_norm_fwd[torch_layer_norm]-gbps-avg']: skipped: an average over inputs, not a measurement" in skipped


def test_the_csv_lands_in_the_same_cohorts(tmp_path, imported):
    result = run_import("tritonbench", CSV_FILE, tmp_path, *WHERE, "--operation", "layer_norm", "--mode", "fwd")
    assert result.exit_code == 0, result.output
    assert f"{CSV_FILE}: line 5: skipped: the average over inputs, not a measurement" in result.stderr.splitlines()
    # line 3 of the CSV: 1536;10.523723602294922;4.782684333235824
    assert _by_x(tmp_path)[1536]["spec"]["timing"]["latencyNs"]["median"] == 10523724
    for folder in ("operations", "workloads", "implementations"):
        assert {p.name for p in (tmp_path / folder).rglob("*.json")} == {p.name for p in (imported / folder).rglob("*.json")}


def test_reimport_changes_nothing(imported):
    before = snapshot(imported)
    result = run_import("tritonbench", JSON_FILE, imported, *WHERE)
    assert "0 file(s) written" in result.stderr
    assert snapshot(imported) == before
    assert verified(imported)


@pytest.mark.parametrize(("args", "line"), [
    (("--gpu", "AMD EPYC"), f"{JSON_FILE}: $: TritonBench's output records no date: pass --observed-at, when it was measured"),
    (("--observed-at", "2026-12-07T17:20:00Z"),
     f"{JSON_FILE}: $['tritonbench_layer_norm_fwd[x_1024-torch_layer_norm]_latency']: the file names no GPU: pass --gpu"),
])
def test_what_the_file_does_not_record_must_be_stated(tmp_path, args, line):
    result = run_import("tritonbench", JSON_FILE, tmp_path / "records", *args)
    assert result.exit_code == 1
    assert line in result.stderr.splitlines()
    assert not (tmp_path / "records").exists()


def test_a_csv_without_its_op_is_one_line(tmp_path):
    result = run_import("tritonbench", CSV_FILE, tmp_path / "records", *WHERE)
    assert result.exit_code == 1
    assert f"{CSV_FILE}: $: a TritonBench CSV does not name its op: pass --operation" in result.stderr.splitlines()


def test_a_bad_value_is_one_line_and_the_others_import(tmp_path):
    data = json.loads(JSON_FILE.read_text())
    data["tritonbench_layer_norm_fwd[x_2048-torch_layer_norm]_latency"] = "slow"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    result = run_import("tritonbench", path, tmp_path / "records", *WHERE)
    assert result.exit_code == 1
    assert (f"{path}: $['tritonbench_layer_norm_fwd[x_2048-torch_layer_norm]_latency']: latency: 'slow' is not a number of ms"
            in result.stderr.splitlines())
    assert "Traceback" not in result.output
    assert len(documents(tmp_path / "records", "runs")) == 2


def test_a_file_that_is_not_tritonbench_output_is_named_before_the_missing_date(tmp_path):
    # Asking for --observed-at first would send the user to find a date for a file that cannot
    # import anyway.
    path = tmp_path / "other.json"
    path.write_text(json.dumps([1, 2, 3]))
    result = run_import("tritonbench", path, tmp_path / "records", "--gpu", "AMD EPYC")
    assert result.exit_code == 1
    assert f"{path}: $: not TritonBench's --output-json output (an object of metrics)" in result.stderr.splitlines()
    assert "--observed-at" not in result.stderr


def test_a_date_that_is_not_one_is_one_line_naming_the_option_and_nothing_is_written(tmp_path):
    result = run_import("tritonbench", JSON_FILE, tmp_path / "records", "--gpu", "AMD EPYC", "--observed-at", "yesterday")
    assert result.exit_code == 1
    assert f"{JSON_FILE}: $: --observed-at: 'yesterday' is not an ISO 8601 date and time" in result.stderr.splitlines()
    assert "Traceback" not in result.output
    assert not (tmp_path / "records").exists()
