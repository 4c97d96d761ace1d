"""Every page template fits at 1280 and 390 px, light and dark (issue 31 item 4), on the fixture registry.

One page of each template, in Chromium over HTTP: the document never scrolls sideways, no
table cell clips its text, no table caption sits inside a scrolling box (it would scroll
out of sight with the table), chart text is at least 11 CSS px wide screens and phones
alike, no table needs its sideways scroll, on a 1280 px screen (a desktop reader sees every
column: a one-line "Latency, median (ms)" header once pushed the Observed column out of
sight) or on a phone (wide tables read as a block per row there), no two texts of a chart overlap and none is cut off at its edge (the phone's larger
text once ran legend entries and axis titles into one another), and every line and mark of
a chart stands out from the page's own background.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import headless
from conftest import OPERATION, relock
from sitegen.site.build import build_site

ROOT = Path(__file__).resolve().parents[2]
SAMPLED_RUN = "sitegen-h200-tokens2048-2026-08-21"
PAGES = {
    "home.html": "index.html",
    "list.html": "implementations/liger/index.html",
    "operation.html": f"operations/{OPERATION}/nvidia-b200/index.html",
    "record.html": f"runs/{SAMPLED_RUN}/index.html",
    "schemas.html": "schemas/index.html",
    "page.html": "pages/how-ranks-work/index.html",
    "badges.html": "badges/index.html",
    "protocol.html": "protocols/sitegen-rerun-forward/index.html",
}
# The compare pages, the pre-rendered pairs and the in-browser one (built by compare.js;
# the value is the page and what shows it is ready).
COMPARE_APP = "compare/index.html?a=sitegen-h200-tokens2048-2026-08-21&b=liger-h200-tokens2048-rerun-2026-08-20"
MIN_CHART_TEXT_PX = 11

pytestmark = pytest.mark.browser
headless.require_chromium(module=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The fixture registry with the bundled registry's "How ranks work" page (the fixture has no page)."""
    root = tmp_path_factory.mktemp("layout") / "records"
    shutil.copytree(ROOT / "tests" / "fixtures" / "registry-small", root)
    (root / "pages").mkdir()
    shutil.copy(ROOT / "records" / "pages" / "how-ranks-work.md", root / "pages")
    relock(root)
    out = root.parent / "site"
    build_site(root, out)
    return out


def _pages(site: Path) -> dict[str, tuple[str, str | None]]:
    """Every page measured: the templates' pages, then the comparisons page with the most pairs and the in-browser compare page."""
    pairs = sorted((p for p in site.glob("compare/*/**/index.html")), key=lambda p: -p.read_text(encoding="utf-8").count('class="pair"'))
    pages = {template: (path, None) for template, path in PAGES.items()}
    pages["compare_group.html"] = (pairs[0].relative_to(site).as_posix(), None)
    pages["compare_app.html"] = (COMPARE_APP, "#compare-distributions svg")
    return pages


@pytest.fixture(scope="module")
def served(site):
    with headless.served(site) as url:
        yield url


MEASURE = """() => {
  const clipped = [];
  for (const cell of document.querySelectorAll("main td, main th")) {
    if (cell.scrollWidth > cell.clientWidth + 1) clipped.push(cell.textContent.trim().slice(0, 60));
  }
  const captions = [];
  for (const caption of document.querySelectorAll("main caption, main figcaption")) {
    for (let up = caption.parentElement; up && up !== document.body; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (overflow === "auto" || overflow === "scroll") { captions.push(caption.textContent.trim().slice(0, 60)); break; }
    }
  }
  const small = [];
  for (const svg of document.querySelectorAll("main svg.chart")) {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    for (const text of svg.querySelectorAll("text")) {
      const px = parseFloat(getComputedStyle(text).fontSize) * scale;
      if (px < %(min)s) small.push([text.textContent.slice(0, 30), Math.round(px * 10) / 10]);
    }
  }
  const crowded = [];
  for (const svg of document.querySelectorAll("main svg.chart")) {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll("text")].map(t => [t.textContent.slice(0, 30), t.getBoundingClientRect()]);
    for (const [text, r] of texts) {
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) crowded.push([text, "cut off"]);
    }
    texts.forEach(([text, a], i) => texts.slice(i + 1).forEach(([other, b]) => {
      if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) crowded.push([text, other]);
    }));
  }
  const scrolled = [...document.querySelectorAll("main .scroll")].filter(box => box.scrollWidth > box.clientWidth + 1)
    .map(box => [(box.querySelector("caption, th") || box).textContent.trim().slice(0, 40), box.scrollWidth, box.clientWidth]);
  return {scroll: document.documentElement.scrollWidth, width: window.innerWidth, clipped, captions, small, crowded, scrolled,
          charts: document.querySelectorAll("main svg.chart").length};
}""" % {"min": MIN_CHART_TEXT_PX}

