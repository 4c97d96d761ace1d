"""The compare pages in Chromium, on the small fixture registry served over HTTP.

A pair the cohort table links reads without JavaScript (a pre-rendered page); any pair
reads with JavaScript from the runs' JSON twins (compare/index.html?a=…&b=…), by the same
rules. Expected numbers come from the fixture's own samples and published medians
(tests/site/fixture_registry.py), not from the code under test.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

import headless
from conftest import TORCH_RUN

pytestmark = pytest.mark.browser
headless.require_chromium(module=True)

# The H200 cohort's two rows (fixture_registry.py): sitegen's newest run, samples 0.82, 0.81,
# 0.81, 0.83, 0.82 ms (median 0.82), and Liger's rerun, 2.25, 2.24, 2.23, 2.26, 2.24 ms (median 2.24).
SITEGEN_RUN = "sitegen-h200-tokens2048-2026-08-21"
SITEGEN_FIRST = "sitegen-h200-tokens2048-2026-08-20"
LIGER_RERUN = "liger-h200-tokens2048-rerun-2026-08-20"
MEDIAN_RATIO = 2.24 / 0.82
# A bootstrap median of five samples is one of the samples: the ratio's ends lie between these.
RATIO_FLOOR, RATIO_CEILING = 2.23 / 0.83, 2.26 / 0.81
INTERVAL = re.compile(r"95% interval of the ratio: (\d+\.\d+)–(\d+\.\d+)×")
RANGE = re.compile(r"Range of the ratio: (\d+\.\d+)–(\d+\.\d+)×")


@pytest.fixture(scope="module")
def served(site):
    with headless.served(site) as url:
        yield url


def _text(page) -> str:
    return re.sub(r"\s+", " ", page.inner_text("main"))


def _static_pair(browser, served) -> tuple[str, str]:
    """Follow the H200 cohort table's link from Liger's row to its comparison, JavaScript off; (url, the pair's text):
    the pairs of a page's tables share one comparisons page, each in the section the link's anchor names."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(served + "operations/jensen-shannon-divergence/nvidia-h200/index.html")
    page.get_by_role("link", name=re.compile("^compare with sitegen Triton JSD")).click()
    page.wait_for_load_state()
    section = page.locator("#" + page.url.split("#")[1])
    found = page.url, re.sub(r"\s+", " ", section.inner_text())
    context.close()
    return found


def test_a_pair_the_cohort_table_links_reads_without_javascript(browser, served):
    url, text = _static_pair(browser, served)
    assert "/compare/" in url and "index.html?" not in url
    assert f"Liger is {MEDIAN_RATIO:.2f}× slower than sitegen Triton JSD" in text, text[:400]
    low, high = map(float, INTERVAL.search(text).groups())
    assert RATIO_FLOOR <= low <= MEDIAN_RATIO <= high <= RATIO_CEILING, (low, high)
    assert "sitegen Triton JSD is faster by the rule that gives a distinct rank" in text
    # Both distributions are linked (their record pages draw them), and the diff names the planted
    # difference of GPU instance.
    assert "sitegen Triton JSD: histogram of its raw samples, with its table" in text
    assert "Liger: histogram of its raw samples, with its table" in text
    assert re.search(r"run\.spec\.evidence\.instance\.gpuUuid GPU-2222bbbb GPU-1111aaaa", text), text
    assert "Environment: the same in every field" in text


def test_any_pair_compares_with_javascript_from_the_url(browser, served):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # Across GPUs: torch's published B200 median (4.971583843 ms, p20 = p80) over sitegen's first H200 run
    # (samples 0.81, 0.80, 0.80, 0.82, 0.81 ms, median 0.81).
    page.goto(served + f"compare/index.html?a={SITEGEN_FIRST}&b={TORCH_RUN}")
    page.locator("#compare-interval").filter(has_text="ratio").wait_for(timeout=20_000)
    text = _text(page)
    ratio = 4.971583843 / 0.81
    assert f"is {ratio:.2f}× slower than" in text, text[:400]
    # Without samples on both sides the ratio of interval ends is a range, never called a 95% interval.
    assert "95% interval of the ratio" not in text
    low, high = map(float, RANGE.search(text).groups())
    # Interval ends: torch's published (degenerate) p20–p80 over the ends of sitegen's median interval,
    # which lie among its samples.
    assert 4.971583843 / 0.82 - 1e-3 <= low <= ratio <= high <= 4.971583843 / 0.80 + 1e-3, (low, high)
    assert "range from each run's bootstrap and published p20–p80" in text
    assert "Not in one comparison group" in text
    assert "Not a ranking:" in text and "is faster" not in text
    assert re.search(r"environment\.spec\.hardware\.product NVIDIA H200 NVIDIA B200", text), text
    assert page.locator("#compare-distributions svg").count() == 1  # torch published no samples
    assert "no raw samples published" in text
    assert errors == []
    page.close()


def test_the_script_follows_the_pre_rendered_pages_rule(browser, served):
    """The same pair with JavaScript: the same ratio, and interval ends within 0.2% of the build's (the
    ratio of interval ends, the rule for runs without samples, would give 2.687–2.790×: 0.4% off)."""
    _, static = _static_pair(browser, served)
    page = browser.new_page()
    page.goto(served + f"compare/index.html?a={SITEGEN_RUN}&b={LIGER_RERUN}")
    page.locator("#compare-interval").filter(has_text="95%").wait_for(timeout=20_000)
    dynamic = _text(page)
    assert "(ratio 2.732×)" in static and "(ratio 2.732×)" in dynamic
    built = list(map(float, INTERVAL.search(static).groups()))
    browser_made = list(map(float, INTERVAL.search(dynamic).groups()))
    assert all(abs(x - y) <= 0.002 * x for x, y in zip(built, browser_made)), (built, browser_made)
    assert "95% bootstrap interval of the ratio" in dynamic
    assert "is faster by the rule that gives a distinct rank" in dynamic
    page.close()


def test_a_name_from_the_url_that_is_no_run_name_is_never_fetched(browser, served):
    page = browser.new_page()
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(served + "compare/index.html?a=..%2F..%2Fcatalog.json%23&b=" + SITEGEN_RUN)
    page.wait_for_load_state("networkidle")
    assert "Not a run name: ../../catalog.json#" in _text(page)
    assert [url for url in requested if url.endswith(".json")] == []
    page.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_both_compare_pages_fit_the_viewport(browser, served, width):
    static_url, _ = _static_pair(browser, served)
    for url, ready in ((static_url, ".compare-ratio"), (served + f"compare/index.html?a={SITEGEN_RUN}&b={TORCH_RUN}", "#compare-diff table")):
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(url)
        page.locator(ready).first.wait_for(timeout=20_000)
        scroll, inner, clipped = page.evaluate("""() => [document.documentElement.scrollWidth, window.innerWidth,
            [...document.querySelectorAll("main td, main th")].filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 60))]""")
        assert scroll <= inner, (url, width, scroll)
        assert clipped == [], (url, width, clipped[:5])
        page.close()


def _pick_jsd(page, url: str) -> None:
    """Open the compare page's picker at ``url`` and choose the JSD operation, as a reader does."""
    page.goto(url + "compare/index.html")
    page.locator("#compare-picker").wait_for(state="visible", timeout=20_000)
    page.focus("#pick-operation")
    page.locator("#pick-operation option[value='catalog/runs/jensen-shannon-divergence.jsonl']").wait_for(state="attached", timeout=20_000)
    page.select_option("#pick-operation", "catalog/runs/jensen-shannon-divergence.jsonl")


def test_two_runs_are_picked_from_lists_not_pasted(browser, served):
    """The compare page asked for two run names of up to 85 characters, typed or pasted; it now
    lists the operations, then each one's runs by implementation, workload, GPU, pass and value."""
    page = browser.new_page(viewport={"width": 390, "height": 900})
    _pick_jsd(page, served)
    assert re.fullmatch(r"jensen-shannon-divergence \(\d+\)", page.locator("#pick-operation option:checked").inner_text())
    page.locator(f"#pick-a option[value='{SITEGEN_RUN}']").wait_for(state="attached", timeout=20_000)
    shown = page.locator(f"#pick-a option[value='{LIGER_RERUN}']").inner_text()
    assert shown.startswith("liger · ") and "NVIDIA H200" in shown and "2.24 ms" in shown, shown
    page.select_option("#pick-a", SITEGEN_RUN)
    page.select_option("#pick-b", LIGER_RERUN)
    page.click("button[type=submit]")
    page.locator("#compare-interval").filter(has_text="95%").wait_for(timeout=20_000)
    assert parse_qs(urlsplit(page.url).query) == {"a": [SITEGEN_RUN], "b": [LIGER_RERUN]}
    assert "(ratio 2.732×)" in _text(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()


def test_an_operation_whose_runs_come_in_parts_lists_the_runs_of_every_part(browser, site, tmp_path):
    """Past 500 runs an operation's run shard comes in parts (catalog.json's "shards", issue 49):
    the picker lists the runs of every part, not the first part's alone. The fixture's operation
    is split here by hand, Liger's rerun alone in the second part."""
    import json
    import shutil

    split = tmp_path / "site"
    shutil.copytree(site, split, symlinks=True, ignore=shutil.ignore_patterns(".site.standby-*"))
    first = split / "catalog" / "runs" / "jensen-shannon-divergence.jsonl"
    second = first.with_name("jensen-shannon-divergence.2.jsonl")
    lines = first.read_text(encoding="utf-8").splitlines(keepends=True)
    first.write_text("".join(line for line in lines if LIGER_RERUN not in line), encoding="utf-8")
    second.write_text("".join(line for line in lines if LIGER_RERUN in line), encoding="utf-8")
    catalog = json.loads((split / "catalog.json").read_text(encoding="utf-8"))
    [entry] = [e for e in catalog["runShards"] if e["operation"] == "jensen-shannon-divergence"]
    entry["shards"] = [entry["shard"], "catalog/runs/jensen-shannon-divergence.2.jsonl"]
    (split / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    with headless.served(split) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        _pick_jsd(page, url)
        page.locator(f"#pick-a option[value='{SITEGEN_RUN}']").wait_for(state="attached", timeout=20_000)
        assert page.locator(f"#pick-a option[value='{LIGER_RERUN}']").count() == 1
        page.close()
