"""The ranking rules docs/record-format.md and the "How ranks work" text state, one test each.

Written from the rules, not the code: competition ranks (1, =2, =2, 4), a shared rank when
the ratio's interval includes 1 even with a gap over the minimum effect, noise by the
bootstrap half-width alone, and the representative chosen by evidence level before age.
"""

from __future__ import annotations

import pytest

from registry import RuleRegistry, spread

MS = 1_000_000


@pytest.fixture
def registry(tmp_path):
    # A source's own protocol family: its cohorts rank published runs beside Verified reruns, so each
    # rule is tested on every kind of run it reads (reported values, quantiles, samples).
    return RuleRegistry(tmp_path / "records", family="published_bench")


def _cohort(registry, medians_ms: dict[str, float], half_width: float = 0.002):
    for name, median in medians_ms.items():
        registry.run(name, registry.implementation(name), spread(median * MS, half_width))
    facts, _ = registry.index()
    return {name: facts[name] for name in medians_ms}


def test_a_tie_in_the_middle_gives_competition_ranks_1_2_2_4(registry):
    # b and c are 0.5% apart (under the 1% minimum effect): they tie. a and d are 10%+ away from
    # their neighbours with tight samples. The rank after a two-way tie at 2 is 4, not 3.
    runs = _cohort(registry, {"a": 1.00, "b": 1.10, "c": 1.1055, "d": 1.30})
    assert [runs[n].rank_label for n in "abcd"] == ["1", "=2", "=2", "4"]
    assert [runs[n].rank for n in "abcd"] == [1, 2, 2, 4]


def test_a_tie_at_the_top_is_shared_and_the_next_rank_counts_both(registry):
    runs = _cohort(registry, {"a": 1.00, "b": 1.004, "c": 1.20})
    assert [runs[n].rank_label for n in "abc"] == ["=1", "=1", "3"]


def test_neighbours_over_the_minimum_effect_apart_share_a_rank_while_their_ratio_interval_includes_1(registry):
    # Medians 2% apart (over the 1% minimum effect), but each run's samples spread ±30%:
    # the bootstrap interval of their ratio straddles 1, so the order is not established.
    registry.run("fast", registry.implementation("fast"), spread(1.00 * MS, 0.30, n=200))
    registry.run("slow", registry.implementation("slow"), spread(1.02 * MS, 0.30, n=200))
    facts, _ = registry.index()
    fast, slow = facts["fast"], facts["slow"]
    assert fast.noisy is None and slow.noisy is None, "the precondition: both rankable"
    assert slow.value / fast.value - 1 >= 0.01
    assert (fast.rank_label, slow.rank_label) == ("=1", "=1")
    assert "includes 1" in slow.rank_reason and slow.rank_note is None


def test_neighbours_whose_ratio_interval_excludes_1_and_gap_clears_the_minimum_effect_are_ranked_apart(registry):
    registry.run("fast", registry.implementation("fast"), spread(1.00 * MS, 0.01, n=200))
    registry.run("slow", registry.implementation("slow"), spread(1.03 * MS, 0.01, n=200))
    facts, _ = registry.index()
    assert (facts["fast"].rank_label, facts["slow"].rank_label) == ("1", "2")
    assert "excludes 1" in facts["slow"].rank_reason
    assert facts["fast"].rank_note is None and facts["slow"].rank_note is None  # intervals stood behind both


@pytest.mark.parametrize("modes_ms, noisy", [((1.00, 1.14), True), ((1.00, 1.07), False)])
def test_a_run_is_noisy_when_its_bootstrap_interval_alone_is_wider_than_5_percent(registry, modes_ms, noisy):
    # Half the samples at each of two values: the median's bootstrap interval spans them
    # (±6.5% of the value for 1.00/1.14, ±3.4% for 1.00/1.07), while p80/p20 stays at 1.14× or
    # 1.07×, under the 1.5× spread rule, and the harness said nothing: only the interval decides.
    low, high = (round(m * MS) for m in modes_ms)
    registry.run("bimodal", registry.implementation("bimodal"), [low, high] * 10)
    registry.run("steady", registry.implementation("steady"), spread(2.0 * MS, 0.001))
    facts, _ = registry.index()
    run = facts["bimodal"]
    assert run.interval.method == "bootstrap"
    assert run.interval.low == low and run.interval.high == high
    if noisy:
        assert run.rank is None and run.rank_label == "noisy"
        assert "95% interval ±" in run.noisy and "over 5%" in run.noisy
        assert facts["steady"].rank_label == "1"
    else:
        assert run.noisy is None
        assert (run.rank_label, facts["steady"].rank_label) == ("1", "2")


