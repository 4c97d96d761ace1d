"""``sitegen build`` in one pass: load → validate → index → page models → render → write.

Nothing is written unless the whole registry is valid; the site is assembled beside the
output and swapped in only when every page rendered.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from sitegen.registry.config import Config, Site, load_config
from sitegen.core.forkpool import default_jobs
from sitegen.core.formatversion import API_VERSION
from sitegen.core.problems import InputError, Problem
from sitegen.core.progress import Progress
from sitegen.state.opening import open_cached
from sitegen.format.jsonschema import schema_files
from sitegen.site.text import labels as L
from sitegen.site.charts.views import sweep_charts
from sitegen.site.pages.citation import citation_cff
from sitegen.site.pages.compare import compare_app
from sitegen.site.pages.compare_groups import compare_group_pages
from sitegen.site.outputs.catalog import catalog, run_shard, run_shard_path
from sitegen.site.outputs.downloads import cohort_tables, operation_csv_path, table
from sitegen.site.outputs.feeds import atom_feed
from sitegen.facts.index import Index, build_index
from sitegen.site.text.jsonout import to_json, twin
from sitegen.site.pages.home import home_page
from sitegen.site.pages.listings import gpu_pages, run_row, implementation_index, implementation_pages, implementations_by_operation, unmade
from sitegen.site.pages.operation_page import operation_pages_with_runs
from sitegen.site.outputs.badges import badges
from sitegen.site.pages.badges_page import badges_by_implementation
from sitegen.site.outputs.reader_outputs import (Content, operation_feed_path, operation_where, read_content, write_implementation_badges,
                                         write_reader_pages, write_site_edges)
from sitegen.site.pages.record_page import record_page, samples_document, samples_path
from sitegen.site.render import Renderer, static_files
from sitegen.site.engine.session import (BuildResult, Checked, Rankings, StandbyChanged, check, discard_changed_standby,
                                         publish, render_in_workers, unchanged)
from sitegen.site.engine.rendermemo import RenderMemo
from sitegen.site.engine.rowtokens import RowTokens
from sitegen.site.engine.write import SiteWriter
from sitegen.facts.roofline import floor_ns
from sitegen.site.outputs.search import index_site, page_operation


SCHEMA_FOLDER = f"schemas/{API_VERSION.rpartition('/')[2]}/"


def _epoch_date() -> str | None:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc).date().isoformat()
    return None


def build_date(index: Index) -> str:
    """SOURCE_DATE_EPOCH when set (reproducible-builds convention), else the newest record date."""
    dates = [f.observed for f in index.runs]
    dates += [a.model.spec.date for a in index.registry.of_kind("Attestation")]
    dates += [s.published for s in index.config.sources.values()]
    return _epoch_date() or max(dates, default="1970-01-01")


def operation_date(index: Index, runs) -> str:
    """An operation feed's updated day: SOURCE_DATE_EPOCH, else the newest date of its own runs,
    their notes and their sources. Its own, not the registry's: a note on another operation's run
    must leave this feed's bytes, and so its page group (sitegen.site.engine.reuse), as they were."""
    dates = [f.observed for f in runs] + [a.model.spec.date for f in runs for a in f.attestations]
    sources = {f.run.spec.sourceNative.source for f in runs if f.run.spec.sourceNative}
    dates += [index.config.sources[s].published for s in sources if s in index.config.sources]
    # build_date scans every run: asked only for an operation without dates, since once per
    # operation it made a build O(operations x runs).
    return _epoch_date() or (max(dates) if dates else build_date(index))


def bad_base_url() -> InputError:
    return InputError([Problem("--base-url", "$", "must be an absolute http(s) URL")])


def with_base_url(config: Config, base_url: str) -> Config:
    """``config`` serving from ``base_url``, validated as sitegen.toml's would be."""
    try:
        site = Site.model_validate({**config.site.model_dump(), "base_url": base_url})
    except ValidationError:
        raise bad_base_url() from None
    return config.model_copy(update={"site": site})


@contextmanager
def _long_lived_heap():
    """Keep the collector off the registry while the site is built.

    Loading makes hundreds of thousands of objects that live until the end; each full
    collection walks all of them, which made collection 22% of a 60k-run build and most
    of its superlinear growth. The documents hold no reference cycles, so collection is
    held off while they load, and frozen out of later collections once they are indexed
    (which also spares forked workers from copying the pages a collection would touch);
    pages made after that are collected as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()

    def settle() -> None:
        gc.freeze()
        if was_enabled:
            gc.enable()

    try:
        yield settle
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


@contextmanager
def _rows_released():
    """The run rows of this build's tables (listings.run_row) are dropped with it, and never reach the next."""
    try:
        yield
    finally:
        run_row.cache_clear()


