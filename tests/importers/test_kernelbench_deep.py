"""A problem file nested past any real one, or too large, is skipped in one line and the rest imports
(issue 47.3): each of these ended the whole import in a traceback (RecursionError, MemoryError)."""

from __future__ import annotations

import json

import pytest

from test_kernelbench_static import _import, _problem, _snapshot, _timing

READABLE = _problem("torch.tanh(x)", "[torch.rand(batch_size, 8)]", "batch_size = 3 + 5")
DEEP = {
    "900-term constant": _problem("torch.relu(x)", "[torch.randn(batch_size, 8)]", "batch_size = " + "+".join(["1"] * 900)),
    "3,000-term constant": _problem("torch.relu(x)", "[torch.randn(batch_size, 8)]", "batch_size = " + "+".join(["1"] * 3000)),
    "attribute chain 5,000 deep": _problem("torch.relu(x)", "[torch.randn(batch_size, 8)]", "batch_size = x" + ".a" * 5000),
    "100,000 minus signs": _problem("torch.relu(x)", "[torch.randn(batch_size, 8)]", "batch_size = " + "-" * 100_000 + "1"),
    "900-term return": _problem("+".join(["x"] * 900), "[torch.randn(batch_size, 8)]", "batch_size = 4"),
    "2 MiB of constants": _problem("torch.relu(x)", "[torch.randn(batch_size, 8)]",
                                   "batch_size = 4\n" + "".join(f"c{i} = {i}\n" for i in range(200_000))),
}


@pytest.mark.parametrize("case", DEEP, ids=list(DEEP))
def test_a_problem_past_the_depth_or_size_bound_is_skipped_in_one_line(tmp_path, case):
    source = _snapshot(tmp_path / "snap", {"1_Deep.py": DEEP[case], "2_Tanh.py": READABLE},
                       {"torch": {"1_Deep.py": _timing(0.5, 0.01), "2_Tanh.py": _timing(0.25, 0.01)},
                        "torch_compile_inductor_default": {"1_Deep.py": _timing(0.4, 0.01)}})
    out = tmp_path / "records"
    result = _import(source, out)
    assert result.exit_code == 0, result.output[-2000:]
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if "1_Deep.py" in line]
    # One line for the file, though two timings name it; short enough to read.
    assert len(lines) == 1 and "skipped" in lines[0] and len(lines[0]) < 400, lines
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in out.glob("runs/*/*.json")]
    assert [r["metadata"]["name"] for r in runs] == ["kernelbench-0123456-b200-test-torch-level1-2-tanh"]


def test_nesting_as_deep_as_a_real_problem_still_reads(tmp_path):
    # 40 terms: deeper than any of KernelBench's 2,250 problem files (15 levels at most).
    source = _snapshot(tmp_path / "snap", {"1_Sum.py": _problem("torch.relu(x)", "[torch.randn(batch_size, 8)]",
                                                                "batch_size = " + "+".join(["1"] * 40))},
                       {"torch": {"1_Sum.py": _timing(0.5, 0.01)}})
    out = tmp_path / "records"
    result = _import(source, out)
    assert result.exit_code == 0, result.output
    workload = next(json.loads(p.read_text(encoding="utf-8")) for p in out.glob("workloads/*/*.json"))
    assert workload["spec"]["tensors"] == [{"name": "input0", "dtype": "fp32", "shape": [40, 8]}]
