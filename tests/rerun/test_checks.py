"""Integrity checks, outcome assembly and environment capture as pure functions (no GPU)."""

import pytest

from sitegen.format.model import BenchmarkRun
from sitegen.rerun.measure import gpustate
from sitegen.rules import integrity
from sitegen.rerun.outcome.assemble import outcome
from sitegen.core.workload import Case, Workload
from sitegen.rerun.measure.environment import environment_spec, instance
from sitegen.rerun.outcome.records import run_doc
from sitegen.operations.jsd import JSD

JSD_OP = JSD()


def _floor(tokens, vocab, elem_bytes, timed_pass):
    return JSD_OP.bytes_moved(JSD_OP.workload({4: "fp32", 2: "bf16"}[elem_bytes], tokens=tokens, vocab=vocab), timed_pass)

H200_COPY = 4.3e12


def test_roofline_refuses_a_time_below_the_floor():
    nbytes = _floor(2048, 128256, 4, "forward")  # read X and Y
    floor_ns = nbytes / H200_COPY * 1e9
    assert integrity.roofline(int(floor_ns * 1.2), nbytes, H200_COPY)["passed"]
    assert not integrity.roofline(int(floor_ns * 0.5), nbytes, H200_COPY)["passed"]


def test_floors_count_every_byte_of_the_pass():
    assert _floor(8, 10, 4, "forward") == 2 * 8 * 10 * 4  # read X and Y
    assert _floor(8, 10, 4, "backward") == 8 * 10 * 4  # write dX
    assert _floor(8, 10, 2, "full") == 3 * 8 * 10 * 2


def test_roofline_slack_refuses_a_time_a_fifth_under_the_floor():
    nbytes = _floor(2048, 128256, 4, "forward")
    floor_ns = nbytes / H200_COPY * 1e9
    assert integrity.roofline(int(floor_ns * 0.9), nbytes, H200_COPY)["passed"]
    assert not integrity.roofline(int(floor_ns * 0.8), nbytes, H200_COPY)["passed"]


def test_a_backward_under_its_floor_is_judged_on_the_full_pass():
    full = _floor(2048, 128256, 2, "full")
    back = _floor(2048, 128256, 2, "backward")
    full_floor = full / H200_COPY * 1e9
    # The forward wrote dX: a 20 us backward after a forward that moved all the bytes passes...
    moved = integrity.roofline(20_000, back, H200_COPY, timed_pass="backward", full_ns=int(full_floor * 1.05), full_bytes=full)
    assert moved["passed"] and "judged on the full pass" in moved["detail"]
    # ...but not when forward and backward together moved too few bytes, nor with no forward timed.
    assert not integrity.roofline(20_000, back, H200_COPY, timed_pass="backward", full_ns=int(full_floor * 0.7), full_bytes=full)["passed"]
    assert not integrity.roofline(20_000, back, H200_COPY, timed_pass="backward")["passed"]
    # A forward at its own floor whose backward did nothing is refused on the full pass.
    fwd = _floor(2048, 128256, 2, "forward")
    fwd_floor = fwd / H200_COPY * 1e9
    assert not integrity.roofline(int(fwd_floor), fwd, H200_COPY, timed_pass="forward", full_ns=int(fwd_floor * 1.02), full_bytes=full)["passed"]


def test_repeated_input_speedup_is_flagged():
    assert integrity.repeated_input(1000, 1000)["passed"]
    assert not integrity.repeated_input(1000, 850)["passed"]


def test_host_timed_cross_check_sees_unseen_work():
    assert integrity.host_timed(900_000, [1_000_000, 1_100_000])["passed"]
    assert not integrity.host_timed(10_000, [1_000_000])["passed"]
    # CPU-bound calls: overhead hidden behind the flush is not work on another stream.
    assert integrity.host_timed(10_000, [60_000])["passed"]


def test_host_wait_after_return_separates_cpu_bound_calls_from_side_streams():
    # Measured on the H200: a backward that launches one small kernel through the autograd
    # engine saw 15.6 us on events and 229 us on the host, nearly all before it returned.
    assert integrity.host_timed(15_616, [229_044], [20_000])["passed"]
    assert not integrity.host_timed(15_616, [229_044])["passed"]  # the whole-call rule refused it
    # A side stream: the call returns at once, the host then waits for the hidden work.
    check = integrity.host_timed(10_000, [400_000], [390_000])
    assert not check["passed"] and "390000 ns per call after it returned" in check["detail"]


def test_throttle_reasons_mark_a_run():
    calm = {"smClockMHz": 1980, "throttleReasons": []}
    hot = {"smClockMHz": 1500, "throttleReasons": ["hw_thermal_slowdown"]}
    assert integrity.throttle([calm, calm])["passed"]
    assert not integrity.throttle([calm, hot])["passed"]
    assert not integrity.throttle([None])["passed"]  # unknown is never a pass


