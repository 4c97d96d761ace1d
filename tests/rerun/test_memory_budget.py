"""The timed loop's memory budget (issue 48): a pass holds as many input sets as the GPU's free
memory allows beside one call's measured room, within the protocol's pool of 2-3 (its published
rule, unchanged), with every call still drawn afresh and checked; sets and gradients no call needs
are dropped; and a workload whose least need exceeds the GPU is refused before the gate, in one line."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")

from sitegen import operations  # noqa: E402
from sitegen.core.problems import InputError  # noqa: E402
from sitegen.rerun.measure.clock import Clock  # noqa: E402
from sitegen.rerun.measure.memory import fit  # noqa: E402
from sitegen.rerun.measure.passes import PassRunner  # noqa: E402
from sitegen.rerun.measure.timing import collect  # noqa: E402
from sitegen.rerun.plan import fits  # noqa: E402

GiB = 1 << 30
JSD = operations.load("jsd")
W = JSD.workload("fp32", tokens=4, vocab=64)
SET = 2 * 4 * 64 * 4  # input and target log-probabilities, 4 x 64 float32
GRAD = 4 * 64 * 4  # the input's gradient


class FakeGPU:
    """A device of `free` bytes whose allocator reports `draw` bytes at its peak while the first
    set is drawn, then `warm` bytes above the held set at the warm-up's peak."""

    def __init__(self, free: int, draw: int = SET, warm: int = SET + GRAD):
        self.left, self.draw, self.warm, self.marks = free, draw, warm, 0

    def free(self) -> int:
        return self.left

    def mark(self) -> int:
        self.marks += 1
        return 0

    def peak(self) -> int:
        return self.draw if self.marks == 1 else self.warm


def runner_on(gpu: FakeGPU, module=None, timed_pass: str = "full") -> PassRunner:
    from sitegen.operations.jsd import BETA
    from sitegen.operations.jsd_torch import TorchReference

    return PassRunner(module or TorchReference(BETA), JSD, W, "cpu", timed_pass, seed=3, rtol=JSD.tolerances["fp32"],
                      clock=Clock("cpu"), memory=gpu)


def measured(runner) -> dict:
    return collect(runner.clock, runner, min_samples=24, min_ms=0.0, max_ms=0.0, repeated_probe=True, warmup=(1, 0.0))


def test_the_pool_holds_what_fits_beside_a_call_never_under_the_protocols_two():
    # room = max(warm-up peak above the sets, a checked call's gradients + redraw) = SET + GRAD either way.
    room = SET + GRAD
    for free, sets in ((10 * (3 * SET + room), 3), ((3 * SET + room) / 0.9 + 1, 3), ((3 * SET + room) / 0.9 - 1, 2),
                       (1, 2)):
        runner = runner_on(FakeGPU(int(free)))
        assert len(runner) == (3 if free > 10 * SET else 2)  # a clear fit is the cap at once; else two till measured
        runner.fill()
        assert len(runner) == sets, free
        assert len({id(s[0]) for s in runner.sets}) == sets  # distinct sets at distinct addresses


def test_a_call_that_took_more_room_in_the_warm_up_leaves_fewer_sets():
    free = int((3 * SET + SET + GRAD) / 0.9) + 1  # three sets fit beside a checked call's room...
    small = runner_on(FakeGPU(free, warm=SET + GRAD))
    small.fill()
    assert len(small) == 3
    big = runner_on(FakeGPU(free, warm=2 * SET + GRAD))  # ...but not beside a call that took a set more
    big.fill()
    assert len(big) == 2


def test_two_sets_measure_what_three_do_every_call_drawn_afresh_and_checked():
    outs = {}
    for label, free in (("three", 100 * SET), ("two", SET)):
        runner = runner_on(FakeGPU(free))
        outs[label] = measured(runner)
        assert runner.sets == []  # dropped before the timed outputs were verified
        assert len(runner.recipes) == {"three": 3, "two": 2}[label]
    for out in outs.values():
        check = out["timedCheck"]
        assert check["checkedGradients"] >= 2 and check["lossFailures"] == check["gradientFailures"] == 0
        assert len(out["samplesNs"]) >= 24 and out["repeatedMedianNs"] > 0 and out["repeatedFreshMedianNs"] > 0
    assert outs["two"].keys() == outs["three"].keys()


def test_a_judged_call_leaves_no_gradient_on_its_set():
    runner = runner_on(FakeGPU(100 * SET))
    for i in range(4):
        runner.draw(i)
        runner.reset(i)
        runner.after(i, runner(i), check=True)
        assert all(s[0].grad is None for s in runner.sets)
    assert runner.check.verify()["gradientFailures"] == 0


