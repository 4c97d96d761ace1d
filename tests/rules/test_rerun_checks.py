"""The integrity checks' published rules on numbers alone (docs/rerun.md, the protocol's notes,
sitegen/rules/integrity.py): each check is recorded as {name, passed, detail} under its own
name; a check that could not run reads "not checked" and never passes; each bound holds at
its edge (a time at floor/1.15, a repeated-input speed-up of exactly 1.10x, host waits of
exactly 2% + 30 us or 2% + 50 us, a capped clock at exactly 97% of max all pass), and the
details state the figures sitegen.rules.recompute reads back.
"""

from __future__ import annotations

import pytest

from sitegen.rules import integrity
from sitegen.rerun.outcome.assemble import REFUSING, guard_checks


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


# --- a case's outcome as the record states it (assemble.outcome) --------------------------

from sitegen.operations.jsd import JSD  # noqa: E402
from sitegen.rerun.outcome.assemble import outcome  # noqa: E402
from sitegen.core.workload import Case  # noqa: E402
from sitegen.rules.stats import ci_half_width_rel, spread_rel, summary  # noqa: E402

OP = JSD()
W = OP.workload("fp32", tokens=8, vocab=64)
GATE = {"status": "passed", "maxAbsError": 1e-7, "maxRelError": 2e-7, "cases": [
    {"shape": [8, 64], "seed": 5, "maxAbsError": 1e-7, "maxRelError": 2e-7, "fullyWritten": True, "passed": True}]}


def _checked(calls, checked, full_ns=()):
    return {"calls": calls, "checkedGradients": checked, "lossFailures": 0, "gradientFailures": 0,
            "worstLossRelError": 1e-7, "worstGradientRelError": 2e-7, "fullPassNs": list(full_ns)}


def _state(mhz):
    return {"smClockMHz": mhz, "throttleReasons": []}


def _processes():
    return [
        {"samplesNs": [1000, 1010, 1020], "hiddenNs": 100, "emptySyncNs": 50, "warmupCalls": 4,
         "timedCheck": _checked(10, 3, [3000, 3100]), "gpuBefore": _state(1980), "gpuAfter": _state(1979),
         "samplingStoppedBy": "precision", "repeatedMedianNs": 990, "repeatedFreshMedianNs": 1000,
         "throttleDiscards": 2, "guards": {}},
        {"samplesNs": [1030, 1040, 1050], "hiddenNs": 120, "emptySyncNs": 60, "hostTimedNs": None, "warmupCalls": 3,
         "timedCheck": _checked(12, 4, [3000, 3100]), "gpuBefore": _state(1978), "gpuAfter": _state(1977),
         "samplingStoppedBy": "budget", "throttleDiscards": 1, "guards": {}},
    ]


def _outcome(per, timed_pass="forward", **kw):
    args = dict(op=OP, copy_bytes_per_s=1e13, process_counts=[1, 1], expected_counts=[1, 1], repeated_probe=True,
                max_sm_mhz=1980)
    return outcome(Case(W, timed_pass, "m"), GATE, per, **{**args, **kw})


