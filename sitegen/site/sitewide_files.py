"""The site-wide files: home, the compare app, the catalog, the schemas, CITATION.cff, static files and
the reader pages (about, listings of feeds and badges)."""

from __future__ import annotations

from sitegen.core.formatversion import API_VERSION
from sitegen.facts.index import Index
from sitegen.format.jsonschema import schema_files
from sitegen.site.dates import build_date
from sitegen.site.engine.write import SiteWriter
from sitegen.site.outputs.catalog import catalog
from sitegen.site.outputs.reader_outputs import Content, write_reader_pages
from sitegen.site.pages.citation import citation_cff
from sitegen.site.pages.compare import compare_app
from sitegen.site.pages.home import home_page
from sitegen.site.render import Renderer, static_files
from sitegen.site.text.jsonout import to_json, twin

SCHEMA_FOLDER = f"schemas/{API_VERSION.rpartition('/')[2]}/"


def write_site_pages(index: Index, renderer: Renderer, writer: SiteWriter, content: Content, made, badged: set[str]) -> None:
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
