"""Writes what a reader finds around the pages: site pages, the Operations and Schemas
indexes, Atom feeds, badges, favicon, sitemap.xml and robots.txt.

Markdown content is read (and any problem in it reported) before the build writes
anything: ``read_content`` runs with validation, ``write_*`` with the rest of the site.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from sitegen.site.text import labels as L
from sitegen.site.outputs.badges import Badge, badge_svg
from sitegen.site.pages.badges_page import badges_index
from sitegen.site.pages.directory_pages import operations_index, schemas_index
from sitegen.site.outputs.feeds import FEED_NAME, atom_feed, robots, sitemap
from sitegen.facts.index import Index
from sitegen.site.pages.site_pages import SitePage, load_descriptions, load_pages
from sitegen.site.pages.protocol_pages import protocol_pages


@dataclass(frozen=True)
class Content:
    """The registry's Markdown: site pages and operation descriptions (sanitized HTML)."""

    pages: list[SitePage]
    descriptions: dict[str, str]


def read_content(records: Path, index: Index) -> Content:
    return Content(load_pages(records), load_descriptions(records, [op.name for op in index.operations]))


def _json(data) -> bytes:
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def operation_feed_path(name: str) -> str:
    return L.operation_path(name).removesuffix("index.html") + FEED_NAME


def operation_where(name: str, runs) -> str:
    """The operation's short name and its GPUs in one line, weighted for search: "jsd h200" finds it."""
    gpus = sorted({f.product for f in runs})
    return f"Short name {name}" + (f" · results on {', '.join(gpus)}" if gpus else "")


def _page_and_twin(writer, renderer, template: str, page) -> None:
    writer.add(page.path, renderer.render(template, page))
    writer.add(page.path.removesuffix("index.html") + "index.json", _json(asdict(page)))


def write_implementation_badges(index: Index, renderer, writer, name: str, made: list[Badge]) -> None:
    """An implementation's badge SVG (build writes that of an implementation of one operation with that
    operation's pages, to be reused with them); its page shows it (badges_page.badge_rows)."""
    if made:
        writer.add(made[0].path, badge_svg(made))


def write_reader_pages(index: Index, content: Content, renderer, writer, *, schema_folder: str, schema_names: list[str],
                       updated: str, badges: dict[str, list[Badge]], written: set[str]) -> None:
    """Each operation's own feed is written with its pages (operation_files.write_operation_pages), to be reused
    with them, and so are the badges of implementations in ``written``: here, the others'.
    ``badges``: implementation → its badges (sitegen.site.outputs.badges)."""
    for page in content.pages:
        _page_and_twin(writer, renderer, "page.html", page)
    for page in (operations_index(index), schemas_index(schema_folder, schema_names)):
        _page_and_twin(writer, renderer, "schemas.html" if page.path.startswith("schemas/") else "list.html", page)
    for page in protocol_pages(index):
        _page_and_twin(writer, renderer, "protocol.html", page)
    writer.add(FEED_NAME, atom_feed(index.runs, index, path=FEED_NAME, title=f"{index.config.site.title}: newest records",
                                    page="index.html", updated=updated))
    # badges/index.json is the index's first page's twin: implementations, each linking its page's twin,
    # which holds its badge rows. A list of every badge here was the site's largest file.
    for page in badges_index(index, badges):
        _page_and_twin(writer, renderer, "badges.html", page)
    for name in sorted(badges):
        if name not in written:
            write_implementation_badges(index, renderer, writer, name, badges[name])


def write_site_edges(index: Index, writer) -> None:
    """sitemap.xml (every HTML page written so far) and robots.txt; call last."""
    for name, data in sitemap(index, [f for f in writer.files if f.endswith(".html")]).items():
        writer.add(name, data)
    writer.add("robots.txt", robots(index))