def test_a_passed_case_records_its_timing_details_and_checks_as_the_schema_names_them():
    per = _processes()
    result = _outcome(per)
    assert result["status"] == "passed" and "statusReason" not in result
    assert result["correctness"] == {"status": "passed", "comparator": OP.comparator, "reference": OP.reference_name,
                                     "maxAbsError": 1e-7, "maxRelError": 2e-7, "cases": GATE["cases"]}
    pooled = [1000, 1010, 1020, 1030, 1040, 1050]
    assert result["timing"] == {
        "latencyNs": summary(pooled), "primaryStatistic": "median", "samplesNs": pooled,
        "processes": [{"medianNs": 1010, "samplesNs": [1000, 1010, 1020], "emptySyncNs": 50, "hiddenNs": 100},
                      {"medianNs": 1040, "samplesNs": [1030, 1040, 1050], "emptySyncNs": 60, "hiddenNs": 120}]}
    assert [c["name"] for c in result["integrity"]] == [
        "roofline", "repeated_input", "timed_output", "host_timed", "throttle", "exclusive_gpu", *integrity.GUARDS]
    assert all(c["passed"] for c in result["integrity"])
    assert result["gpuBefore"] == _state(1980) and result["gpuAfter"] == _state(1977)  # the first's, the last's
    spread = spread_rel([1010, 1040])
    assert result["details"] == {
        "floorBytes": OP.bytes_moved(W, "forward"), "flop": OP.flop(W, "forward"), "warmupCalls": 7,
        "samplingStoppedBy": "budget", "ciHalfWidthRel": round(ci_half_width_rel(pooled), 5),
        "processSpreadRel": round(spread, 5), "noisy": False,
        "fullPassMedianNs": 3050, "timedOutputsChecked": 22, "timedGradientsChecked": 7, "copyBandwidthGBs": 10000.0,
        "throttleDiscardedSamples": 3, "repeatedInputMedianNs": 990, "repeatedInputFreshMedianNs": 1000}
    timed = next(c for c in result["integrity"] if c["name"] == "timed_output")
    assert timed["detail"].startswith("7 of 22 timed calls'") and f"rtol {OP.tolerances['fp32']:g}," in timed["detail"]
    repeated = next(c for c in result["integrity"] if c["name"] == "repeated_input")
    assert "vs fresh 1000 ns" in repeated["detail"]


def test_details_left_out_when_nothing_stands_behind_them():
    per = _processes()
    for p in per:
        for key in ("throttleDiscards", "repeatedMedianNs", "samplingStoppedBy", "warmupCalls"):
            p.pop(key, None)
    per[0].pop("repeatedFreshMedianNs")
    per[0]["samplingStoppedBy"] = "precision"
    result = _outcome(per, timed_pass="full", repeated_probe=False, copy_bytes_per_s=None, rtol=0.5)
    details = result["details"]
    for key in ("samplingStoppedBy", "throttleDiscardedSamples", "repeatedInputMedianNs", "repeatedInputFreshMedianNs",
                "fullPassMedianNs", "copyBandwidthGBs"):
        assert key not in details, key
    assert details["warmupCalls"] == 0
    names = [c["name"] for c in result["integrity"]]
    assert "repeated_input" not in names and names[:2] == ["roofline", "timed_output"]
    assert "rtol 0.5," in result["integrity"][1]["detail"]
    # No copy bandwidth: the roofline could not run, and a check that refuses the time failed.
    assert result["status"] == "failed" and "timing" not in result
    assert result["statusReason"] == "integrity: time refused: not checked: copy bandwidth was not measured"


def test_all_processes_stopped_by_precision_read_precision_and_the_probe_falls_back_to_the_first_process():
    per = _processes()
    per[1]["samplingStoppedBy"] = "precision"
    per[0].pop("repeatedFreshMedianNs")
    result = _outcome(per)
    assert result["details"]["samplingStoppedBy"] == "precision"
    assert "repeatedInputFreshMedianNs" not in result["details"]
    repeated = next(c for c in result["integrity"] if c["name"] == "repeated_input")
    assert "vs fresh 1010 ns" in repeated["detail"]  # the first process's own median


def test_processes_over_5_percent_apart_are_noisy_and_a_flag_alone_keeps_the_time():
    per = _processes()
    per[1]["samplesNs"] = [1100, 1110, 1120]
    per[0]["repeatedMedianNs"] = 800  # 25% faster on repeated input: flagged, not refused
    result = _outcome(per, process_counts=[1, 2])
    assert result["details"]["noisy"] is True
    flagged = {c["name"] for c in result["integrity"] if not c["passed"]}
    assert flagged == {"repeated_input", "exclusive_gpu"}
    assert result["status"] == "passed" and result["timing"]["samplesNs"][:3] == [1000, 1010, 1020]


