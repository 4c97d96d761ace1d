"""The integrity checks' published rules on numbers alone (docs/rerun.md, the protocol's notes,
sitegen/rerun/integrity.py): each check is recorded as {name, passed, detail} under its own
name; a check that could not run reads "not checked" and never passes; each bound holds at
its edge (a time at floor/1.15, a repeated-input speed-up of exactly 1.10x, host waits of
exactly 2% + 30 us or 2% + 50 us, a capped clock at exactly 97% of max all pass), and the
details state the figures sitegen.figures reads back.
"""

from __future__ import annotations

import pytest

from sitegen.rerun import integrity
from sitegen.rerun.assemble import REFUSING, guard_checks


def _shaped(check: dict, name: str) -> dict:
    assert set(check) == {"name", "passed", "detail"} and check["name"] == name
    assert isinstance(check["passed"], bool) and isinstance(check["detail"], str) and check["detail"]
    return check


@pytest.mark.parametrize("name, check", [
    ("roofline", lambda: integrity.roofline(1_000, 1_000, None)),
    ("roofline", lambda: integrity.roofline(1_000, 1_000, 0.0)),
    ("timed_output", lambda: integrity.timed_output(None, 1e-3)),
    ("timed_output", lambda: integrity.timed_output({"calls": 0}, 1e-3)),
    ("repeated_input", lambda: integrity.repeated_input(1_000, None)),
    ("host_timed", lambda: integrity.host_timed(1_000, [], None, None)),
    ("host_timed", lambda: integrity.host_timed(1_000, [], [], [])),
    ("throttle", lambda: integrity.throttle([], 1980)),
    ("throttle", lambda: integrity.throttle([{"smClockMHz": 1980, "throttleReasons": []}, None], 1980)),
    ("exclusive_gpu", lambda: integrity.exclusive([], [])),
    ("exclusive_gpu", lambda: integrity.exclusive([0, None], [0, 1])),
])
def test_a_check_that_could_not_run_reads_not_checked_and_never_passes(name, check):
    got = _shaped(check(), name)
    assert got["passed"] is False and got["detail"].startswith("not checked")


def test_a_check_that_ran_is_recorded_under_its_own_name():
    calm = {"smClockMHz": 1980, "throttleReasons": []}
    _shaped(integrity.roofline(1_000_000, 1_000, 1e9), "roofline")
    _shaped(integrity.timed_output({"calls": 4, "checkedGradients": 2, "lossFailures": 0, "gradientFailures": 0,
                                    "worstLossRelError": 0.0, "worstGradientRelError": 0.0}, 1e-3), "timed_output")
    _shaped(integrity.repeated_input(1_000, 1_000), "repeated_input")
    _shaped(integrity.host_timed(1_000_000, [], None, [10_000]), "host_timed")
    _shaped(integrity.host_timed(1_000_000, [1_000_000]), "host_timed")
    _shaped(integrity.host_timed(1_000_000, [], [1_000_000]), "host_timed")
    _shaped(integrity.throttle([calm], 1980), "throttle")
    _shaped(integrity.exclusive([1], [1]), "exclusive_gpu")
    for name in integrity.GUARDS:
        _shaped(integrity.guard(name, None), name)
    # The checks whose failure refuses the time, by the names the checks carry.
    assert {"roofline", "host_timed", "timed_output", *integrity.GUARDS} == set(REFUSING)


def test_the_roofline_passes_a_time_at_floor_over_its_slack_and_states_its_figures(monkeypatch):
    assert integrity.floor_ns(2_000_000_000, 1e9) == 2e9
    # At the floor itself (the slack set to 1): 1e9 B at 1e9 B/s take exactly 1e9 ns.
    monkeypatch.setattr(integrity, "ROOFLINE_SLACK", 1.0)
    assert integrity.roofline(1_000_000_000, 1_000_000_000, 1e9)["passed"]
    assert not integrity.roofline(999_999_999, 1_000_000_000, 1e9)["passed"]
    assert integrity.roofline(1, 1_000_000_000, 1e9, timed_pass="backward", full_ns=1_000_000_000,
                              full_bytes=1_000_000_000)["passed"]
    assert not integrity.roofline(1, 1_000_000_000, 1e9, timed_pass="backward", full_ns=999_999_999,
                                  full_bytes=1_000_000_000)["passed"]
    monkeypatch.undo()
    check = integrity.roofline(20_000, 100_000_000, 4.3e12, timed_pass="backward", full_ns=60_000, full_bytes=200_000_000)
    assert check["passed"]
    assert check["detail"] == (
        "median 20000 ns vs floor 23256 ns (100000000 B at measured copy 4300.0 GB/s; refused below floor/1.15); "
        "forward+backward median 60000 ns vs full-pass floor 46512 ns "
        "(backward under its own floor: its forward did the work, judged on the full pass)")
    figures = integrity.ROOFLINE_FIGURES.match(check["detail"])
    assert figures.groups() == ("20000", "23256", "100000000", "4300.0")
    # A forward under its own floor is not rescued by the full pass.
    assert not integrity.roofline(20_000, 100_000_000, 4.3e12, timed_pass="forward", full_ns=60_000,
                                  full_bytes=200_000_000)["passed"]


