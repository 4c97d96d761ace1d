"""KernelBench problems are read, never run; what cannot be read is skipped in one line; ranks of sample-less means."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli.main import main
from kernelbenchdata import KERNELBENCH, require_kernelbench

COMMIT = "0123456789abcdef0123456789abcdef01234567"
README = "All baseline are ran with PyTorch `2.5.0+cu124` and CUDA `12.4`.\n"


def _timing(mean: float, std: float, hardware: str = "NVIDIA B200") -> dict:
    return {"mean": mean, "std": std, "min": round(mean * 0.9, 4), "max": round(mean * 1.5, 4), "num_trials": 100,
            "hardware": hardware, "device": "cuda:0"}


def _snapshot(root: Path, problems: dict[str, str], timings: dict[str, dict]) -> Path:
    """A snapshot folder: COMMIT, the timing README, problems under KernelBench/level1, timing files under B200_test."""
    (root / "KernelBench" / "level1").mkdir(parents=True)
    (root / "results" / "timing" / "B200_test").mkdir(parents=True)
    (root / "COMMIT").write_text(f"commit {COMMIT}\ndate 2025-06-01T10:00:00+00:00\nsubject test\n", encoding="utf-8")
    (root / "results" / "timing" / "README.md").write_text(README, encoding="utf-8")
    for name, text in problems.items():
        (root / "KernelBench" / "level1" / name).write_text(text, encoding="utf-8")
    for config, by_problem in timings.items():
        path = root / "results" / "timing" / "B200_test" / f"baseline_time_{config}.json"
        path.write_text(json.dumps({"level1": by_problem}), encoding="utf-8")
    return root


def _problem(forward: str, inputs: str, constants: str, *, prelude: str = "") -> str:
    return (f"import torch\nimport torch.nn as nn\n{prelude}\n"
            f"class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
            f"    def forward(self, x):\n        return {forward}\n\n{constants}\n\n"
            f"def get_inputs():\n    return {inputs}\n\ndef get_init_inputs():\n    return []\n")


def _import(path: Path, out: Path):
    return CliRunner().invoke(main, ["import", "kernelbench", str(path), "--out", str(out)])


def test_a_problem_file_is_never_executed(tmp_path):
    marker = tmp_path / "executed"
    # Importing or running this file would create the marker and then raise.
    hostile = _problem("torch.relu(x)", "[torch.randn(batch_size, dim)]", "batch_size = 16 * 4\ndim = 2 ** 10",
                       prelude=f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit('executed')\n")
    source = _snapshot(tmp_path / "snap", {"1_Hostile.py": hostile}, {"torch": {"1_Hostile.py": _timing(0.5, 0.01)}})
    out = tmp_path / "records"
    result = _import(source, out)
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    runs = list(out.glob("runs/*/*.json"))
    assert len(runs) == 1
    workload = next(json.loads(p.read_text(encoding="utf-8")) for p in out.glob("workloads/*/*.json"))
    assert workload["spec"]["tensors"] == [{"name": "input0", "dtype": "fp32", "shape": [64, 1024]}]


def test_a_problem_whose_inputs_cannot_be_read_is_skipped_in_one_line(tmp_path):
    unreadable = _problem("torch.relu(x)", "[make_input()]", "batch_size = 16", prelude="def make_input():\n    return torch.randn(4, 4)\n")
    readable = _problem("torch.tanh(x)", "[torch.rand(batch_size, 8, dtype=torch.float16)]", "batch_size = 3 + 5")
    source = _snapshot(tmp_path / "snap", {"1_Opaque.py": unreadable, "2_Tanh.py": readable},
                       {"torch": {"1_Opaque.py": _timing(0.5, 0.01), "2_Tanh.py": _timing(0.25, 0.01)}})
    out = tmp_path / "records"
    result = _import(source, out)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "1_Opaque.py" in line]
    assert len(lines) == 1 and "skipped" in lines[0] and "make_input()" in lines[0]
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in out.glob("runs/*/*.json")]
    assert [r["metadata"]["name"] for r in runs] == ["kernelbench-0123456-b200-test-torch-level1-2-tanh"]
    workload = next(json.loads(p.read_text(encoding="utf-8")) for p in out.glob("workloads/*/*.json"))
    assert workload["spec"]["tensors"] == [{"name": "input0", "dtype": "fp16", "shape": [8, 8]}]


def test_a_bad_timing_is_one_line_naming_file_and_path_and_nothing_is_written(tmp_path):
    readable = _problem("torch.tanh(x)", "[torch.rand(4, 8)]", "")
    source = _snapshot(tmp_path / "snap", {"2_Tanh.py": readable}, {"torch": {"2_Tanh.py": {**_timing(0.25, 0.01), "mean": -1}}})
    out = tmp_path / "records"
    result = _import(source, out)
    assert result.exit_code == 1
    problem = [line for line in result.output.splitlines() if "baseline_time_torch.json" in line]
    assert len(problem) == 1 and "$.level1['2_Tanh.py']" in problem[0] and "mean" in problem[0]
    assert not out.exists()  # nothing written: not even the registry folder


def _cohort_ranks(site: Path, operation_prefix: str) -> dict[str, str]:
    """Implementation name → rank label, from the operation page's JSON twin."""
    twins = [p for p in (site / "operations").glob(f"{operation_prefix}*/index.json")]
    assert len(twins) == 1, twins
    page = json.loads(twins[0].read_text(encoding="utf-8"))
    rows = {}
    for gpu in page["gpus"]:
        for the_pass in gpu["passes"]:
            for dtype in the_pass["dtypes"]:
                for cohort in dtype["cohorts"]:
                    for row in cohort["ranked"]:
                        rows[row["run"]["text"]] = (row["rank"], row["interval"])
    return rows


