"""Evidence that holds against a cheater (#18): timed outputs checked, sampling to precision,
tolerances that fail a 1% error, and each gate comparison able to fail."""

import statistics
import time

import pytest

from sitegen.format.model import BenchmarkRun
from sitegen.rules import integrity
from sitegen.rules import protocol
from sitegen.rerun.outcome.assemble import outcome
from sitegen.core.workload import Case, Workload
from sitegen.rerun.outcome.records import run_doc
from sitegen.rules.stats import ci_half_width_rel, median_ci
from sitegen.operations.jsd import BETA, JSD as JSDOperation

JSD_OP = JSDOperation()
TOLERANCES = JSD_OP.tolerances

torch = pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")

from sitegen.rerun.checks.gate import gate_workload  # noqa: E402
from sitegen.rerun.measure.passes import PassRunner  # noqa: E402
from sitegen.rerun.selftest.cheats import ForwardSkipsDx, OffBy, PhaseSkip, WrongGradient, _Given, _honest, lazy_loss  # noqa: E402
from sitegen.rerun.measure.clock import Clock  # noqa: E402
from sitegen.rerun.measure.timing import collect  # noqa: E402

CUDA = torch.cuda.is_available()
DEVICE = "cuda" if CUDA else "cpu"
if not CUDA:
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")
H200_COPY = 4.3e12
GATE = {"status": "passed", "maxAbsError": 0.0, "maxRelError": 0.0,
        "cases": [{"shape": [1024, 128256], "seed": 0, "maxAbsError": 0.0, "maxRelError": 0.0, "fullyWritten": True, "passed": True}]}


class WrongLoss(torch.nn.Module):
    """A gradient right, the loss 5% off."""

    def forward(self, x, y):
        loss, grad = _honest(x, y)
        return _Given.apply(x, loss * 1.05, grad)


def _gate(module, dtype="fp32"):
    return gate_workload({"m": module}, JSD_OP, JSD_OP.workload(dtype, tokens=8, vocab=64), TOLERANCES[dtype], DEVICE)["m"]


def test_the_gate_compares_the_gradient():
    out = _gate(WrongGradient())
    assert out["status"] == "failed" and all(not c["passed"] for c in out["cases"])


def test_the_gate_compares_the_loss():
    out = _gate(WrongLoss())
    assert out["status"] == "failed" and all(not c["passed"] for c in out["cases"])


def test_the_gate_sees_an_unwritten_gradient():
    out = _gate(ForwardSkipsDx())
    assert out["status"] == "failed"
    if CUDA:  # poisoned memory reads NaN; on a CPU torch.empty may hold anything
        assert not any(c["fullyWritten"] for c in out["cases"])


@pytest.mark.parametrize("dtype, off", [("fp32", 1.005), ("bf16", 1.01), ("fp16", 1.01)])
def test_each_tolerance_fails_a_kernel_off_by_a_percent_and_passes_the_honest_one(dtype, off):
    from sitegen.kernels.jsd import JSD

    assert _gate(JSD(), dtype)["status"] == "passed"
    assert _gate(OffBy(off), dtype)["status"] == "failed"
    # The bound from below: an error of half what the tolerance leaves beyond the output's own
    # rounding passes, so the tolerance is not tighter than stated. The loss is one number in
    # the input dtype: rounding it alone is off by up to half an ulp (bf16: 2**-8 = 3.9e-3 of
    # 7e-3), so half the bare tolerance on top of that failed bf16 about one run in two.
    half_ulp = {"fp32": 2.0 ** -24, "bf16": 2.0 ** -8, "fp16": 2.0 ** -11}[dtype]
    assert _gate(OffBy(1 + (TOLERANCES[dtype] - half_ulp) / 2), dtype)["status"] == "passed"


def _timed(module, timed_pass="forward", dtype="fp32"):
    clock = Clock(DEVICE)
    runner = PassRunner(module, JSD_OP, JSD_OP.workload(dtype, tokens=8, vocab=64), DEVICE, timed_pass, seed=3, rtol=TOLERANCES[dtype], clock=clock)
    return collect(clock, runner, min_samples=24, min_ms=0.0, max_ms=0.0, repeated_probe=False,
                   warmup=protocol.INTERPRET_WARMUP if not CUDA else protocol.WARMUP)


