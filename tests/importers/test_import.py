"""`sitegen import liger` end to end: real files in tmp_path, the CLI through CliRunner."""

from __future__ import annotations

import csv
import io
import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli.main import main
from sitegen.core.digest import document_digest
from sitegen.core import identity
from sharedinputs import CSV, needs_csv, require_csv

SEED = Path(__file__).parents[1] / "fixtures" / "valid" / "seed-manifest.json"
HEADER = CSV.read_text(encoding="utf-8").splitlines()[0] if CSV.exists() else ""
SEED_LINE = 2203  # jsd / liger / forward / NVIDIA B200 / BT 2048


def _import(*args: str):
    return CliRunner().invoke(main, ["import", "liger", *args])


def _lines(numbers: list[int]) -> list[str]:
    text = CSV.read_text(encoding="utf-8").splitlines()
    return [text[n - 1] for n in numbers]


def _csv(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def _load(root: Path, pattern: str) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.glob(pattern))]


@pytest.fixture(scope="module")
def full(tmp_path_factory) -> Path:
    """The whole CSV imported once; tests below only read it."""
    require_csv()
    out = tmp_path_factory.mktemp("registry")
    result = _import(str(CSV), "--out", str(out), "--published", "2026-08-18")
    assert result.exit_code == 0, result.output
    return out


@needs_csv
def test_full_import_validates_and_verifies(full):
    runner = CliRunner()
    for command in ("validate", "verify"):
        result = runner.invoke(main, [command, str(full)])
        assert result.exit_code == 0, result.output
    runs = list((full / "runs").rglob("*.json"))
    assert len(runs) == 2448
    assert {p.stem for p in (full / "environments").glob("*.json")} == {
        "liger-bench-nvidia-b200", "liger-bench-nvidia-h100-80gb-hbm3", "liger-bench-nvidia-h100-pcie",
        "liger-bench-nvidia-a100-sxm4-80gb", "liger-bench-nvidia-geforce-rtx-3090", "liger-bench-nvidia-geforce-rtx-4090",
    }
    assert len(list((full / "operations").glob("*.json"))) == 35


@needs_csv
def test_seed_row_equals_the_seed_run_but_for_the_two_digests_we_cannot_reproduce(full):
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    name = seed["run"]["metadata"]["name"]
    ours = json.loads((full / "runs" / "jsd" / f"{name}.json").read_text(encoding="utf-8"))
    assert ours["apiVersion"] == seed["run"]["apiVersion"] and ours["kind"] == seed["run"]["kind"]
    assert ours["metadata"] == seed["run"]["metadata"]
    assert sorted(ours["spec"]) == sorted(seed["run"]["spec"])
    for key, value in seed["run"]["spec"].items():
        if key in ("implementationDigest", "workloadDigest"):
            continue
        assert ours["spec"][key] == value, key
    # The two we cannot reproduce still resolve to what the seed page shows.
    workload = identity.jsd_workload_document(2048, 128256, "fp32")
    assert ours["spec"]["workloadDigest"] == document_digest(workload)
    implementation = identity.implementation_document("jsd", "liger", "0.8.0")
    assert ours["spec"]["implementationDigest"] == document_digest(implementation)
    on_disk = json.loads((full / "workloads" / "jsd" / f"{workload['metadata']['name']}.json").read_text(encoding="utf-8"))
    assert on_disk == workload and on_disk["metadata"]["title"] == "vocab = 128256 · tokens = 2048 · fp32"


@needs_csv
def test_b200_environment_and_forward_protocol_are_the_seeds(full):
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    environment = json.loads((full / "environments" / "liger-bench-nvidia-b200.json").read_text(encoding="utf-8"))
    protocol = json.loads((full / "protocols" / "liger-bench-do-bench-forward.json").read_text(encoding="utf-8"))
    assert environment == seed["environment"]
    assert protocol == seed["protocol"]
    assert document_digest(environment) == "sha256:ad459e643ef802f7008f1fa8915785c905d05abbfdb5eb0328be214f8d9f3a8b"
    assert document_digest(protocol) == "sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747"


