"""Long implementation and GPU lists are split into pages that link to each other and
together list every run once, newest first, as the unsplit list does."""

from __future__ import annotations

import re
from pathlib import Path

import html5lib

from conftest import FIXTURE
from sitegen.site.pages import listings
from sitegen.site.build import build_site

GPU = Path("gpus") / "nvidia-b200"


def _run_targets(site: Path, page: Path) -> list[str]:
    """Site-relative targets of the run links in the page's run table, in order."""
    table = page.read_text().split("<tbody>")[1].split("</tbody>")[0]
    hrefs = re.findall(r'<th scope="row"><a href="([^"]+)"', table)
    return [(page.parent / h).resolve().relative_to(site.resolve()).as_posix() for h in hrefs]


def test_long_lists_are_split_into_linked_pages(tmp_path, monkeypatch):
    whole = tmp_path / "whole"
    build_site(FIXTURE, whole)
    expected = _run_targets(whole, whole / GPU / "index.html")
    assert len(expected) == 4  # pages of 3 and 1
    monkeypatch.setattr(listings, "PAGE_ROWS", 3)
    split = tmp_path / "split"
    build_site(FIXTURE, split)
    later = sorted((split / GPU / "page").glob("*/index.html"), key=lambda p: int(p.parent.name))
    pages = [split / GPU / "index.html", *later]
    assert len(pages) == 2
    seen = []
    for number, page in enumerate(pages, 1):
        html5lib.HTMLParser(strict=True).parse(page.read_bytes())
        text = page.read_text()
        assert f"Page {number} of {len(pages)}" in text
        nav = text.split('<nav class="pager"')[1].split("</nav>")[0]
        hrefs = re.findall(r'href="([^"]+)"', nav)
        assert len(hrefs) == len(pages) - 1
        assert all((page.parent / h).resolve().is_file() for h in hrefs)
        assert (page.parent / "index.json").is_file()
        targets = _run_targets(split, page)
        assert len(targets) == (3 if number == 1 else 1)
        seen += targets
    assert seen == expected
    # Every page of the list is in the sitemap, as every other HTML page is.
    sitemap = (split / "sitemap.xml").read_text()
    for page in pages:
        folder = page.parent.relative_to(split).as_posix()
        assert f"{folder}/</loc>" in sitemap


def test_a_pass_with_many_cohorts_is_split_into_pages_that_record_pages_link_to(tmp_path, monkeypatch):
    from sitegen.site.pages import placement

    # Small thresholds stand in for a registry of thousands of cohorts.
    monkeypatch.setattr(placement, "INLINE_COHORTS", 1)
    monkeypatch.setattr(placement, "COHORTS_PER_PAGE", 1)
    site = tmp_path / "site"
    build_site(FIXTURE, site)
    pages = sorted(p for p in (site / "operations").rglob("index.html") if "/page/" in p.as_posix())
    assert pages, "no pass was split"
    for page in pages:
        html5lib.HTMLParser(strict=True).parse(page.read_bytes())
        assert len(re.findall(r'<div class="cohort" id="', page.read_text())) == 1
    # Every record page's "its comparison group" link lands on the page holding that cohort.
    checked = 0
    for record in (site / "runs").glob("*/index.html"):
        found = re.search(r'<a href="([^"#]+)#([^"]+)">its comparison group</a>', record.read_text())
        if found:
            target = (record.parent / found.group(1)).resolve()
            assert f'id="{found.group(2)}"' in target.read_text(), (record, target)
            checked += 1
    assert checked > 3


def _summary_groups(page: Path) -> dict[str, list[str]]:
    """Summary group id → the workloads of its rows, as the page shows them."""
    text = page.read_text()
    groups = {}
    for found in re.finditer(r'<div class="summary-group" id="([^"]+)">(.*?)</table>', text, re.S):
        groups[found.group(1)] = re.findall(r'<tr><th scope="row">([^<]+)</th>', found.group(2))
    return groups


def test_the_page_of_gpu_links_shows_the_first_summary_rows_and_links_to_the_gpu_page_with_all(tmp_path, monkeypatch):
    from sitegen.site.pages import operation_page

    whole = tmp_path / "whole"
    build_site(FIXTURE, whole)
    top = Path("operations") / "jensen-shannon-divergence" / "index.html"
    every = _summary_groups(whole / top)
    assert max(len(rows) for rows in every.values()) == 2
    # A small limit stands in for an operation of hundreds of workloads per GPU.
    monkeypatch.setattr(operation_page, "SUMMARY_ROWS", 1)
    cut = tmp_path / "cut"
    build_site(FIXTURE, cut)
    html5lib.HTMLParser(strict=True).parse((cut / top).read_bytes())
    shown = _summary_groups(cut / top)
    assert shown.keys() == every.keys()
    text = (cut / top).read_text()
    for group, rows in every.items():
        assert shown[group] == rows[:1]
        if len(rows) > 1:
            block = text.split(f'id="{group}"')[1].split('<div class="summary-group"')[0]
            # The answer still counts every workload; the note says how many are shown and where the rest are.
            assert f"at every one of the {len(rows)} workloads" in block or f"of {len(rows)} workloads" in block.split("</p>")[0]
            note = re.search(r'The first 1 of (\d+) workloads, in workload order; <a href="([^"]+)">', block)
            assert note and int(note.group(1)) == len(rows)
            gpu_page = ((cut / top).parent / note.group(2)).resolve()
            assert gpu_page.parent.parent == (cut / top).parent.resolve()
            assert _summary_groups(gpu_page)[group] == rows
