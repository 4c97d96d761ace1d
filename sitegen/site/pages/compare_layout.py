"""Where a cohort's neighbour comparisons are: the comparisons page beside the operation page
that shows its table (labels.compare_group_path), in parts of at most PAIRS_PER_PAGE pairs.

An operation page is cut to fit by its cohorts' rows; a pair's comparison (its sides, ratio,
verdict and the fields that differ) weighs more than a row, so the pairs of one operation page
are cut again: the JSD operation's H200 page held 630 KB of comparisons in one. A cohort's pairs
stay on one part, so its table links one page. Laid out once for a whole index, from the
cohorts' own placement (sitegen.site.pages.placement), and kept while the index lives.
"""

from __future__ import annotations

from sitegen.facts.index import Index
from sitegen.facts.perindex import per_index
from sitegen.site.pages.placement import placement
from sitegen.site.text import labels as L

PAIRS_PER_PAGE = 16


def _pairs(index: Index, key: str) -> int:
    rows = [f for f in index.cohorts[key] if f.rank_label is not None]
    return sum(1 for i in range(1, len(rows)) if rows[i - 1].value is not None and rows[i].value is not None)


def part_path(path: str, number: int) -> str:
    return path if number == 1 else path.removesuffix("index.html") + f"part/{number}/index.html"


def _lay_out(index: Index) -> dict[str, str]:
    by_page: dict[str, list[str]] = {}
    for key, page in placement(index).pages.items():
        by_page.setdefault(page, []).append(key)
    pages: dict[str, str] = {}
    for cohort_page, keys in by_page.items():
        number, held = 1, 0
        for key in sorted(keys):
            count = _pairs(index, key)
            if held and held + count > PAIRS_PER_PAGE:
                number, held = number + 1, 0
            held += count
            pages[key] = part_path(L.compare_group_path(cohort_page), number)
    return pages


_pages_of = per_index(_lay_out)


def compare_page_of(key: str, index: Index) -> str:
    """The comparisons page holding the pairs of cohort ``key``."""
    return _pages_of(index)[key]
