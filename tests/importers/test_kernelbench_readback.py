"""What an importer writes passes `sitegen validate`, or is not written (issue 47.4): a value the
registry's strict reader refuses (an integer past 2**53 - 1) is one problem line for its timing,
planted here in a copy of a real snapshot; a 5,000-digit timing key is one line, not a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from kernelbenchdata import KERNELBENCH, require_kernelbench
from sitegen.cli.main import main
from sitegen.core.formatversion import API_VERSION

TIMINGS = Path("results/timing/L40S_matx3/baseline_time_torch_compile_cudagraphs.json")
SOFTMAX = Path("KernelBench/level1/23_Softmax.py")


def _copy(tmp: Path) -> Path:
    require_kernelbench()
    root = tmp / "snapshot"
    shutil.copytree(KERNELBENCH / "752dd45", root)
    return root


def _plant_huge_batch(root: Path) -> None:
    text = (root / SOFTMAX).read_text(encoding="utf-8")
    assert "batch_size = 16\n" in text
    (root / SOFTMAX).write_text(text.replace("batch_size = 16\n", "batch_size = 2**62\n"), encoding="utf-8")


def _run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if not line.startswith("imported ") and "problem(s) found" not in line]


def test_a_value_the_registry_refuses_is_one_line_and_its_timing_is_not_written(tmp_path):
    root = _copy(tmp_path)
    _plant_huge_batch(root)
    out = tmp_path / "records"
    result = _run("import", "kernelbench", root, "--out", out)
    assert result.exit_code == 1
    problems = [line for line in _lines(result.output) if "23_Softmax" in line]
    # kernelbench_operations.toml reads Softmax's batch as the tokens axis.
    assert problems == [f"{root / TIMINGS}: $.level1['23_Softmax.py']: workload $.spec.axes.tokens: "
                        f"integer {2**62} is outside the exact range ±(2**53 - 1)"], result.output[-1500:]
    assert not list(out.glob("runs/*/*23-softmax*.json"))
    written = list(out.glob("runs/*/*.json"))
    assert len(written) > 10
    # The rest of the snapshot imported, and what was written reads back.
    assert _run("validate", out).exit_code == 0
    verified = _run("verify", out, "--full")
    assert verified.exit_code == 0, verified.output


def test_a_snapshot_whose_only_timing_the_registry_would_refuse_writes_nothing(tmp_path):
    root = _copy(tmp_path)
    _plant_huge_batch(root)
    timings = json.loads((root / TIMINGS).read_text(encoding="utf-8"))
    (root / TIMINGS).write_text(json.dumps({"level1": {"23_Softmax.py": timings["level1"]["23_Softmax.py"]}}), encoding="utf-8")
    out = tmp_path / "records"
    result = _run("import", "kernelbench", root, "--out", out)
    assert result.exit_code == 1
    assert len([line for line in _lines(result.output) if "outside the exact range" in line]) == 1, result.output
    assert not out.exists()


def test_a_timing_key_of_5000_digits_is_one_line_and_the_rest_imports(tmp_path):
    root = _copy(tmp_path)
    timings = json.loads((root / TIMINGS).read_text(encoding="utf-8"))
    key = "9" * 5000 + "_Softmax.py"
    timings["level1"][key] = timings["level1"]["23_Softmax.py"]
    (root / TIMINGS).write_text(json.dumps(timings), encoding="utf-8")
    out = tmp_path / "records"
    result = _run("import", "kernelbench", root, "--out", out)
    assert result.exit_code == 0, result.output[-1500:]
    lines = [line for line in result.output.splitlines() if "9" * 5000 in line]
    assert len(lines) == 1 and lines[0].endswith(f"{key}: skipped: cannot read file: File name too long")
    assert list(out.glob("runs/*/*23-softmax*.json"))


def test_a_document_an_importer_put_in_its_plan_by_hand_is_read_back_before_the_write(tmp_path):
    # An importer that fills Plan.files itself, not through accept, is held to the same reading.
    from sitegen.importers.core import Plan, write_plan

    plan = Plan()
    plan.files["protocols/p.json"] = (f'{{"apiVersion": "{API_VERSION}", "kind": "BenchmarkProtocol", "metadata": {{"name": "p"}}, '
                                      '"spec": {"n": 9007199254740992}}\n').encode()
    plan.documents["protocols/p.json"] = json.loads(plan.files["protocols/p.json"])
    out = tmp_path / "records"
    summary, problems = write_plan(out, plan, ("kernelbench", {"name": "x", "url": "https://x.org", "license": "MIT"}), "2025-01-01", None)
    assert [p.line() for p in problems] == [f"{out / 'protocols/p.json'}: $.spec.n: integer 9007199254740992 is outside the exact range ±(2**53 - 1)"]
    assert not out.exists()
