"""A reader without JavaScript reaches every figure that the removed per-pair and per-run files held
(issue 49): from a record page to its raw samples, and to the comparison with its neighbour in the
cohort table, whose distributions are the two record pages' own figures.

Chromium with JavaScript off, on the small fixture registry served over HTTP. The expected numbers
are the fixture's samples (tests/site/fixture_registry.py), not the code under test's.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urljoin

import pytest

import headless

pytestmark = pytest.mark.browser
headless.require_chromium(module=True)

# The H200 cohort's two rows: sitegen's newest run (median 0.82 ms) above Liger's rerun (median 2.24 ms).
SITEGEN_RUN = "sitegen-h200-tokens2048-2026-08-21"
LIGER_RERUN = "liger-h200-tokens2048-rerun-2026-08-20"
LIGER_SAMPLES_NS = sorted([2_250_000, 2_240_000, 2_230_000, 2_260_000, 2_240_000])


@pytest.fixture(scope="module")
def served(site):
    with headless.served(site) as url:
        yield url


@pytest.fixture(scope="module")
def reader():
    with headless.chromium() as chromium:
        context = chromium.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
        yield context.new_page()
        context.close()


def _figure_drawn(page, figure: str) -> None:
    """The figure is on the page, its chart drawn and its table of the same values beside it."""
    block = page.locator(f"figure#{figure}")
    assert block.locator("svg").first.is_visible()
    assert block.locator("table tbody tr").count() >= 2


def test_record_to_its_raw_samples_and_its_neighbour_comparison(served, reader):
    record = f"{served}runs/{LIGER_RERUN}/index.html"
    reader.goto(record)
    _figure_drawn(reader, "samples")

    # The raw samples: a link to the run's own file, every sample as measured.
    href = reader.get_by_role("link", name="Download the raw samples (JSON)").get_attribute("href")
    samples = json.loads(reader.context.request.get(urljoin(record, href)).text())
    assert sorted(samples["samplesNs"]) == LIGER_SAMPLES_NS and samples["run"] == LIGER_RERUN

    # The comparison with the row above (sitegen's), pre-rendered: its section of the comparisons page.
    reader.get_by_role("link", name=re.compile("^Compare with sitegen Triton JSD, the row above")).click()
    reader.wait_for_load_state()
    assert "/compare/" in reader.url and "?" not in reader.url
    pair = reader.locator("#" + reader.url.split("#")[1])
    text = re.sub(r"\s+", " ", pair.inner_text())
    assert f"Liger is {2.24 / 0.82:.2f}× slower than sitegen Triton JSD" in text, text[:400]
    assert re.search(r"95% interval of the ratio: \d+\.\d+–\d+\.\d+×", text)
    assert "sitegen Triton JSD is faster by the rule that gives a distinct rank" in text

    # Both distributions: each link leads to the figure on that run's record page.
    for name, run in (("sitegen Triton JSD", SITEGEN_RUN), ("Liger", LIGER_RERUN)):
        link = pair.get_by_role("link", name=f"{name}: histogram of its raw samples, with its table")
        target = urljoin(reader.url, link.get_attribute("href"))
        assert target.split("#") == [f"{served}runs/{run}/index.html", "samples"], target
        reader.goto(target)
        _figure_drawn(reader, "samples")
        reader.go_back()
        pair = reader.locator("#" + reader.url.split("#")[1])
