"""Search as a reader uses it (issue 31 item 5), on the fixture registry built with Pagefind, in Chromium.

A query in the URL (?q=) runs on load and typing writes it back, so a search can be
shared; "/" jumps to the box; a record's result is titled with its timed pass and its
excerpt is the record's own summary (implementation, pass, value, GPU), so forward,
backward and full runs of one workload are told apart; the box takes the dark theme.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

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
    assert any("/runs/" in r["href"] and "torch" in r["title"] for r in _results(page))
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


def test_a_record_result_names_its_pass_and_shows_its_own_numbers(browser, served):
    run = json.loads((FIXTURE / "runs" / f"{SEED_RUN}.json").read_text())["spec"]
    median_ms = run["timing"]["latencyNs"]["median"] / 1e6
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(served + "index.html?q=" + "liger%20b200%20fp32%20forward")
    results = _results(page)
    seed = next(r for r in results if SEED_RUN in r["href"])
    # The seed names no timedPass: its pass is the part after "/" of the source's benchmark name.
    the_pass = run["sourceNative"]["benchmark"].rsplit("/", 1)[1]
    assert the_pass == "forward"
    assert f"{the_pass} pass" in seed["title"]
    assert seed["excerpt"].startswith(f"Liger · {the_pass} pass · {median_ms:.2f} ms median")
    assert "NVIDIA B200" in seed["excerpt"] and "fp32" in seed["excerpt"]
    # Findable by implementation + GPU + dtype + pass: it is among the first results.
    assert SEED_RUN in " ".join(r["href"] for r in results[:3])
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
    for query in ("torch", "revision", "liger-jsd-forward-liger-nvidia-b200-tokens2048"):
        page.goto(served + "index.html?q=" + query)
        results = _results(page)
        page.wait_for_timeout(500)
        wide = page.evaluate("""() => [document.documentElement.scrollWidth,
            ...[...document.querySelectorAll('#search *')].filter(e => e.getBoundingClientRect().right > innerWidth + 1).map(e => e.className)]""")
        assert wide == [390], (query, wide[:5])
        glued = [r["excerpt"] for r in results if re.search(r"\b(project|revision|version|commit|GPU|driver)[A-Z0-9]", r["excerpt"])]
        assert glued == [], (query, glued)
    page.close()
