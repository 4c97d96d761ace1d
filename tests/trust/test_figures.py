"""A run's stated figures must follow from its raw samples: validate, verify and build refuse
a hand-edited one with one line naming the file, the field, the stated and the recomputed value."""

from __future__ import annotations

import json
import re
import statistics

import numpy as np
import pytest

from trust_registry import RECORDS, RUN, cli, edit_run, mini_registry, problem_lines


def _samples() -> list[int]:
    return json.loads(RUN.read_text())["spec"]["timing"]["samplesNs"]


def _lines(result) -> list[str]:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return problem_lines(result)


@pytest.fixture
def registry(tmp_path):
    return mini_registry(tmp_path / "registry")


def test_the_bundled_registry_states_only_figures_its_samples_give():
    result = cli("validate", RECORDS)
    assert result.exit_code == 0, result.stderr[-2000:]


def test_a_hand_edited_median_is_refused_by_validate_verify_and_build(registry, tmp_path):
    true_median = statistics.median(_samples())
    assert cli("lock", registry).exit_code == 0
    path = edit_run(registry, lambda s: s["timing"]["latencyNs"].update(median=int(true_median) + 1000))
    assert cli("lock", registry).exit_code == 1  # lock accepts no such record either
    for args in (("validate", registry), ("verify", registry), ("verify", "--full", registry),
                 ("build", "--records", registry, "--out", tmp_path / "site", "--no-search", "--quiet")):
        lines = _lines(cli(*args))
        assert lines == [f"{path}: $.spec.timing.latencyNs.median: stated {int(true_median) + 1000}, "
                         f"recomputed {true_median:.0f} from the {len(_samples())} samples of $.spec.timing.samplesNs"], args
    assert not (tmp_path / "site").exists()


def test_a_hand_edited_quantile_is_refused_with_its_line(registry):
    p80 = float(np.percentile(_samples(), 80))  # linear interpolation, as the record format defines it
    path = edit_run(registry, lambda s: s["timing"]["latencyNs"].update(p80=round(p80) + 40))
    [line] = _lines(cli("validate", registry))
    head, recomputed, tail = line.partition(", recomputed ")[0], *line.partition(", recomputed ")[2].split(" ", 1)
    assert head == f"{path}: $.spec.timing.latencyNs.p80: stated {round(p80) + 40}"
    assert abs(float(recomputed) - p80) < 0.01
    assert tail == f"from the {len(_samples())} samples of $.spec.timing.samplesNs"


def test_a_sample_count_that_disagrees_with_the_processes_is_refused(registry):
    path = edit_run(registry, lambda s: s["timing"]["samplesNs"].pop())
    lines = _lines(cli("validate", registry))
    count = len(_samples())
    assert f"{path}: $.spec.timing.samplesNs: holds {count - 1} samples, which are not its 3 processes' {count} samples in process order" in lines


def test_a_process_median_and_the_harness_arithmetic_are_recomputed(registry):
    def change(spec):
        spec["timing"]["processes"][1]["medianNs"] += 900
        spec["evidence"]["details"]["ciHalfWidthRel"] = 0.0004
        spec["evidence"]["details"]["processSpreadRel"] = 0.00111
        spec["evidence"]["details"]["copyBandwidthGBs"] = 4800.0

    path = edit_run(registry, change)
    fields = sorted(line.split(": ")[1] for line in _lines(cli("validate", registry)))
    assert fields == ["$.spec.evidence.details.ciHalfWidthRel", "$.spec.evidence.details.copyBandwidthGBs",
                      "$.spec.evidence.details.processSpreadRel", "$.spec.timing.processes[1].medianNs"], path


def test_the_roofline_detail_must_match_the_record(registry):
    doc = json.loads(RUN.read_text())
    detail = doc["spec"]["evidence"]["integrity"][0]["detail"]
    # The floor as written (bytes over the unrounded bandwidth), forged 10% lower.
    floor = int(re.search(r"floor (\d+) ns", detail).group(1))
    forged = detail.replace(f"floor {floor} ns", f"floor {floor * 9 // 10} ns")
    assert forged != detail
    path = edit_run(registry, lambda s: s["evidence"]["integrity"][0].update(detail=forged))
    assert [line.split(": ")[1] for line in _lines(cli("validate", registry))] == ["$.spec.evidence.integrity[0].detail"], path


def test_rounding_the_way_another_tool_rounds_is_no_disagreement(registry):
    # Two samples 1 ns apart: the median is x.5, which a writer may round either way; 2 ns off is refused.
    def two_samples(value):
        def change(spec):
            spec["timing"] = {"latencyNs": {"median": value}, "primaryStatistic": "median", "samplesNs": [1000, 1001]}
            spec["evidence"]["details"].pop("ciHalfWidthRel", None)
            spec["evidence"]["integrity"] = [c for c in spec["evidence"]["integrity"] if c["name"] != "roofline"]
        return change

    for value, ok in ((1000, True), (1001, True), (1002, False)):
        edit_run(registry, two_samples(value))
        assert (cli("validate", registry).exit_code == 0) is ok, value
