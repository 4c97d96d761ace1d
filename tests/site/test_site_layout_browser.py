"""Every page template fits at 1280 and 390 px, light and dark (issue 31 item 4), on the fixture registry.

One page of each template, in Chromium over HTTP: the document never scrolls sideways, no
table cell clips its text, no table caption sits inside a scrolling box (it would scroll
out of sight with the table), chart text is at least 11 CSS px wide screens and phones
alike, and every line and mark of a chart stands out from the page's own background.
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
    "badges.html": "badges/liger/index.html",
    "protocol.html": "protocols/sitegen-rerun-forward/index.html",
}
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
  return {scroll: document.documentElement.scrollWidth, width: window.innerWidth, clipped, captions, small,
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
    for template, path in PAGES.items():
        assert (site / path).exists(), (template, path)
        page = context.new_page()
        page.goto(served + path, wait_until="load")
        found = page.evaluate(MEASURE)
        wrong = {key: found[key] for key in ("clipped", "captions", "small") if found[key]}
        if found["scroll"] > found["width"]:
            wrong["scroll"] = found["scroll"]
        low = page.evaluate(CONTRAST)
        if low:
            wrong["low contrast"] = low
        if wrong:
            problems[template] = wrong
        page.close()
    context.close()
    assert problems == {}, problems


def test_the_pages_measured_have_charts_to_measure(browser, served):
    """The chart rules above would hold vacuously on pages without charts."""
    page = browser.new_page(viewport={"width": 390, "height": 900})
    for path in (PAGES["operation.html"], PAGES["record.html"]):
        page.goto(served + path, wait_until="load")
        assert page.evaluate(MEASURE)["charts"] >= 1, path
    page.close()
