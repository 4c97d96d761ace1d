"""Five published rules that no test held (issue 47.8), each pinned from its text, not the code:

- docs/record-format.md, Replicated: "two Verified runs of one implementation revision in one
  comparison group whose values differ by at most the protocol's integrity.agreement, 5% when
  absent, of the smaller value; runs of one implementation in two comparison groups never
  replicate each other".
- docs/record-format.md, rooflines: "A share above 100% (101% as much as 150%) is no number: the
  cohort table says 'over 100%: see pass note' ... else 'over 100%: unexplained'".
- docs/record-format.md, ranks: neighbours separate when "the gap reaches the minimum effect (of
  two neighbours whose protocols state different minimum effects, the larger)".
- docs/rerun.md, timed_output: "on the first two timed calls of each implementation, workload and
  pass in each measuring process, then on a random quarter of the others".

Each fails under a mutant of its rule (the commit that added them says which).
"""

from __future__ import annotations

import pytest

from registry import RuleRegistry, spread

MS = 1_000_000
# JSD forward at tokens 2048, vocab 128256, fp32 moves 2·T·V·4 bytes (docs/record-format.md).
FORWARD_BYTES = 2 * 2048 * 128256 * 4
COPY_GBS = 4000.0


@pytest.fixture
def registry(tmp_path):
    return RuleRegistry(tmp_path / "records")


# -- Replicated: the agreement is a share of the smaller value ----------------------------------

@pytest.mark.parametrize("first, second, level", [
    # 51,000 apart: 5.1% of the smaller 1,000,000 (past 5%), though only 4.85% of the larger.
    pytest.param(1_000_000, 1_051_000, "Verified", id="5.1% of the smaller: no agreement"),
    pytest.param(1_051_000, 1_000_000, "Verified", id="the same pair, the slower run first"),
    # 49,000 apart: 4.9% of the smaller, within 5%.
    pytest.param(1_000_000, 1_049_000, "Replicated", id="4.9% of the smaller: agree"),
])
def test_replicated_agreement_is_measured_against_the_smaller_value(registry, first, second, level):
    impl = registry.implementation("impl")
    registry.run("first", impl, spread(first, 0.002), uuid="GPU-1", signed=True)
    registry.run("second", impl, spread(second, 0.002), uuid="GPU-2", signed=True, observed="2026-08-21T10:00:00Z")
    facts, _ = registry.index()
    assert (facts["first"].value, facts["second"].value) == (first, second)
    assert (facts["first"].level, facts["second"].level) == (level, level)


# -- Replicated: within one comparison group --------------------------------------------------

def test_agreeing_runs_of_one_implementation_in_two_comparison_groups_do_not_replicate(registry):
    other_workload = registry.variant("workloads", "jsd-vocab128256-tokens2048-fp32", "jsd-vocab128256-tokens1024-fp32",
                                      lambda spec: spec["axes"].update(tokens=1024))
    impl = registry.implementation("impl")
    # The same value on two GPUs, one run at tokens 2048 and one at tokens 1024: two groups.
    registry.run("at-2048", impl, spread(MS, 0.002), uuid="GPU-1", signed=True)
    registry.run("at-1024", impl, spread(MS, 0.002), uuid="GPU-2", signed=True, workloadDigest=other_workload)
    facts, _ = registry.index()
    assert facts["at-2048"].cohort != facts["at-1024"].cohort
    assert (facts["at-2048"].level, facts["at-1024"].level) == ("Verified", "Verified")
    # The precondition: a third run in the first group, on another GPU, replicates the first.
    registry.run("again-2048", impl, spread(MS, 0.002), uuid="GPU-3", signed=True, observed="2026-08-22T10:00:00Z")
    facts, _ = registry.index()
    assert (facts["at-2048"].level, facts["again-2048"].level, facts["at-1024"].level) == ("Replicated", "Replicated", "Verified")


# -- Rooflines: any share over 100% is "over 100%", never a number ---------------------------

