"""Roofline figures as numbers, on a registry whose operation states the bytes each pass moves.

docs/record-format.md: JSD moves forward 2·T·V·b, backward T·V·b, full 3·T·V·b; achieved
bandwidth is bytes ÷ time, and its share is of the copy bandwidth the rerun measured (or of
the nominal peak, labelled so).
"""

from __future__ import annotations

import pytest

from registry import RuleRegistry, spread
from sitegen.site.roofline import MEASURED, floor_ns, roofline

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
