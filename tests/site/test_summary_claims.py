"""What the operation summary and the rank reasons claim, held to what the cohorts show."""

from __future__ import annotations

import json

from conftest import OPERATION

from sitegen.core import units


def test_a_workload_with_no_runner_up_is_no_win(site):
    # On the B200, torch beats Liger at tokens 2048; at 4096 Liger's run failed, so torch is the
    # only ranked implementation there: "fastest at every one of the 2 workloads" would claim a
    # comparison that was never made.
    data = json.loads((site / "operations" / OPERATION / "nvidia-b200" / "index.json").read_text())
    [group] = [g for g in data["summary"] if g["dtype"] == "fp32"]
    lone = [r for r in group["rows"] if r["runner_up"] is None]
    assert len(lone) == 1 and len(group["rows"]) == 2
    assert "every one" not in group["answer"]
    assert "torch is fastest alone at 1 of 2 workloads" in group["answer"]
    assert "torch is the only ranked implementation at 1 of 2" in group["answer"]


def _footnote(site, page: str) -> str:
    html = (site / "operations" / OPERATION / page / "index.html").read_text(encoding="utf-8")
    return next(line for line in html.splitlines() if "Each ratio is the runner-up" in line).replace("&#39;", "'")


def test_the_summary_calls_an_interval_95_percent_only_when_it_is_a_bootstrap_one(site):
    # The B200 runs publish p20 and p80 only: the summary's interval is a range between them, no 95% interval.
    b200 = _footnote(site, "nvidia-b200")
    assert "95%" not in b200 and "range between the two runs' own intervals" in b200, b200
    # The H200 runs (sitegen and Liger's rerun) have raw samples: a 95% bootstrap interval of the ratio.
    h200 = _footnote(site, "nvidia-h200")
    assert "95% bootstrap interval of that ratio" in h200 and "range between" not in h200, h200


def test_equal_values_and_other_units_read_as_words_not_as_slower():
    assert units.slower_than(5.0, 5.0, "ns", "torch") == "as fast as torch"
    assert units.slower_than(1830.0, 1000.0, "ns", "torch") == "1.83× slower than torch"
    # A memory cohort ranks lower first too, but more memory is not "slower".
    assert units.slower_than(1200.0, 1000.0, "MB", "torch") == "1.20× more than torch"
    assert units.slower_than(7.0, 7.0, "MB", "torch") == "the same as torch"


def test_the_home_leader_is_first_alone_most_often_and_a_tie_is_named():
    from sitegen.site.pages.home import _most_firsts

    # Shared firsts count only after outright ones: 65 alone beats 23 alone + 78 shared.
    assert _most_firsts({"torch eager": [65, 3], "reduce-overhead": [23, 78]}) == (["torch eager"], 65, 3)
    # Equal on both counts: both named, whatever their names' order.
    assert _most_firsts({"torch": [3, 0], "Liger": [3, 0], "HF": [1, 0]}) == (["Liger", "torch"], 3, 0)
    assert _most_firsts({"b": [2, 1], "a": [2, 0]}) == (["b"], 2, 1)


def test_a_leader_only_ever_sharing_first_place_is_said_to_share_it():
    """A home row read "first alone in 0 of 6 workloads, shared first in 6 more"."""
    from sitegen.site.pages.home import _detail

    assert _detail(0, 6, 6, "workload") == "shared first in 6 of 6 workloads"
    assert _detail(0, 2, 3, "cohort", tied=True) == "each shared first in 2 of 3 cohorts"
    assert _detail(4, 1, 6, "workload") == "first alone in 4 of 6 workloads, shared first in 1 more"
    assert _detail(1, 0, 1, "workload") == "first alone in 1 of 1 workload"