@needs_csv
def test_memory_rows_carry_megabytes_and_no_timing(full):
    name = "liger-jsd-full-memory-liger-nvidia-b200-tokens2048-vocab128256-fp32-2026-05-27-17-14-32"
    run = json.loads((full / "runs" / "jsd" / f"{name}.json").read_text(encoding="utf-8"))
    assert "timing" not in run["spec"]
    assert {(m["metric"], m["statistic"], m["unit"], m["value"]) for m in run["spec"]["measurements"]} == {
        ("memory", "median", "MB", 7014.0009765625), ("memory", "p20", "MB", 7014.0009765625), ("memory", "p80", "MB", 7014.0009765625),
    }
    native = run["spec"]["sourceNative"]
    assert native["benchmark"] == "jsd/full" and "/memory/" in native["externalId"]
    assert set(native["metrics"]) == {"mb_20", "mb_50", "mb_80"}
    protocols = {document_digest(p): p for p in _load(full, "protocols/*.json")}
    assert protocols[run["spec"]["protocolDigest"]]["metadata"]["name"] == "liger-bench-memory-full"


@needs_csv
def test_every_run_file_is_two_space_json_in_key_order_with_a_newline(full):
    for path in list((full / "runs" / "jsd").glob("*.json"))[:20] + list((full / "operations").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
        assert list(document) == ["apiVersion", "kind", "metadata", "spec"]
        assert text == json.dumps(document, indent=2, ensure_ascii=False) + "\n"


@needs_csv
def test_reimport_changes_no_byte(full):
    before = _snapshot(full)
    result = _import(str(CSV), "--out", str(full), "--json")
    assert result.exit_code == 0, result.output
    assert _snapshot(full) == before
    summary = json.loads(result.stdout)
    assert summary["written"] == 0 and summary["imported"] == 2448 and summary["ok"]


@needs_csv
def test_source_file(full):
    source = tomllib.loads((full / "sources" / "liger-kernel-bench.toml").read_text(encoding="utf-8"))
    assert source["name"] == "Liger-Kernel benchmarks" and source["license"] == "BSD-2-Clause"
    assert source["url"] == "https://github.com/linkedin/Liger-Kernel" and source["published"] == "2026-08-18"


@needs_csv
def test_a_newer_csv_adds_its_rows_and_leaves_the_rest_untouched(tmp_path):
    out = tmp_path / "records"
    first = _csv(tmp_path / "old.csv", _lines([2202, 2203]))
    assert _import(str(first), "--out", str(out)).exit_code == 0
    before = _snapshot(out)
    newer = _csv(tmp_path / "new.csv", _lines([2202, 2203, 2204, 2198]))
    result = _import(str(newer), "--out", str(out))
    assert result.exit_code == 0, result.output
    after = _snapshot(out)
    for path, state in before.items():
        if path != "digests.lock":
            assert after[path] == state, path
    added = set(after) - set(before)
    assert {p for p in added if p.startswith("runs/")} == {
        "runs/jsd/liger-jsd-forward-liger-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-29.json",
        "runs/jsd/liger-jsd-forward-torch-nvidia-b200-tokens1024-vocab128256-fp32-2026-05-27-17-14-29.json",
    }
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0
    # No --published and no CSV date newer than the existing file's: the file keeps its date.
    assert tomllib.loads((out / "sources" / "liger-kernel-bench.toml").read_text())["published"] == "2026-05-27"


@needs_csv
def test_a_malformed_row_is_reported_by_line_and_the_others_import(tmp_path):
    good = _lines([2202, 2203])
    bad = next(csv.reader(io.StringIO(_lines([2204])[0])))
    bad[8] = "fast"  # y_value_50
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(bad)
    path = _csv(tmp_path / "bad.csv", [good[0], buffer.getvalue(), good[1]])
    out = tmp_path / "records"
    result = _import(str(path), "--out", str(out))
    assert result.exit_code == 1
    assert f"{path}: line 3: y_value_50: 'fast' is not a number" in result.stderr.splitlines()
    assert len(list((out / "runs").rglob("*.json"))) == 2
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0


@needs_csv
def test_a_row_with_too_few_fields_names_its_line(tmp_path):
    path = _csv(tmp_path / "short.csv", [*_lines([2202]), "jsd,liger,forward"])
    result = _import(str(path), "--out", str(tmp_path / "r"))
    assert result.exit_code == 1
    assert f"{path}: line 3: 3 fields; the header has 15" in result.stderr


@needs_csv
def test_a_new_gpu_imports_with_unknown_architecture_and_a_warning(tmp_path):
    row = next(csv.reader(io.StringIO(_lines([2203])[0])))
    row[12] = "NVIDIA Quantum X9"
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(row)
    out = tmp_path / "records"
    result = _import(str(_csv(tmp_path / "gpu.csv", [buffer.getvalue()])), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "unknown GPU 'NVIDIA Quantum X9'" in result.stderr
    environment = json.loads((out / "environments" / "liger-bench-nvidia-quantum-x9.json").read_text())
    assert environment["spec"] == {"hardware": {"vendor": "nvidia", "product": "NVIDIA Quantum X9", "architecture": "unknown"}, "software": {}}
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0


@needs_csv
def test_an_unknown_kernel_gets_a_readable_name(tmp_path):
    row = next(csv.reader(io.StringIO(_lines([2203])[0])))
    row[0] = "foo_bar"
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(row)
    out = tmp_path / "records"
    result = _import(str(_csv(tmp_path / "k.csv", [buffer.getvalue()])), "--out", str(out))
    assert result.exit_code == 0, result.output
    operation = json.loads((out / "operations" / "foo-bar.json").read_text())
    assert operation["metadata"]["title"] == "Foo bar"
    # Generic names, config axes in published order, the swept one last.
    assert [a["name"] for a in operation["spec"]["axes"]] == ["vocab", "batch", "seq_len", "tokens"]


def test_help_on_both_levels():
    runner = CliRunner()
    assert "liger" in runner.invoke(main, ["import", "-h"]).output
    assert "--published" in runner.invoke(main, ["import", "liger", "-h"]).output


@needs_csv
def test_a_bad_published_date_is_a_usage_error(tmp_path):
    result = _import(str(CSV), "--out", str(tmp_path), "--published", "18/08/2026")
    assert result.exit_code == 2
    assert not any(tmp_path.iterdir())


def _row_csv(path: Path, line: int, changes: dict[int, str]) -> Path:
    row = next(csv.reader(io.StringIO(_lines([line])[0])))
    for index, value in changes.items():
        row[index] = value
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(row)
    return _csv(path, [buffer.getvalue()])


@needs_csv
@pytest.mark.parametrize(("index", "value", "reason"), [
    (8, "1e30", "y_value_50: '1e30' ms is too large (more than 2**53-1 ns)"),
    (8, "1e300", "y_value_50: '1e300' ms is too large (more than 2**53-1 ns)"),
    (10, "9007199254.7409915", "y_value_80: '9007199254.7409915' ms is too large (more than 2**53-1 ns)"),
    (8, "sNaN", "y_value_50: 'sNaN' is not a number"),
    (9, "sNaN", "y_value_20: 'sNaN' is not a number"),
    (7, "1e20", "x_value: '1e20' is too large (more than 2**53-1)"),
])
def test_an_unrepresentable_number_is_a_row_error_naming_its_column(tmp_path, index, value, reason):
    path = _row_csv(tmp_path / "huge.csv", SEED_LINE, {index: value})
    out = tmp_path / "records"
    result = _import(str(path), "--out", str(out))
    assert result.exit_code == 1
    assert f"{path}: line 2: {reason}" in result.stderr.splitlines()
    assert not out.exists()


@needs_csv
def test_the_largest_representable_latency_still_imports(tmp_path):
    # 9007199254.7409910 ms rounds half-even to 2**53-1 ns exactly.
    path = _row_csv(tmp_path / "edge.csv", SEED_LINE, {8: "9007199254.740991", 9: "1", 10: "2"})
    out = tmp_path / "records"
    result = _import(str(path), "--out", str(out))
    assert result.exit_code == 0, result.output
    (run_file,) = (out / "runs" / "jsd").glob("*.json")
    assert json.loads(run_file.read_text())["spec"]["timing"]["latencyNs"]["median"] == 2**53 - 1