def build_site(records: Path, out: Path, *, base_url: str | None = None, exclude_dry_runs: bool = False,
               progress: Progress | None = None, search: bool = False, unlocked: bool = False,
               jobs: int | None = None, full: bool = False, trust: Path | None = None,
               explain: list[str] = (), checked: Checked | None = None) -> BuildResult:
    """Build the static site of the registry at ``records`` into ``out``; ``search`` runs Pagefind over it.

    A registry without digests.lock is refused unless ``unlocked``. ``jobs`` worker
    processes load the folders the build state does not hold and render the record pages (default: one
    per core). When ``out`` was built by
    sitegen from the very same inputs (fingerprint.build_inputs) and still holds every
    file it wrote, it is left as it is. Documents of files whose bytes were loaded before
    (sitegen.state.cachedload), the rankings of unchanged cohorts (sitegen.site.engine.rankcache) and
    listing rows' tokens (sitegen.site.engine.rowtokens) come from the registry's build state
    (sitegen.state.store), opened once for the build and never with ``full``.
    ``explain``: pages (site paths) to say of whether they were made again, and why (sitegen.site.engine.explain).
    ``checked``: what sitegen.site.engine.uptodate.check found for these very arguments, when the caller asked first.
    """
    progress = progress or Progress(enabled=False)
    if checked is None:
        progress.stage("checking for changes")
        checked = check(records, out, base_url=base_url, exclude_dry_runs=exclude_dry_runs, search=search,
                        unlocked=unlocked, full=full, trust=trust, explain=explain)
    if checked.previous is not None:
        return unchanged(checked)
    options = dict(progress=progress, base_url=base_url, exclude_dry_runs=exclude_dry_runs, search=search,
                   unlocked=unlocked, jobs=jobs, full=full)
    try:
        try:
            return _build(records, checked, **options)
        except StandbyChanged as changed:
            # Someone changed the standby where this build would have written: it is removed, and
            # the site is built again into a new folder, as without one.
            discard_changed_standby(changed, checked)
            return _build(records, checked, **options, use_standby=False)
    finally:
        checked.release()


def _build(records: Path, checked: Checked, *, progress: Progress, base_url, exclude_dry_runs, search, unlocked, jobs,
           full, use_standby: bool = True) -> BuildResult:
    inputs, state = checked.inputs, checked.state
    trusted, reviewed = checked.trusted, checked.reviewed
    with _long_lived_heap() as settle, _rows_released():
        progress.stage("loading and checking records")
        jobs = default_jobs() if jobs is None else jobs
        registry = open_cached(records, require_lock=not unlocked, known=None if full else inputs.files, jobs=jobs, state=state)
        config = load_config(records)
        if trusted is not None:
            config = config.model_copy(update={"trust": trusted, "reviewed": reviewed})
        if base_url:
            config = with_base_url(config, base_url)
        progress.stage("indexing")
        rankings = Rankings(state)
        index = build_index(registry, config, exclude_dry_runs=exclude_dry_runs, rank=rankings.rank)
        content = read_content(records, index)
        settle()
        renderer = Renderer(config.site.title, nav=[(p.title, p.path) for p in content.pages], search=search,
                            runs_by_path={L.run_path(f.name): f for f in index.runs})
        # Which implementation pages go with one operation's group: the group keys and the
        # writer of those pages must agree, so both take this one answer.
        by_operation = implementations_by_operation(index)
        with publish(checked, index, records, by_operation[0], run_row, rankings, progress=progress,
                     use_standby=use_standby) as site:
            writer = site.writer
            render_in_workers(
                index, renderer, writer, _write_run_pages,
                lambda: _write_other_pages(index, renderer, writer, site.memo, site.tokens, content, progress, by_operation,
                                           site.taken),
                jobs, progress, todo=[f for f in index.runs if f.operation.name not in site.taken],
            )
            # Last: the sitemap lists every HTML page, the workers' record pages included.
            write_site_edges(index, writer)
            if search:
                progress.stage("search index")
                index_site(writer, page_operation(index))
    return BuildResult(checked.out, len(index.runs), len(writer.all_files()), heap=index, explained=site.explained)


def _write_list_pages(renderer: Renderer, writer: SiteWriter, memo: RenderMemo, tokens: RowTokens, drafts) -> None:
    for draft in drafts:
        memo.write_draft(writer, renderer, "list.html", draft, tokens)


