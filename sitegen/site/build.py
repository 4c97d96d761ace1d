"""``sitegen build`` in one pass: load → validate → index → page models → render → write.

Nothing is written unless the whole registry is valid; the site is assembled beside the
output and swapped in only when every page rendered.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
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
from sitegen.site.index import Index, build_index
from sitegen.site.listings import gpu_pages, home_page, implementation_pages
from sitegen.site.operation_page import operation_pages_with_runs
from sitegen.site.reader_outputs import Content, operation_feed_path, operation_where, read_content, write_reader_pages, write_site_edges
from sitegen.site.record_page import record_page, samples_document, samples_path
from sitegen.site.render import Renderer, static_files
from sitegen.site.roofline import floor_ns
from sitegen.site.search import index_site
from sitegen.site.write import SiteWriter, check_output


SCHEMA_FOLDER = f"schemas/{API_VERSION.rpartition('/')[2]}/"


@dataclass(frozen=True)
class BuildResult:
    out: Path
    runs: int
    files: int


def to_json(data) -> bytes:
    """Our own data: sorted keys, so output never depends on construction order.

    Compact, one line: without ``indent`` json uses its C encoder, several times faster
    on the large listing pages.
    """
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def build_date(index: Index) -> str:
    """SOURCE_DATE_EPOCH when set (reproducible-builds convention), else the newest record date."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc).date().isoformat()
    dates = [f.observed for f in index.runs]
    dates += [a.model.spec.date for a in index.registry.of_kind("Attestation")]
    dates += [s.published for s in index.config.sources.values()]
    return max(dates, default="1970-01-01")


def catalog(index: Index) -> dict:
    runs = []
    for f in index.runs:
        runs.append({
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
        })
    documents = [{"kind": r.kind, "name": r.name, "digest": r.digest} for r in index.registry.records]
    return {"apiVersion": API_VERSION, "runs": runs, "documents": documents}


def bad_base_url() -> InputError:
    return InputError([Problem("--base-url", "$", "must be an absolute http(s) URL")])


def with_base_url(config: Config, base_url: str) -> Config:
    """``config`` serving from ``base_url``, validated as sitegen.toml's would be."""
    try:
        site = Site.model_validate({**config.site.model_dump(), "base_url": base_url})
    except ValidationError:
        raise bad_base_url() from None
    return config.model_copy(update={"site": site})


def build_site(records: Path, out: Path, *, base_url: str | None = None, exclude_dry_runs: bool = False,
               progress: Progress | None = None, search: bool = False, unlocked: bool = False) -> BuildResult:
    """Build the static site of the registry at ``records`` into ``out``; ``search`` runs Pagefind over it.

    A registry without digests.lock is refused unless ``unlocked``.
    """
    progress = progress or Progress(enabled=False)
    resolved_out, resolved_records = out.resolve(), records.resolve()
    if resolved_out == resolved_records or resolved_records in resolved_out.parents or resolved_out in resolved_records.parents:
        # The site's JSON twins would be read back as records on the next build.
        raise InputError([Problem(str(out), "$", f"output must be outside the registry folder {records} (and not contain it)")])
    check_output(out)
    progress.stage("loading and checking records")
    registry = open_registry(records, require_lock=not unlocked)
    config = load_config(records)
    if base_url:
        config = with_base_url(config, base_url)
    progress.stage("indexing")
    index = build_index(registry, config, exclude_dry_runs=exclude_dry_runs)
    content = read_content(records, index)
    renderer = Renderer(config.site.title, nav=[(p.title, p.path) for p in content.pages], search=search,
                        runs_by_path={L.run_path(f.name): f for f in index.runs})
    writer = SiteWriter(out)
    try:
        _write_pages(index, renderer, writer, content, progress)
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


def _write_pages(index: Index, renderer: Renderer, writer: SiteWriter, content: Content, progress: Progress) -> None:
    progress.stage("record pages", total=len(index.runs))
    for facts in index.runs:
        progress.advance()
        page = record_page(facts, index)
        writer.add(page.path, renderer.render("record.html", page))
        writer.add(_twin(page.path), (page.manifest + "\n").encode())
        samples = samples_document(facts)
        if samples is not None:
            writer.add(samples_path(facts.name), to_json(samples))
    progress.stage("operation, listing and home pages")
    for operation in index.operations:
        runs = index.runs_of_operation.get(operation.name, [])
        for page, shown in operation_pages_with_runs(operation, index):
            writer.add(page.path, renderer.render(
                "operation.html", page, sweep_charts=sweep_charts(shown, floor_of=lambda f: floor_ns(f, index.config)), description=content.descriptions.get(operation.name),
                feed=operation_feed_path(operation.name), where=operation_where(operation.name, runs)))
            writer.add(_twin(page.path), to_json(asdict(page)))
    for page in implementation_pages(index) + gpu_pages(index):
        writer.add(page.path, renderer.render("list.html", page))
        writer.add(_twin(page.path), to_json(asdict(page)))
    home = home_page(index)
    writer.add(home.path, renderer.render("home.html", home))
    writer.add(_twin(home.path), to_json(asdict(home)))
    writer.add("catalog.json", to_json(catalog(index)))
    for name, data in schema_files().items():
        writer.add(SCHEMA_FOLDER + name, data)
    site = index.config.site
    writer.add("CITATION.cff", citation_cff(
        title=site.title, base_url=site.base_url, repository_url=site.repository_url,
        license=site.license, released=build_date(index),
    ))
    for name, data in static_files().items():
        writer.add(name, data)
    write_reader_pages(index, content, renderer, writer, schema_folder=SCHEMA_FOLDER,
                       schema_names=list(schema_files()), updated=build_date(index))
    write_site_edges(index, writer)