def test_eager_and_compile_tie_or_rank_by_the_normal_interval_of_the_mean(tmp_path):
    # Close: 1.00 ± 1.96·0.1/10 and 1.02 ± the same: 2% apart, over the 1% minimum effect, but
    # the intervals (0.980–1.020, 1.000–1.040) overlap, so the two share rank 1.
    # Apart: 1.00 ± 1.96·0.01/10 (0.998–1.002) and 1.20 ± …: distinct ranks.
    close = _problem("torch.relu(x)", "[torch.randn(4, 8)]", "")
    apart = _problem("torch.tanh(x)", "[torch.randn(4, 8)]", "")
    source = _snapshot(tmp_path / "snap", {"1_Close.py": close, "2_Apart.py": apart}, {
        "torch": {"1_Close.py": _timing(1.0, 0.1), "2_Apart.py": _timing(1.0, 0.01)},
        "torch_compile_inductor_default": {"1_Close.py": _timing(1.02, 0.1), "2_Apart.py": _timing(1.2, 0.01)},
    })
    out = tmp_path / "records"
    assert _import(source, out).exit_code == 0
    site = tmp_path / "site"
    result = CliRunner().invoke(main, ["build", "--records", str(out), "--out", str(site), "--no-search", "--quiet", "--full"])
    assert result.exit_code == 0, result.output
    close_ranks = _cohort_ranks(site, "kernelbench-level1-1-close-")
    assert {name: rank for name, (rank, _) in close_ranks.items()} == {"torch eager": "=1", "torch.compile (inductor, default)": "=1"}
    apart_ranks = _cohort_ranks(site, "kernelbench-level1-2-apart-")
    assert {name: rank for name, (rank, _) in apart_ranks.items()} == {"torch eager": "1", "torch.compile (inductor, default)": "2"}
    # 1.96 · 0.01 ms / √100 = 1.96 µs either side of 1 ms: 0.99804–1.00196 ms, shown to 3 digits.
    assert apart_ranks["torch eager"][1] == "0.998–1.00 ms (normal approx. of the mean)"


def test_the_b200_page_of_a_real_snapshot_ranks_eager_against_torch_compile(tmp_path):
    require_kernelbench()
    source = tmp_path / "snap"
    shutil.copytree(KERNELBENCH / "a147f37", source)
    out = tmp_path / "records"
    assert _import(source, out).exit_code == 0
    site = tmp_path / "site"
    result = CliRunner().invoke(main, ["build", "--records", str(out), "--out", str(site), "--no-search", "--quiet", "--full"])
    assert result.exit_code == 0, result.output
    # a147f37 B200_together level1 23_Softmax.py: eager 0.0348 ms, cudagraphs and inductor default slower.
    ranks = _cohort_ranks(site, "softmax")
    assert set(ranks) == {"torch eager", "torch.compile (cudagraphs)", "torch.compile (inductor, default)"}
    assert ranks["torch eager"][0] == "1"
    html = (site / "operations" / "softmax" / "index.html").read_text(encoding="utf-8")
    assert ("https://github.com/ScalingIntelligence/KernelBench/blob/a147f37d70e8931de30b2e709aaa0e9463a70cd6/"
            "KernelBench/level1/23_Softmax.py") in html