def _write_run_pages(index: Index, renderer: Renderer, writer: SiteWriter, runs, advance) -> None:
    for facts in runs:
        page = record_page(facts, index)
        with writer.within(facts.operation.name):
            writer.add(page.path, renderer.render("record.html", page))
            writer.add(twin(page.path), (page.manifest + "\n").encode())
            samples = samples_document(facts)
            if samples is not None:
                writer.add(samples_path(facts.name), to_json(samples))
        advance()


def _write_other_pages(index: Index, renderer: Renderer, writer: SiteWriter, memo: RenderMemo, tokens: RowTokens, content: Content,
                       progress: Progress, by_operation: tuple[dict[str, list], list], taken: dict[str, list[str]]) -> None:
    progress.stage("operation, listing and home pages")
    own, others = by_operation
    made = badges_by_implementation(badges(index))
    badged: set[str] = set()  # implementations whose badges went with their operation's pages
    for operation in index.operations:
        if operation.name in taken:
            writer.group_files[operation.name] = taken[operation.name]
            memo.carry(taken[operation.name], writer.taken_from[operation.name].page_keys)
            badged.update(r.name for r in own.get(operation.name, []))
            continue
        with writer.within(operation.name):
            _write_operation_pages(index, renderer, writer, memo, tokens, content, operation, own, made, badged)
        writer.group_files[operation.name] = [f for f in writer.units.get(operation.name, {}) if not f.startswith("runs/")]
    _write_list_pages(renderer, writer, memo, tokens, implementation_index(index))
    for record in others:
        _write_list_pages(renderer, writer, memo, tokens, implementation_pages(record, index, unmade))
    _write_list_pages(renderer, writer, memo, tokens, gpu_pages(index, unmade))
    _write_site_pages(index, renderer, writer, content, made, badged)


def _write_operation_pages(index: Index, renderer: Renderer, writer: SiteWriter, memo: RenderMemo, tokens: RowTokens,
                           content: Content, operation, own, made, badged: set[str]) -> None:
    """Everything that depends on this operation's group alone: the next build takes it whole while its key holds."""
    runs = index.runs_of_operation.get(operation.name, [])
    # The same for each of the operation's pages (up to a thousand at 60,000 runs).
    description, feed, where = content.descriptions.get(operation.name), operation_feed_path(operation.name), operation_where(operation.name, runs)
    for page, shown in operation_pages_with_runs(operation, index):
        writer.add(page.path, renderer.render(
            "operation.html", page, sweep_charts=sweep_charts(shown, floor_of=lambda f: floor_ns(f, index.config)),
            description=description, feed=feed, where=where))
        writer.add(twin(page.path), to_json(page))
        for path, data in cohort_tables(page.path, shown):
            writer.add(path, data)
    writer.add(feed, atom_feed(runs, index, path=feed, title=f"{index.config.site.title}: {L.operation_title(operation)}",
                               page=L.operation_path(operation.name), updated=operation_date(index, runs)))
    if runs:
        writer.add(run_shard_path(operation.name), run_shard(runs))
        writer.add(operation_csv_path(operation.name), table(runs))
    # The comparisons its cohort tables link go with the operation's group: its runs decide them.
    for compared in compare_group_pages(operation, index):
        writer.add(compared.path, renderer.render("compare_group.html", compared))
        writer.add(twin(compared.path), to_json(compared))
    for record in own.get(operation.name, []):
        _write_list_pages(renderer, writer, memo, tokens, implementation_pages(record, index, unmade))
        if record.name in made:
            write_implementation_badges(index, renderer, writer, record.name, made[record.name])
        badged.add(record.name)


def _write_site_pages(index: Index, renderer: Renderer, writer: SiteWriter, content: Content, made, badged: set[str]) -> None:
    home = home_page(index)
    writer.add(home.path, renderer.render("home.html", home))
    writer.add(twin(home.path), to_json(home))
    app = compare_app(index)
    writer.add(app.path, renderer.render("compare_app.html", app))
    writer.add(twin(app.path), to_json(app))
    for name, data in catalog(index):
        writer.add(name, data)
    schemas = schema_files()
    for name, data in schemas.items():
        writer.add(SCHEMA_FOLDER + name, data)
    site, released = index.config.site, build_date(index)
    writer.add("CITATION.cff", citation_cff(
        title=site.title, base_url=site.base_url, repository_url=site.repository_url,
        license=site.license, released=released,
    ))
    for name, data in static_files().items():
        writer.add(name, data)
    write_reader_pages(index, content, renderer, writer, schema_folder=SCHEMA_FOLDER,
                       schema_names=list(schemas), updated=released, badges=made, written=badged)