def test_the_representative_is_the_highest_evidence_level_not_the_newest_or_fastest(registry):
    impl = registry.implementation("one")
    registry.run("verified-old-slow", impl, spread(1.10 * MS, 0.002), observed="2026-08-01T00:00:00Z", signed=True)
    registry.run("reproducible-newer", impl, spread(1.05 * MS, 0.002), observed="2026-08-10T00:00:00Z", signed=False)
    registry.run("reported-newest-fastest", impl, None, controlled=False, observed="2026-08-20T00:00:00Z",
                 stated={"median": 1_000_000, "p20": 999_000, "p80": 1_001_000})
    facts, _ = registry.index()
    levels = {name: facts[name].level for name in facts}
    assert levels == {"verified-old-slow": "Verified", "reproducible-newer": "Reproducible",
                      "reported-newest-fastest": "Reported"}
    head = facts["verified-old-slow"]
    assert head.representative is None and head.rank_label == "1"
    assert facts["reported-newest-fastest"].representative is head
    assert [f.name for f in head.also] == ["reported-newest-fastest"]
    # A rerun below Verified holds no place, not even as another run of its implementation.
    unsigned = facts["reproducible-newer"]
    assert unsigned.representative is None and unsigned.rank is None and unsigned.reasons == ["not Verified: unsigned"]


def test_among_runs_of_one_level_the_newest_represents(registry):
    impl = registry.implementation("one")
    registry.run("older", impl, spread(1.00 * MS, 0.002), observed="2026-08-01T00:00:00Z")
    registry.run("newer", impl, spread(1.20 * MS, 0.002), observed="2026-08-02T00:00:00Z")
    facts, _ = registry.index()
    assert facts["older"].level == facts["newer"].level == "Verified"
    assert facts["older"].representative is facts["newer"]


def test_the_protocols_minimum_effect_replaces_the_1_percent(registry):
    # 10% apart with tight samples: distinct under the default 1%, tied under a stated 20%.
    registry.amend("protocols", registry.protocol, lambda spec: spec["comparability"].update(minEffect=0.2))
    runs = _cohort(registry, {"a": 1.00, "b": 1.10})
    assert (runs["a"].rank_label, runs["b"].rank_label) == ("=1", "=1")
    assert "under the 20% minimum effect" in runs["b"].rank_reason


def _published(registry, name: str, median: float, p20: float, p80: float) -> None:
    registry.run(name, registry.implementation(name), None, controlled=False,
                 stated={"median": round(median * MS), "p20": round(p20 * MS), "p80": round(p80 * MS)})


def test_without_samples_the_ratio_spans_the_published_interval_ends_and_separates_when_they_do(registry):
    # No samples: the ratio's range is behind.p20 / ahead.p80 to behind.p80 / ahead.p20.
    _published(registry, "a", 1.00, 0.98, 1.02)
    _published(registry, "b", 1.07, 1.05, 1.09)   # 1.05 / 1.02 > 1: separate
    _published(registry, "c", 1.10, 1.08, 1.12)   # 1.08 / 1.09 < 1: tied with b
    facts, _ = registry.index()
    assert [facts[n].interval.method for n in "abc"] == ["published p20–p80"] * 3
    assert [facts[n].rank_label for n in "abc"] == ["1", "=2", "=2"]
    assert "1.029–1.112×" in facts["b"].rank_reason and "excludes 1" in facts["b"].rank_reason
    assert "0.991–1.067×" in facts["c"].rank_reason and "includes 1" in facts["c"].rank_reason


def test_a_run_with_samples_beside_one_without_compares_interval_ends(registry):
    registry.run("sampled", registry.implementation("sampled"), spread(1.00 * MS, 0.002))
    _published(registry, "published", 1.10, 1.02, 1.20)  # p80/p20 = 1.18: not noisy
    facts, _ = registry.index()
    low = facts["sampled"].interval
    assert facts["published"].rank_label == "2"
    # The range from each run's interval: its low end is the published p20 over the bootstrap's high end.
    assert f"{1.02 * MS / low.high:.3f}–" in facts["published"].rank_reason


