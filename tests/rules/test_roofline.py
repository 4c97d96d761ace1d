"""Roofline figures as numbers, on a registry whose operation states the bytes each pass moves.

docs/record-format.md: JSD moves forward 2·T·V·b, backward T·V·b, full 3·T·V·b; achieved
bandwidth is bytes ÷ time, and its share is of the copy bandwidth the rerun measured (or of
the nominal peak, labelled so).
"""

from __future__ import annotations

import pytest

from registry import RuleRegistry, spread
from sitegen.facts.roofline import MEASURED, floor_ns, roofline

TOKENS, VOCAB, FP32 = 2048, 128256, 4
JSD_BYTES = {
    "forward": [{"coefficient": 2, "axes": ["tokens", "vocab"], "perElementOf": "dtype"}],
    "backward": [{"coefficient": 1, "axes": ["tokens", "vocab"], "perElementOf": "dtype"}],
    "full": [{"coefficient": 3, "axes": ["tokens", "vocab"], "perElementOf": "dtype"}],
}
COPY_GBS = 4000.0
MEDIAN_NS = 1_000_000


@pytest.fixture
def facts(tmp_path):
    registry = RuleRegistry(tmp_path / "records")
    registry.amend("operations", "jensen-shannon-divergence", lambda spec: spec.update(bytesMoved=JSD_BYTES))
    impl = registry.implementation("impl")
    for timed_pass in ("forward", "backward", "full"):
        registry.run(timed_pass, impl, spread(MEDIAN_NS, 0.002), timedPass=timed_pass)
        registry.edit(timed_pass, lambda s: s["evidence"].update(details={"copyBandwidthGBs": COPY_GBS}))
    registry.run("no-ceiling", impl, spread(MEDIAN_NS, 0.002), timedPass="full")
    return registry.index()


@pytest.mark.parametrize("timed_pass, coefficient", [("forward", 2), ("backward", 1), ("full", 3)])
def test_bytes_achieved_bandwidth_and_share_follow_the_pass_coefficient(facts, timed_pass, coefficient):
    runs, config = facts
    run = runs[timed_pass]
    assert run.value == MEDIAN_NS
    figures = roofline(run, config)
    expected_bytes = coefficient * TOKENS * VOCAB * FP32
    assert figures.bytes == expected_bytes
    assert figures.achieved_gbs == pytest.approx(expected_bytes / MEDIAN_NS)  # bytes per ns = GB/s
    assert figures.ceiling == MEASURED and figures.ceiling_gbs == COPY_GBS
    assert figures.share == pytest.approx(expected_bytes / MEDIAN_NS / COPY_GBS)
    # The least time the pass could take: its bytes at the measured copy bandwidth.
    assert floor_ns(run, config) == pytest.approx(expected_bytes / COPY_GBS)


def test_the_full_pass_moves_the_forward_and_backward_bytes_together(facts):
    runs, config = facts
    moved = {p: roofline(runs[p], config).bytes for p in ("forward", "backward", "full")}
    assert moved["full"] == moved["forward"] + moved["backward"]
    assert moved["forward"] == 2 * moved["backward"]


def test_the_share_reads_as_a_percentage_of_the_measured_copy_bandwidth(facts):
    runs, config = facts
    figures = roofline(runs["forward"], config)
    # 2·2048·128256·4 B = 2.10 GB in 1 ms = 2.10 TB/s, 53% of 4 TB/s.
    assert figures.column() == "53%"
    # Figures show three significant digits.
    assert figures.sentence() == "2.10 TB/s achieved (2.10 GB moved at the least); 53% of the measured copy bandwidth (4.00 TB/s)"


def test_without_a_measured_or_nominal_ceiling_there_is_no_share(facts):
    runs, config = facts
    figures = roofline(runs["no-ceiling"], config)
    assert figures.bytes == 3 * TOKENS * VOCAB * FP32
    if runs["no-ceiling"].product in config.gpus:
        pytest.fail("the fixture registry should know no nominal peak for its GPU")
    assert figures.share is None and figures.column() == "—"
    assert floor_ns(runs["no-ceiling"], config) is None


