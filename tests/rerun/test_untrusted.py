"""The checks that hold for code sitegen did not write (issue 28 item 4): each planted cheat is
refused by the check named for it, with one line saying why, and the honest kernel by none."""

import time

import pytest

from sitegen.operations.jsd import JSD as JSDOperation
from sitegen.rules import integrity
from sitegen.rerun.outcome.assemble import guard_checks, outcome
from sitegen.core.workload import Case

torch = pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")

from sitegen.rerun.selftest import cheats  # noqa: E402

from sitegen.rerun.checks import guards
from sitegen.rerun.measure.clock import Clock  # noqa: E402
from sitegen.rerun.measure.passes import PassRunner  # noqa: E402
from sitegen.rerun.measure.timing import collect  # noqa: E402

CUDA = torch.cuda.is_available()
DEVICE = "cuda" if CUDA else "cpu"
if not CUDA:
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")
OP = JSDOperation()
W = OP.workload("fp32", tokens=8, vocab=64)
GATE = {"status": "passed", "maxAbsError": 0.0, "maxRelError": 0.0}


def timed(module, name="m"):
    clock = Clock(DEVICE)
    clock.watch.subject = name
    runner = PassRunner(module, OP, W, DEVICE, "forward", seed=3, rtol=OP.tolerances["fp32"], clock=clock)
    try:
        return collect(clock, runner, min_samples=24, min_ms=0.0, max_ms=0.0, repeated_probe=False,
                       warmup=(1, 0.0))
    finally:
        guards.restore()


def refused(per, name):
    """The check `name` as the record states it, and the run's status line."""
    [check] = [c for c in guard_checks([per]) if c["name"] == name]
    # A copy bandwidth no time is under: on a CPU the roofline judges nothing.
    result = outcome(Case(W, "forward", "m"), GATE, [per], op=OP, copy_bytes_per_s=1e18,
                     process_counts=[None], expected_counts=[1], repeated_probe=False)
    return check, result


def test_the_honest_kernel_passes_every_check_on_outside_code():
    from sitegen.kernels.jsd import JSD

    per = timed(JSD())
    assert per["guards"] == {}, per["guards"]
    checks = guard_checks([per])
    assert [c["name"] for c in checks] == list(integrity.GUARDS) and all(c["passed"] for c in checks), checks


def test_a_patched_clock_is_refused_by_clock_intact_and_undone():
    real = time.perf_counter_ns
    per = timed(cheats.ClockPatch())
    check, result = refused(per, "clock_intact")
    assert not check["passed"] and "time.perf_counter_ns" in check["detail"], check
    assert result["status"] == "failed" and "clock_intact" not in result.get("timing", {})
    assert result["statusReason"].startswith("integrity: time refused: refused by clock_intact: time.perf_counter_ns")
    assert time.perf_counter_ns is real  # nothing else is timed by the patched clock
    assert per["timedCheck"]["lossFailures"] == per["timedCheck"]["gradientFailures"] == 0  # right outputs: only this check sees it


