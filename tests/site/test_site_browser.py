"""The built site in headless Chromium: the manifest toggles, the citation copies, rankings read in order.

Needs Debian's chromium at /usr/bin/chromium (`apt-get install -y chromium`). Skipped only
when it is absent and CI is not set; in CI a missing browser fails.
"""

from __future__ import annotations

import json
import re

import pytest

import headless
from conftest import OPERATION, SEED_RUN

pytestmark = pytest.mark.browser
headless.require_chromium(module=True)


@pytest.fixture(scope="module")
def served(site):
    with headless.served(site) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with headless.chromium() as chromium:
        yield chromium


def test_record_page_manifest_toggle_and_citation_copy(browser, served, tmp_path):
    origin = served.rstrip("/")
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"], viewport={"width": 1200, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
    page = context.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{served}runs/{SEED_RUN}/index.html")
    assert page.locator("h1").inner_text().startswith("Liger · Jensen-Shannon divergence loss")

    details = page.locator(".manifest details")
    manifest = details.locator("pre")
    assert not manifest.is_visible()
    details.locator("summary").click()
    assert details.evaluate("d => d.open") and manifest.is_visible()
    assert "Hide manifest" in details.locator("summary").inner_text()
    # Opened, the box shows the JSON twin's text, fetched (the page does not print it).
    manifest.filter(has_text='"latencyNs"').wait_for(timeout=10_000)
    assert json.loads(manifest.inner_text())["run"]["metadata"]["name"] == SEED_RUN
    details.locator("summary").click()
    assert not details.evaluate("d => d.open") and not manifest.is_visible()

    page.get_by_role("button", name="Copy citation").click()
    page.get_by_role("status").filter(has_text="Copied").wait_for()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert f"https://registry.example.org/runs/{SEED_RUN}/" in copied
    assert re.search(r"\(sha256:[0-9a-f]{64}\)", copied)
    day = re.search(r"Accessed (\d{4}-\d{2}-\d{2})\.", copied)
    assert day and "[access date]" not in copied

    page.screenshot(path=str(tmp_path / "record.png"), full_page=True)
    assert (tmp_path / "record.png").stat().st_size > 10_000
    assert all(url.startswith(origin) for url in requests), requests
    context.close()


@pytest.mark.parametrize("path", [f"runs/{SEED_RUN}/index.html", f"operations/{OPERATION}/index.html",
                                  f"operations/{OPERATION}/nvidia-h200/index.html", "index.html"])
def test_pages_fit_a_phone_screen(browser, served, path):
    page = browser.new_page(viewport={"width": 375, "height": 800})
    page.goto(served + path)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.close()


def test_operation_ranking_reads_in_ascending_order(browser, served):
    page = browser.new_page()
    count = 0
    for gpu in ("nvidia-b200", "nvidia-h200"):
        page.goto(f"{served}operations/{OPERATION}/{gpu}/index.html")
        tables = page.locator("table.ranking")
        count += tables.count()
        for i in range(tables.count()):
            rows = tables.nth(i).locator("tbody tr:not(.detail)")
            values, ranks = [], []
            for j in range(rows.count()):
                ranks.append(int(rows.nth(j).locator("td").nth(0).inner_text().split()[0].lstrip("=")))
                number, unit = rows.nth(j).locator("td.value").inner_text().split()
                values.append(float(number) * {"ns": 1e-6, "µs": 1e-3, "ms": 1.0, "s": 1e3}[unit])
            assert values == sorted(values) and ranks == sorted(ranks) and ranks[0] == 1
    assert count >= 2
    page.close()