def test_neighbours_with_no_interval_are_decided_by_the_gap_alone(registry):
    for name, median in (("a", 1.00), ("b", 1.005), ("c", 1.03)):
        registry.run(name, registry.implementation(name), None, controlled=False, stated={"median": round(median * MS)})
    facts, _ = registry.index()
    assert [facts[n].rank_label for n in "abc"] == ["=1", "=1", "3"]
    assert all(facts[n].rank_note == "no interval" for n in "abc")
    assert "under the 1% minimum effect (no interval)" in facts["b"].rank_reason
    assert "at least the 1% minimum effect (no interval)" in facts["c"].rank_reason


@pytest.mark.parametrize("passes, headline", [
    (("forward", "backward", "full"), "full"),
    (("backward", "forward"), "forward"),
    (("backward",), "backward"),
])
def test_the_full_pass_heads_an_operation_whenever_it_has_one(registry, passes, headline):
    from sitegen.facts.ranking import headline_pass

    for timed_pass in passes:
        registry.run(timed_pass, registry.implementation("impl"), spread(1.0 * MS, 0.002), timedPass=timed_pass)
    facts, _ = registry.index()
    assert headline_pass(list(facts.values())) == headline


def test_the_reason_a_rank_is_shared_or_not_reads_as_the_rule(registry):
    # The page and its JSON give the reason with each rank; published intervals make it exact.
    _published(registry, "a", 1.00, 0.98, 1.02)
    _published(registry, "b", 1.07, 1.05, 1.09)
    _published(registry, "c", 1.10, 1.08, 1.12)
    _published(registry, "d", 2.40, 2.30, 2.50)
    facts, _ = registry.index()
    how = "range from each run's published p20–p80"
    assert facts["a"].rank_reason is None
    assert facts["b"].rank_reason == f"1.070× slower than a: ratio 1.070× ({how} 1.029–1.112×) excludes 1 and the gap is at least the 1% minimum effect"
    assert facts["c"].rank_reason == f"1.028× slower than b: ratio 1.028× ({how} 0.991–1.067×) includes 1"
    assert facts["d"].rank_reason.startswith(f"2.18× slower than c: ratio 2.182× ({how} 2.054–2.315×) excludes 1")


def test_a_gap_under_the_minimum_effect_says_so_though_the_interval_excludes_1(registry):
    runs = _cohort(registry, {"a": 1.00, "b": 1.005}, half_width=0.0005)
    assert runs["b"].rank_label == "=1"
    assert runs["b"].rank_reason.startswith("1.005× slower than a: under the 1% minimum effect, though the ratio 1.005×")
    assert runs["b"].rank_reason.endswith("excludes 1") and runs["b"].rank_note is None


@pytest.mark.parametrize("p80, noisy", [(1.55, True), (1.45, False)])
def test_a_published_p80_over_p20_beyond_1_5_is_noisy(registry, p80, noisy):
    _published(registry, "spread", 1.2, 1.0, p80)
    _published(registry, "tight", 3.0, 2.99, 3.01)
    facts, _ = registry.index()
    if noisy:
        assert facts["spread"].rank_label == "noisy"
        assert facts["spread"].noisy == f"p80/p20 = {p80:.2f}× (over 1.5×)"
    else:
        assert facts["spread"].noisy is None and facts["spread"].rank_label == "1"


def test_a_run_its_harness_called_noisy_is_noisy_whatever_its_samples(registry):
    registry.run("flagged", registry.implementation("flagged"), spread(1.0 * MS, 0.001))
    registry.edit("flagged", lambda s: s["evidence"].update(details={"noisy": True, "processSpreadRel": 0.08}))
    registry.run("calm", registry.implementation("calm"), spread(1.5 * MS, 0.001))
    registry.edit("calm", lambda s: s["evidence"].update(details={"noisy": False, "processSpreadRel": 0.01}))
    facts, _ = registry.index()
    assert facts["flagged"].rank_label == "noisy"
    assert facts["flagged"].noisy == "the harness found its processes disagree (medians 8% apart)"
    assert facts["calm"].noisy is None and facts["calm"].rank_label == "1"


