"""The timed passes: backward on a fresh graph (so a forward's saved state may be consumed),
and Liger's script (one graph replayed with retain_graph)."""

import pytest

torch = pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")

from sitegen.operations.jsd import BETA, JSD as JSDOperation, logprobs  # noqa: E402
from sitegen.operations.jsd_torch import TorchReference  # noqa: E402
from sitegen.rerun.measure.passes import PassRunner  # noqa: E402

JSD_OP = JSDOperation()

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")


def run_calls(runner, n):
    for i in range(n):
        runner.reset(i)
        runner(i)


@pytest.mark.parametrize("impl", ["sitegen", "torch"])
def test_backward_runs_again_and_again_on_fresh_graphs(impl):
    from sitegen.kernels.jsd import JSD

    module = JSD() if impl == "sitegen" else TorchReference(BETA)
    runner = PassRunner(module, JSD_OP, JSD_OP.workload("fp32", tokens=4, vocab=64), DEVICE, "backward", seed=5, pool=2)
    run_calls(runner, 5)  # the bundled kernel's backward consumes its saved gradient: no replay
    k = 4 % 2
    _, (want,) = JSD_OP.reference((runner.sets[k][0].detach(), runner.sets[k][1]))
    assert torch.allclose(runner.sets[k][0].grad.double(), want, rtol=1e-4, atol=1e-9)


def test_forward_and_full_leave_no_graph_behind():
    runner = PassRunner(TorchReference(BETA), JSD_OP, JSD_OP.workload("fp32", tokens=4, vocab=64), DEVICE, "full", seed=1, pool=3)
    run_calls(runner, 4)
    assert all(loss is None for loss in runner.losses)
    assert runner.sets[0][0].grad is not None


def test_liger_script_replays_one_graph_per_set():
    runner = PassRunner(TorchReference(BETA), JSD_OP, JSD_OP.workload("fp32", tokens=4, vocab=64), DEVICE, "backward", seed=2, pool=1, liger_script=True)
    run_calls(runner, 3)  # retain_graph: the same graph three times
    assert runner.sets[0][0].grad is not None and runner.args[0][0] is not runner.sets[0][0]
    full = PassRunner(TorchReference(BETA), JSD_OP, JSD_OP.workload("fp32", tokens=4, vocab=64), DEVICE, "full", seed=2, pool=1, liger_script=True)
    run_calls(full, 3)  # log_softmax's graph survives repeated full passes


def test_inputs_are_log_probabilities_never_zeros():
    x = logprobs(3, 50, "bf16", DEVICE, seed=9)
    assert x.dtype == torch.bfloat16 and (x < 0).all()
    assert torch.allclose(x.float().exp().sum(-1), torch.ones(3, device=DEVICE), atol=2e-2)


@pytest.mark.parametrize("rows, vocab", [(4, 2), (1, 3), (2, 1), (1, 1)])
def test_fresh_draws_hold_at_tiny_shapes(rows, vocab):
    """Every call's own reference, at shapes down to one element."""
    from sitegen.rules import protocol

    runner = PassRunner(TorchReference(BETA), JSD_OP, JSD_OP.workload("fp32", tokens=rows, vocab=vocab), DEVICE, "full", seed=6, pool=1,
                        rtol=JSD_OP.tolerances["fp32"])
    for i in range(3 * vocab + 4):
        runner.draw(i)
        runner.reset(i)
        runner.after(i, runner(i), check=True)
    check = runner.check.verify()
    assert check["calls"] == 3 * vocab + 4 and check["lossFailures"] == check["gradientFailures"] == 0, check
