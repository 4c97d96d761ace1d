"""The files of one operation's group: its pages, feed, downloads, comparisons, and the implementation
pages and badges that go with it. Everything here depends on that operation's runs alone, so the next
build takes the group whole while its key holds (sitegen.site.engine.reuse)."""

from __future__ import annotations

from sitegen.facts.index import Index
from sitegen.facts.roofline import floor_ns
from sitegen.site.charts.views import sweep_charts
from sitegen.site.dates import operation_date
from sitegen.site.engine.rendermemo import RenderMemo
from sitegen.site.engine.rowtokens import RowTokens
from sitegen.site.engine.write import SiteWriter
from sitegen.site.outputs.catalog import run_shards
from sitegen.site.outputs.downloads import operation_csv_path, table
from sitegen.site.outputs.feeds import atom_feed
from sitegen.site.outputs.reader_outputs import Content, operation_feed_path, operation_where, write_implementation_badges
from sitegen.site.pages.badges_page import badge_rows
from sitegen.site.pages.compare_groups import compare_group_pages
from sitegen.site.pages.listings import implementation_pages, unmade
from sitegen.site.pages.operation_page import operation_pages_with_runs
from sitegen.site.render import Renderer
from sitegen.site.text import labels as L
from sitegen.site.text.jsonout import to_json, twin


def write_list_pages(renderer: Renderer, writer: SiteWriter, memo: RenderMemo, tokens: RowTokens, drafts) -> None:
    for draft in drafts:
        memo.write_draft(writer, renderer, "list.html", draft, tokens)


def write_operation_pages(index: Index, renderer: Renderer, writer: SiteWriter, memo: RenderMemo, tokens: RowTokens,
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
    writer.add(feed, atom_feed(runs, index, path=feed, title=f"{index.config.site.title}: {L.operation_title(operation)}",
                               page=L.operation_path(operation.name), updated=operation_date(index, runs)))
    if runs:
        for path, data in run_shards(operation.name, runs):
            writer.add(path, data)
        writer.add(operation_csv_path(operation.name), table(runs))
    # The comparisons its cohort tables link go with the operation's group: its runs decide them.
    for compared in compare_group_pages(operation, index):
        writer.add(compared.path, renderer.render("compare_group.html", compared))
        writer.add(twin(compared.path), to_json(compared))
    for record in own.get(operation.name, []):
        write_list_pages(renderer, writer, memo, tokens, implementation_pages(record, index, unmade, badge_rows(index, made.get(record.name))))
        if record.name in made:
            write_implementation_badges(index, renderer, writer, record.name, made[record.name])
        badged.add(record.name)
