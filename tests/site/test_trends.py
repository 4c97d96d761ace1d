"""Trends on record pages: one implementation's runs of one cohort over observed date and over
version, every point linked to its run, and a change marked by the rule in docs/record-format.md.

The registry is the small fixture plus planted runs of sitegen's kernel on the H200 cohort
(its two fixture runs have medians 0.81 and 0.82 ms): a second revision that is 1.20 ms (a
planted step, far outside the 0.81–0.83 ms interval of the run before), then 1.205 ms
(the ratio's interval includes 1, and the gap is under the 1% minimum effect: no change).

Three more series, each an implementation of its own in the same cohort:
- "wide": a steady 0.800 ms run, then one at a 0.83 ms median whose samples spread
  0.78-0.86 ms: 3.7% slower and outside the first run's interval, but the ratio's interval
  includes 1 (a step inside the later run's own spread), so nothing is marked.
- "offset": three runs whose observedAt strings sort apart from their instants
  ("+05:00" offsets, fractions of a second); the middle one (by time) is flagged noisy by its
  harness: drawn, but neither marked nor compared with.
- "moved": a steady 0.800 ms run, then a steady 0.900 ms one on another environment: a
  clear step, marked with both environments named.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

import headless
import planting
from planting import ms
from sitegen.site.build import build_site

BASE_RUN = planting.BASE_RUN
STEP_RUN = "sitegen-v2-h200-tokens2048-2026-08-22"
FLAT_RUN = "sitegen-v2-h200-tokens2048-2026-08-23"
LIGER_RUN = "liger-h200-tokens2048-rerun-2026-08-20"


STEADY = ms(0.800, 0.800, 0.801, 0.800, 0.801)


def _plant(root: Path) -> None:
    v2 = planting.implementation(root, "sitegen-triton-v2", commit="2222222222222222")
    planting.run(root, STEP_RUN, v2, ms(1.21, 1.20, 1.19, 1.20, 1.22), observed="2026-08-22T09:00:00Z")
    planting.run(root, FLAT_RUN, v2, ms(1.205, 1.20, 1.21, 1.205, 1.20), observed="2026-08-23T09:00:00Z")
    wide = planting.implementation(root, "wide", name="wide")
    planting.run(root, "wide-1", wide, STEADY, observed="2026-08-22T09:00:00Z")
    planting.run(root, "wide-2", wide, ms(0.78, 0.80, 0.83, 0.85, 0.86), observed="2026-08-23T09:00:00Z")
    offset = planting.implementation(root, "offset", name="offset")
    planting.run(root, "offset-a", offset, STEADY, observed="2026-08-22T09:00:00+05:00")  # 04:00 UTC
    planting.run(root, "offset-b", offset, ms(0.9, 0.9, 0.9, 0.9, 0.9), observed="2026-08-22T05:00:00.500Z", details={"noisy": True})
    planting.run(root, "offset-c", offset, STEADY, observed="2026-08-22T06:00:00Z")
    moved = planting.implementation(root, "moved", name="moved")
    planting.run(root, "moved-1", moved, STEADY, observed="2026-08-22T09:00:00Z")
    planting.run(root, "moved-2", moved, ms(0.900, 0.900, 0.901, 0.900, 0.901), observed="2026-08-23T09:00:00Z",
                 environment_doc=planting.environment(root, "other-h200-host"))


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    return planting.planted_site(tmp_path_factory.mktemp("trend"), _plant)


def _figure(site: Path, run: str, chart: str) -> str:
    html = (site / "runs" / run / "index.html").read_text(encoding="utf-8")
    found = re.search(rf'<figure class="chart-block" id="{chart}">.*?</figure>', html, re.S)
    assert found, f"no {chart} chart on {run}"
    return found.group(0)


def _table(figure: str) -> list[list[str]]:
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", figure, re.S)[1:]]


def test_the_planted_step_is_marked_and_the_flat_run_is_not(planted):
    figure = _figure(planted, FLAT_RUN, "history")
    rows = _table(figure)
    # The four sitegen runs in observed order (Liger's rerun is another implementation: not in it).
    assert [r[0][:10] for r in rows] == ["2026-08-20", "2026-08-21", "2026-08-22", "2026-08-23"]
    changes = [r[-1] for r in rows]
    assert changes[0] == changes[1] == changes[3] == ""
    # 1.20 / 0.82 = 1.463×, and the bootstrap ratio of samples 1.19-1.22 over 0.81-0.83 ms stays within
    # 1.19/0.83 = 1.43 and 1.22/0.81 = 1.51.
    found = re.match(r"▲ 1\.46× slower than the run before: ratio 1\.463× \(95% bootstrap interval (\d\.\d+)–(\d\.\d+)×\) excludes 1$", changes[2])
    assert found, changes[2]
    assert 1.19 / 0.83 - 1e-3 <= float(found.group(1)) <= 1.463 <= float(found.group(2)) <= 1.22 / 0.81 + 1e-3
    assert figure.count('class="step"') == 1
    assert "1 change marked." in figure and "the interval of their ratio excludes 1" in figure


def test_every_point_links_to_its_run_and_versions_get_their_own_chart(planted):
    figure = _figure(planted, STEP_RUN, "history")
    links = re.findall(r'<a href="([^"]+)"><title>', figure)
    assert len(links) == 4
    for href in links:
        assert (planted / "runs" / STEP_RUN / href).resolve().is_file(), href
    by_version = _figure(planted, STEP_RUN, "versions")
    # Versions in the order first observed: the fixture's commit, then the planted revision.
    assert re.search(r">1917bb0aa1b2</text>.*>222222222222</text>", by_version, re.S)
    assert by_version.count('class="step"') == 1


def test_no_trend_for_a_run_measured_once(planted):
    html = (planted / "runs" / LIGER_RUN / "index.html").read_text(encoding="utf-8")
    assert 'id="history"' not in html and 'id="versions"' not in html


def test_one_version_gets_no_version_chart(site):
    html = (site / "runs" / BASE_RUN / "index.html").read_text(encoding="utf-8")
    assert 'id="history"' in html and 'id="versions"' not in html


@pytest.mark.browser
def test_in_chromium_the_marked_point_opens_the_planted_run(planted):
    headless.require_chromium()
    with headless.served(planted) as url, headless.chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + f"runs/{BASE_RUN}/index.html")
        chart = page.locator("#history svg")
        assert chart.locator("path.step").count() == 1
        marked = chart.locator("a", has=page.locator("path.step"))
        marked.locator("circle").click()
        page.wait_for_url(re.compile(re.escape(f"/runs/{STEP_RUN}/index.html") + "$"))
        page.close()


def test_a_long_trend_shows_its_newest_runs_and_keeps_their_marks(planted, tmp_path, monkeypatch):
    from sitegen.site.charts import trends

    monkeypatch.setattr(trends, "TREND_POINTS", 2)
    out = tmp_path / "site"
    build_site(planted.parent / "records", out, jobs=1)
    figure = _figure(out, FLAT_RUN, "history")
    rows = _table(figure)
    assert [r[0][:10] for r in rows] == ["2026-08-22", "2026-08-23"]
    # The planted step's earlier run is not drawn, but the change was found over every run.
    assert rows[0][-1].startswith("▲ 1.46× slower") and figure.count('class="step"') == 1
    assert "The 2 newest of 4 runs; 1 change marked." in figure


def test_a_step_inside_the_later_runs_own_spread_marks_nothing(planted):
    rows = _table(_figure(planted, "wide-2", "history"))
    assert [r[2] for r in rows] == ["800", "830"]
    # 0.83 ms lies outside the first run's 0.800–0.801 ms interval and is 3.7% slower, but the later
    # run's samples reach down to 0.78 ms: the ratio's interval includes 1.
    assert [r[-1] for r in rows] == ["", ""]


def test_points_sort_by_time_and_a_noisy_run_is_not_compared(planted):
    figure = _figure(planted, "offset-c", "history")
    rows = _table(figure)
    # By string "…05:00:00.500Z" < "…06:00:00Z" < "…09:00:00+05:00"; by time the +05:00 run (04:00 UTC) is first.
    # Each time as its record states it, in its own offset: the +05:00 one reads 09:00 +05:00.
    assert [r[0] for r in rows] == ["2026-08-22 09:00 +05:00", "2026-08-22 05:00 UTC", "2026-08-22 06:00 UTC"]
    assert [r[2] for r in rows] == ["800", "900", "800"]
    # The noisy 0.9 ms run in between is neither marked nor the baseline of the next: no step at all.
    assert [r[-1] for r in rows] == ["", "noisy: not tested for a change", ""]
    assert 'class="step"' not in figure and "no change marked" in figure.lower()


def test_a_step_across_environments_names_both(planted):
    rows = _table(_figure(planted, "moved-2", "history"))
    mark = rows[1][-1]
    assert mark.startswith("▲ 1.12× slower than the run before"), mark
    assert mark.endswith("environment changed (sitegen-nvidia-h200 vs other-h200-host): the step may be the machine's"), mark


def test_the_trend_cache_keeps_no_index_alive():
    import gc
    import weakref

    from conftest import FIXTURE
    from sitegen.registry.config import load_config
    from sitegen.registry.folder import open_registry
    from sitegen.site.charts import trends
    from sitegen.facts.index import build_index

    index = build_index(open_registry(FIXTURE), load_config(FIXTURE))
    run = next(f for f in index.runs if f.name == BASE_RUN)
    assert trends.trend_charts(run, index)  # fills the cache
    assert id(index) in trends._cache
    alive = weakref.ref(index)
    del index, run
    gc.collect()
    assert alive() is None and trends._cache == {}


def test_a_runs_history_row_gives_the_date_its_headline_gives(tmp_path):
    """A KernelBench run timed at 19:25 in California (-08:00) said "observed 2025-01-19" at its
    top and "2025-01-20 03:25" (UTC) in its history table, a day apart for one run."""
    def plant(root: Path) -> None:
        evening = planting.implementation(root, "evening", name="evening")
        planting.run(root, "evening-1", evening, STEADY, observed="2026-08-22T09:00:00Z")
        planting.run(root, "evening-2", evening, STEADY, observed="2026-08-22T19:25:00-08:00")  # 03:25 UTC the next day

    site = planting.planted_site(tmp_path, plant)
    page = html.unescape(re.sub(r"<[^>]+>", " ", (site / "runs" / "evening-2" / "index.html").read_text(encoding="utf-8")))
    headline = re.search(r"observed (\d{4}-\d\d-\d\d)", page)[1]
    rows = _table(_figure(site, "evening-2", "history"))
    assert headline == "2026-08-22" and rows[-1][0] == "2026-08-22 19:25 -08:00", (headline, rows)