@pytest.mark.parametrize("share, column", [
    (1.01, "over 100%: unexplained"),
    (1.25, "over 100%: unexplained"),
    (1.49, "over 100%: unexplained"),
    (0.99, "99%"),
])
def test_a_share_between_100_and_150_percent_reads_over_100_percent(registry, share, column):
    from sitegen.facts.roofline import roofline

    registry.amend("operations", "jensen-shannon-divergence", lambda spec: spec.update(bytesMoved={
        "forward": [{"coefficient": 2, "axes": ["tokens", "vocab"], "perElementOf": "dtype"}]}))
    # The time at which FORWARD_BYTES at COPY_GBS is exactly this share of the ceiling.
    median = round(FORWARD_BYTES / COPY_GBS / share)
    registry.run("r", registry.implementation("impl"), [median] * 5)
    registry.edit("r", lambda s: s["evidence"].update(details={"copyBandwidthGBs": COPY_GBS}))
    runs, config = registry.index()
    assert roofline(runs["r"], config).column() == column


def test_a_share_over_100_percent_with_the_pass_note_points_at_it(registry):
    from sitegen.facts.roofline import roofline

    registry.amend("operations", "jensen-shannon-divergence", lambda spec: spec.update(bytesMoved={
        "forward": [{"coefficient": 2, "axes": ["tokens", "vocab"], "perElementOf": "dtype"}]}))
    impl = registry.implementation("impl")
    impl = registry.amend("implementations", "impl", lambda spec: spec.update(passNotes={"forward": "writes dX in forward"}))
    registry.run("r", impl, [round(FORWARD_BYTES / COPY_GBS / 1.2)] * 5)
    registry.edit("r", lambda s: s["evidence"].update(details={"copyBandwidthGBs": COPY_GBS}))
    runs, config = registry.index()
    assert roofline(runs["r"], config).column() == "over 100%: see pass note"


# -- Ranks: the larger of the two protocols' minimum effects ---------------------------------

@pytest.mark.parametrize("strict_run", ["fast", "slow"])
def test_neighbours_under_two_minimum_effects_are_held_to_the_larger(registry, strict_run):
    # 3% apart with tight samples (the ratio's interval excludes 1): apart under a 1% minimum
    # effect, tied under 5%. One run's protocol states 5%, the other's 1%; whichever it is, 5% holds.
    strict = registry.variant("protocols", "sitegen-rerun-forward", "sitegen-rerun-forward-strict",
                              lambda spec: spec["comparability"].update(minEffect=0.05))
    registry.amend("protocols", "sitegen-rerun-forward", lambda spec: spec["comparability"].update(minEffect=0.01))
    protocol = {"protocolDigest": strict}
    registry.run("fast", registry.implementation("fast"), spread(1.00 * MS, 0.002), signed=True,
                 **(protocol if strict_run == "fast" else {}))
    registry.run("slow", registry.implementation("slow"), spread(1.03 * MS, 0.002), signed=True,
                 **(protocol if strict_run == "slow" else {}))
    facts, _ = registry.index()
    fast, slow = facts["fast"], facts["slow"]
    assert fast.cohort == slow.cohort and fast.level == slow.level == "Verified"
    assert (fast.rank_label, slow.rank_label) == ("=1", "=1")
    assert "under the 5% minimum effect" in slow.rank_reason


def test_neighbours_under_one_minimum_effect_of_1_percent_separate_at_3_percent(registry):
    # The precondition of the test above: the same pair, both under the 1% protocol, is ranked apart.
    registry.amend("protocols", "sitegen-rerun-forward", lambda spec: spec["comparability"].update(minEffect=0.01))
    registry.run("fast", registry.implementation("fast"), spread(1.00 * MS, 0.002), signed=True)
    registry.run("slow", registry.implementation("slow"), spread(1.03 * MS, 0.002), signed=True)
    facts, _ = registry.index()
    assert (facts["fast"].rank_label, facts["slow"].rank_label) == ("1", "2")


# -- timed_output: the first two calls are always checked ------------------------------------

def test_the_first_two_timed_calls_are_checked_whatever_the_draw_and_then_a_quarter():
    pytest.importorskip("torch", reason="the timed-output check digests with torch")
    from sitegen.rerun.checks.timedcheck import TimedCheck

    def picks(draw: float, calls: int = 6) -> list[bool]:
        check = TimedCheck([(6, 5)], "cpu", 1e-3)
        chosen = []
        for _ in range(calls):
            chosen.append(check.pick(_uniform=lambda: draw))
            if chosen[-1]:
                check.calls.append(None)  # what record() keeps of a checked call
        return chosen

    # A draw never under a quarter: exactly the first two calls.
    assert picks(0.99) == [True, True, False, False, False, False]
    assert picks(0.25) == [True, True, False, False, False, False]
    # A draw under a quarter: every call.
    assert picks(0.2499) == [True] * 6
