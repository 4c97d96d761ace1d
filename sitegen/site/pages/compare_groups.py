"""The pre-rendered comparisons of neighbouring rows, one page per operation page.

A cohort table links each ranked row's comparison with the row above it. These were a page
(and a JSON twin) per pair: 13,724 files and 87 MB of the bundled registry's site, the pair's
two distribution charts repeating its record pages'. Now the pairs of every table on one
operation page (operations/<op>/…) are on one page at the same place under compare/, each
under its own anchor (ComparePage.id), with what the pair page held: the ratio, its interval
and the verdict, the two runs side by side, what differs between their manifests. The
distributions are linked, not drawn again: each run's record page draws its own (figure
``#samples``, with its table) and offers its raw samples file. The operation pages are cut to
fit the page-size limit, so pages of their pairs stay in proportion with them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.facts.index import Index, RunFacts
from sitegen.site.pages.compare import APP_PATH, ComparePage, app_link, cohort_pairs, compare_page
from sitegen.site.pages.compare_layout import compare_page_of
from sitegen.site.pages.placement import placement
from sitegen.site.pages.record_page import has_samples, samples_path
from sitegen.site.text import labels as L
from sitegen.site.text.labels import Link


@dataclass(frozen=True)
class Distribution:
    """Where one side's distribution is: its record page's chart, and its raw samples file."""

    name: str
    chart: Link | None
    """The record page's histogram of the raw samples (with its data table); None without samples."""
    samples: str | None
    """The raw samples file (JSON)."""


@dataclass(frozen=True)
class Pair:
    cohort: str
    """The comparison group's key."""
    comparison: ComparePage
    distributions: list[Distribution]


@dataclass(frozen=True)
class CompareGroupPage:
    path: str
    title: str
    cohorts: Link
    """The operation page whose cohort tables these pairs are the neighbouring rows of."""
    pairs: list[Pair]
    app: str
    """The page that compares any two runs (needs JavaScript)."""


def _distribution(facts: RunFacts) -> Distribution:
    name = L.implementation_label(facts.implementation)
    if not has_samples(facts):
        return Distribution(name, None, None)
    return Distribution(name, Link(f"{name}: histogram of its raw samples, with its table", L.run_path(facts.name) + "#samples"),
                        samples_path(facts.name))


def cohort_page_of(facts: RunFacts, index: Index) -> str:
    """The operation page that shows the table of ``facts``'s cohort."""
    return placement(index).pages[facts.cohort]


def compare_group_pages(operation, index: Index) -> list[CompareGroupPage]:
    """The comparisons pages of ``operation``: one per operation page that shows a table with two or more ranked
    rows, in parts where it has more than compare_layout.PAIRS_PER_PAGE pairs."""
    by_page: dict[str, list[Pair]] = {}
    for ahead, behind in cohort_pairs(index, operation.name):
        compared = compare_page(ahead, behind, charts=False)
        pair = Pair(behind.cohort, compared, [_distribution(ahead), _distribution(behind)])
        by_page.setdefault(compare_page_of(behind.cohort, index), []).append(pair)
    title = L.operation_title(operation)
    pages = []
    for path, pairs in sorted(by_page.items()):
        first = pairs[0].comparison.a
        cohort_page = placement(index).pages[pairs[0].cohort]
        where = "" if cohort_page == L.operation_path(operation.name) else f" · {first.gpu}"
        if "/page/" in cohort_page:
            where += f" · {first.timed_pass} · page {cohort_page.split('/page/')[1].split('/')[0]}"
        pages.append(CompareGroupPage(
            path, f"Neighbouring rows compared: {title}{where}" + (f" · part {path.split('/part/')[1].split('/')[0]}" if "/part/" in path else ""),
            Link(f"The comparison groups of {title}{where}", cohort_page), pairs, APP_PATH))
    return pages


__all__ = ["CompareGroupPage", "Distribution", "Pair", "app_link", "cohort_page_of", "compare_group_pages"]
