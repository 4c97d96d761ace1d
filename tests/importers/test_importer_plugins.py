"""Importers as plugins: `sitegen import --list`, entry points, pkg.module:Name, and the errors of a bad NAME."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from click.testing import CliRunner

from sitegen.cli.main import main
from sitegen.importers.plugin import BUILTIN

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
ROWS = [
    {"op": "add", "impl": "mine", "n": 1024, "ns": 1200, "at": "2026-01-02T03:04:05Z"},
    {"op": "add", "impl": "theirs", "n": 1024, "ns": 1500, "at": "2026-01-02T03:04:05Z"},
]


def _rows(path: Path) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def _distribution(root: Path) -> Path:
    """An installed distribution that declares the tests' Toy importer as a sitegen.importers entry point."""
    info = root / "toy_importer-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-importer\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[sitegen.importers]\ntoy = toyplugin:Toy\n", encoding="utf-8")
    return root


def test_list_names_each_shipped_importer_with_its_target_and_summary():
    result = CliRunner().invoke(main, ["import", "--list"])
    assert result.exit_code == 0, result.output
    lines = {line.split("\t")[0]: line.split("\t")[1:] for line in result.output.splitlines()}
    assert lines["liger"] == ["sitegen.importers.builtin:Liger", "Liger-Kernel's all_benchmark_data.csv: one BenchmarkRun per row."]
    assert lines["kernelbench"][0] == "sitegen.importers.builtin:KernelBench"
    assert set(BUILTIN) <= set(lines)


def test_pyproject_declares_every_shipped_importer_as_an_entry_point():
    declared = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["entry-points"]["sitegen.importers"]
    assert declared == BUILTIN


def test_an_importer_installed_as_an_entry_point_imports(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_distribution(tmp_path / "site-packages")))
    runner = CliRunner()
    listed = runner.invoke(main, ["import", "--list"])
    assert "toy\ttoyplugin:Toy\tA test's JSON Lines of {op, impl, ns, at}." in listed.output.splitlines()
    out = tmp_path / "records"
    first = runner.invoke(main, ["import", "toy", str(_rows(tmp_path / "rows.jsonl")), "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert "imported 2 of 2 benchmark(s)" in first.stderr
    runs = [json.loads(p.read_text()) for p in (out / "runs").rglob("*.json")]
    assert sorted(r["spec"]["timing"]["latencyNs"]["median"] for r in runs) == [1200, 1500]
    assert (out / "sources" / "toy.toml").read_text().splitlines()[:2] == ['name = "toy results"', 'license = "NOASSERTION"']
    again = runner.invoke(main, ["import", "toy", str(tmp_path / "rows.jsonl"), "--out", str(out)])
    assert "0 file(s) written" in again.stderr
    assert runner.invoke(main, ["verify", str(out)]).exit_code == 0


def test_an_importer_named_by_module_and_class_imports(tmp_path):
    out = tmp_path / "records"
    result = CliRunner().invoke(main, ["import", "toyplugin:Toy", str(_rows(tmp_path / "rows.jsonl")), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(list((out / "runs").rglob("*.json"))) == 2


def test_an_unknown_importer_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["import", "nonesuch", str(tmp_path)])
    assert result.exit_code == 2
    assert "No such command 'nonesuch'" in result.output


def test_a_target_that_is_no_importer_is_a_usage_error_saying_so(tmp_path):
    result = CliRunner().invoke(main, ["import", "json:loads", str(tmp_path)])
    assert result.exit_code == 2
    assert "json:loads is not a subclass of sitegen.importers.plugin.Importer" in result.output
    assert "Traceback" not in result.output


def test_each_importer_has_its_own_help_with_its_own_options():
    runner = CliRunner()
    assert "--published" in runner.invoke(main, ["import", "liger", "-h"]).output
    assert "--published" not in runner.invoke(main, ["import", "kernelbench", "-h"]).output
    assert "--implementation-param" in runner.invoke(main, ["import", "pytest-benchmark", "-h"]).output