def test_an_implementation_that_patches_the_clock_when_built_is_refused_in_one_line(tmp_path, monkeypatch):
    from sitegen.rerun.measure.worker import implementation

    (tmp_path / "patches_clock.py").write_text(
        "import time\nfrom sitegen.operations.base import Implementation\n"
        "class K(Implementation):\n    operation = 'jsd'\n"
        "    def build(self, *, dynamic=False):\n        time.monotonic = lambda: 0.0\n        return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = time.monotonic
    got = implementation("patches_clock:K", "jsd")
    assert got == {"ok": False, "version": None,
                   "reason": "refused by clock_intact: importing or building it replaced time.monotonic"}
    assert time.monotonic is real


def test_a_lazy_tensor_is_refused_by_plain_output_while_its_read_outputs_are_right():
    per = timed(cheats.LazyTensor())
    check, result = refused(per, "plain_output")
    assert not check["passed"] and "_LazyLoss, not a plain torch.Tensor" in check["detail"], check
    assert 0 < per["timedCheck"]["foreignOutputs"] < per["timedCheck"]["calls"]
    assert integrity.timed_output(per["timedCheck"], 1e-3)["passed"]  # what was read was right
    assert result["status"] == "failed" and "refused by plain_output: returned a _LazyLoss" in result["statusReason"]


def test_work_on_a_host_thread_is_refused_by_host_threads():
    per = timed(cheats.HostThread(), name="host-thread")
    check, result = refused(per, "host_threads")
    assert not check["passed"] and "'cheat-gradient'" in check["detail"], check
    assert result["status"] == "failed" and "refused by host_threads: Python thread 'cheat-gradient'" in result["statusReason"]


def test_a_thread_another_implementation_left_is_not_charged_to_the_next():
    from sitegen.kernels.jsd import JSD

    clock = Clock(DEVICE)
    clock.watch.subject = "cheat"
    import threading

    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="left-behind", daemon=True)
    t.start()
    try:
        clock.window(lambda: None)
        assert "host_threads" in clock.watch.take()
        clock.watch.subject = "honest"
        clock.window(lambda: JSD()(*OP.make_inputs(W, 1, DEVICE)))
        assert clock.watch.take() == {}
    finally:
        stop.set()


@pytest.mark.parametrize("cheat, why", [(cheats.InPlaceInput, "input 1 was written during the call"),
                                        (cheats.AliasedGradient, "input 0 was written during the call")])
def test_aliasing_and_in_place_writes_are_refused_by_inputs_intact(cheat, why):
    per = timed(cheat())
    check, result = refused(per, "inputs_intact")
    assert not check["passed"] and why in check["detail"], check
    assert result["status"] == "failed" and f"refused by inputs_intact: {why}" in result["statusReason"]


def test_an_output_sharing_an_input_s_memory_is_named():
    from sitegen.rerun.checks.timedcheck import aliasing

    x, y = OP.make_inputs(W, 2, DEVICE)
    assert aliasing((x, y), [y.view(-1)[:1], None]) == "the loss shares memory with input 1"
    assert aliasing((x, y), [torch.zeros(()), x.detach()]) == "gradient 0 shares memory with input 0"
    assert aliasing((x, y), [torch.zeros(()), x.clone()]) is None


def test_the_gate_refuses_an_input_written_from_the_first_call():
    from sitegen.rerun.checks.gate import gate_workload

    class Scribbles(cheats.InPlaceInput):
        AFTER = 0

    out = gate_workload({"m": Scribbles()}, OP, W, OP.tolerances["fp32"], DEVICE)["m"]
    assert out["status"] == "failed" and "inputs_intact: input 1 was written during the call" in out["notes"]


