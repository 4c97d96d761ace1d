"""Page models of the listing pages: home, implementations and GPUs, and the run rows they share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from sitegen.site.text import labels as L
from sitegen.core import units
from sitegen.site.pages.cohort_table import rank_text, value_text
from sitegen.facts.evidence import PLACED, controlled
from sitegen.facts.index import Index, RunFacts
from sitegen.site.text.labels import Link, Row

PAGE_ROWS = 250
"""Runs per implementation or GPU page: about 160 KB of HTML, well under the 300 KB limit."""
PAGE_ITEMS = 400
"""Rows per page of a count list (implementations): about 140 KB of HTML."""


@dataclass(frozen=True)
class RunRow:
    run: Link
    operation: Link
    workload: str
    gpu: Link
    timed_pass: str
    metric: str
    value: str
    rank: str
    level: str
    status: str
    observed: str


@dataclass(frozen=True)
class CountRow:
    item: Link
    count: int
    detail: str = ""


@dataclass(frozen=True)
class Pager:
    """Where one page of a list split over several pages stands."""

    number: int
    first: int
    last: int
    total: int
    pages: list[Link]


@dataclass(frozen=True)
class ListPage:
    """An implementation or GPU page, or the index of either."""

    path: str
    title: str
    heading: str
    facts: list[Row]
    items: list[CountRow]
    runs: list[RunRow]
    pager: Pager | None = None
    """Set when the runs are split over several pages: this is one of them."""


def page_path(path: str, number: int) -> str:
    """Page ``number`` of the list whose first page is ``path`` (…/index.html)."""
    return path if number == 1 else path.removesuffix("index.html") + f"page/{number}/index.html"


def paginated(path: str, title: str, heading: str, facts: list[Row], rows: list[RunRow]) -> list[ListPage]:
    """The list at ``path``, split into pages of PAGE_ROWS runs when it is longer."""
    if len(rows) <= PAGE_ROWS:
        return [ListPage(path, title, heading, facts, [], rows)]
    count = -(-len(rows) // PAGE_ROWS)
    links = [Link(str(n), page_path(path, n)) for n in range(1, count + 1)]
    pages = []
    for n in range(1, count + 1):
        chunk = rows[(n - 1) * PAGE_ROWS:n * PAGE_ROWS]
        first = (n - 1) * PAGE_ROWS + 1
        pager = Pager(n, first, first + len(chunk) - 1, len(rows), links)
        pages.append(ListPage(page_path(path, n), title if n == 1 else f"{title} · page {n}", heading, facts, [], chunk, pager))
    return pages


def implementation_title(record, index: Index) -> str:
    """``Liger · Jensen-Shannon divergence loss · 0.8.0``: implementations are per operation."""
    spec = record.model.spec
    operation = index.registry.by_digest.get(spec.operation.specDigest)
    revision = spec.projectRevision.version or (spec.projectRevision.commit or "")[:12]
    parts = [spec.name, L.operation_title(operation) if operation else None, revision or None]
    return " · ".join(p for p in parts if p)


@lru_cache(maxsize=None)
def run_row(facts: RunFacts) -> RunRow:
    """The row of ``facts`` in every run table; made once per build (build.build_site clears them),
    as a run is listed on its implementation's, its GPU's and maybe its operation's pages."""
    return _run_row(facts)


def _run_row(facts: RunFacts) -> RunRow:
    return RunRow(
        run=Link(f"{L.implementation_label(facts.implementation)} · run {L.run_short_id(facts.digest)}", L.run_path(facts.name)),
        operation=Link(L.operation_title(facts.operation), L.operation_path(facts.operation.name)),
        workload=L.workload_label(facts.workload),
        gpu=Link(facts.gpu, L.gpu_path(facts.gpu_slug)), timed_pass=facts.timed_pass,
        metric=f"{facts.metric} · {facts.statistic}" if facts.metric else "—", value=value_text(facts),
        rank=rank_text(facts), level=facts.level,
        status=facts.run.spec.status, observed=facts.observed,
    )


def by_newest(runs: list[RunFacts], limit: int | None = None, row=run_row) -> list:
    """Rows of the ``limit`` newest runs (all by default), newest first; ``row`` makes a run's row."""
    newest = sorted(runs, key=lambda f: (f.run.spec.observedAt, f.name), reverse=True)
    return [row(f) for f in newest[:limit]]


def unmade(run: RunFacts) -> RunFacts:
    """The ``row`` for listing pages drafted with their runs' facts, whose rows are made only if rendered (rendermemo)."""
    return run


def implementation_items(index: Index) -> list[CountRow]:
    """Each implementation with its run count and project, by label."""
    return sorted((
        CountRow(Link(implementation_title(record, index), L.implementation_path(record.name)),
                 len(index.runs_of_implementation.get(record.name, [])), record.model.spec.projectRevision.project)
        for record in index.registry.of_kind("ImplementationRevision")
    ), key=lambda item: (item.item.text.lower(), item.item.href))


def gpu_items(index: Index) -> list[CountRow]:
    """Each GPU product with its run count and architecture, by path segment."""
    items = []
    for slug_ in sorted(index.runs_of_gpu):
        runs = index.runs_of_gpu[slug_]
        hardware = runs[0].environment.model.spec.hardware
        items.append(CountRow(Link(hardware.product, L.gpu_path(slug_)), len(runs), hardware.architecture))
    return items


