"""The worker waits for a throttled GPU to recover before timing a case, within limits."""

from __future__ import annotations

from sitegen.rerun import gpustate, worker

CAPPED = {"smClockMHz": 1695, "throttleReasons": ["sw_power_cap"]}
CALM = {"smClockMHz": 1980, "throttleReasons": []}


def _states(monkeypatch, seq):
    calls = []

    def state():
        calls.append(1)
        return seq[min(len(calls), len(seq)) - 1]

    monkeypatch.setattr(gpustate, "state", state)
    return calls


def test_settle_waits_until_the_power_cap_lifts(monkeypatch):
    calls = _states(monkeypatch, [CAPPED, CAPPED, CALM])
    assert worker.Settler(1980)(limit_s=5.0) == CALM
    assert len(calls) == 3


def test_settle_gives_up_after_its_limit_and_reports_what_it_saw(monkeypatch):
    calls = _states(monkeypatch, [CAPPED])
    assert worker.Settler(1980)(limit_s=0.12) == CAPPED
    assert 2 <= len(calls) <= 5


def test_a_process_stops_waiting_once_its_total_is_spent(monkeypatch):
    calls = _states(monkeypatch, [CAPPED])
    settle = worker.Settler(1980, total_s=0.15)
    settle(limit_s=0.1)
    settle(limit_s=0.1)
    assert settle.left_s == 0.0
    before = len(calls)
    assert settle(limit_s=5.0) == CAPPED and len(calls) == before + 1  # one look, no wait


def test_settle_does_not_wait_without_nvml_or_when_calm(monkeypatch):
    calls = _states(monkeypatch, [None])
    assert worker.Settler(1980)(limit_s=5.0) is None and len(calls) == 1
    calls = _states(monkeypatch, [CALM])
    assert worker.Settler(1980)(limit_s=5.0) == CALM and len(calls) == 1