def test_a_failed_gate_is_never_timed_and_says_why():
    gate = {"status": "failed", "maxRelError": 0.25, "notes": "Raised: " + "x" * 600}
    result = outcome(
        Case(W, "forward", "m"), gate, _processes(), op=OP, copy_bytes_per_s=1e13, process_counts=[1],
        expected_counts=[1], repeated_probe=True)
    assert result == {
        "correctness": {"status": "failed", "comparator": OP.comparator, "reference": OP.reference_name,
                        "maxRelError": 0.25, "notes": gate["notes"]},
        "integrity": [], "details": {}, "status": "failed",
        "statusReason": ("correctness gate: worst relative error 0.25 against the float64 reference; never timed "
                         f"({gate['notes'][:500]})")}
    bare = outcome(Case(W, "forward", "m"), {"status": "failed"}, [], op=OP, copy_bytes_per_s=1e13, process_counts=[],
                   expected_counts=[], repeated_probe=False)
    assert bare["statusReason"] == "correctness gate: worst relative error n/a against the float64 reference; never timed"
    assert bare["correctness"] == {"status": "failed", "comparator": OP.comparator, "reference": OP.reference_name}


def test_a_case_no_process_measured_is_errored():
    none = outcome(Case(W, "forward", "m"), None, [], op=OP, copy_bytes_per_s=1e13, process_counts=[],
                   expected_counts=[], repeated_probe=False)
    assert none["status"] == "errored" and none["statusReason"] == "no process measured this case"
    assert none["correctness"] == {"status": "not_checked", "comparator": OP.comparator, "reference": OP.reference_name}
    broke = outcome(Case(W, "forward", "m"), GATE, [{"error": "a" * 1500}, {"error": "b" * 1500}], op=OP,
                    copy_bytes_per_s=1e13, process_counts=[], expected_counts=[], repeated_probe=False)
    assert broke["status"] == "errored" and broke["statusReason"] == ("a" * 1500 + "; " + "b" * 1500)[:2000]


def test_do_bench_processes_keep_their_host_times_and_are_judged_on_the_wait_after_return():
    per = _processes()
    for p, host, wait in zip(per, (5_000, 6_000), (1_900, 80_000)):
        del p["hiddenNs"], p["emptySyncNs"]
        p["hostTimedNs"], p["hostWaitNs"] = host, wait
    result = _outcome(per)
    assert [{k: v for k, v in p.items() if k != "samplesNs"} for p in result["timing"]["processes"]] == [
        {"medianNs": 1010, "hostTimedNs": 5_000, "hostWaitNs": 1_900},
        {"medianNs": 1040, "hostTimedNs": 6_000, "hostWaitNs": 80_000}]
    host = next(c for c in result["integrity"] if c["name"] == "host_timed")
    # The least any process still waited (1.9 us) against the pooled median, and the least whole call.
    assert host["passed"] and "host still waiting 1900 ns per call after it returned (whole call 5000 ns)" in host["detail"]
    for p in per:
        del p["hostWaitNs"]
    legacy = next(c for c in _outcome(per)["integrity"] if c["name"] == "host_timed")
    assert "synchronized host batch 5000 ns per call" in legacy["detail"]


