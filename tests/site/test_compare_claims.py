"""A comparison claims no more than the cohort table: "faster" only where the ranking's own
separation test (the ratio's interval excludes 1 and the gap is at least the minimum effect)
would give a distinct rank, never for a noisy run, never across comparison groups.

The registry is the small fixture plus three implementations planted in the H200 cohort
(sitegen's runs there are 0.81-0.82 ms): "tied-a" at a steady 0.500 ms and "tied-b" at a
steady 0.5025 ms (0.5% slower: every resampled ratio is above 1, but the gap is under the
1% minimum effect, so the table ranks them =1), and "noisy-c" at a steady 0.30 ms that its
harness flagged noisy (its processes' medians 20% apart): its ratio to any neighbour excludes
1 by far, yet a noisy run holds no strict rank.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import planting
from conftest import FIXTURE, TORCH_RUN

BASE_RUN = planting.BASE_RUN
PLANTED = {
    "tied-a": [500_000, 500_000, 500_001, 500_000, 500_001],
    "tied-b": [502_500, 502_500, 502_501, 502_500, 502_501],
    "noisy-c": [300_000, 300_001, 300_000, 300_002, 300_001],
}


def _plant(root: Path) -> None:
    for name, samples in PLANTED.items():
        details = {"noisy": True, "processSpreadRel": 0.2} if name == "noisy-c" else None
        planting.run(root, f"{name}-h200", planting.implementation(root, name, name=name), samples, details=details)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    return planting.planted_site(tmp_path_factory.mktemp("claims"), _plant)


def _text(path: Path) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


def _pages_naming(site: Path, implementation: str) -> list[str]:
    """The text of every pre-rendered comparison whose title names ``implementation``: each pair's
    section of the comparisons pages beside the operation pages (compare/<operation>/…)."""
    pairs = []
    for path in sorted((site / "compare").rglob("index.html")):
        if path.parent == site / "compare":
            continue  # the page that compares any two runs in the browser
        for section in re.findall(r'<section class="pair".*?</section>', path.read_text(encoding="utf-8"), re.S):
            title = re.search(r"<h2[^>]*>(.*?)</h2>", section).group(1)
            if implementation in title:
                pairs.append(_text_of(section))
    return pairs


def _text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_pair_tied_under_the_minimum_effect_gets_no_faster_verdict(planted):
    table = _text(planted / "operations" / "jensen-shannon-divergence" / "nvidia-h200" / "index.html")
    # The table itself ranks the two as tied: the premise of the test.
    assert re.search(r"=1 tied-a .*=1 tied-b", table), table[:2000]
    pages = [t for t in _pages_naming(planted, "tied-a") if "tied-b" in t]
    assert len(pages) == 1, len(pages)
    page = pages[0]
    # Written as a ratio, never as a percentage behind.
    assert "is 1.005× slower than" in page and "0.5% slower" not in page, page[:800]
    assert "is faster" not in page and "excludes 1:" not in page, page
    assert "No verdict: tied-b is 1.005× slower than tied-a: under the 1% minimum effect" in page, page


def test_a_noisy_pair_gets_no_verdict(planted):
    pages = _pages_naming(planted, "noisy-c")
    assert pages, "the cohort table links no comparison with the noisy run"
    for page in pages:
        assert "is faster" not in page, page
        # The ratio's interval alone would have called it: it lies wholly on one side of 1.
        low, high = map(float, re.search(r"95% interval of the ratio: (\d+\.\d+)–(\d+\.\d+)×", page).groups())
        assert low > 1 or high < 1, (low, high)
        assert "No verdict: noisy-c is noisy (the harness found its processes disagree (medians 20% apart))" in page, page


def test_a_clear_gap_in_one_group_is_a_verdict(planted):
    # sitegen's 0.82 ms and Liger's 2.24 ms (fixture), neighbours in the H200 table: a distinct rank each.
    pages = [t for t in _pages_naming(planted, "sitegen Triton JSD") if "Liger" in t]
    assert pages and all("sitegen Triton JSD is faster by the rule that gives a distinct rank" in p for p in pages)
    assert all("95% interval of the ratio:" in p for p in pages)


def test_a_pair_across_comparison_groups_is_no_ranking():
    from sitegen.registry.config import load_config
    from sitegen.registry.folder import open_registry
    from sitegen.site.pages.compare import compare_page
    from sitegen.facts.index import build_index

    index = build_index(open_registry(FIXTURE), load_config(FIXTURE))
    torch = next(f for f in index.runs if f.name == TORCH_RUN)
    sitegen = next(f for f in index.runs if f.name == BASE_RUN)
    page = compare_page(sitegen, torch)
    assert "is 6.06× slower than" in page.ratio
    assert page.verdict.startswith("Not a ranking:") and "faster" not in page.verdict.split(",")[0]
    # Torch published p20 and p80, no samples: the ratio of interval ends is a range, not a 95% interval.
    assert page.interval_label == "Range of the ratio"
    assert page.sides_interval_label == "95% interval or p20–p80 range"


@pytest.mark.browser
def test_the_script_gives_the_same_verdicts(planted):
    """compare.js (compare-rules.js) follows the same rule: no verdict for the tied or the noisy pair,
    one for the clear gap, and no ranking across GPUs."""
    import headless

    headless.require_chromium()
    cases = [("tied-a-h200", "tied-b-h200", "No verdict: tied-b · tied-b-h200 is 1.005× slower than tied-a · tied-a-h200: under the 1% minimum effect"),
             ("noisy-c-h200", "tied-a-h200", "No verdict: noisy-c · noisy-c-h200 is noisy (the harness found its processes disagree (medians 20% apart))"),
             ("tied-a-h200", BASE_RUN, "tied-a · tied-a-h200 is faster by the rule that gives a distinct rank"),
             (BASE_RUN, TORCH_RUN, "Not a ranking:")]
    with headless.served(planted) as url, headless.chromium() as browser:
        page = browser.new_page()
        for a, b, expected in cases:
            page.goto(url + f"compare/index.html?a={a}&b={b}")
            page.locator("#compare-verdict").filter(has_text=re.compile(".")).wait_for(timeout=20_000)
            said = page.inner_text("#compare-verdict")
            assert expected in said, (a, b, said)
            if not expected.endswith("distinct rank"):
                assert "is faster" not in said, (a, b, said)
        page.close()


def test_memory_is_more_or_lower_never_slower_or_faster():
    from sitegen.registry.config import load_config
    from sitegen.registry.folder import open_registry
    from sitegen.site.pages.compare import compare_page, ratio_words
    from sitegen.facts.index import build_index

    assert ratio_words("torch", "Liger", 1000.0, 2220.0, "MB") == "Liger is 2.22× more than torch"
    assert ratio_words("torch", "Liger", 2220.0, 1000.0, "MB") == "Liger is 2.22× less than torch"
    index = build_index(open_registry(FIXTURE), load_config(FIXTURE))
    sitegen = next(f for f in index.runs if f.name == BASE_RUN)
    liger = next(f for f in index.runs if f.name == "liger-h200-tokens2048-rerun-2026-08-20")
    for f in (sitegen, liger):  # the same two values read as a memory cohort's
        f.metric, f.unit = "peak memory", "MB"
    page = compare_page(sitegen, liger)
    assert "slower" not in page.ratio and "more than" in page.ratio, page.ratio
    assert page.verdict.startswith("sitegen Triton JSD is lower in peak memory by the rule"), page.verdict
    assert "faster" not in page.verdict and "slower" not in page.verdict
    # The rule's own reason, which rank lines and trends quote, speaks of memory too.
    from sitegen.facts.ranking import separation

    _, reason, _ = separation(sitegen, liger)
    assert "more than" in reason and "slower" not in reason, reason
