"""The operation pages: a summary of leaders first, then cohorts by GPU, pass and dtype.

Layout, so that no page grows with the registry: an operation measured on several GPUs
gets a page per GPU (operations/<op>/<gpu-slug>/) under a summary page; a GPU with more
than INLINE_COHORTS cohorts gets a page per pass (…/<gpu-slug>/<pass>/) under its own
summary. A pass with more than COHORTS_PER_PAGE cohorts is split into pages of that many
(…/<pass>/page/<n>/), in workload order. Otherwise everything sits on one page. History is
split the same way and capped; the GPU's page (gpus/<slug>/) lists every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sitegen.site.text import labels as L
from sitegen.site.pages.cohort_table import CohortView, cohort_view
from sitegen.site.pages.compare_layout import compare_page_of
from sitegen.site.outputs.downloads import operation_csv_path
from sitegen.facts.index import Index, RunFacts, path_slug
from sitegen.site.text.labels import Link, operation_gpu_path
from sitegen.site.pages.leaders import SummaryGroup, interval_note, summary
from sitegen.site.pages.placement import first as _first, group_by as _by, pass_chunks as _pass_chunks, pass_path, placement, workload_order
from sitegen.site.pages.listings import RunRow, by_newest, page_path, run_row
from sitegen.facts.ranking import PASS_ORDER, headline_pass
from sitegen.site.pages.sweeps import SweepTable, sweeps

HISTORY_ROWS = 50
# About 1 KB a summary row: the page of GPU links stays under 300 KB with six GPU × dtype groups.
SUMMARY_ROWS = 40
PASS_TITLES = {"full": "full: forward + backward", "forward": "forward pass", "backward": "backward pass"}
HEADLINE_NOTE = ("The headline ranking: implementations split the gradient work between forward and backward "
                 "differently, so only forward + backward together compares like with like.")
SPLIT_NOTE = ("Read each time with the implementation's pass note: an implementation that computes the gradient in "
              "forward is slow here and nearly free in backward, and the other way round.")


@dataclass(frozen=True)
class DtypeSection:
    id: str
    dtype: str
    cohorts: list[CohortView]


@dataclass(frozen=True)
class PassSection:
    id: str
    title: str
    headline: bool
    note: str
    dtypes: list[DtypeSection]


@dataclass(frozen=True)
class GpuSection:
    id: str
    heading: str
    gpu: Link
    filters: list[Link]
    passes: list[PassSection]


@dataclass(frozen=True)
class OperationPage:
    path: str
    title: str
    operation: str
    name: str
    family: str
    expression: str | None
    notes: str | None
    bytes_rule: str | None
    run_count: int
    parent: Link | None
    headline_pass: str | None
    summary: list[SummaryGroup]
    summary_note: str
    """What the summary's interval column is: a 95% bootstrap interval, a range, or both (leaders.interval_note)."""
    subpages: list[Link]
    """The pages below this one (one per GPU, or one per pass), as filter links."""
    subpages_by: str
    """``GPU``, ``pass``, or ``page`` (the pages of one pass's cohorts)."""
    gpus: list[GpuSection]
    not_ranked: list[RunRow]
    sweeps: list[SweepTable]
    history: list[RunRow]
    history_note: str | None
    origin: list[Link] = field(default_factory=list)
    """Where the operation comes from: the file that defines it, at each commit its runs were timed at."""
    csv: str = ""
    """Every run of the operation as CSV (sitegen.site.outputs.downloads)."""


def origin_links(operation, runs: list[RunFacts]) -> list[Link]:
    """The operation's defining file at every commit its runs cite, oldest first.

    Taken from the runs' sourceRefs named "… problem" (an importer names so the file a
    run's workload and operation were read from), and from the operation's own sourceRefs
    when they give a commit; each link opens the file at that commit.
    """
    found: dict[tuple[str, str], tuple[str, Link]] = {}
    refs = [(ref, None) for ref in operation.model.metadata.sourceRefs or []]
    refs += [(ref, f.observed) for f in runs for ref in f.record.model.metadata.sourceRefs or [] if ref.name.endswith(" problem")]
    for ref, day in refs:
        if ref.url and ref.commit and ref.path and (ref.path, ref.commit) not in found:
            when = f" ({day})" if day else ""
            found[(ref.path, ref.commit)] = (day or "", Link(f"{ref.path} at {ref.commit[:7]}{when}", ref.url))
    return [link for _, link in sorted(found.values(), key=lambda pair: (pair[0], pair[1].text))]