def _mean_protocol(registry, min_samples):
    def change(spec):
        spec["measurement"].update(primaryStatistic="mean", minSamples=min_samples)
    registry.amend("protocols", registry.protocol, change)


def test_a_mean_published_with_its_stdev_gets_the_normal_approximation_interval(registry):
    # KernelBench's form: mean and standard deviation of n trials, no samples.
    _mean_protocol(registry, 100)
    registry.run("kb", registry.implementation("kb"), None, controlled=False,
                 stated={"median": 1_000_000, "mean": 1_000_000, "stdev": 20_000})
    facts, _ = registry.index()
    interval = facts["kb"].interval
    half = 1.959964 * 20_000 / 10  # 1.96 · stdev / √100
    assert (interval.low, interval.high) == pytest.approx((1_000_000 - half, 1_000_000 + half))
    assert interval.method == "normal approximation of the mean (n = 100)"
    assert facts["kb"].noisy is None  # ±0.4%


@pytest.mark.parametrize("trials, has_interval", [(1, False), (2, True)])
def test_the_normal_approximation_needs_a_trial_count_of_at_least_two(registry, trials, has_interval):
    _mean_protocol(registry, trials)
    registry.run("kb", registry.implementation("kb"), None, controlled=False,
                 stated={"median": 1_000_000, "mean": 1_000_000, "stdev": 20_000})
    facts, _ = registry.index()
    assert (facts["kb"].interval is not None) is has_interval


def test_a_wide_normal_approximation_is_noisy(registry):
    # stdev 40% of the mean over 10 trials: ±24.8%, far over 5%.
    _mean_protocol(registry, 10)
    registry.run("kb", registry.implementation("kb"), None, controlled=False,
                 stated={"median": 1_000_000, "mean": 1_000_000, "stdev": 400_000})
    facts, _ = registry.index()
    assert facts["kb"].rank_label == "noisy" and "95% interval ±24.8%" in facts["kb"].noisy


def test_a_normal_approximation_reaching_below_zero_starts_at_zero(registry):
    _mean_protocol(registry, 4)
    registry.run("kb", registry.implementation("kb"), None, controlled=False,
                 stated={"median": 1_000_000, "mean": 1_000_000, "stdev": 2_000_000})
    facts, _ = registry.index()
    assert facts["kb"].interval.low == 0.0 and facts["kb"].interval.high == pytest.approx(1_000_000 + 1.959964 * 1_000_000)


def test_the_published_interval_comes_from_the_primary_metrics_own_quantiles(registry):
    # As Liger's importer writes runs: the median in timing, p20/p80 as measurements. Quantiles of
    # another metric (peak memory, spread 10x) or another unit never stand for the latency's.
    def published(spec):
        spec["measurements"] = [
            {"metric": "latency", "unit": "ns", "statistic": "p20", "value": 1_050_000},
            {"metric": "latency", "unit": "ns", "statistic": "p80", "value": 1_150_000},
            {"metric": "memory", "unit": "MB", "statistic": "p20", "value": 10},
            {"metric": "memory", "unit": "MB", "statistic": "p80", "value": 100},
            {"metric": "launch", "unit": "ns", "statistic": "p80", "value": 9_000_000},
        ]
    registry.run("liger", registry.implementation("liger"), None, controlled=False, stated={"median": 1_100_000})
    registry.edit("liger", published)
    facts, _ = registry.index()
    run = facts["liger"]
    assert (run.interval.low, run.interval.high, run.interval.method) == (1_050_000, 1_150_000, "published p20–p80")
    assert run.noisy is None


def test_a_run_timed_by_measurements_alone_is_ranked_by_them(registry):
    # No timing block: the latency statistics are measurements only.
    def measured(spec):
        del spec["timing"]
        spec["measurements"] = [{"metric": "latency", "unit": "ns", "statistic": s, "value": v}
                                for s, v in (("p20", 990_000), ("median", 1_000_000), ("p80", 1_010_000))]
    registry.run("m", registry.implementation("m"), None, controlled=False, stated={"median": 1})
    registry.edit("m", measured)
    facts, _ = registry.index()
    assert facts["m"].value == 1_000_000 and facts["m"].interval.method == "published p20–p80"
    assert facts["m"].rank_label == "1"