@pytest.fixture
def registry(tmp_path):
    registry = RuleRegistry(tmp_path / "records")
    registry.amend("operations", "jensen-shannon-divergence", lambda spec: spec.update(bytesMoved=JSD_BYTES))
    return registry


def _one(registry, median_ns, *, details=None, passes_noted=None, gpus=None, impl_name="impl", timed_pass="forward"):
    if gpus:
        (registry.root / "gpus.toml").write_text(gpus)
    impl = registry.implementation(impl_name)
    if passes_noted:
        impl = registry.amend("implementations", impl_name, lambda spec: spec.update(passNotes=passes_noted))
    registry.run("r", impl, [median_ns] * 5, timedPass=timed_pass)
    if details:
        registry.edit("r", lambda s: s["evidence"].update(details=details))
    runs, config = registry.index()
    return roofline(runs["r"], config), runs["r"], config


def test_without_a_measured_ceiling_the_nominal_peak_serves_labelled_so(registry):
    figures, run, _ = _one(registry, MEDIAN_NS, gpus='["NVIDIA H200"]\nnominal_memory_bandwidth_gbs = 4800\n')
    assert (figures.ceiling, figures.ceiling_gbs) == ("nominal peak", 4800)
    assert figures.share == pytest.approx(2 * TOKENS * VOCAB * FP32 / MEDIAN_NS / 4800)
    assert figures.column() == "44% (nominal)"
    assert figures.sentence().endswith("; 44% of the nominal peak (4.80 TB/s) — nominal, not measured")


def test_a_measured_ceiling_wins_over_the_nominal_peak(registry):
    figures, _, _ = _one(registry, MEDIAN_NS, details={"copyBandwidthGBs": COPY_GBS},
                         gpus='["NVIDIA H200"]\nnominal_memory_bandwidth_gbs = 4800\n')
    assert figures.ceiling == MEASURED and figures.ceiling_gbs == COPY_GBS


def test_no_ceiling_known_is_said(registry):
    figures, _, _ = _one(registry, MEDIAN_NS)
    assert figures.sentence() == "2.10 TB/s achieved (2.10 GB moved at the least); no bandwidth ceiling is known for this GPU"


def test_under_a_terabyte_per_second_reads_in_gigabytes(registry):
    figures, _, _ = _one(registry, 4 * MEDIAN_NS, details={"copyBandwidthGBs": COPY_GBS})
    assert figures.sentence().startswith("525 GB/s achieved")


@pytest.mark.parametrize("noted, column, sentence", [
    ({"forward": "writes dX in forward"}, "over 100%: see pass note",
     "not meaningful for this pass (faster than 2.10 GB at the measured copy bandwidth (4.00 TB/s) allows): writes dX in forward"),
    (None, "over 100%: unexplained",
     "faster than 2.10 GB at the measured copy bandwidth (4.00 TB/s) allows, and no pass note explains it"),
])
def test_a_share_over_100_percent_is_no_number_and_points_at_the_pass_note(registry, noted, column, sentence):
    figures, _, _ = _one(registry, 100_000, details={"copyBandwidthGBs": COPY_GBS}, passes_noted=noted)
    assert figures.over and figures.column() == column and figures.sentence() == sentence


def test_a_pass_note_of_another_pass_does_not_explain_this_one(registry):
    figures, _, _ = _one(registry, 100_000, details={"copyBandwidthGBs": COPY_GBS}, passes_noted={"backward": "elsewhere"})
    assert figures.pass_note is None