# The relative luminance contrast (WCAG 2) of each chart stroke against the page background.
CONTRAST = """() => {
  const rgb = c => (c.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
                                  .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const bg = lum(rgb(getComputedStyle(document.body).backgroundColor));
  const low = [];
  for (const path of document.querySelectorAll("main svg.chart path[stroke-dasharray]")) {
    const stroke = getComputedStyle(path).stroke;
    const l = lum(rgb(stroke));
    const ratio = (Math.max(l, bg) + 0.05) / (Math.min(l, bg) + 0.05);
    if (ratio < 3) low.push([stroke, Math.round(ratio * 100) / 100]);
  }
  return low;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_every_template_fits_the_viewport(browser, served, site, width, scheme):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    problems = {}
    for template, (path, ready) in _pages(site).items():
        assert (site / path.split("?")[0]).exists(), (template, path)
        page = context.new_page()
        page.goto(served + path, wait_until="load")
        if ready:
            page.wait_for_selector(ready)
        found = page.evaluate(MEASURE)
        wrong = {key: found[key] for key in ("clipped", "captions", "small", "crowded") if found[key]}
        if found["scroll"] > found["width"]:
            wrong["scroll"] = found["scroll"]
        if found["scrolled"]:
            wrong["table scrolls sideways"] = found["scrolled"]
        low = page.evaluate(CONTRAST)
        if low:
            wrong["low contrast"] = low
        if wrong:
            problems[template] = wrong
        page.close()
    context.close()
    assert problems == {}, problems


def test_the_pages_measured_have_charts_to_measure(browser, served, site):
    """The chart rules above would hold vacuously on pages without charts."""
    page = browser.new_page(viewport={"width": 390, "height": 900})
    measured = _pages(site)
    # The comparisons page draws no chart: it links each run's distribution on its record page.
    for template in ("operation.html", "record.html", "compare_app.html"):
        path, ready = measured[template]
        page.goto(served + path, wait_until="load")
        if ready:
            page.wait_for_selector(ready)
        assert page.evaluate(MEASURE)["charts"] >= 1, path
    page.close()


# Each table cell of a phone's cards with what its label (the ::before text) says it is.
CARD_CELLS = """() => [...document.querySelectorAll("main table.cards td[data-label]")]
  .map(td => [getComputedStyle(td, "::before").content.replace(/^"|: "$/g, ""), td.textContent.trim()])"""


def test_phone_cards_name_each_range_as_what_it_is(browser, served):
    """At 390 px a table reads as cards whose labels replace the header: a published p20–p80
    spread, or a ratio's range from such spreads, is no 95% interval (issue 50 item 3)."""
    cells = []
    for path in (f"operations/{OPERATION}/index.html", f"operations/{OPERATION}/nvidia-b200/index.html"):
        page = browser.new_page(viewport={"width": 390, "height": 900})
        page.goto(served + path, wait_until="load")
        cells += page.evaluate(CARD_CELLS)
        page.close()
    ranges = [(label, text) for label, text in cells if "p20–p80" in text]
    assert ranges and all("95%" not in label for label, _ in ranges), ranges
    assert {label for label, text in ranges if text.endswith("(p20–p80)")} == {"p20–p80 spread"}
    assert {label for label, text in ranges if text.endswith("(published p20–p80)")} == {"Range of the ratio"}
    # The rerun's raw samples give a real 95% interval of the ratio, labelled so.
    assert any(label == "95% bootstrap interval" and "×" in text and "(" not in text for label, text in cells), cells