def test_a_backward_under_its_own_floor_is_judged_on_the_full_pass_its_process_timed():
    floor = OP.bytes_moved(W, "backward")  # bytes; at 1e9 B/s each byte is a nanosecond
    full_floor = OP.bytes_moved(W, "full")
    per = _processes()
    for p in per:
        p["samplesNs"] = [floor // 2] * 3
        p["timedCheck"] = _checked(10, 3, [full_floor] * 2)
    result = _outcome(per, timed_pass="backward", copy_bytes_per_s=1e9)
    roof = result["integrity"][0]
    assert roof["passed"] and "judged on the full pass" in roof["detail"] and result["status"] == "passed"
    assert result["details"]["fullPassMedianNs"] == full_floor
    for p in per:
        p["timedCheck"] = _checked(10, 3, [full_floor // 2] * 2)
    assert not _outcome(per, timed_pass="backward", copy_bytes_per_s=1e9)["integrity"][0]["passed"]
    for p in per:  # an older record: no full-pass times, nothing to rescue it
        del p["timedCheck"]["fullPassNs"]
    older = _outcome(per, timed_pass="backward", copy_bytes_per_s=1e9)
    assert not older["integrity"][0]["passed"] and "fullPassMedianNs" not in older["details"]


def test_a_full_pass_is_judged_on_its_own_floor_alone():
    per = _processes()
    for p in per:
        p["timedCheck"] = _checked(10, 3, [1, 1])
    roof = _outcome(per, timed_pass="full", copy_bytes_per_s=1e12)["integrity"][0]
    assert roof["passed"] and roof["detail"] == (
        f"median 1025 ns vs floor {OP.bytes_moved(W, 'full') / 1e3:.0f} ns ({OP.bytes_moved(W, 'full')} B at measured "
        "copy 1000.0 GB/s; refused below floor/1.15)")
    assert "fullPassMedianNs" not in _outcome(per, timed_pass="full")["details"]


def test_a_forward_at_its_floor_whose_backward_did_nothing_is_refused():
    floor, full_floor = OP.bytes_moved(W, "forward"), OP.bytes_moved(W, "full")
    per = _processes()
    for p in per:
        p["samplesNs"] = [floor] * 3
        p["timedCheck"] = _checked(10, 3, [floor] * 2)  # forward + backward took no longer than the forward
    result = _outcome(per, copy_bytes_per_s=1e9)
    assert floor < full_floor / 1.15 and not result["integrity"][0]["passed"] and result["status"] == "failed"


def test_a_power_cap_that_kept_the_clock_is_judged_against_the_gpu_s_maximum():
    per = _processes()
    for p in per:
        p["gpuBefore"] = p["gpuAfter"] = {"smClockMHz": 1965, "throttleReasons": ["sw_power_cap"]}
    throttle = next(c for c in _outcome(per)["integrity"] if c["name"] == "throttle")
    assert throttle["passed"] and "of 1980 max" in throttle["detail"]


def test_a_probe_with_no_output_kept_reads_timed_output_not_checked():
    per = _processes()
    for p in per:
        del p["timedCheck"]
    result = _outcome(per)
    timed = next(c for c in result["integrity"] if c["name"] == "timed_output")
    assert not timed["passed"] and timed["detail"].startswith("not checked")
    assert result["status"] == "failed" and "timedOutputsChecked" not in result["details"]


def test_the_copy_bandwidth_is_stated_in_gb_s_to_two_places_and_every_refusal_is_named():
    result = _outcome(_processes(), copy_bytes_per_s=1_234_567_890.0)
    assert result["details"]["copyBandwidthGBs"] == 1.23
    per = _processes()
    per[1]["guards"] = {"host_threads": "a thread"}
    refused = _outcome(per, copy_bytes_per_s=1e9)
    roof = refused["integrity"][0]["detail"]
    assert refused["statusReason"] == f"integrity: time refused: {roof}; refused by host_threads: a thread"


def test_processes_exactly_5_percent_apart_still_agree():
    per = _processes()
    per[0]["samplesNs"], per[1]["samplesNs"] = [1000] * 3, [1050] * 3
    per.append({**per[0]})
    details = _outcome(per, process_counts=[1, 1, 1], expected_counts=[1, 1, 1])["details"]
    assert spread_rel([1000, 1050, 1000]) == 0.05 and details["noisy"] is False


def test_a_reading_without_throttle_reasons_is_not_checked_rather_than_calm():
    """NVML that could not read the reasons leaves them out of the reading (gpustate.state): the check
    says so and does not pass, while the reasons seen in the other readings are still the ones named."""
    from sitegen.rules.throttling import throttled

    unread = {"smClockMHz": 1980}
    result = integrity.throttle([{"smClockMHz": 1980, "throttleReasons": []}, unread], 1980)
    assert result == {"name": "throttle", "passed": False, "detail": "not checked: NVML could not read the throttle reasons"}
    assert throttled([unread, {"smClockMHz": 1200, "throttleReasons": ["hw_slowdown", "sync_boost"]}]) == ["hw_slowdown"]