def test_fit_keeps_the_room_free_of_sets_and_never_goes_under_two():
    assert fit(3, 3 * GiB, 40 * GiB, 79 * GiB) == 3
    assert fit(3, 4 * GiB, 40 * GiB, 55 * GiB) == 2  # 3 x 4 + 40 > 49.5
    assert fit(2, 16 * GiB, 40 * GiB, 79 * GiB) == 2
    assert fit(3, 16 * GiB, 40 * GiB, 20 * GiB) == 2


KL = operations.load("kl-div")
KL_BIG = KL.workload("fp32", tokens=16384, vocab=131072)


def test_a_workload_over_the_gpu_is_refused_in_one_line_naming_its_bytes():
    # Input and target, 16384 x 131072 float32: 8 GiB each; the input's gradient 8 GiB. Two sets
    # held (the protocol's least pool), a third drawn beside them, the gradient.
    need = 3 * (2 * 8 * GiB) + 8 * GiB
    problems = fits.too_big(KL, [KL.workload("fp32", tokens=16384, vocab=4096), KL_BIG], 32 * GiB, "NVIDIA Fake 32GB")
    assert [p.line() for p in problems] == [
        f"kl-div tokens16384-vocab131072-fp32: $: needs at least {need} bytes (56.0 GiB: 2 input sets of 16.0 GiB held, "
        f"another drawn beside them, gradients 8.0 GiB) and the NVIDIA Fake 32GB has {32 * GiB} (32.0 GiB); "
        "refused before the gate, nothing measured"]


def test_every_shipped_workload_passes_the_least_need_on_an_80_gb_h100():
    h100 = 81559 << 20  # NVML's memory of an H100 80GB HBM3
    for name in operations.BUILTIN:
        op = operations.load(name)
        from sitegen.core.workload import workloads

        loads = workloads({a: tuple(op.default_axes[a]) for a in op.axes}, tuple(op.dtypes))
        assert fits.too_big(op, loads, h100, "NVIDIA H100 80GB HBM3") == [], name


def test_the_rerun_refuses_before_any_measuring_process_starts(monkeypatch, tmp_path):
    from sitegen.rerun import sweep
    from sitegen.rules import protocol
    from sitegen.rerun.measure import gpustate

    monkeypatch.setattr(gpustate, "facts", lambda: {"product": "NVIDIA Fake 32GB", "memoryBytes": 32 * GiB})
    monkeypatch.setattr(gpustate, "compute_processes", lambda: 0)
    spawned = []
    monkeypatch.setattr(sweep, "_spawn", lambda *a, **k: spawned.append(a))
    opts = sweep.Options(op=KL, loads=[KL_BIG], passes=("full",), impls=[], out=tmp_path / "out", records=tmp_path)
    proto = protocol.protocol_document(KL, version=None, commit=None, repository=None, interpret=False)
    with pytest.raises(InputError) as caught:
        sweep.measure(opts, proto)
    assert len(caught.value.problems) == 1 and "needs at least 60129542144 bytes" in caught.value.problems[0].line()
    assert spawned == [] and not (tmp_path / "out").exists()


def test_the_inputs_fingerprint_reads_a_block_at_a_time_and_sees_a_write_in_the_last(monkeypatch):
    from sitegen.rerun.measure import passes

    monkeypatch.setattr(passes, "_FINGERPRINT_CHUNK", 7)  # 50 elements: seven blocks, the last of one
    x = torch.randn(5, 10, generator=torch.Generator().manual_seed(4))
    (total, norm), none = passes.fingerprint((x, None))
    assert none is None
    assert total == pytest.approx(float(x.double().sum()), rel=1e-12)
    assert norm == pytest.approx(float(x.double().norm()), rel=1e-12)
    x[4, 9] += 1.0
    assert passes.fingerprint((x,))[0][0] == pytest.approx(total + 1.0, rel=1e-12)


def test_a_plugin_operation_is_sized_from_its_own_process(monkeypatch):
    # The parent holds only the plugin's described facts: on a GPU host (the only place the check
    # runs) asking it for make_inputs raised "runs only in a measuring process" for every plugin.
    from pathlib import Path

    from sitegen.rerun.plan import opfacts
    from sitegen.core.workload import Workload

    plugins = Path(__file__).resolve().parent / "plugins"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(plugins), os.environ.get("PYTHONPATH")])))
    w = Workload.of({"rows": 1024, "cols": 1024}, "fp32")
    op = opfacts.describe_workloads(opfacts.load("sqdist:SquaredDistance"), [w])
    assert fits.too_big(op, [w], 80 * GiB, "NVIDIA H100 80GB HBM3") == []
    [problem] = fits.too_big(op, [w], 1 << 20, "NVIDIA Tiny")
    assert "needs at least" in problem.message and "NVIDIA Tiny has 1048576" in problem.message
