"""Which page each cohort's table is on: laid out once for a whole index, before any page asks.

An operation's cohorts sit on its own page, or, run on several GPUs, on a page per GPU; a GPU
with more than INLINE_COHORTS of them gets a page per pass, COHORTS_PER_PAGE cohorts a page. Record
pages, badges and the operation summary link to a cohort by this layout, so it is decided here once
and read everywhere; pages never write it, and the facts (sitegen.facts) never hold it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.facts.index import Index, RunFacts, path_slug
from sitegen.facts.perindex import per_index
from sitegen.site.pages.listings import page_path
from sitegen.site.text import labels as L

INLINE_COHORTS = 30
# About 2 KB of ranking table and 1.3 KB of sweep per cohort: pages stay near 100 KB.
COHORTS_PER_PAGE = 30


@dataclass(frozen=True)
class Placement:
    pages: dict[str, str]
    """The page each cohort's table is on, by comparison key."""
    split: dict[str, bool]
    """Per operation: whether its cohorts are split into a page per GPU."""
    by_pass: dict[str, frozenset[str]]
    """Per operation: the GPU slugs whose cohorts are split further, a page per pass."""


def _axis_order(value) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, 0, str(value))


def workload_order(facts: RunFacts) -> tuple:
    return tuple((k, _axis_order(v)) for k, v in facts.workload.model.spec.axes.items())


def pass_path(operation: str, gpu_slug: str, the_pass: str) -> str:
    return f"operations/{operation}/{gpu_slug}/{path_slug(the_pass) or 'pass'}/index.html"


def first(index: Index, key: str) -> RunFacts:
    return index.cohorts[key][0]


def group_by(keys: list[str], index: Index, attribute) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(attribute(first(index, key)), []).append(key)
    return groups


def _cohort_order(index: Index, key: str) -> tuple:
    f = first(index, key)
    return (L.dtype_label(f.workload) or "—", workload_order(f), f.metric or "", key)


def pass_chunks(keys: list[str], index: Index) -> list[list[str]]:
    """One pass's cohorts, in the order its page shows them, in pages of COHORTS_PER_PAGE."""
    ordered = sorted(keys, key=lambda k: _cohort_order(index, k))
    return [ordered[i:i + COHORTS_PER_PAGE] for i in range(0, len(ordered), COHORTS_PER_PAGE)]


def _lay_out(index: Index) -> Placement:
    pages: dict[str, str] = {}
    split: dict[str, bool] = {}
    by_pass: dict[str, frozenset[str]] = {}
    for operation, runs in sorted(index.runs_of_operation.items()):
        split[operation] = len({f.gpu_slug for f in runs}) > 1
        keys = sorted({f.cohort for f in runs if f.cohort})
        paged = set()
        for gpu_slug, gpu_keys in group_by(keys, index, lambda f: f.gpu_slug).items():
            if len(gpu_keys) > INLINE_COHORTS:
                paged.add(gpu_slug)
                for the_pass, pass_keys in group_by(gpu_keys, index, lambda f: f.timed_pass).items():
                    for number, chunk in enumerate(pass_chunks(pass_keys, index), 1):
                        for key in chunk:
                            pages[key] = page_path(pass_path(operation, gpu_slug, the_pass), number)
                continue
            for key in gpu_keys:
                pages[key] = L.operation_gpu_path(operation, gpu_slug) if split[operation] else L.operation_path(operation)
        by_pass[operation] = frozenset(paged)
    return Placement(pages, split, by_pass)


@per_index
def placement(index: Index) -> Placement:
    """The layout of ``index``'s cohorts, made on first use and kept while the index lives."""
    return _lay_out(index)


def cohort_href(facts: RunFacts, index: Index) -> str:
    """Where the run's cohort table is."""
    return f"{placement(index).pages[facts.cohort]}#{L.cohort_id(facts.cohort)}"