def test_bytes_add_up_over_terms_and_fixed_element_sizes(registry):
    rule = {"forward": [{"coefficient": 2, "axes": ["tokens", "vocab"], "perElementOf": "dtype"},
                        {"coefficient": 1, "axes": ["tokens"], "perElementOf": "fp64"}]}
    registry.amend("operations", "jensen-shannon-divergence", lambda spec: spec.update(bytesMoved=rule))
    figures, _, _ = _one(registry, MEDIAN_NS)
    assert figures.bytes == 2 * TOKENS * VOCAB * FP32 + TOKENS * 8


def test_the_element_size_comes_from_the_tensors_when_the_workload_names_no_dtype(registry):
    registry.amend("workloads", "jsd-vocab128256-tokens2048-fp32", lambda spec: spec.pop("dtype"))
    figures, _, _ = _one(registry, MEDIAN_NS)
    assert figures.bytes == 2 * TOKENS * VOCAB * FP32


def test_a_pass_without_a_bytes_rule_has_no_roofline(registry):
    registry.amend("operations", "jensen-shannon-divergence", lambda spec: spec.update(bytesMoved={"forward": JSD_BYTES["forward"]}))
    figures, run, config = _one(registry, MEDIAN_NS, timed_pass="backward", details={"copyBandwidthGBs": COPY_GBS})
    assert figures is None and floor_ns(run, config) is None


@pytest.mark.parametrize("timed_pass", ["backward", "full"])
def test_each_passs_own_note_explains_a_share_over_100_percent(registry, timed_pass):
    figures, _, _ = _one(registry, 10_000, details={"copyBandwidthGBs": COPY_GBS}, timed_pass=timed_pass,
                         passes_noted={timed_pass: f"{timed_pass} work happens elsewhere"})
    assert figures.over and figures.pass_note == f"{timed_pass} work happens elsewhere"


def test_the_share_is_a_percentage_rounded_to_whole_percent(registry):
    copy = 2 * TOKENS * VOCAB * FP32 / MEDIAN_NS / 0.8  # a share of 80% exactly
    figures, _, _ = _one(registry, MEDIAN_NS, details={"copyBandwidthGBs": copy})
    assert figures.column() == "80%" and "; 80% of the measured copy bandwidth" in figures.sentence()


def test_a_copy_bandwidth_of_zero_is_no_ceiling_and_draws_no_floor(registry):
    figures, run, config = _one(registry, MEDIAN_NS, details={"copyBandwidthGBs": 0})
    assert figures.ceiling is None and figures.share is None
    assert floor_ns(run, config) is None


def test_bandwidth_reads_in_terabytes_from_1000_gigabytes():
    from sitegen.facts.roofline import gbs_text

    assert (gbs_text(999.0), gbs_text(1000.0), gbs_text(2500.0)) == ("999 GB/s", "1.00 TB/s", "2.50 TB/s")


def test_a_run_with_no_named_pass_has_no_roofline(registry):
    figures, _, _ = _one(registry, MEDIAN_NS, timed_pass=None, details={"copyBandwidthGBs": COPY_GBS})
    assert figures is None


def test_a_workload_whose_tensors_mix_element_types_names_no_size(registry):
    def mixed(spec):
        spec.pop("dtype")
        spec["tensors"][1]["dtype"] = "bf16"
    registry.amend("workloads", "jsd-vocab128256-tokens2048-fp32", mixed)
    figures, _, _ = _one(registry, MEDIAN_NS)
    assert figures is None


def test_a_run_not_timed_in_nanoseconds_has_no_roofline_or_floor(registry):
    def memory(spec):
        del spec["timing"]
        spec["measurements"] = [{"metric": "memory", "unit": "MB", "statistic": "median", "value": 512}]
        spec["evidence"]["details"] = {"copyBandwidthGBs": COPY_GBS}
    impl = registry.implementation("impl")
    registry.run("mem", impl, [MEDIAN_NS] * 5)
    registry.edit("mem", memory)
    runs, config = registry.index()
    assert runs["mem"].unit == "MB"
    assert roofline(runs["mem"], config) is None and floor_ns(runs["mem"], config) is None
