"""The self-test: every planted cheat is rejected and the honest kernel accepted."""

import pytest

torch = pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")

from sitegen.rerun import protocol  # noqa: E402
from sitegen.rerun.cases import Workload  # noqa: E402
from sitegen.rerun.gate import gate_workload  # noqa: E402
from sitegen.rerun.selftest import CachedReplay, ConstantOutput, NaNOutput, run_selftest  # noqa: E402

CUDA = torch.cuda.is_available()
DEVICE = "cuda" if CUDA else "cpu"
if not CUDA:
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")


@pytest.mark.parametrize("cheat", [ConstantOutput, NaNOutput, CachedReplay], ids=lambda c: c.__name__)
def test_gate_rejects_cheat(cheat):
    w = Workload(4, 64, "fp32")
    outcome = gate_workload({"cheat": cheat()}, w, protocol.TOLERANCES["fp32"], DEVICE)["cheat"]
    assert outcome["status"] == "failed"
    assert any(not c["passed"] for c in outcome["cases"])


def test_nan_output_is_reported_as_not_fully_written():
    outcome = gate_workload({"nan": NaNOutput()}, Workload(4, 64, "fp32"), 1e-3, DEVICE)["nan"]
    assert not any(c["fullyWritten"] for c in outcome["cases"])


def test_gate_passes_the_honest_kernel_in_both_dtypes():
    from sitegen.kernels.jsd import JSD

    for dtype in ("fp32", "bf16"):
        outcome = gate_workload({"k": JSD()}, Workload(4, 64, dtype), protocol.TOLERANCES[dtype], DEVICE)["k"]
        assert outcome["status"] == "passed", outcome


def test_selftest_command_passes():
    from click.testing import CliRunner

    from sitegen.cli import main

    result = CliRunner().invoke(main, ["rerun", "--self-test"] + ([] if CUDA else ["--interpret"]))
    assert result.exit_code == 0, result.output
    assert "honest: accepted" in result.output
    for cheat in ("constant-output", "nan-output", "cached-replay"):
        assert f"{cheat}: rejected" in result.output


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="the side-stream cheat needs CUDA streams and events")
def test_side_stream_cheat_is_rejected_by_timing_integrity():
    report = run_selftest(interpret=False)
    assert report["verdicts"]["side-stream"]["accepted"] is False
    assert report["verdicts"]["side-stream"]["by"].startswith("integrity")
