"""Throttled GPU time is kept out of the samples: waits before a case, re-taken batches, a budget."""

from __future__ import annotations

import pytest

from sitegen.rerun.measure import gpustate

from sitegen.rules import integrity
from sitegen.rerun.measure.throttleguard import ThrottleGuard

CAPPED = {"smClockMHz": 1695, "throttleReasons": ["sw_power_cap"]}
HOT = {"smClockMHz": 1980, "throttleReasons": ["hw_thermal_slowdown"]}
CALM = {"smClockMHz": 1980, "throttleReasons": []}


def _states(monkeypatch, seq):
    """NVML reads return seq in order, then its last element for ever; returns the call log."""
    calls = []

    def state():
        calls.append(1)
        return seq[min(len(calls), len(seq)) - 1]

    monkeypatch.setattr(gpustate, "state", state)
    return calls


def test_settle_waits_until_the_power_cap_lifts(monkeypatch):
    calls = _states(monkeypatch, [CAPPED, CAPPED, CALM])
    assert ThrottleGuard(1980).settle(limit_s=5.0) == CALM
    assert len(calls) == 3


def test_settle_gives_up_after_its_limit_and_reports_what_it_saw(monkeypatch):
    calls = _states(monkeypatch, [CAPPED])
    assert ThrottleGuard(1980).settle(limit_s=0.12) == CAPPED
    assert 2 <= len(calls) <= 14


def test_a_process_stops_waiting_once_its_budget_is_spent(monkeypatch):
    calls = _states(monkeypatch, [CAPPED])
    guard = ThrottleGuard(1980, budget_s=0.15)
    guard.settle(limit_s=0.1)
    guard.settle(limit_s=0.1)
    assert guard.left_s == 0.0
    before = len(calls)
    assert guard.settle(limit_s=5.0) == CAPPED and len(calls) == before + 1  # one look, no wait


def test_settle_does_not_wait_without_nvml_or_when_calm(monkeypatch):
    calls = _states(monkeypatch, [None])
    assert ThrottleGuard(1980).settle(limit_s=5.0) is None and len(calls) == 1
    calls = _states(monkeypatch, [CALM])
    assert ThrottleGuard(1980).settle(limit_s=5.0) == CALM and len(calls) == 1


def test_a_small_clock_dip_under_the_power_cap_is_not_waited_out(monkeypatch):
    dip = {"smClockMHz": 1965, "throttleReasons": ["sw_power_cap"]}  # 99% of max: the check passes
    calls = _states(monkeypatch, [dip])
    guard = ThrottleGuard(1980)
    assert guard.keep(4) and guard.discarded == 0 and guard.after == dip and len(calls) == 1


class _FakeEvents:
    """Stands in for CUDA events: each batch 'measures' the next number in `times`."""

    def __init__(self, clock, times):
        self.batches = []
        self.times = iter(times)
        clock._events = self

    def __call__(self, runner, indices, perturb=True, tails=None):
        self.batches.append(list(indices))
        t = next(self.times)
        return [t] * len(indices)


def _host_clock():
    from sitegen.rerun.measure.clock import Clock

    clock = Clock("cpu")
    return clock


def test_a_batch_that_ended_throttled_is_taken_again_and_never_kept(monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setattr(integrity, "RECOVER_MIN_S", 0.0)
    # batch 1 calm; batch 2 ends capped, the recovery wait sees calm, the re-take is calm; batch 3 calm
    _states(monkeypatch, [CALM, CAPPED, CALM, CALM, CALM])
    clock = _host_clock()
    events = _FakeEvents(clock, [100, 900, 200, 300])
    guard = ThrottleGuard(1980)
    samples = clock.timed(None, range(6), guard=guard, batch=2)
    assert samples == [100, 100, 200, 200, 300, 300]  # the throttled 900s are gone
    assert events.batches == [[0, 1], [2, 3], [2, 3], [4, 5]]
    assert guard.discarded == 2 and guard.after == CALM


def test_once_the_budget_is_spent_throttled_batches_are_kept_and_reported(monkeypatch):
    pytest.importorskip("torch")
    _states(monkeypatch, [CALM, HOT, CALM])
    clock = _host_clock()
    _FakeEvents(clock, [100, 900, 200])
    guard = ThrottleGuard(1980, budget_s=0.0)
    samples = clock.timed(None, range(3), guard=guard, batch=1)
    assert samples == [100, 900, 200] and guard.discarded == 0
    # the last batch ended calm, but the run must still be judged on the throttled one it kept
    assert guard.after == HOT
    assert not integrity.throttle([CALM, guard.after], 1980)["passed"]


def test_a_case_starts_with_a_clean_count(monkeypatch):
    monkeypatch.setattr(integrity, "RECOVER_MIN_S", 0.0)
    _states(monkeypatch, [CAPPED, CALM])
    guard = ThrottleGuard(1980)
    assert not guard.keep(3) and guard.discarded == 3
    guard.start_case()
    assert guard.discarded == 0 and guard.after is None


def test_every_event_timed_call_of_a_case_goes_through_the_guard(monkeypatch):
    pytest.importorskip("torch")
    from sitegen.rerun.measure.timing import collect

    clock = _host_clock()
    monkeypatch.setattr(clock, "_events", lambda runner, indices, perturb=True, tails=None: [1_000_000] * len(indices))

    class Runner:
        def __len__(self):
            return 3

        def reset(self, i):
            pass

        def __call__(self, i):
            pass

    class Counting:
        def __init__(self):
            self.calls = 0

        def keep(self, calls, elapsed_s=0.0):
            self.calls += calls
            return True

    guard = Counting()
    out = collect(clock, Runner(), min_samples=10, min_ms=0.0, repeated_probe=True, warmup=(1, 0.0), guard=guard)
    probe_calls = 2 * 4 * 3  # 4 blocks of 3 fresh and 3 repeated calls
    assert guard.calls == len(out["samplesNs"]) + probe_calls


def test_a_discarded_batch_is_charged_to_the_budget(monkeypatch):
    monkeypatch.setattr(integrity, "RECOVER_MIN_S", 0.0)
    _states(monkeypatch, [CAPPED, CALM])
    guard = ThrottleGuard(1980, budget_s=1.0)
    assert not guard.keep(5, elapsed_s=0.4)
    assert guard.left_s <= 0.6


def test_each_state_is_judged_on_its_own():
    dip = {"smClockMHz": 1965, "throttleReasons": ["sw_power_cap"]}
    idle = {"smClockMHz": 345, "throttleReasons": []}
    assert integrity.throttle([dip, idle], 1980)["passed"]
    assert not integrity.throttle([dip, CAPPED], 1980)["passed"]