def test_boundaries_are_on_the_side_the_rule_states(registry):
    # "at least the minimum effect" separates; "over 1.5×" is noisy, exactly 1.5× is not;
    # a ratio interval reaching exactly 1 "includes 1". Values chosen to be exact in binary.
    registry.amend("protocols", registry.protocol, lambda spec: spec["comparability"].update(minEffect=0.25))
    _published(registry, "a", 0.6, 0.5, 0.75)       # p80/p20 = 1.5 exactly: not noisy
    _published(registry, "b", 0.9, 0.75, 1.0)       # ratio low end = b's p20 / a's p80 = 1: includes 1
    for name, median in (("c", 4.0), ("d", 5.0)):   # no interval; d is 25% behind c exactly
        registry.run(name, registry.implementation(name), None, controlled=False, stated={"median": round(median * MS)})
    facts, _ = registry.index()
    assert facts["a"].noisy is None
    assert facts["b"].noisy is None and facts["b"].rank_label == "=1" and "includes 1" in facts["b"].rank_reason
    assert facts["b"].rank_note is None  # an interval stood behind this tie
    assert facts["d"].rank_label == "4" and "at least the 25% minimum effect (no interval)" in facts["d"].rank_reason


def _median_only(registry, name: str, median: float) -> None:
    registry.run(name, registry.implementation(name), None, controlled=False, stated={"median": round(median * MS)})


def test_a_run_measuring_zero_ranks_first_and_a_second_zero_ties_it(registry):
    for name, median in (("z1", 0.0), ("z2", 0.0), ("one", 1.0)):
        _median_only(registry, name, median)
    facts, _ = registry.index()
    assert [facts[n].rank_label for n in ("z1", "z2", "one")] == ["=1", "=1", "3"]
    assert facts["one"].rank_reason == "z2 measured 0 and this 1.00 ms"  # three significant digits, as pages show times
    assert facts["one"].rank_note == "no interval"


def test_every_noise_reason_is_given_and_the_harness_says_it_without_a_spread_when_it_has_none(registry):
    _published(registry, "both", 1.2, 1.0, 1.6)
    registry.edit("both", lambda s: s.update(evidence={"integrity": [], "details": {"noisy": True, "processSpreadRel": True}}))
    _published(registry, "tight", 3.0, 2.99, 3.01)
    facts, _ = registry.index()
    assert facts["both"].noisy == "the harness found its processes disagree; p80/p20 = 1.60× (over 1.5×)"


def test_the_reason_names_the_interval_it_stands_on(registry):
    registry.run("a", registry.implementation("a"), spread(1.0 * MS, 0.002))
    registry.run("b", registry.implementation("b"), spread(1.1 * MS, 0.002))
    _published(registry, "c", 1.25, 1.24, 1.26)
    facts, _ = registry.index()
    assert "(95% bootstrap interval " in facts["b"].rank_reason
    assert "(range from each run's bootstrap and published p20–p80 " in facts["c"].rank_reason


def test_a_published_run_ahead_of_a_sampled_one_compares_interval_ends(registry):
    _published(registry, "published", 1.0, 0.99, 1.01)
    registry.run("sampled", registry.implementation("sampled"), spread(1.1 * MS, 0.002))
    facts, _ = registry.index()
    assert facts["sampled"].rank_label == "2"
    assert "(range from each run's bootstrap and published p20–p80 " in facts["sampled"].rank_reason
    assert all(f.leader is facts["published"] for f in facts.values())


def test_a_rank_beside_a_neighbour_without_an_interval_says_no_interval_though_it_has_one(registry):
    _median_only(registry, "bare", 1.0)
    registry.run("sampled", registry.implementation("sampled"), spread(1.1 * MS, 0.002))
    facts, _ = registry.index()
    assert facts["sampled"].interval is not None
    assert facts["sampled"].rank_note == "no interval"
    assert facts["sampled"].rank_reason == "1.10× slower than bare, at least the 1% minimum effect (no interval)"


def test_twice_the_value_ahead_reads_as_a_multiple(registry):
    _median_only(registry, "a", 1.0)
    _median_only(registry, "b", 2.0)
    facts, _ = registry.index()
    assert facts["b"].rank_reason == "2.00× slower than a, at least the 1% minimum effect (no interval)"


