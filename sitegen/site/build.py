"""``sitegen build`` in one pass: load → validate → index → page models → render → write.

Nothing is written unless the whole registry is valid; the site is assembled beside the
output and swapped in only when every page rendered.
"""

from __future__ import annotations

import gc
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, fields, is_dataclass
from itertools import chain
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from sitegen.config import Config, Site, load_config
from sitegen.formatversion import API_VERSION
from sitegen.problems import InputError, Problem
from sitegen.progress import Progress
from sitegen.registry import open_registry
from sitegen.schemas import schema_files
from sitegen.site import labels as L
from sitegen.site.chart_views import samples_of, sweep_charts
from sitegen.site.citation import citation_cff
from sitegen.site.cohort_table import rank_text
from sitegen.site.fingerprint import build_inputs
from sitegen.site.index import Index, build_index
from sitegen.site.listings import gpu_pages, home_page, implementation_pages
from sitegen.site.operation_page import operation_pages_with_runs
from sitegen.site.reader_outputs import Content, operation_feed_path, operation_where, read_content, write_reader_pages, write_site_edges
from sitegen.site.record_page import record_page, samples_document, samples_path
from sitegen.site.render import Renderer, static_files
from sitegen.site.roofline import floor_ns
from sitegen.site.reuse import group_keys, group_of
from sitegen.site.search import index_site
from sitegen.site.workers import default_jobs, render_in_workers
from sitegen.site.write import SiteWriter, check_output, clean_leftovers, previous_build
from sitegen.transaction import recover


SCHEMA_FOLDER = f"schemas/{API_VERSION.rpartition('/')[2]}/"


@dataclass(frozen=True)
class BuildResult:
    out: Path
    runs: int
    files: int
    fresh: bool = True
    """False when the site was already built from the same inputs and was left as it was."""


def _fields(value) -> dict:
    # What dataclasses.asdict would give for this one level, without its deep copy of
    # every nested value (7.5% of a large build): the encoder recurses by itself.
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json(data) -> bytes:
    """Our own data, page models included: sorted keys, so output never depends on construction order.

    Compact, one line: without ``indent`` json uses its C encoder, several times faster
    on the large listing pages.
    """
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_fields) + "\n").encode()


