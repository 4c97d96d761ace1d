"""The badges: each implementation's on its own page, and the index of implementations that hold one.

The SVGs themselves are sitegen.site.outputs.badges, one per implementation holding a rank, a row
per badge. Its implementation page shows it with each row's text linking the table that ranks it
and the Markdown and HTML that embed it (badge_rows); a badges page and twin per implementation
were 3,298 files for the bundled registry (issue 49). badges/index.html lists the implementations
with badges, listings.PAGE_ITEMS a page, since the bundled registry's KernelBench data alone has
over a thousand. Snippets use absolute URLs under the site's base_url: a badge is embedded in
someone else's README, never beside these pages.

The data is in the pages' JSON twins, as everywhere on the site: an implementation page's twin
holds its badge rows, and the index's pages (badges/index.json first) list the implementations
with a link to that twin. No file holds every badge: the one that did (badges/index.json,
issue 49) was the site's largest at 3.4 MB and grew with every implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.site.text import labels as L
from sitegen.site.text import xmltext
from sitegen.site.text.jsonout import twin
from sitegen.site.outputs.badges import LABEL, Badge
from sitegen.facts.index import Index
from sitegen.site.text.labels import ImageRow, Link, Row
from sitegen.site.pages.listings import Pager, item_pages


@dataclass(frozen=True)
class BadgeCount:
    implementation: Link
    """The implementation's page, which shows its badge."""
    count: int
    json: str
    """The implementation's badge rows as JSON: its page's twin, where a program finds them."""


@dataclass(frozen=True)
class BadgesPage:
    path: str
    title: str
    listed: list[BadgeCount]
    """The implementations with badges, this page's share of them."""
    pager: Pager | None = None


def _attr(value: str) -> str:
    # Escaped for the snippet's own attribute; the page escapes the whole snippet again to show it.
    return xmltext.text(value, quotes=True)


def _snippets(image: str, alt: str, target: str) -> tuple[str, str]:
    markdown = f"[![{alt.replace(']', '')}]({image})]({target})"
    html = f'<a href="{_attr(target)}"><img src="{_attr(image)}" alt="{_attr(alt)}"></a>'
    return markdown, html


def badges_by_implementation(made: list[Badge]) -> dict[str, list[Badge]]:
    by_implementation: dict[str, list[Badge]] = {}
    for badge in made:
        by_implementation.setdefault(badge.path.split("/")[1], []).append(badge)
    return by_implementation


def _titles(index: Index, names) -> dict[str, str]:
    # By lock key, not a map of every implementation: one page asks for one name, 1,600 times a build.
    records = {name: index.registry.named("ImplementationRevision", name) for name in names}
    return {name: name if record is None else f"{L.implementation_label(record)} ({name})" for name, record in records.items()}


def badges_index(index: Index, by_implementation: dict[str, list[Badge]]) -> list[BadgesPage]:
    """The index of implementations with badges, paged; each page's twin is its data (badges/index.json first)."""
    names = sorted(by_implementation)
    titles = _titles(index, names)
    # A name, a count and two links per implementation, never its badges: a page stays
    # listings.PAGE_ITEMS entries whatever the registry's size (issue 49).
    listed = [BadgeCount(Link(titles[n], L.implementation_path(n)), len(by_implementation[n]), twin(L.implementation_path(n)))
              for n in names]
    return [BadgesPage(at, "Badges" if pager is None or pager.number == 1 else f"Badges · page {pager.number}", chunk, pager)
            for at, chunk, pager in item_pages(L.BADGES_PATH, listed)]


def badge_rows(index: Index, made: list[Badge] | None) -> list[Row]:
    """An implementation's badge on its own page (issue 49: a badges page and its twin per implementation
    were 3,298 files for the bundled registry): the SVG, each row's text linking the table that ranks
    it, and the Markdown and HTML that embed it, linking that page (absolute URLs)."""
    if not made:
        return []
    base = str(index.config.site.base_url)
    base = base if base.endswith("/") else base + "/"
    alt = f"{LABEL}: " + "; ".join(b.text for b in made)
    markdown, html = _snippets(base + made[0].path, alt, base + L.implementation_path(made[0].path.split("/")[1]))
    return [ImageRow("badge", "SVG for a README, a row per operation × GPU it ranks on", href=made[0].path, image=made[0].path),
            *(Row("badge row", b.text, href=b.cohort_url.removeprefix(base)) for b in made),
            Row("badge Markdown", markdown, code=True), Row("badge HTML", html, code=True)]