@pytest.mark.parametrize("timed_pass", ["forward", "backward", "full"])
def test_honest_timed_outputs_all_check_out(timed_pass):
    from sitegen.kernels.jsd import JSD

    check = _timed(JSD(), timed_pass)["timedCheck"]
    assert check["calls"] >= 24 and check["checkedGradients"] >= 2
    assert check["lossFailures"] == 0 and check["gradientFailures"] == 0, check


def test_a_cheat_honest_only_while_gated_is_caught_in_its_timed_calls():
    module = PhaseSkip()
    assert _gate(module)["status"] == "passed"  # honest for its first calls on a shape
    check = _timed(module)["timedCheck"]
    assert check["gradientFailures"] > 0
    assert not integrity.timed_output(check, 1e-3)["passed"]


def test_every_checked_loss_is_compared_not_only_the_gradients():
    check = _timed(WrongLoss())["timedCheck"]
    assert check["lossFailures"] == check["checkedGradients"] >= 2 and check["gradientFailures"] == 0, check
    assert not integrity.timed_output(check, 1e-3)["passed"]


class OverwritesInputs(torch.nn.Module):
    """Makes the teacher equal to the student, so that loss and gradient are zero, and says so."""

    def forward(self, x, y):
        with torch.no_grad():
            y.copy_(x.detach())
        return _Given.apply(x, torch.zeros((), dtype=x.dtype, device=x.device), torch.zeros_like(x))


