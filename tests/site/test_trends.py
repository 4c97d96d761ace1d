"""Trends on record pages: one implementation's runs of one cohort over observed date and over
version, every point linked to its run, and a change marked by the rule in docs/record-format.md.

The registry is the small fixture plus planted runs of sitegen's kernel on the H200 cohort
(its two fixture runs have medians 0.81 and 0.82 ms): a second revision that is 1.20 ms (a
planted step, far outside the 0.81–0.83 ms interval of the run before), then 1.205 ms
(inside the interval of the run before, and under the 1% minimum effect: no change).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import headless
from conftest import relock
from sitegen.digest import document_digest
from sitegen.rerun.stats import summary
from sitegen.site.build import build_site

BASE_RUN = "sitegen-h200-tokens2048-2026-08-21"
STEP_RUN = "sitegen-v2-h200-tokens2048-2026-08-22"
FLAT_RUN = "sitegen-v2-h200-tokens2048-2026-08-23"
LIGER_RUN = "liger-h200-tokens2048-rerun-2026-08-20"


def _plant(root: Path) -> None:
    base = json.loads((root / "runs" / f"{BASE_RUN}.json").read_text())
    implementation = json.loads((root / "implementations" / "sitegen-triton.json").read_text())
    implementation["metadata"]["name"] = "sitegen-triton-v2"
    implementation["spec"]["projectRevision"]["commit"] = "2222222222222222"
    (root / "implementations" / "sitegen-triton-v2.json").write_text(json.dumps(implementation, indent=2))
    for name, samples_ms, day in ((STEP_RUN, [1.21, 1.20, 1.19, 1.20, 1.22], "2026-08-22"),
                                  (FLAT_RUN, [1.205, 1.20, 1.21, 1.205, 1.20], "2026-08-23")):
        run = json.loads(json.dumps(base))
        run["metadata"] = {"name": name, "title": f"sitegen Triton JSD · {name}"}
        samples = [round(ms * 1e6) for ms in samples_ms]
        stated = summary(samples)
        run["spec"]["implementationDigest"] = document_digest(implementation)
        run["spec"]["timing"] = {"latencyNs": {k: stated[k] for k in ("median", "min", "max", "p20", "p80")},
                                 "primaryStatistic": "median", "samplesNs": samples}
        run["spec"]["evidence"].pop("rerunOf", None)
        run["spec"]["observedAt"] = f"{day}T09:00:00Z"
        (root / "runs" / f"{name}.json").write_text(json.dumps(run, indent=2))
    relock(root)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    from conftest import FIXTURE
    import shutil

    root = tmp_path_factory.mktemp("trend") / "records"
    shutil.copytree(FIXTURE, root)
    _plant(root)
    out = root.parent / "site"
    build_site(root, out)
    return out


def _figure(site: Path, run: str, chart: str) -> str:
    html = (site / "runs" / run / "index.html").read_text(encoding="utf-8")
    found = re.search(rf'<figure class="chart-block" id="{chart}">.*?</figure>', html, re.S)
    assert found, f"no {chart} chart on {run}"
    return found.group(0)


def _table(figure: str) -> list[list[str]]:
    return [[re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", figure, re.S)[1:]]


def test_the_planted_step_is_marked_and_the_flat_run_is_not(planted):
    figure = _figure(planted, FLAT_RUN, "history")
    rows = _table(figure)
    # The four sitegen runs in observed order (Liger's rerun is another implementation: not in it).
    assert [r[0][:10] for r in rows] == ["2026-08-20", "2026-08-21", "2026-08-22", "2026-08-23"]
    changes = [r[-1] for r in rows]
    assert changes[0] == changes[1] == changes[3] == ""
    # 1.20 / 0.82 = 1.463: 46.3% slower, outside the run before's interval 0.81–0.83 ms.
    assert changes[2].startswith("▲ 46.3% slower than the run before, outside its interval 810–830 µs"), changes[2]
    assert figure.count('class="step"') == 1
    assert "1 change marked." in figure and "outside the 95% interval of the run" in figure


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
    from sitegen.site import trends

    monkeypatch.setattr(trends, "TREND_POINTS", 2)
    out = tmp_path / "site"
    build_site(planted.parent / "records", out, jobs=1)
    figure = _figure(out, FLAT_RUN, "history")
    rows = _table(figure)
    assert [r[0][:10] for r in rows] == ["2026-08-22", "2026-08-23"]
    # The planted step's earlier run is not drawn, but the change was found over every run.
    assert rows[0][-1].startswith("▲ 46.3% slower") and figure.count('class="step"') == 1
    assert "The 2 newest of 4 runs; 1 change marked." in figure


@pytest.mark.parametrize("later_ms, interval_ms, marked", [
    (0.85, (0.80, 0.82), "up"),      # outside the interval, 4.9% slower: a change
    (0.77, (0.80, 0.82), "down"),    # outside, 4.9% faster
    (0.8125, (0.80, 0.812), None),   # just outside the interval but 0.3% off: under the 1% minimum effect
    (0.84, (0.70, 0.90), None),      # 3.7% slower but inside a wide interval: noise, not a change
])
def test_the_rule_needs_both_the_interval_and_the_minimum_effect(later_ms, interval_ms, marked):
    from conftest import FIXTURE
    from sitegen.config import load_config
    from sitegen.registry import open_registry
    from sitegen.site.index import build_index
    from sitegen.site.runfacts import Interval
    from sitegen.site.trends import changes

    index = build_index(open_registry(FIXTURE), load_config(FIXTURE))
    earlier, later = (index.by_digest[d] for d in sorted(f.digest for f in index.runs if f.name.startswith("sitegen-h200-tokens2048-2026")))
    earlier.value, earlier.interval = 810_000.0, Interval(interval_ms[0] * 1e6, interval_ms[1] * 1e6, "bootstrap")
    later.value = later_ms * 1e6
    found = changes([earlier, later])
    assert (found[1][0] if found else None) == marked, found
