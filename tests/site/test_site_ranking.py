"""Ranks use the protocol's primary statistic, whatever a run declares as its own."""

from __future__ import annotations

import html
import json

from conftest import SEED_RUN, TORCH_RUN, edit_run
from sitecheck import catalog_runs
from sitegen.site.build import build_site

NO_MEDIAN = "no median, the protocol's primary statistic"


def _catalog(root, tmp_path):
    build_site(root, tmp_path / "site")
    return {run["name"]: run for run in catalog_runs(tmp_path / "site")}


def _timing(latency, primary):
    def change(spec):
        spec["timing"] = {"latencyNs": latency, "primaryStatistic": primary}
    return change


def test_a_run_declaring_min_is_ranked_by_its_median_like_the_others(registry_copy, tmp_path):
    # torch's median (12 ms) is slower than liger's 9.11 ms; only its min (1 ms) is faster.
    def change(spec):
        _timing({"median": 12_000_000, "min": 1_000_000}, "min")(spec)
        spec["measurements"] = [{"metric": "latency", "statistic": s, "unit": "ns", "value": 12_000_000} for s in ("p20", "p80")]
    edit_run(registry_copy, TORCH_RUN, change)
    runs = _catalog(registry_copy, tmp_path)
    assert runs[TORCH_RUN]["primary"]["statistic"] == "median"
    assert runs[TORCH_RUN]["primary"]["value"] == 12_000_000
    assert (runs[SEED_RUN]["rank"], runs[TORCH_RUN]["rank"]) == (1, 2)
    assert runs[SEED_RUN]["comparisonKey"] == runs[TORCH_RUN]["comparisonKey"]


def test_a_timed_run_without_the_protocols_statistic_is_not_ranked_and_says_why(registry_copy, tmp_path):
    edit_run(registry_copy, TORCH_RUN, _timing({"min": 1_000_000}, "min"))
    runs = _catalog(registry_copy, tmp_path)
    assert runs[TORCH_RUN]["rank"] is None
    assert runs[TORCH_RUN]["notEligible"] == [NO_MEDIAN]
    assert runs[SEED_RUN]["rank"] == 1
    page = (tmp_path / "site" / "runs" / TORCH_RUN / "index.html").read_text()
    assert NO_MEDIAN in html.unescape(page)  # as a reader sees it, whichever way the page escapes quotes


def test_measurements_at_other_statistics_do_not_rank_and_say_which_is_missing(registry_copy, tmp_path):
    # Left with latency measurements at p20 and p80 only, while the protocol ranks by median.
    edit_run(registry_copy, TORCH_RUN, lambda spec: spec.pop("timing"))
    runs = _catalog(registry_copy, tmp_path)
    assert runs[TORCH_RUN]["rank"] is None
    assert runs[TORCH_RUN]["notEligible"] == [NO_MEDIAN]


def _noisy(latency_ns: int):
    """The run's published p20-p80 spread 2x: over the 1.5x that makes a run noisy."""
    def change(spec):
        spec["measurements"] = [{"metric": "latency", "statistic": s, "unit": "ns", "value": v}
                                for s, v in (("p20", latency_ns * 2 // 3), ("p80", latency_ns * 4 // 3))]
    return change


def test_a_rank_that_a_faster_noisy_run_undercuts_is_no_first_place(registry_copy, tmp_path):
    # torch (4.97 ms) is faster than Liger (9.11 ms) in their B200 cohort; made noisy, it holds no
    # rank, and Liger, ranked alone, must not read as the fastest anywhere.
    edit_run(registry_copy, TORCH_RUN, _noisy(4_971_584))
    runs = _catalog(registry_copy, tmp_path)
    site = tmp_path / "site"
    torch_name = runs[TORCH_RUN]["implementation"]
    assert runs[TORCH_RUN]["rankLabel"] == "noisy"
    assert runs[SEED_RUN]["rank"] == 1
    assert f"faster but set aside: {torch_name} (noisy)" in runs[SEED_RUN]["rankLabel"]
    record = html.unescape((site / "runs" / SEED_RUN / "index.html").read_text())
    assert f"faster but set aside: {torch_name} (noisy)" in record
    # No badge states a rank 1 that a faster run undercuts: Liger's only B200 rank is this one.
    # Liger still ranks on the H200, so its badge is made, without a B200 row.
    badge = (site / "badges" / "liger" / "badges.svg").read_text()
    assert "jensen-shannon-divergence · H200" in badge
    assert "jensen-shannon-divergence · B200" not in badge
    # The B200 summary has one group (fp32 forward) of two workloads: at 2,048 tokens Liger leads
    # only among ranked runs, with torch named beside it; at 4,096 torch is ranked alone (Liger failed).
    [group] = json.loads((site / "operations" / "jensen-shannon-divergence" / "nvidia-b200" / "index.json").read_text())["summary"]
    rows = {row["workload"]: row for row in group["rows"]}
    assert (rows["tokens = 2048"]["leader"]["text"], rows["tokens = 2048"]["set_aside"]) == ("Liger", f"{torch_name} (noisy)")
    assert rows["tokens = 4096"]["set_aside"] == ""
    # The answer credits Liger with nothing: at 2,048 tokens it leads among ranked runs only (torch,
    # noisy, measured faster), at 4,096 torch is alone; no workload has a leader alone.
    assert group["answer"] == ("No implementation leads alone at any of the 2 workloads; torch is the only ranked "
                               "implementation at 1 of 2; at 1 of 2 a run set aside (noisy or flagged) measured faster "
                               "than the leader, which is first among ranked runs only there.")
    # The noisy run's own page does not call its "noisy" a rank it represents.
    noisy = html.unescape((site / "runs" / TORCH_RUN / "index.html").read_text())
    assert "Not ranked (noisy)" in noisy and "The implementation's rank: this run represents it" not in noisy


def test_without_a_faster_set_aside_run_the_same_rank_is_a_first_place(registry_copy, tmp_path):
    # The control: the same cohort as published, torch ahead of Liger, nothing set aside.
    runs = _catalog(registry_copy, tmp_path)
    assert runs[SEED_RUN]["rankLabel"] == "2"
    assert runs[TORCH_RUN]["rank"] == 1
    assert "set aside" not in runs[TORCH_RUN]["rankLabel"]
    badge = tmp_path / "site" / "badges" / "torch" / "badges.svg"
    assert "jensen-shannon-divergence · B200 · #1 forward" in badge.read_text()
