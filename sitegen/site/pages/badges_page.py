"""The badges pages: every README badge with the Markdown and HTML that embed it.

The SVGs themselves are sitegen.site.outputs.badges, one per implementation holding a rank, a row
per badge. Each gets a page beside its SVG (badges/<implementation>/), linked from its
implementation page, with one Markdown and one HTML snippet and each row's table;
badges/index.html lists those pages, listings.PAGE_ITEMS a page, since the bundled registry's
KernelBench data alone has over a thousand implementations (one page of every badge was
13 MB). Snippets use absolute URLs under the site's base_url: a badge is embedded in
someone else's README, never beside these pages.

The data is in the pages' JSON twins, as everywhere on the site: each implementation's
badges/<implementation>/index.json holds its badges (text, cohort), its SVG and snippets, and the
index's pages (badges/index.json first) list the implementations with a link to that twin.
No file holds every badge: the one that did (badges/index.json, issue 49) was the site's
largest at 3.4 MB and grew with every implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.site.text import labels as L
from sitegen.site.text import xmltext
from sitegen.site.text.jsonout import twin
from sitegen.site.outputs.badges import LABEL, Badge
from sitegen.facts.index import Index
from sitegen.site.text.labels import Link
from sitegen.site.pages.listings import Pager, item_pages


@dataclass(frozen=True)
class BadgeEntry:
    text: str
    """What the badge's row says (operation, GPU, rank, pass, dtype)."""
    cohort: str
    """Where the row links: the table that ranks it (an absolute URL)."""
    table: str
    """The same table's site path, for the page's own link."""


@dataclass(frozen=True)
class BadgeCount:
    implementation: Link
    """The implementation's badges page."""
    count: int
    json: str
    """The implementation's badges as JSON: its badges page's twin, where a program finds them."""


@dataclass(frozen=True)
class BadgesPage:
    path: str
    title: str
    implementation: Link | None
    """On an implementation's badges page: its implementation page."""
    badges: list[BadgeEntry]
    listed: list[BadgeCount]
    """On the index: the implementations with badges, this page's share of them."""
    pager: Pager | None = None
    image: str = ""
    """On an implementation's badges page: its SVG's site path, a row per badge."""
    markdown: str = ""
    """Markdown that embeds the SVG, linking the implementation's page (absolute URLs)."""
    html: str = ""


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
    listed = [BadgeCount(Link(titles[n], L.badges_link(n)), len(by_implementation[n]), twin(L.badges_link(n)))
              for n in names]
    return [BadgesPage(at, "Badges" if pager is None or pager.number == 1 else f"Badges · page {pager.number}", None, [], chunk, pager)
            for at, chunk, pager in item_pages(L.BADGES_PATH, listed)]


def implementation_badges_page(index: Index, name: str, made: list[Badge]) -> BadgesPage:
    """One implementation's badges page: its badges (``made``) with their snippets."""
    base = str(index.config.site.base_url)
    base = base if base.endswith("/") else base + "/"
    title = _titles(index, [name])[name]
    page = L.implementation_path(name)
    markdown, html = _snippets(base + made[0].path, f"{LABEL}: " + "; ".join(b.text for b in made), base + page)
    return BadgesPage(L.badges_link(name), f"Badges of {title}", Link(title, page),
                      [BadgeEntry(b.text, b.cohort_url, b.cohort_url.removeprefix(base)) for b in made], [], image=made[0].path, markdown=markdown, html=html)
