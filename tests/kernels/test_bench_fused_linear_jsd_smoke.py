"""benchmarks/bench_fused_linear_jsd.py's every code path once, at tiny sizes under the interpreter:
the GPU call it is written for gets one try, so a crash or an empty cell must show up here first."""

import importlib.util
import json
import os
import pathlib

import pytest

torch = pytest.importorskip("torch", reason="the benchmark needs torch")
pytest.importorskip("triton", reason="the benchmark needs triton")
if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("the CPU smoke run needs Triton's interpreter", allow_module_level=True)
pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_fused_linear_jsd.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_fused_linear_jsd", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_row_is_measured_and_written(tmp_path, capsys):
    out = tmp_path / "smoke"
    load_bench().main(["--device", "cpu", "--bts", "6,11", "--hidden", "24", "--vocab", "101",
                       "--impls", "sitegen,sitegen.tiled,sitegen.tiled[tma],sitegen.tiled[tma+fp16],matmul+sitegen_jsd",
                       "--gemm-configs", "8x32x16x2x1x1,tma:8x32x16x2x1x1",
                       "--out", str(out)])
    failed = [line for line in capsys.readouterr().err.splitlines() if " BT " in line]
    assert not failed  # each failed measurement prints one line naming its dtype, BT and row
    doc = json.loads((tmp_path / "smoke.json").read_text())
    assert [(r["bt"], r["impl"]) for r in doc["rows"]] == [
        (bt, impl) for bt in (6, 11)
        for impl in ("sitegen", "sitegen.tiled", "sitegen.tiled[tma]", "sitegen.tiled[tma+fp16]", "matmul+sitegen_jsd")]
    assert [(r["bt"], r["gemm"]) for r in doc["gemm_rows"]] == [
        (bt, f"triton {cfg}{form}" if cfg else "cuBLAS fp32-out") for bt in (6, 11)
        for cfg, form in [(None, None)] + [(c, f) for c in ("8x32x16x2x1x1", "tma:8x32x16x2x1x1")
                                           for f in ("", " +lse", " +lse fp16")]]
    for row in doc["rows"]:
        empty = [k for k, v in row.items() if v is None and k != "extra_peak_gb"]  # no memory counter on a CPU
        assert not empty, (row["impl"], empty)
    for row in doc["rows"]:
        if row["impl"].startswith("sitegen"):  # both heads within the fp32-logit bounds the tests hold them to
            assert row["err_loss"] <= 1e-3 and row["err_grad_input"] <= 1e-2 and row["err_grad_weight"] <= 1e-2, row
    text = (tmp_path / "smoke.txt").read_text().splitlines()
    assert len(text) == 3 + len(doc["gemm_rows"]) + len(doc["rows"])


def test_a_failing_row_is_reported_and_the_run_goes_on(tmp_path, capsys):
    out = tmp_path / "smoke"
    # "8x32" is not a six-number config: that row fails, every other row is still measured.
    load_bench().main(["--device", "cpu", "--bts", "6", "--hidden", "24", "--vocab", "101",
                       "--impls", "sitegen.tiled", "--gemm-configs", "8x32,8x32x16x2x1x1", "--out", str(out)])
    err = capsys.readouterr().err
    assert "bf16 BT 6 triton 8x32:" in err and "ValueError" in err
    doc = json.loads((tmp_path / "smoke.json").read_text())
    assert [r["ms"] is None for r in doc["gemm_rows"]] == [False, True, True, True, False, False, False]
    assert doc["rows"][0]["full_ms"] is not None