def test_one_published_quantile_or_a_stdev_under_a_median_protocol_gives_no_interval(registry):
    registry.run("p20-only", registry.implementation("p20-only"), None, controlled=False, stated={"median": MS, "p20": MS - 1000})
    registry.run("stdev", registry.implementation("stdev"), None, controlled=False, stated={"median": 2 * MS, "stdev": 1000})
    facts, _ = registry.index()
    assert facts["p20-only"].interval is None and facts["stdev"].interval is None


def test_exactly_5_percent_is_not_wider_than_5_percent(registry):
    # Half the samples at 0.95 ms, half at 1.05: the median's interval is 0.95-1.05 around 1.00,
    # ±5% exactly (exact in binary: 50,000 / 1,000,000), which the rule ("wider than ±5%") allows.
    registry.run("edge", registry.implementation("edge"), [950_000, 1_050_000] * 10)
    facts, _ = registry.index()
    run = facts["edge"]
    assert (run.interval.low, run.interval.high, run.value) == (950_000, 1_050_000, 1_000_000)
    assert run.noisy is None and run.rank_label == "1"


def test_a_gap_of_exactly_the_minimum_effect_with_an_interval_separates(registry):
    registry.amend("protocols", registry.protocol, lambda spec: spec["comparability"].update(minEffect=0.25))
    _published(registry, "a", 1.0, 0.99, 1.01)
    _published(registry, "b", 1.25, 1.24, 1.26)
    facts, _ = registry.index()
    assert facts["b"].rank_label == "2" and "excludes 1 and the gap is at least the 25% minimum effect" in facts["b"].rank_reason


def test_an_operation_with_no_named_pass_still_has_a_headline(registry):
    from sitegen.facts.ranking import headline_pass

    registry.run("r", registry.implementation("r"), spread(MS, 0.002), timedPass=None)
    facts, _ = registry.index()
    assert headline_pass(list(facts.values())) == "unspecified"


def test_a_rank_after_a_zero_or_a_bare_neighbour_within_the_minimum_effect_says_no_interval(registry):
    _median_only(registry, "zero", 0.0)
    registry.run("sampled", registry.implementation("sampled"), spread(1.0 * MS, 0.002))
    _median_only(registry, "bare", 1.005)
    registry.run("close", registry.implementation("close"), spread(1.007 * MS, 0.002))
    facts, _ = registry.index()
    assert facts["sampled"].rank_reason.startswith("zero measured 0") and facts["sampled"].rank_note == "no interval"
    assert facts["close"].rank_label == facts["bare"].rank_label
    assert "(no interval)" in facts["close"].rank_reason and facts["close"].rank_note == "no interval"


def test_an_operation_without_ranked_runs_has_no_headline_pass():
    from sitegen.facts.ranking import headline_pass

    assert headline_pass([]) is None


def test_the_gap_to_the_leader_is_stated_with_the_bootstrap_interval_of_the_two_runs_ratio(registry):
    # The operation summary writes, beside each runner-up's "N× slower", the 95% interval of its
    # value over the leader's: from both runs' raw samples, the bootstrap ratio. The leader has none.
    runs = _cohort(registry, {"a": 1.00, "b": 1.50, "c": 2.00})
    assert runs["a"].leader_ratio is None
    for name in "bc":
        low, high, how = runs[name].leader_ratio
        assert how == "95% bootstrap interval"
        assert low <= runs[name].value / runs["a"].value <= high and high - low < 0.05


def test_a_verdict_on_any_pair_of_a_cohort_uses_the_bootstrap_ratio_of_their_samples(registry):
    # Compare pages and trends judge two runs that need not be neighbours by the ranking rule.
    from sitegen.facts.ranking import separation

    runs = _cohort(registry, {"a": 1.00, "b": 1.10, "c": 1.20})
    distinct, reason, had_interval = separation(runs["a"], runs["c"])
    assert distinct and had_interval and "95% bootstrap interval" in reason and "excludes 1" in reason


def test_first_places_are_counted_per_implementation_alone_and_shared():
    # How the home page and the operation summary count wins: a first place held alone, or shared.
    from sitegen.facts.ranking import tally_firsts

    firsts = [("a", True), ("b", False), ("a", True), ("a", False), ("c", False), ("c", False)]
    assert tally_firsts(firsts) == {"a": [2, 1], "b": [0, 1], "c": [0, 2]}


# "Faster but set aside" (How ranks work): a ranked run's rank names each other implementation
# whose fastest run in the cohort measured faster but holds no rank because it is noisy, or flagged
# only by a check that a slowed GPU fails (throttle, exclusive_gpu); such a rank 1 is no first place.