# host_timed, tightened from 10% of the median + 50 us to 2% + 30 us (the committed H200 data:
# integrity.py), and under do_bench from "over twice the median and 200 us" to 2% + 50 us.
def test_host_timed_refuses_five_percent_left_on_a_side_stream_from_two_ms_up():
    for median in (2_000_000, 3_100_000, 40_000_000):
        assert not integrity.host_timed(median, [], None, [median // 20])["passed"], median
    # The honest extremes of the committed H200 reruns pass: 114 us on a 76 ms call, 17.8 us on short ones.
    assert integrity.host_timed(76_365_582, [], None, [114_187])["passed"]
    assert integrity.host_timed(15_360, [], None, [17_785])["passed"]
    # The bound itself: 2% of the median plus 30 us.
    assert integrity.host_timed(1_000_000, [], None, [49_000])["passed"]
    assert not integrity.host_timed(1_000_000, [], None, [51_000])["passed"]


def test_host_timed_under_do_bench_refuses_five_percent_and_passes_the_honest_liger_rerun():
    assert not integrity.host_timed(3_100_000, [3_300_000], [3_255_000])["passed"]
    assert integrity.host_timed(2_242_368, [2_400_000], [1_958_712])["passed"]


FORGER = '''
from sitegen.operations.base import Implementation
from sitegen.rerun.checks import gate, timedcheck


class K(Implementation):
    """The review's cheat: a constant loss that passes because it replaces its judges."""

    operation = "jsd"

    def build(self, *, dynamic=False):
        gate.call = lambda *a, **k: (None, None, [])
        timedcheck.TimedCheck.verify = lambda self: {"calls": 1, "lossFailures": 0, "gradientFailures": 0}
        return None
'''


def test_an_implementation_that_replaces_its_judges_when_built_is_refused_and_undone(tmp_path, monkeypatch):
    from sitegen.rerun.checks import gate, timedcheck
    from sitegen.rerun.measure.worker import implementation

    (tmp_path / "forges_judges.py").write_text(FORGER)
    monkeypatch.syspath_prepend(str(tmp_path))
    check, verify = gate.call, timedcheck.TimedCheck.verify
    got = implementation("forges_judges:K", "jsd")
    assert got == {"ok": False, "version": None, "reason": "refused by clock_intact: importing or building it replaced "
                                                           "sitegen.rerun.checks.gate.call, TimedCheck.verify"}
    assert gate.call is check and timedcheck.TimedCheck.verify is verify


ERRORS_FORGER = '''
from sitegen.operations.base import Implementation
from sitegen.rerun.checks import gate


class K(Implementation):
    """The handing over of the gate's outputs to the judge: replaced, it could hand the judge
    anything but what the implementation returned."""

    operation = "jsd"

    def build(self, *, dynamic=False):
        gate._judge.spawn_local = lambda *a, **k: None
        return None
'''


def test_an_implementation_that_replaces_the_way_to_the_judge_is_refused_and_undone(tmp_path, monkeypatch):
    from sitegen.rerun.checks import gate
    from sitegen.rerun.measure.worker import implementation

    (tmp_path / "forges_errors.py").write_text(ERRORS_FORGER)
    monkeypatch.syspath_prepend(str(tmp_path))
    spawn = gate._judge.spawn_local
    got = implementation("forges_errors:K", "jsd")
    assert got == {"ok": False, "version": None, "reason": "refused by clock_intact: importing or building it replaced "
                                                           "sitegen.rerun.checks.judge.spawn_local"}, got
    assert gate._judge.spawn_local is spawn


def test_emptying_the_guard_s_own_snapshot_is_seen():
    kept, base = list(guards._SNAPSHOT), set(guards._BASE_THREADS)
    try:
        guards._SNAPSHOT.clear()  # what a cheat that read this file would do first
        assert guards.changed() == ["sitegen.rerun.checks.guards state (its kept functions or base threads)"]
        guards._SNAPSHOT[:] = kept
        guards._BASE_THREADS.add(-1)  # a thread of its own passed off as one that was there before
        assert guards.changed() == ["sitegen.rerun.checks.guards state (its kept functions or base threads)"]
    finally:
        guards._SNAPSHOT[:] = kept
        guards._BASE_THREADS.clear()
        guards._BASE_THREADS.update(base)
    assert guards.changed() == []


def test_swapping_the_guard_s_snapshot_for_an_empty_one_is_seen_and_undone():
    kept = guards._SNAPSHOT
    guards._SNAPSHOT = []
    try:
        assert "sitegen.rerun.checks.guards._SNAPSHOT" in guards.changed()
        guards.restore()
        assert guards._SNAPSHOT is kept and guards.changed() == []
    finally:
        guards._SNAPSHOT = kept


def test_a_thread_that_calls_itself_the_library_s_is_still_charged():
    import threading

    stop, claimed = threading.Event(), threading.Event()

    def work():
        threading.current_thread()._sitegen_library = True  # the flag the guard once read, set from inside
        claimed.set()
        stop.wait()

    thread = threading.Thread(target=work, name="says-it-is-torch")
    thread.start()
    try:
        assert claimed.wait(10)
        assert thread in guards._foreign_threads()
    finally:
        stop.set()
        thread.join()


def test_the_operation_s_reference_is_kept_once_protected(monkeypatch):
    guards.protect(OP)
    real = type(OP).reference
    monkeypatch.setattr(type(OP), "reference", lambda self, inputs, *g: (0.0, ()))
    assert guards.changed() == ["JSD.reference"]
    guards.restore()
    assert type(OP).reference is real