def _chunk_label(chunk: list[str], index: Index) -> str:
    """The first and last workload of a page of cohorts, so a reader knows where to look."""
    first, last = _first(index, chunk[0]), _first(index, chunk[-1])
    ends = [f"{L.dtype_label(f.workload) or '—'} {L.workload_label(f.workload)}" for f in (first, last)]
    return ends[0] if ends[0] == ends[1] else f"{ends[0]} … {ends[1]}"


def _pass_order(the_pass: str, headline: str | None) -> tuple:
    return (the_pass != headline, PASS_ORDER.index(the_pass) if the_pass in PASS_ORDER else len(PASS_ORDER), the_pass)


def _gpu_section(keys: list[str], index: Index, headline: str | None) -> GpuSection:
    first = _first(index, keys[0])
    base = path_slug(first.gpu_slug)
    passes, filters = [], []
    by_pass = _by(keys, index, lambda f: f.timed_pass)
    for the_pass in sorted(by_pass, key=lambda p: _pass_order(p, headline)):
        dtypes = []
        for dtype, members in sorted(_by(by_pass[the_pass], index, lambda f: L.dtype_label(f.workload) or "—").items()):
            members.sort(key=lambda k: (workload_order(_first(index, k)), _first(index, k).metric or "", k))
            section_id = f"{base}-{path_slug(the_pass)}-{path_slug(dtype) or 'any'}"
            dtypes.append(DtypeSection(section_id, dtype, [cohort_view(k, index.cohorts[k], index.config, compare_page_of(k, index)) for k in members]))
            filters.append(Link(f"{the_pass} · {dtype}", f"#{section_id}"))
        note = HEADLINE_NOTE if the_pass == headline == "full" else SPLIT_NOTE if the_pass in ("forward", "backward") else ""
        passes.append(PassSection(f"{base}-{path_slug(the_pass)}", PASS_TITLES.get(the_pass, the_pass), the_pass == headline, note, dtypes))
    return GpuSection(id=f"gpu-{base}", heading=first.gpu, gpu=Link(f"All runs on {first.product}", L.gpu_path(first.gpu_slug)),
                      filters=filters, passes=passes)


def _bytes_rule(operation) -> str | None:
    rule = operation.model.spec.bytesMoved
    if rule is None:
        return None
    parts = []
    for the_pass in ("forward", "backward", "full"):
        terms = getattr(rule, the_pass)
        if terms:
            text = " + ".join("·".join([f"{t.coefficient:g}", *t.axes, f"bytes({t.perElementOf})"]) for t in terms)
            parts.append(f"{the_pass} {text}")
    return "; ".join(parts) + (f" ({rule.notes})" if rule.notes else "")


def _history(runs: list[RunFacts], gpu_page: str | None) -> tuple[list[RunRow], str | None]:
    if len(runs) <= HISTORY_ROWS:
        return by_newest(runs), None
    where = "on the GPU's page" if gpu_page else "on each GPU's page"
    return by_newest(runs, HISTORY_ROWS), f"The {HISTORY_ROWS} newest of {len(runs)} runs; every run is listed {where}."


def _summarized_pass(groups, headline: str | None) -> str | None:
    """The pass the summary's heading names: the one its groups share (a GPU without the headline
    pass ranked is summarized by another), none where they differ; the headline if there are none."""
    passes = {g.timed_pass for g in groups}
    return passes.pop() if len(passes) == 1 else (headline if not passes else None)


