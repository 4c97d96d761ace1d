"""``sitegen build`` in one pass: load → validate → index → page models → render → write.

Nothing is written unless the whole registry is valid; the site is assembled beside the
output and swapped in only when every page rendered.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from sitegen.registry.config import Config, Site, load_config
from sitegen.core.forkpool import default_jobs
from sitegen.core.problems import InputError, Problem
from sitegen.core.progress import Progress
from sitegen.state.opening import open_cached
from sitegen.facts.index import build_index
from sitegen.site.text import labels as L
from sitegen.site.pages.listings import run_row, implementations_by_operation
from sitegen.site.outputs.reader_outputs import read_content, write_site_edges
from sitegen.site.outputs.search import index_site, page_operation
from sitegen.site.render import Renderer
from sitegen.site.engine.session import (BuildResult, Checked, Rankings, StandbyChanged, check, discard_changed_standby,
                                         publish, render_in_workers, unchanged)
from sitegen.site.writepages import write_other_pages, write_run_pages


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
                index, renderer, writer, write_run_pages,
                lambda: write_other_pages(index, renderer, writer, site.memo, site.tokens, content, progress, by_operation,
                                           site.taken),
                jobs, progress, todo=[f for f in index.runs if f.operation.name not in site.taken],
            )
            # Last: the sitemap lists every HTML page, the workers' record pages included.
            write_site_edges(index, writer)
            if search:
                progress.stage("search index")
                index_site(writer, page_operation(index))
    return BuildResult(checked.out, len(index.runs), len(writer.all_files()), heap=index, explained=site.explained)