def implementation_index(index: Index) -> list[ListPage]:
    """Every implementation, small projects first: KernelBench's thousand compile modes do not bury one kernel."""
    items = implementation_items(index)
    size = Counter(item.detail for item in items)
    items.sort(key=lambda item: (size[item.detail], item.detail.lower(), item.item.text.lower(), item.item.href))
    return paginated_items("implementations/index.html", "Implementations", items)


def item_pages(path: str, items: list) -> list[tuple[str, list, Pager | None]]:
    """(page path, rows, pager) of a list at ``path`` in pages of PAGE_ITEMS rows; one page, without pager, when it fits."""
    count = max(1, -(-len(items) // PAGE_ITEMS))
    links = [Link(str(n), page_path(path, n)) for n in range(1, count + 1)]
    pages = []
    for n in range(1, count + 1):
        chunk = items[(n - 1) * PAGE_ITEMS:n * PAGE_ITEMS]
        first = (n - 1) * PAGE_ITEMS + 1
        pages.append((page_path(path, n), chunk, Pager(n, first, first + len(chunk) - 1, len(items), links) if count > 1 else None))
    return pages


def paginated_items(path: str, heading: str, items: list[CountRow]) -> list[ListPage]:
    """A count list at ``path``, split into pages of PAGE_ITEMS rows when it is longer."""
    return [ListPage(at, heading if pager is None or pager.number == 1 else f"{heading} · page {pager.number}", heading, [], chunk, [], pager)
            for at, chunk, pager in item_pages(path, items)]


def implementation_pages(record, index: Index, row=run_row, badges: list[Row] = ()) -> list[ListPage]:
    """One implementation's page, or pages; ``row`` as by_newest's; ``badges``: its badge's rows (badges_page.badge_rows)."""
    spec = record.model.spec
    runs = index.runs_of_implementation.get(record.name, [])
    facts = L.revision_rows(spec.projectRevision)
    if spec.callable:
        facts.append(Row("callable", f"{spec.callable.module}.{spec.callable.name}"
                         + (f" ({spec.callable.variant})" if spec.callable.variant else ""), code=True))
    if spec.licensing:
        facts.append(Row("license", spec.licensing.license))
    facts.append(Row("digest", record.digest, code=True))
    facts += badges
    label = implementation_title(record, index)
    return paginated(L.implementation_path(record.name), label, label, facts, by_newest(runs, row=row))


def implementations_by_operation(index: Index) -> tuple[dict[str, list], list]:
    """(operation name → the implementations whose pages depend on that operation alone, the others).

    An implementation's page shows its own document and its runs: when it implements one
    operation and every run of it is of that operation, its page changes only with that
    operation's group (sitegen.site.engine.reuse).
    """
    operations = {r.digest: r.name for r in index.operations}
    own: dict[str, list] = {}
    others = []
    for record in sorted(index.registry.of_kind("ImplementationRevision"), key=lambda r: r.name):
        operation = operations.get(record.model.spec.operation.specDigest)
        runs = index.runs_of_implementation.get(record.name, [])
        if operation is not None and all(f.operation.name == operation for f in runs):
            own.setdefault(operation, []).append(record)
        else:
            others.append(record)
    return own, others


def gpu_pages(index: Index, row=run_row) -> Iterator[ListPage]:
    """The index of GPUs, then each GPU's pages, one at a time; ``row`` as by_newest's."""
    yield ListPage("gpus/index.html", "GPUs", "GPUs", [], gpu_items(index), [])
    for slug_ in sorted(index.runs_of_gpu):
        runs = index.runs_of_gpu[slug_]
        env = runs[0].environment.model.spec.hardware
        facts = [Row("product", env.product), Row("architecture", env.architecture), Row("vendor", env.vendor)]
        if env.memoryBytes:
            facts.append(Row("memory", units.byte_size(env.memoryBytes)))
        facts += rerun_rows(runs, slug_)
        path = L.gpu_path(slug_)
        yield from paginated(path, env.product, env.product, facts, by_newest(runs, row=row))


def rerun_rows(runs: list[RunFacts], gpu_slug: str) -> list[Row]:
    """One row per operation with controlled reruns on this GPU: how many, how many hold a place
    (Verified or Replicated), and the days they were measured, linking the operation's page for the GPU.
    A reader of a GPU page learns what the registry re-measured there, not only what sources published."""
    by_operation: dict[str, list[RunFacts]] = {}
    for facts in runs:
        if controlled(facts) and not facts.dry_run:
            by_operation.setdefault(facts.operation.name, []).append(facts)
    rows = []
    for name, reruns in sorted(by_operation.items(), key=lambda item: L.operation_title(item[1][0].operation).lower()):
        days = sorted(f.observed for f in reruns)
        when = days[0] if days[0] == days[-1] else f"{days[0]} to {days[-1]}"
        placed = sum(f.level in PLACED for f in reruns)
        count = f"{len(reruns):,} controlled rerun{'s' if len(reruns) != 1 else ''}"
        rows.append(Row(f"reruns: {L.operation_title(reruns[0].operation)}",
                        f"{count}, {placed:,} Verified or Replicated, measured {when}",
                        href=L.operation_gpu_path(name, gpu_slug)))
    return rows