def test_power_cap_is_throttling_only_when_it_costs_clock():
    # Seen on an H200 under a memory-bound kernel: at the power limit, 15 MHz under max.
    capped = {"smClockMHz": 1965, "throttleReasons": ["sw_power_cap"]}
    assert integrity.throttle([capped, capped], 1980)["passed"]
    pulled = {"smClockMHz": 1800, "throttleReasons": ["sw_power_cap"]}
    assert not integrity.throttle([capped, pulled], 1980)["passed"]
    # Without the maximum clock a cap cannot be judged harmless.
    assert not integrity.throttle([capped], None)["passed"]
    # A thermal slowdown is throttling whatever the clock.
    hot = {"smClockMHz": 1975, "throttleReasons": ["sw_power_cap", "sw_thermal_slowdown"]}
    assert not integrity.throttle([hot], 1980)["passed"]


def test_nvml_without_gpu_degrades_to_none():
    # CI machines have no NVIDIA driver: every NVML reader says "unknown", nothing raises.
    if gpustate.facts() is not None:
        pytest.skip("an NVIDIA GPU is present")
    assert gpustate.state() is None and gpustate.compute_processes() is None


def test_environment_without_gpu_degrades_gracefully():
    software = {"python": "3.12.0", "torch": "2.13.0+cpu", "triton": "3.9.0"}
    spec = environment_spec(None, {}, software, interpret=False)
    assert spec["hardware"]["vendor"] == "cpu" and spec["hardware"]["product"]
    assert "driver" not in spec["software"] and spec["software"]["framework"]["version"] == "2.13.0+cpu"
    assert set(instance(None)) <= {"hostname"}


def test_environment_keeps_instance_facts_out():
    nvml = {"product": "NVIDIA H200", "architecture": "sm_90", "uuid": "GPU-1234", "driver": "570.1", "memoryBytes": 150 << 30}
    software = {"python": "3.12.0", "torch": "2.11.0+cu130", "cuda": "13.0", "triton": "3.6.0"}
    a = environment_spec(nvml, {"smCount": 132}, software, interpret=False)
    b = environment_spec({**nvml, "uuid": "GPU-5678"}, {"smCount": 132}, software, interpret=False)
    assert a == b and "GPU-1234" not in str(a)
    assert instance(nvml)["gpuUuid"] == "GPU-1234"


CHECKED = {"calls": 12, "checkedGradients": 3, "lossFailures": 0, "gradientFailures": 0,
           "worstLossRelError": 1e-7, "worstGradientRelError": 2e-7, "fullPassNs": []}


def _per_process(median, **extra):
    return {"samplesNs": [median] * 12, "hostTimedNs": median, "warmupCalls": 4, "timedCheck": CHECKED,
            "gpuBefore": {"smClockMHz": 1980, "throttleReasons": []}, "gpuAfter": {"smClockMHz": 1980, "throttleReasons": []}, **extra}


def _validated(case, result):
    digest = "sha256:" + "0" * 64
    doc = run_doc(JSD_OP, case, result, digests={k: digest for k in ("implementationDigest", "workloadDigest", "protocolDigest", "environmentDigest")},
                  product="NVIDIA H200", stamp="20261129t000000z", observed_at="2026-11-29T00:00:00Z",
                  instance={"gpuUuid": "GPU-1"}, dry_run=False, command="sitegen rerun")
    return BenchmarkRun.model_validate(doc, strict=True)


def test_failed_gate_gives_a_failed_run_with_its_error_and_no_time():
    case = Case(JSD_OP.workload("fp32", tokens=2048, vocab=128256), "forward", "x")
    gate = {"status": "failed", "maxAbsError": 0.5, "maxRelError": 1.0,
            "cases": [{"shape": [2048, 128256], "seed": 0, "maxAbsError": 0.5, "maxRelError": 1.0, "fullyWritten": True, "passed": False}]}
    result = outcome(case, gate, [_per_process(3_000_000)], op=JSD_OP, copy_bytes_per_s=H200_COPY, process_counts=[0, 1], expected_counts=[0, 1], repeated_probe=True)
    run = _validated(case, result)
    assert run.spec.status == "failed" and run.spec.timing is None and run.spec.correctness.maxRelError == 1.0


def test_time_below_floor_is_refused_and_honest_time_kept():
    case = Case(JSD_OP.workload("fp32", tokens=2048, vocab=128256), "forward", "x")
    gate = {"status": "passed", "maxAbsError": 0.0, "maxRelError": 0.0,
            "cases": [{"shape": [2048, 128256], "seed": 0, "maxAbsError": 0.0, "maxRelError": 0.0, "fullyWritten": True, "passed": True}]}
    common = dict(op=JSD_OP, copy_bytes_per_s=H200_COPY, process_counts=[0, 1], expected_counts=[0, 1], repeated_probe=True)
    cheat = _validated(case, outcome(case, gate, [_per_process(20_000, repeatedMedianNs=20_000)], **common))
    assert cheat.spec.status == "failed" and cheat.spec.timing is None
    honest = _validated(case, outcome(case, gate, [_per_process(600_000, repeatedMedianNs=600_000)] * 3, **common))
    assert honest.spec.status == "passed" and honest.spec.timing.latencyNs.median == 600_000
    assert all(c.passed for c in honest.spec.evidence.integrity)


