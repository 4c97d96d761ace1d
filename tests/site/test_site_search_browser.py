"""Search as a reader uses it (issue 31 item 5), on the fixture registry built with Pagefind, in Chromium.

A query in the URL (?q=) runs on load and typing writes it back, so a search can be
shared; "/" jumps to the box; record pages are not indexed (issue 49: a fragment per run), so a
record is found through the pages that list it, one link away; the box takes the dark theme.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest

import headless
from conftest import FIXTURE, OPERATION, SEED_RUN
from sitegen.site.build import build_site

pytestmark = pytest.mark.browser
headless.require_chromium(module=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    out = tmp_path_factory.mktemp("search") / "site"
    build_site(FIXTURE, out, search=True)
    with headless.served(out) as url:
        yield url


RESULTS = ".pagefind-ui__result"


def _results(page) -> list[dict[str, str]]:
    page.locator(RESULTS).first.wait_for(timeout=30_000)
    found = page.locator(RESULTS)
    return [{"href": found.nth(i).locator(".pagefind-ui__result-link").get_attribute("href"),
             "title": found.nth(i).locator(".pagefind-ui__result-link").inner_text(),
             "excerpt": found.nth(i).locator(".pagefind-ui__result-excerpt").inner_text()} for i in range(found.count())]


def test_a_query_in_the_url_runs_and_typing_writes_it_back(browser, served):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(served + "index.html?q=torch")
    assert page.locator("#search input").input_value() == "torch"
    assert any("torch" in (r["title"] + r["excerpt"]).lower() for r in _results(page))
    page.locator("#search input").fill("liger b200")
    page.wait_for_function("() => new URLSearchParams(location.search).get('q') === 'liger b200'")
    shared = page.url
    page.close()
    again = browser.new_page(viewport={"width": 1280, "height": 900})
    again.goto(shared)
    assert again.locator("#search input").input_value() == "liger b200"
    assert _results(again)
    again.locator("#search input").fill("")
    again.wait_for_function("() => !new URLSearchParams(location.search).has('q')")
    again.close()


def test_slash_focuses_the_box_from_anywhere_but_a_text_field(browser, served):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(served + "index.html")
    page.locator("#search input").wait_for()
    page.locator("h1").click()
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement === document.querySelector('#search input')")
    assert page.locator("#search input").input_value() == ""  # the "/" itself is not typed
    page.close()


def test_a_record_is_found_through_a_page_that_lists_it_not_as_a_result_of_its_own(browser, served):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(served + "index.html?q=" + "liger%20b200")
    _results(page)
    page.wait_for_timeout(500)  # every shard's results merged
    results = _results(page)
    assert not any("/runs/" in r["href"] for r in results), [r["href"] for r in results]
    # Among the first results, a page whose links lead to the seed record (Liger's forward run on the B200).
    listing = [r["href"] for r in results[:5]
               if f"runs/{SEED_RUN}/" in page.context.request.get(urljoin(served, r["href"])).text()]
    assert listing, [r["href"] for r in results[:5]]
    page.close()


def test_the_search_box_takes_the_dark_theme(browser, served):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page = context.new_page()
    page.goto(served + "index.html")
    box = page.locator("#search input")
    box.wait_for()
    colours = page.evaluate("""() => [getComputedStyle(document.querySelector('#search input')).backgroundColor,
                                      getComputedStyle(document.body).backgroundColor,
                                      getComputedStyle(document.querySelector('#search input')).color]""")
    assert colours[0] == colours[1] and colours[0] != "rgb(255, 255, 255)", colours
    assert colours[2] != colours[0]
    context.close()


def test_an_operation_and_a_gpu_are_found_first_by_their_names(browser, served):
    """The operation's and the GPU's own pages come before the runs whose titles carry the same
    words (issue 50 item 2): the shortest name holding every word searched for first."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    for query, first in (("jensen shannon", f"operations/{OPERATION}/"), ("jensen-shannon", f"operations/{OPERATION}/"),
                         ("b200", "gpus/nvidia-b200/"), ("jensen h200", f"operations/{OPERATION}/nvidia-h200/")):
        page.goto(served + "index.html?q=" + query.replace(" ", "%20"))
        results = _results(page)
        assert urlsplit(results[0]["href"]).path.endswith("/" + first), (query, [r["href"] for r in results[:5]])
        # Listed once: the page is indexed by its name only, not again by its text.
        assert sum(urlsplit(r["href"]).path.endswith("/" + first) for r in results) == 1
    page.close()


def test_results_fit_a_phone_and_excerpts_keep_labels_apart_from_values(browser, served):
    """At 390 px the results stay inside the page (they once made it 543 px wide), and a page's
    label and value stay two words in an excerpt ("project PyTorch", never "projectPyTorch")."""
    import re

    page = browser.new_page(viewport={"width": 390, "height": 900})
    for query in ("torch", "liger", "jensen shannon b200"):
        page.goto(served + "index.html?q=" + query)
        results = _results(page)
        page.wait_for_timeout(500)
        wide = page.evaluate("""() => [document.documentElement.scrollWidth,
            ...[...document.querySelectorAll('#search *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1).map(e => e.className)]""")
        assert wide == [390], (query, wide[:5])
        glued = [r["excerpt"] for r in results if re.search(r"\b(project|revision|version|commit|GPU|driver)[A-Z0-9]", r["excerpt"])]
        assert glued == [], (query, glued)
    page.close()
