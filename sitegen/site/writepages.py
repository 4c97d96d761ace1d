"""Which pages and files the site holds: a build (sitegen.site.build) calls these with the facts and
the engine's writer (sitegen.site.engine.session).

Record pages are written by the workers (write_run_pages); everything else by the parent
(write_other_pages): each operation's group (sitegen.site.operation_files) unless the last build's
is taken whole, then the listings, then the site-wide files (sitegen.site.sitewide_files).
"""

from __future__ import annotations

from sitegen.core.progress import Progress
from sitegen.facts.index import Index
from sitegen.site.engine.rendermemo import RenderMemo
from sitegen.site.engine.rowtokens import RowTokens
from sitegen.site.engine.write import SiteWriter
from sitegen.site.operation_files import write_list_pages, write_operation_pages
from sitegen.site.outputs.badges import badges
from sitegen.site.outputs.reader_outputs import Content
from sitegen.site.pages.badges_page import badge_rows, badges_by_implementation
from sitegen.site.pages.listings import gpu_pages, implementation_index, implementation_pages, unmade
from sitegen.site.pages.record_page import record_page, samples_document, samples_path
from sitegen.site.render import Renderer
from sitegen.site.sitewide_files import write_site_pages
from sitegen.site.text.jsonout import to_json, twin


def write_run_pages(index: Index, renderer: Renderer, writer: SiteWriter, runs, advance) -> None:
    for facts in runs:
        page = record_page(facts, index)
        with writer.within(facts.operation.name):
            writer.add(page.path, renderer.render("record.html", page))
            writer.add(twin(page.path), (page.manifest + "\n").encode())
            samples = samples_document(facts)
            if samples is not None:
                writer.add(samples_path(facts.name), to_json(samples))
        advance()


def write_other_pages(index: Index, renderer: Renderer, writer: SiteWriter, memo: RenderMemo, tokens: RowTokens, content: Content,
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
            write_operation_pages(index, renderer, writer, memo, tokens, content, operation, own, made, badged)
        writer.group_files[operation.name] = [f for f in writer.units.get(operation.name, {}) if not f.startswith("runs/")]
    write_list_pages(renderer, writer, memo, tokens, implementation_index(index))
    for record in others:
        write_list_pages(renderer, writer, memo, tokens, implementation_pages(record, index, unmade, badge_rows(index, made.get(record.name))))
    write_list_pages(renderer, writer, memo, tokens, gpu_pages(index, unmade))
    write_site_pages(index, renderer, writer, content, made, badged)
