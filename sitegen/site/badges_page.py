"""The badges page: every README badge with the Markdown and HTML that embed it, grouped by implementation.

The SVGs themselves are sitegen.site.badges. Snippets use absolute URLs under the site's
base_url, since a badge is embedded in someone else's README, never beside these pages.
Implementation pages link here, to their own group (labels.badges_link).
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.site import labels as L
from sitegen.site import xmltext
from sitegen.site.badges import Badge, LABEL
from sitegen.site.index import Index
from sitegen.site.labels import Link



@dataclass(frozen=True)
class BadgeEntry:
    image: str
    """The SVG's site path."""
    text: str
    """What the badge says (operation, GPU, rank, pass, dtype)."""
    markdown: str
    html: str


@dataclass(frozen=True)
class BadgeGroup:
    id: str
    implementation: Link
    badges: list[BadgeEntry]


@dataclass(frozen=True)
class BadgesPage:
    path: str
    title: str
    groups: list[BadgeGroup]


def _attr(value: str) -> str:
    # Escaped for the snippet's own attribute; the page escapes the whole snippet again to show it.
    return xmltext.text(value, quotes=True)


def _entry(badge: Badge, base: str) -> BadgeEntry:
    image = base + badge.path
    alt = f"{LABEL}: {badge.text}"
    markdown = f"[![{alt.replace(']', '')}]({image})]({badge.cohort_url})"
    html = f'<a href="{_attr(badge.cohort_url)}"><img src="{_attr(image)}" alt="{_attr(alt)}"></a>'
    return BadgeEntry(badge.path, badge.text, markdown, html)


def badges_page(index: Index, made: list[Badge]) -> BadgesPage:
    base = str(index.config.site.base_url)
    base = base if base.endswith("/") else base + "/"
    by_implementation: dict[str, list[Badge]] = {}
    for badge in made:
        by_implementation.setdefault(badge.path.split("/")[1], []).append(badge)
    records = {r.name: r for r in index.registry.of_kind("ImplementationRevision")}
    groups = []
    for name in sorted(by_implementation):
        record = records.get(name)
        title = f"{L.implementation_label(record)} ({name})" if record else name
        groups.append(BadgeGroup(L.badge_anchor(name), Link(title, L.implementation_path(name)),
                                 [_entry(b, base) for b in by_implementation[name]]))
    return BadgesPage(L.BADGES_PATH, "Badges", groups)
