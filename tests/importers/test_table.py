"""`sitegen import table FILE --map MAP.toml` on rows of Liger-Kernel's real CSV (tests/data/liger), as CSV and JSON Lines."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from harnessruns import DATA, by_digest, documents, run_import, snapshot, verified
from sharedinputs import CSV, require_csv

MAP = DATA / "table" / "liger-speed.toml"


def _slice(tmp_path: Path, first: int, last: int) -> Path:
    """Lines first..last of the real CSV under its header (line numbers as in the real file)."""
    require_csv()
    lines = CSV.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "slice.csv"
    path.write_text("\n".join([lines[0], *lines[first - 1:last]]) + "\n", encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


@pytest.fixture()
def imported(tmp_path) -> tuple[Path, Path]:
    source = _slice(tmp_path, 2, 41)
    out = tmp_path / "records"
    result = run_import("table", source, out, "--map", str(MAP))
    assert result.exit_code == 0, result.output
    return source, out


def test_each_mapped_row_is_a_run_with_the_rows_values(imported):
    source, out = imported
    rows = _rows(source)
    speed = [r for r in rows if r["metric_name"] == "speed"]
    runs = documents(out, "runs")
    assert len(runs) == len(speed) == 28
    docs = by_digest(out)
    # Line 2 of the real CSV: cross_entropy, liger, forward, V = 4096, 0.5324159860610962 ms (p20 0.529…, p80 0.534…).
    (run,) = [r for r in runs if r["spec"]["sourceNative"]["externalId"] == "slice.csv:2"]
    assert run["spec"]["timing"] == {"latencyNs": {"median": 532416, "p20": 529101, "p80": 534765}, "primaryStatistic": "median"}
    assert run["spec"]["timedPass"] == "forward"
    assert run["spec"]["observedAt"] == "2024-09-03T15:31:39Z"
    assert docs[run["spec"]["implementationDigest"]]["spec"]["name"] == "liger"
    workload = docs[run["spec"]["workloadDigest"]]
    assert workload["spec"]["axes"] == {"x_name": "V", "x_value": 4096, "extra_benchmark_config_str": '{"B": 8, "T": 2048}'}
    assert docs[workload["spec"]["operationSpecDigest"]]["metadata"]["title"] == "cross_entropy"
    assert docs[run["spec"]["environmentDigest"]]["spec"]["hardware"] == {
        "vendor": "nvidia", "product": "NVIDIA A100-SXM4-80GB", "architecture": "sm_80"}
    protocol = docs[run["spec"]["protocolDigest"]]["spec"]
    assert protocol["harness"] == {"name": "Liger-Kernel benchmark scripts"}
    assert protocol["measurement"] == {"timer": "triton.testing.do_bench (CUDA events)", "primaryStatistic": "median"}


def test_reimport_changes_nothing_and_verifies(imported):
    source, out = imported
    before = snapshot(out)
    result = run_import("table", source, out, "--map", str(MAP))
    assert "0 file(s) written" in result.stderr
    assert snapshot(out) == before
    assert verified(out)


def test_rows_the_map_leaves_out_are_skipped_one_line_each(tmp_path):
    require_csv()
    lines = CSV.read_text(encoding="utf-8").splitlines()
    memory = [n for n, line in enumerate(lines, start=1) if ",memory,MB," in line][:3]
    path = tmp_path / "mixed.csv"
    path.write_text("\n".join([lines[0], lines[1], *(lines[n - 1] for n in memory)]) + "\n", encoding="utf-8")
    result = run_import("table", path, tmp_path / "records", "--map", str(MAP))
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.stderr.splitlines() if ": skipped: " in line]
    assert skipped == [f"{path}: line {n}: skipped: metric_name is 'memory', the map takes 'speed'" for n in (3, 4, 5)]
    assert len(documents(tmp_path / "records", "runs")) == 1


def test_json_lines_of_the_same_rows_give_the_same_runs(tmp_path, imported):
    source, out = imported
    jsonl = tmp_path / "slice.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in _rows(source)), encoding="utf-8")
    out2 = tmp_path / "records-jsonl"
    result = run_import("table", jsonl, out2, "--map", str(MAP))
    assert result.exit_code == 0, result.output
    timings = lambda root: sorted(json.dumps(r["spec"]["timing"]) for r in documents(root, "runs"))
    assert timings(out2) == timings(out)
    assert {p.name for p in (out2 / "workloads").rglob("*.json")} == {p.name for p in (out / "workloads").rglob("*.json")}


def test_a_bad_row_is_one_line_naming_line_and_column(tmp_path):
    source = _slice(tmp_path, 2, 4)
    text = source.read_text().splitlines()
    text[2] = text[2].replace("0.8101439476013184", "fast")
    text[3] = text[3].replace(",forward,", ",sideways,")
    source.write_text("\n".join(text) + "\n")
    out = tmp_path / "records"
    result = run_import("table", source, out, "--map", str(MAP))
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith(str(source))]
    assert lines == [f"{source}: line 3: y_value_50: 'fast' is not a number",
                     f"{source}: line 4: kernel_operation_mode: 'sideways' is not forward, backward or full"]
    assert len(documents(out, "runs")) == 1


def test_each_problem_of_the_map_is_one_line_and_nothing_is_written(tmp_path):
    source = _slice(tmp_path, 2, 3)
    bad = tmp_path / "bad.toml"
    bad.write_text(MAP.read_text().replace('unit = "ms"', 'unit = "fortnights"').replace('statistic = "median"', 'statistic = "typical"')
                   + 'colour = "blue"\n')
    result = run_import("table", source, tmp_path / "records", "--map", str(bad))
    assert result.exit_code == 1
    lines = sorted(line for line in result.stderr.splitlines() if line.startswith(str(bad)))
    assert len(lines) == 3
    assert lines[0].startswith(f"{bad}: $.colour: ")
    assert lines[1].startswith(f"{bad}: $.statistic: ") and lines[2].startswith(f"{bad}: $.unit: ")
    assert not (tmp_path / "records").exists()


def test_a_column_the_map_names_but_the_table_lacks_is_one_line(tmp_path):
    source = _slice(tmp_path, 2, 3)
    other = tmp_path / "other.toml"
    other.write_text(MAP.read_text().replace('gpu = "gpu_name"', 'gpu = "device"'))
    result = run_import("table", source, tmp_path / "records", "--map", str(other))
    assert result.exit_code == 1
    assert f"{source}: line 1: no column 'device', which the map names" in result.stderr.splitlines()


def test_without_a_gpu_column_gpu_names_it(tmp_path):
    source = _slice(tmp_path, 2, 3)
    no_gpu = tmp_path / "nogpu.toml"
    no_gpu.write_text(MAP.read_text().replace('gpu = "gpu_name"\n', ""))
    result = run_import("table", source, tmp_path / "a", "--map", str(no_gpu))
    assert result.exit_code == 1
    assert f"{source}: line 2: the file names no GPU: pass --gpu" in result.stderr.splitlines()
    result = run_import("table", source, tmp_path / "b", "--map", str(no_gpu), "--gpu", "NVIDIA H100 80GB HBM3")
    assert result.exit_code == 0, result.output
    assert {e["spec"]["hardware"]["product"] for e in documents(tmp_path / "b", "environments")} == {"NVIDIA H100 80GB HBM3"}


def test_an_overflowing_cell_is_named_as_written(tmp_path):
    # float("1e400") is inf: the line must quote the cell, not a value the file never holds.
    source = _slice(tmp_path, 2, 3)
    text = source.read_text().splitlines()
    text[2] = text[2].replace("0.8101439476013184", "1e400")
    source.write_text("\n".join(text) + "\n")
    result = run_import("table", source, tmp_path / "records", "--map", str(MAP))
    assert result.exit_code == 1
    assert f"{source}: line 3: y_value_50: '1e400' is not a finite number" in result.stderr.splitlines()


def test_a_json_boolean_where_a_time_belongs_is_one_line_not_a_time_of_one(tmp_path):
    # bool is an int to Python: true would otherwise import as 1 (one millisecond here).
    rows = _rows(_slice(tmp_path, 2, 3))
    rows[0]["y_value_50"] = True
    jsonl = tmp_path / "bool.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = run_import("table", jsonl, tmp_path / "records", "--map", str(MAP))
    assert result.exit_code == 1
    assert f"{jsonl}: line 1: y_value_50: True is not a finite number" in result.stderr.splitlines()