def test_the_timed_output_check_passes_only_with_outputs_checked_and_none_wrong():
    def summary(checked, loss_bad, grad_bad):
        return {"calls": 10, "checkedGradients": checked, "lossFailures": loss_bad, "gradientFailures": grad_bad,
                "worstLossRelError": 0.5, "worstGradientRelError": 0.25}

    assert integrity.timed_output(summary(1, 0, 0), 1e-3)["passed"]
    assert not integrity.timed_output(summary(0, 0, 0), 1e-3)["passed"]  # calls, but none checked
    assert not integrity.timed_output(summary(3, 1, 0), 1e-3)["passed"]
    assert not integrity.timed_output(summary(3, 0, 1), 1e-3)["passed"]
    assert not integrity.timed_output(summary(3, 1, 1), 1e-3)["passed"]


def test_a_repeated_input_speed_up_of_exactly_10_percent_passes():
    assert integrity.repeated_input(1_100, 1_000)["passed"]
    assert not integrity.repeated_input(1_101, 1_000)["passed"]


def test_host_timed_holds_at_each_bound():
    # A controlled rerun's hidden work: 2% of the median + 30 us.
    assert integrity.host_timed(1_000_000, [], None, [50_000])["passed"]
    assert not integrity.host_timed(1_000_000, [], None, [40_000, 50_001])["passed"]  # the worst process counts
    # Under do_bench: the host's wait over the median, 2% of it + 50 us.
    assert integrity.host_timed(1_000_000, [], [1_070_000])["passed"]
    assert not integrity.host_timed(1_000_000, [], [1_070_001])["passed"]
    # Older records: refused below half the host time and more than 200 us short.
    assert integrity.host_timed(500_000, [1_000_000])["passed"]  # exactly half
    assert integrity.host_timed(100_000, [300_000])["passed"]  # exactly 200 us short
    assert not integrity.host_timed(99_999, [300_000])["passed"]


def test_host_timed_states_what_the_host_waited():
    base = ("event median 1000000 ns vs host still waiting 1070000 ns per call after it returned{} (refused when that "
            "exceeds the median by over 2% of it plus 50000 ns: work the events did not see)")
    assert integrity.host_timed(1_000_000, [1_200_000], [1_070_000])["detail"] == base.format(" (whole call 1200000 ns)")
    assert integrity.host_timed(1_000_000, [], [1_070_000])["detail"] == base.format("")


def test_a_guard_holds_unless_something_was_seen():
    held = integrity.guard("host_threads", None)
    assert held["passed"] and held["detail"] == "held: " + integrity.GUARDS["host_threads"]
    seen = integrity.guard("host_threads", "a thread")
    assert not seen["passed"] and seen["detail"] == "refused by host_threads: a thread"


def test_a_power_cap_at_exactly_97_percent_of_the_clock_is_not_throttling():
    assert integrity.calm({"smClockMHz": 1940, "throttleReasons": ["sw_power_cap"]}, 2000)
    assert not integrity.calm({"smClockMHz": 1939, "throttleReasons": ["sw_power_cap"]}, 2000)


def test_the_throttle_check_states_the_clocks_and_reasons_it_saw():
    capped = {"smClockMHz": 1965, "throttleReasons": ["sw_power_cap"]}
    calm = {"smClockMHz": 1980, "throttleReasons": []}
    unread = {"throttleReasons": []}
    assert integrity.throttle([capped, calm, unread], 1980)["detail"] == (
        "SM clocks seen [1965, 1980] MHz of 1980 max; throttle reasons: sw_power_cap "
        "(power cap kept the clock at or above 97% of max: not throttled)")
    assert integrity.throttle([calm, calm])["detail"] == "SM clocks seen [1980] MHz; throttle reasons: none"
    hot = {"smClockMHz": 1500, "throttleReasons": ["sw_power_cap", "hw_thermal_slowdown"]}
    check = integrity.throttle([hot], 1980)
    assert not check["passed"]
    assert check["detail"].endswith("throttle reasons: hw_thermal_slowdown, sw_power_cap") or \
        check["detail"].endswith("throttle reasons: sw_power_cap, hw_thermal_slowdown")


def test_exclusive_gpu_fails_on_any_process_not_ours():
    assert integrity.exclusive([1, 2], [1, 2])["passed"]
    assert not integrity.exclusive([1, 3], [1, 2])["passed"]
    assert integrity.exclusive([0, 1], [1, 2])["detail"] == "compute processes seen [0, 1], ours [1, 2]"


def test_guard_checks_name_each_guard_and_the_first_reason_any_process_saw():
    assert guard_checks([{"samplesNs": [1]}]) == []  # no process kept guard records: absent, not failed
    per = [
        {"guards": {"clock_intact": "first"}, "timedCheck": {"foreignReason": "returned a Lazy", "foreignOutputs": 2,
                                                             "calls": 9, "inputsReason": "input 1 written"}},
        {"guards": {"clock_intact": "second", "host_threads": "a thread"}, "timedCheck": {"inputsReason": "later"}},
    ]
    got = {c["name"]: c for c in guard_checks(per)}
    assert list(got) == list(integrity.GUARDS)
    assert got["clock_intact"]["detail"] == "refused by clock_intact: first"
    assert got["host_threads"]["detail"] == "refused by host_threads: a thread"
    assert got["plain_output"]["detail"] == "refused by plain_output: returned a Lazy (2 of 9 timed calls, never read)"
    assert got["inputs_intact"]["detail"] == "refused by inputs_intact: input 1 written"
    clean = guard_checks([{"guards": {}}, {"guards": None, "timedCheck": None}])
    assert [c["passed"] for c in clean] == [True] * len(integrity.GUARDS)