def _flag(registry, name: str, *checks: str) -> None:
    registry.edit(name, lambda spec: spec["evidence"].setdefault("integrity", []).extend(
        {"name": check, "passed": False, "detail": "planted"} for check in checks))


def _aside(registry, fast_ms: float, *checks: str, dry: bool = False):
    registry.run("ranked", registry.implementation("ranked"), spread(1.0 * MS, 0.002))
    registry.run("other", registry.implementation("other"), spread(fast_ms * MS, 0.002))
    if checks:
        _flag(registry, "other", *checks)
    if dry:
        registry.edit("other", lambda spec: spec["evidence"].update(dryRun=True))
    facts, _ = registry.index()
    return facts["ranked"], facts["other"]


@pytest.mark.parametrize("checks, named", [
    (("throttle",), "other (flagged: throttle)"),
    (("exclusive_gpu",), "other (flagged: exclusive_gpu)"),
    (("throttle", "exclusive_gpu"), "other (flagged: throttle, exclusive_gpu)"),
])
def test_a_faster_run_flagged_only_for_a_slowed_gpu_is_named_and_takes_the_first_place(registry, checks, named):
    ranked, other = _aside(registry, 0.5, *checks)
    assert other.rank is None
    assert ranked.rank == 1 and ranked.faster_set_aside == [named]
    assert ranked.rank_note == "faster but set aside: " + named
    assert not ranked.leads


@pytest.mark.parametrize("checks", [("roofline",), ("throttle", "roofline"), ("repeated_input",)])
def test_a_faster_run_flagged_for_its_timing_itself_undercuts_no_one(registry, checks):
    ranked, other = _aside(registry, 0.5, *checks)
    assert other.rank is None
    assert ranked.rank == 1 and ranked.faster_set_aside == [] and ranked.leads


def test_a_faster_dry_run_undercuts_no_one_even_if_flagged_only_for_throttle(registry):
    # A CPU rehearsal's time says nothing of the GPU (a failed run carries no time at all).
    ranked, other = _aside(registry, 0.5, "throttle", dry=True)
    assert other.rank is None
    assert ranked.faster_set_aside == [] and ranked.leads


def test_a_slower_set_aside_run_is_not_named(registry):
    ranked, _ = _aside(registry, 1.5, "throttle")
    assert ranked.faster_set_aside == [] and ranked.leads


def test_a_faster_noisy_representative_is_named(registry):
    registry.run("ranked", registry.implementation("ranked"), spread(1.0 * MS, 0.002))
    registry.run("other", registry.implementation("other"), [round(0.4 * MS), round(0.6 * MS)] * 10)
    facts, _ = registry.index()
    assert facts["other"].rank_label == "noisy"
    assert facts["ranked"].faster_set_aside == ["other (noisy)"] and not facts["ranked"].leads


def test_each_implementation_is_named_once_for_its_fastest_set_aside_run_and_never_its_own(registry):
    # "other" has two runs set aside, the faster flagged exclusive_gpu; "ranked" has a faster run of
    # its own flagged throttle, which is not named beside its own rank.
    impl = registry.implementation("ranked")
    registry.run("ranked", impl, spread(1.0 * MS, 0.002))
    registry.run("ranked-throttled", impl, spread(0.3 * MS, 0.002), observed="2026-08-21T10:00:00Z")
    other = registry.implementation("other")
    registry.run("other-a", other, spread(0.7 * MS, 0.002), uuid="GPU-2222bbbb")
    registry.run("other-b", other, spread(0.5 * MS, 0.002), uuid="GPU-3333cccc")
    _flag(registry, "ranked-throttled", "throttle")
    _flag(registry, "other-a", "throttle")
    _flag(registry, "other-b", "exclusive_gpu")
    facts, _ = registry.index()
    assert facts["ranked"].rank == 1
    assert facts["ranked"].faster_set_aside == ["other (flagged: exclusive_gpu)"]


def test_a_set_aside_run_exactly_as_fast_is_not_faster(registry):
    # Identical samples: the same median, which undercuts nothing.
    ranked, other = _aside(registry, 1.0, "throttle")
    assert other.value == ranked.value
    assert ranked.faster_set_aside == [] and ranked.leads