def operation_pages_with_runs(operation, index: Index) -> list[tuple[OperationPage, list[RunFacts]]]:
    """The operation's page, and its GPU and pass pages where the layout splits it, each with the
    ranked runs its detail sections show (none on a page of links only)."""
    runs = index.runs_of_operation.get(operation.name, [])
    laid_out = placement(index)
    split, by_pass_gpus = laid_out.split.get(operation.name, False), laid_out.by_pass.get(operation.name, frozenset())
    headline = headline_pass(runs)
    title = L.operation_title(operation)
    bytes_rule = _bytes_rule(operation)
    semantics = operation.model.spec.semantics
    origin = origin_links(operation, runs)
    keys = sorted({f.cohort for f in runs if f.cohort})
    runs_of_gpu: dict[str, list[RunFacts]] = {}
    for f in runs:
        runs_of_gpu.setdefault(f.gpu_slug, []).append(f)
    keys_of_gpu = _by(keys, index, lambda f: f.gpu_slug)

    def page(path, heading, parent, page_runs, page_keys, subpages, detail, history_runs, gpu_page, by=None):
        history, note = _history(history_runs, gpu_page) if history_runs else ([], None)
        wanted = set(page_keys)
        # The page of GPU links holds every GPU's summary: cut to its first rows, each GPU's page has them all.
        by_gpu = split and path == L.operation_path(operation.name)
        groups = summary(page_keys, index, headline, SUMMARY_ROWS if by_gpu else None,
                         lambda gpu_slug: operation_gpu_path(operation.name, gpu_slug))
        shown = [f for f in page_runs if f.cohort in wanted] if detail else []
        return OperationPage(
            path=path, title=heading, operation=title, name=operation.name, family=operation.model.spec.family,
            expression=semantics.expression if semantics else None, notes=semantics.notes if semantics else None,
            bytes_rule=bytes_rule, run_count=len(page_runs), parent=parent,
            headline_pass=_summarized_pass(groups, headline),
            summary=groups, summary_note=interval_note(groups), subpages=subpages, subpages_by=by or ("pass" if gpu_page else "GPU"),
            gpus=[_gpu_section(ks, index, headline) for _, ks in sorted(_by(page_keys, index, lambda f: f.gpu_slug).items())] if detail else [],
            not_ranked=[run_row(f) for f in page_runs if f.cohort is None] if history_runs else [],
            sweeps=sweeps(shown) if detail else [],
            history=history, history_note=note, origin=origin, csv=operation_csv_path(operation.name) if runs else "",
        ), shown

    main_path = L.operation_path(operation.name)
    top = Link(f"All results for {title}", main_path)
    pages = []
    if split:
        gpu_links = [Link(runs_of_gpu[s][0].product, operation_gpu_path(operation.name, s)) for s in sorted(runs_of_gpu)]
        pages.append(page(main_path, f"All results for {title}", None, runs, keys, gpu_links, False, [], None))
    for gpu_slug in sorted(runs_of_gpu):
        gpu_runs, gpu_keys = runs_of_gpu[gpu_slug], keys_of_gpu.get(gpu_slug, [])
        product = gpu_runs[0].product
        gpu_path = operation_gpu_path(operation.name, gpu_slug) if split else main_path
        heading = f"{title} on {product}" if split else f"All results for {title}"
        if gpu_slug in by_pass_gpus:
            by_pass = _by(gpu_keys, index, lambda f: f.timed_pass)
            ordered = sorted(by_pass, key=lambda p: _pass_order(p, headline))
            links = [Link(PASS_TITLES.get(p, p), pass_path(operation.name, gpu_slug, p)) for p in ordered]
            pages.append(page(gpu_path, heading, top if split else None, gpu_runs, gpu_keys, links, False, gpu_runs, gpu_path))
            for the_pass in ordered:
                chunks = _pass_chunks(by_pass[the_pass], index)
                first = pass_path(operation.name, gpu_slug, the_pass)
                pass_title = f"{title} on {product} · {PASS_TITLES.get(the_pass, the_pass)}"
                numbered = [Link(f"page {n}: {_chunk_label(chunk, index)}", page_path(first, n))
                            for n, chunk in enumerate(chunks, 1)] if len(chunks) > 1 else []
                for number, chunk in enumerate(chunks, 1):
                    wanted = set(chunk)
                    pass_runs = [f for f in gpu_runs if f.cohort in wanted]
                    pages.append(page(page_path(first, number), pass_title if number == 1 else f"{pass_title} · page {number}",
                                      Link(heading, gpu_path), pass_runs, chunk, numbered, True, [], gpu_path, "page"))
        else:
            pages.append(page(gpu_path, heading, top if split else None, gpu_runs, gpu_keys, [], True, gpu_runs, gpu_path))
    return pages