def test_statistics_interpolate_like_do_bench():
    from sitegen.rules.stats import quantile, summary

    samples = [10, 40, 20, 30, 50]
    assert summary(samples)["median"] == 30 and summary(samples)["min"] == 10 and summary(samples)["max"] == 50
    # torch.quantile / numpy linear interpolation: position (n-1)q = 0.8 between 10 and 20.
    assert quantile(sorted(samples), 0.2) == pytest.approx(18.0)
    assert summary(samples)["p80"] == 42


def test_repeated_input_is_judged_against_the_fresh_calls_interleaved_with_it():
    case = Case(JSD_OP.workload("fp32", tokens=2048, vocab=128256), "forward", "x")
    gate = {"status": "passed", "maxAbsError": 0.0, "maxRelError": 0.0,
            "cases": [{"shape": [2048, 128256], "seed": 0, "maxAbsError": 0.0, "maxRelError": 0.0, "fullyWritten": True, "passed": True}]}
    common = dict(op=JSD_OP, copy_bytes_per_s=H200_COPY, process_counts=[0, 1], expected_counts=[0, 1], repeated_probe=True)
    # The timed samples drifted slow (600 us); in the probe, fresh and repeated calls agree.
    drifted = _validated(case, outcome(case, gate, [_per_process(600_000, repeatedMedianNs=480_000, repeatedFreshMedianNs=500_000)], **common))
    check = next(c for c in drifted.spec.evidence.integrity if c.name == "repeated_input")
    assert check.passed and drifted.spec.evidence.details["repeatedInputFreshMedianNs"] == 500_000
    # A real speed-up on repeated input is still flagged.
    cached = _validated(case, outcome(case, gate, [_per_process(600_000, repeatedMedianNs=400_000, repeatedFreshMedianNs=600_000)], **common))
    assert not next(c for c in cached.spec.evidence.integrity if c.name == "repeated_input").passed


class _LastResultCache:
    """A cheat that remembers its last input set: a call on the same set again costs nothing.

    Runs on the host clock (Clock("cpu")): a miss sleeps 2 ms, a hit returns at once.
    """

    def __init__(self, pool: int):
        self.pool, self.last, self.sets = pool, None, []

    def __len__(self):
        return self.pool

    def reset(self, i):
        pass

    def __call__(self, i):
        import time

        k = i % self.pool
        self.sets.append((k, k == self.last))
        if k != self.last:
            time.sleep(0.002)
        self.last = k


@pytest.mark.parametrize("pool", [2, 3])
def test_the_repeated_input_probe_catches_a_cache_of_the_last_result_on_every_repeated_call(pool):
    from sitegen.rerun.measure.clock import Clock
    from sitegen.rerun.measure.timing import collect

    cheat = _LastResultCache(pool)
    out = collect(Clock("cpu"), cheat, min_samples=3, min_ms=0.0, repeated_probe=True, warmup=(1, 0.0))
    # The probe is the last 4 blocks of (3 fresh calls, 1 untimed call on set 0, 3 repeated calls).
    tail = cheat.sets[-28:]
    for b in range(4):
        fresh, prime, repeated = tail[7 * b:7 * b + 3], tail[7 * b + 3], tail[7 * b + 4:7 * b + 7]
        assert not any(hit for _, hit in fresh) and prime[0] == 0
        assert all(k == 0 and hit for k, hit in repeated)
    assert out["repeatedFreshMedianNs"] >= 2_000_000 > 20 * out["repeatedMedianNs"]
    assert not integrity.repeated_input(out["repeatedFreshMedianNs"], out["repeatedMedianNs"])["passed"]


def test_an_honest_call_shows_no_speed_up_on_repeated_input(virtual_time):
    from sitegen.rerun.measure.clock import Clock
    from sitegen.rerun.measure.timing import collect

    class Honest(_LastResultCache):
        def __call__(self, i):
            virtual_time.sleep(0.01)  # the same 10 ms on fresh and repeated input alike

    out = collect(Clock("cpu"), Honest(3), min_samples=3, min_ms=0.0, repeated_probe=True, warmup=(1, 0.0))
    assert out["repeatedFreshMedianNs"] == out["repeatedMedianNs"] == 10_000_000
    assert integrity.repeated_input(out["repeatedFreshMedianNs"], out["repeatedMedianNs"])["passed"]


def test_exclusive_gpu_flags_a_process_that_is_not_ours():
    assert integrity.exclusive([0, 1, 1], [0, 1, 1])["passed"]
    assert not integrity.exclusive([0, 2, 1], [0, 1, 1])["passed"]
    assert not integrity.exclusive([0, None], [0, 1])["passed"]  # unknown is never a pass