def build_date(index: Index) -> str:
    """SOURCE_DATE_EPOCH when set (reproducible-builds convention), else the newest record date."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc).date().isoformat()
    dates = [f.observed for f in index.runs]
    dates += [a.model.spec.date for a in index.registry.of_kind("Attestation")]
    dates += [s.published for s in index.config.sources.values()]
    return max(dates, default="1970-01-01")


CATALOG = "catalog.json"


def _jsonl(items: list[dict]) -> bytes:
    return b"".join(to_json(item) for item in items)


def _catalog_row(f) -> dict:
    return {
        "name": f.name, "digest": f.digest, "url": L.run_dir(f.name), "json": _twin(L.run_path(f.name)),
        "operation": f.operation.name, "implementation": f.implementation.name,
        "workload": f.workload.name, "environment": f.environment.name, "protocol": f.protocol.name,
        "gpu": f.product, "timedPass": f.timed_pass,
        "status": f.run.spec.status, "evidenceLevel": f.level, "observedAt": f.run.spec.observedAt,
        "primary": None if f.value is None else {"metric": f.metric, "statistic": f.statistic, "value": f.value, "unit": f.unit},
        "comparisonKey": f.cohort, "rank": f.ranked_as.rank if not f.reasons else None,
        "rankLabel": rank_text(f), "rankReason": None if f.reasons else f.ranked_as.rank_reason,
        "interval": None if f.interval is None else {"low": f.interval.low, "high": f.interval.high, "method": f.interval.method},
        "noisy": f.noisy, "notEligible": f.reasons or None,
        "samples": samples_path(f.name) if samples_of(f) else None,
    }


def catalog(index: Index):
    """catalog.json, a small index, and the JSON Lines shards it points at, as (path, bytes).

    One shard per operation holds its runs, one line each; one per kind holds the
    documents (kind, name, digest). A reader fetches only the operations it needs, and
    no file grows with the whole registry. Made one shard at a time, so the rows of a
    large registry are never all held at once.
    """
    operations = []
    for name in sorted(index.runs_of_operation):
        runs = index.runs_of_operation[name]
        shard = f"catalog/runs/{name}.jsonl"
        yield shard, b"".join(to_json(_catalog_row(f)) for f in runs)
        operations.append({"operation": name, "runs": len(runs), "shard": shard})
    documents: dict[str, list] = {}
    for r in index.registry.records:
        documents.setdefault(r.kind, []).append(r)
    kinds = []
    for kind in sorted(documents):
        shard = f"catalog/documents/{kind}.jsonl"
        yield shard, b"".join(to_json({"kind": r.kind, "name": r.name, "digest": r.digest}) for r in documents[kind])
        kinds.append({"kind": kind, "documents": len(documents[kind]), "shard": shard})
    yield CATALOG, to_json({
        "apiVersion": API_VERSION, "runs": len(index.runs), "documents": len(index.registry.records),
        "runShards": operations, "documentShards": kinds,
    })


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


def build_site(records: Path, out: Path, *, base_url: str | None = None, exclude_dry_runs: bool = False,
               progress: Progress | None = None, search: bool = False, unlocked: bool = False,
               jobs: int | None = None) -> BuildResult:
    """Build the static site of the registry at ``records`` into ``out``; ``search`` runs Pagefind over it.

    A registry without digests.lock is refused unless ``unlocked``. ``jobs`` worker
    processes render the record pages (default: one per core). When ``out`` was built by
    sitegen from the very same inputs (fingerprint.build_inputs) and still holds every
    file it wrote, it is left as it is.
    """
    progress = progress or Progress(enabled=False)
    resolved_out, resolved_records = out.resolve(), records.resolve()
    if resolved_out == resolved_records or resolved_records in resolved_out.parents or resolved_out in resolved_records.parents:
        # The site's JSON twins would be read back as records on the next build.
        raise InputError([Problem(str(out), "$", f"output must be outside the registry folder {records} (and not contain it)")])
    present = check_output(out)
    progress.stage("checking for changes")
    # An interrupted registry write is finished or undone before its files are fingerprinted,
    # as open_registry would before reading them.
    recover(records)
    inputs = build_inputs(records, base_url=base_url, exclude_dry_runs=exclude_dry_runs, search=search, unlocked=unlocked)
    previous = previous_build(out, inputs.digest, present)
    if previous is not None:
        clean_leftovers(out)
        return BuildResult(out, previous.runs, previous.files, fresh=False)
    with _long_lived_heap() as settle:
        progress.stage("loading and checking records")
        registry = open_registry(records, require_lock=not unlocked)
        config = load_config(records)
        if base_url:
            config = with_base_url(config, base_url)
        progress.stage("indexing")
        index = build_index(registry, config, exclude_dry_runs=exclude_dry_runs)
        content = read_content(records, index)
        settle()
        renderer = Renderer(config.site.title, nav=[(p.title, p.path) for p in content.pages], search=search,
                            runs_by_path={L.run_path(f.name): f for f in index.runs})
        keys = group_keys(index, records, inputs)
        writer = SiteWriter(out, inputs=inputs.digest, runs=len(index.runs), groups=keys)
        try:
            todo = _reuse_unchanged(index, writer, keys)
            render_in_workers(
                index, renderer, writer, _write_run_pages,
                lambda: _write_other_pages(index, renderer, writer, content, progress),
                default_jobs() if jobs is None else jobs, progress, todo,
            )
            # Last: the sitemap lists every HTML page, the workers' record pages included.
            write_site_edges(index, writer)
            if search:
                progress.stage("search index")
                index_site(writer.tmp, writer)
            progress.stage("writing files")
            writer.commit()
        except OSError as exc:
            writer.abort()
            raise writer.problem(exc) from None
        except BaseException:
            writer.abort()
            raise
    return BuildResult(out, len(index.runs), len(writer.files))


def _twin(path: str) -> str:
    return path.removesuffix("index.html") + "index.json"


def _run_files(facts) -> list[str]:
    """The files _write_run_pages writes for one run."""
    path = L.run_path(facts.name)
    return [path, _twin(path), *([samples_path(facts.name)] if samples_document(facts) is not None else [])]


def _reuse_unchanged(index: Index, writer: SiteWriter, keys: dict[str, str]) -> list:
    """Link the record pages of every group whose key the site being replaced recorded; the runs left to render."""
    todo = []
    for facts in index.runs:
        group = group_of(keys, facts.operation.name)
        if group is None or writer.previous_groups.get(group) != keys[group] or not writer.reuse(_run_files(facts)):
            todo.append(facts)
    return todo


def _reused_operation(writer: SiteWriter, operation: str) -> bool:
    """Whether the operation's pages were linked from the site being replaced, its group being unchanged."""
    keys = writer.groups or {}
    group = group_of(keys, operation)
    files = writer.previous_group_files.get(operation)
    if group is None or writer.previous_groups.get(group) != keys[group] or not isinstance(files, list):
        return False
    if not all(isinstance(f, str) for f in files) or not writer.reuse(files):
        return False
    writer.group_files[operation] = files
    return True


def _write_run_pages(index: Index, renderer: Renderer, writer: SiteWriter, runs, advance) -> None:
    for facts in runs:
        page = record_page(facts, index)
        writer.add(page.path, renderer.render("record.html", page))
        writer.add(_twin(page.path), (page.manifest + "\n").encode())
        samples = samples_document(facts)
        if samples is not None:
            writer.add(samples_path(facts.name), to_json(samples))
        advance()


def _write_other_pages(index: Index, renderer: Renderer, writer: SiteWriter, content: Content, progress: Progress) -> None:
    progress.stage("operation, listing and home pages")
    for operation in index.operations:
        runs = index.runs_of_operation.get(operation.name, [])
        if _reused_operation(writer, operation.name):
            continue
        before = len(writer.files)
        for page, shown in operation_pages_with_runs(operation, index):
            writer.add(page.path, renderer.render(
                "operation.html", page, sweep_charts=sweep_charts(shown, floor_of=lambda f: floor_ns(f, index.config)), description=content.descriptions.get(operation.name),
                feed=operation_feed_path(operation.name), where=operation_where(operation.name, runs)))
            writer.add(_twin(page.path), to_json(page))
        writer.group_files[operation.name] = writer.files[before:]
    for page in chain(implementation_pages(index), gpu_pages(index)):
        writer.add(page.path, renderer.render("list.html", page))
        writer.add(_twin(page.path), to_json(page))
    home = home_page(index)
    writer.add(home.path, renderer.render("home.html", home))
    writer.add(_twin(home.path), to_json(home))
    for name, data in catalog(index):
        writer.add(name, data)
    for name, data in schema_files().items():
        writer.add(SCHEMA_FOLDER + name, data)
    site, released = index.config.site, build_date(index)
    writer.add("CITATION.cff", citation_cff(
        title=site.title, base_url=site.base_url, repository_url=site.repository_url,
        license=site.license, released=released,
    ))
    for name, data in static_files().items():
        writer.add(name, data)
    write_reader_pages(index, content, renderer, writer, schema_folder=SCHEMA_FOLDER,
                       schema_names=list(schema_files()), updated=released)