class _LossLater(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        ctx.buf = x.new_zeros(())
        return ctx.buf

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        with torch.enable_grad():
            loss, grad = _honest(x, y)
        ctx.buf.copy_(loss)
        return grad * g, None


class LossFromBackward(torch.nn.Module):
    """Returns an empty loss buffer at once and fills it from backward: a forward doing nothing."""

    def forward(self, x, y):
        return _LossLater.apply(x, y)


class LazyOutputs(torch.nn.Module):
    """Does nothing while timed: hands back a loss of a Tensor subclass whose first read, by
    whoever reads it, computes the right loss and gradient into the buffers it returned."""

    def forward(self, x, y):
        return lazy_loss(x, y)


def test_an_output_that_computes_itself_when_read_is_refused_unread():
    gated = _gate(LazyOutputs())
    assert gated["status"] == "failed" and "not a plain torch.Tensor" in gated["notes"]
    per = _timed(LazyOutputs())
    check = per["timedCheck"]
    # Never read, so never counted wrong: refused as not plain, and nothing left to check.
    assert check["foreignOutputs"] == check["calls"] > 0 and check["checkedGradients"] == 0, check
    assert not integrity.timed_output(check, 1e-3)["passed"]
    from sitegen.rerun.outcome.assemble import guard_checks

    plain = next(c for c in guard_checks([per]) if c["name"] == "plain_output")
    assert not plain["passed"] and "not a plain torch.Tensor" in plain["detail"]


def test_references_come_from_the_inputs_as_drawn_not_as_the_call_left_them():
    check = _timed(OverwritesInputs())["timedCheck"]
    assert check["lossFailures"] == check["checkedGradients"] >= 2, check
    assert not integrity.timed_output(check, 1e-3)["passed"]


def test_a_loss_is_read_as_the_call_returned_it_before_any_backward_runs():
    check = _timed(LossFromBackward())["timedCheck"]
    assert check["lossFailures"] == check["checkedGradients"] >= 2 and check["gradientFailures"] == 0, check


def test_a_random_quarter_of_the_calls_is_checked():
    from sitegen.operations.jsd_torch import TorchReference

    runner = PassRunner(TorchReference(BETA), JSD_OP, JSD_OP.workload("fp32", tokens=2, vocab=8), DEVICE, "full", seed=3, pool=1, rtol=TOLERANCES["fp32"])
    for i in range(400):
        runner.draw(i)
        runner.reset(i)
        out = runner(i)
        runner.after(i, out, check=runner.check.pick())
    check = runner.check.verify()
    assert check["calls"] == 400 and 0.15 < check["checkedGradients"] / 400 < 0.35, check  # 4.6 sigma


def test_inputs_are_drawn_again_before_every_call_so_an_identity_cache_returns_wrong_outputs():
    from sitegen.rerun.selftest.cheats import IdentityCache

    check = _timed(IdentityCache())["timedCheck"]
    assert check["gradientFailures"] > 0


def test_work_done_for_a_set_before_its_draw_answers_wrong():
    from sitegen.rerun.selftest.cheats import PrefetchNext

    assert _gate(PrefetchNext())["status"] == "passed"  # the gate's inputs are new objects each call
    check = _timed(PrefetchNext())["timedCheck"]
    assert check["lossFailures"] > 0 and check["gradientFailures"] > 0, check
    assert not integrity.timed_output(check, 1e-3)["passed"]


def test_every_timed_call_sees_rows_no_earlier_call_saw_and_is_checked_against_its_own_inputs():
    from sitegen.operations.jsd_torch import TorchReference

    runner = PassRunner(TorchReference(BETA), JSD_OP, JSD_OP.workload("fp32", tokens=6, vocab=16), DEVICE, "full", seed=4, pool=1, rtol=TOLERANCES["fp32"])
    seen = {tuple(r) for r in runner.sets[0][0].detach().cpu().tolist()}
    for i in range(15):
        runner.draw(i)
        runner.reset(i)
        rows = {tuple(r) for r in runner.sets[0][0].detach().cpu().tolist()}
        assert not rows & seen, f"call {i} saw a row again"
        seen |= rows
        runner.after(i, runner(i), check=True)
    check = runner.check.verify()
    assert check["checkedGradients"] == 15 and check["lossFailures"] == check["gradientFailures"] == 0, check


def test_a_wrong_timed_output_refuses_the_time():
    case = Case(JSD_OP.workload("fp32", tokens=1024, vocab=128256), "forward", "x")
    bad = {"calls": 40, "checkedGradients": 10, "lossFailures": 0, "gradientFailures": 3,
           "worstLossRelError": 0.0, "worstGradientRelError": 0.3, "fullPassNs": []}
    per = {"samplesNs": [900_000] * 12, "hostTimedNs": 900_000, "timedCheck": bad}
    result = outcome(case, GATE, [per], op=JSD_OP, copy_bytes_per_s=H200_COPY, process_counts=[0, 1], expected_counts=[0, 1],
                     repeated_probe=False)
    assert result["status"] == "failed" and "timing" not in result
    assert any(c["name"] == "timed_output" and not c["passed"] for c in result["integrity"])


def test_the_record_says_what_ended_sampling_and_whether_processes_agree():
    case = Case(JSD_OP.workload("bf16", tokens=1024, vocab=128256), "backward", "sitegen")
    good = {"calls": 12, "checkedGradients": 3, "lossFailures": 0, "gradientFailures": 0,
            "worstLossRelError": 0.0, "worstGradientRelError": 0.0, "fullPassNs": [400_000] * 3}
    # The H200's noisy case (#16): process medians 0.178, 0.089 and 0.021 ms.
    per = [{"samplesNs": [m] * 20, "hostTimedNs": m, "samplingStoppedBy": s, "timedCheck": good}
           for m, s in ((178_000, "precision"), (89_000, "budget"), (21_000, "precision"))]
    result = outcome(case, GATE, per, op=JSD_OP, copy_bytes_per_s=H200_COPY, process_counts=[0, 1], expected_counts=[0, 1],
                     repeated_probe=False)
    details = result["details"]
    assert details["samplingStoppedBy"] == "budget" and details["noisy"] is True
    assert details["processSpreadRel"] == pytest.approx((178_000 - 21_000) / 89_000, rel=1e-4)
    assert "ciHalfWidthRel" in details and details["fullPassMedianNs"] == 400_000
    digest = "sha256:" + "0" * 64
    doc = run_doc(JSD_OP, case, result, digests={k: digest for k in ("implementationDigest", "workloadDigest", "protocolDigest", "environmentDigest")},
                  product="NVIDIA H200", stamp="20261129t000000z", observed_at="2026-11-29T00:00:00Z",
                  instance={"gpuUuid": "GPU-1"}, dry_run=False, command="sitegen rerun")
    BenchmarkRun.model_validate(doc, strict=True)


def test_median_interval_is_order_statistics_and_narrows_with_samples():
    samples = list(range(1, 101))
    lo, hi = median_ci(samples)
    assert lo < 50.5 < hi and (lo, hi) == (41.0, 60.0)
    assert ci_half_width_rel([100] * 50) == 0.0
    assert ci_half_width_rel(list(range(100, 110)) * 100) < ci_half_width_rel(list(range(100, 110)) * 2)


class _Steady:
    """A fake pass taking 1 ms of host time per call, exactly."""

    def __len__(self):
        return 3

    def reset(self, i):
        pass

    def __call__(self, i):
        time.sleep(0.001)


def test_sampling_stops_at_precision_or_at_the_budget(virtual_time):
    clock = Clock("cpu")
    # Every call exactly 1 ms: the median's interval has no width, so precision ends sampling
    # as soon as the 5 ms minimum is spent.
    steady = collect(clock, _Steady(), min_samples=10, min_ms=5.0, max_ms=200.0, repeated_probe=False, warmup=(1, 0.0),
                     max_wall_s=60.0)
    assert steady["samplingStoppedBy"] == "precision"
    assert steady["samplesNs"] == [1_000_000] * 10

    class Noisy(_Steady):
        def __call__(self, i):
            time.sleep(0.0005 * (1 + (i * 7919) % 13))

    # 0.5 to 6.5 ms a call: the interval never narrows to 1%, so the 30 ms budget ends it.
    noisy = collect(clock, Noisy(), min_samples=10, min_ms=5.0, max_ms=30.0, repeated_probe=False, warmup=(1, 0.0))
    assert noisy["samplingStoppedBy"] == "budget" and sum(noisy["samplesNs"]) >= 30e6
    assert ci_half_width_rel(noisy["samplesNs"]) > protocol.PRECISION


class _SlowSync(Clock):
    def sync(self):
        time.sleep(0.005)  # a synchronize that costs 5 ms whatever ran: empty calls' too


def test_a_fixed_synchronize_cost_is_not_hidden_work(virtual_time):
    out = collect(_SlowSync("cpu"), _Steady(), min_samples=6, min_ms=0.0, max_ms=0.0, repeated_probe=False,
                  warmup=(1, 0.0))
    # An empty call's synchronize waits as long: nothing was handed back unfinished.
    assert out["emptySyncNs"] == 5_000_000 and out["hiddenNs"] == 0
    assert out["samplesNs"] == [1_000_000] * 6


def test_do_bench_runs_get_a_host_timed_batch_that_sees_work_left_running():
    from sitegen.rerun.measure.timing import host_batch

    out = host_batch(_SlowSync("cpu"), _Steady(), 5)
    assert out["hostWaitNs"] >= 4_000_000 and out["hostTimedNs"] >= out["hostWaitNs"]


def test_work_handed_back_unfinished_is_seen_and_refused():
    class HiddenWork(_Steady):
        def __init__(self, clock):
            self.clock = clock

        def __call__(self, i):
            self.clock.pending = 0.004  # work the next sync must wait for

    class PendingSync(Clock):
        pending = 0.0

        def sync(self):
            time.sleep(self.pending)
            self.pending = 0.0

    clock = PendingSync("cpu")
    out = collect(clock, HiddenWork(clock), min_samples=6, min_ms=0.0, max_ms=0.0, repeated_probe=False, warmup=(1, 0.0))
    assert out["hiddenNs"] >= 3_500_000
    check = integrity.host_timed(statistics.median(out["samplesNs"]), [], [], [out["hiddenNs"]])
    assert not check["passed"] and "handed back unfinished" in check["detail"]


def test_a_protocol_that_times_its_own_loop_records_no_timed_output_check():
    case = Case(JSD_OP.workload("fp32", tokens=2048, vocab=128256), "forward", "liger")
    per = {"samplesNs": [2_250_000] * 40, "hostTimedNs": 2_250_000}
    result = outcome(case, GATE, [per], op=JSD_OP, copy_bytes_per_s=H200_COPY, process_counts=[0, 1], expected_counts=[0, 1],
                     repeated_probe=False)
    # Absent, not failed: the record page then names timed_output as the check this run lacks.
    assert result["status"] == "passed" and "timed_output" not in {c["name"] for c in result["integrity"]}


def test_the_gate_draws_its_seeds_in_secret_and_records_them():
    from sitegen.kernels.jsd import JSD

    first, second = _gate(JSD()), _gate(JSD())
    seeds = [[c["seed"] for c in r["cases"]] for r in (first, second)]
    assert len(set(seeds[0])) == 4 and set(seeds[0]).isdisjoint(seeds[1]), seeds
