"""Reads a built site back: strict HTML5 parse, links, ids and asset references of every page."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import html5lib
from html5lib.constants import namespaces

XHTML = namespaces["html"]


@dataclass
class Page:
    path: str
    tree: object
    ids: set[str] = field(default_factory=set)
    refs: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attribute, value)

    def text(self) -> str:
        return " ".join("".join(self.tree.itertext()).split())

    def find_all(self, tag: str):
        return list(self.tree.iter(f"{{{XHTML}}}{tag}"))


def parse(site: Path, relative: str) -> Page:
    """Parse one page strictly: any HTML5 parse error raises."""
    data = (site / relative).read_bytes()
    tree = html5lib.HTMLParser(strict=True, namespaceHTMLElements=True).parse(data)
    page = Page(relative, tree)
    for element in tree.iter():
        if not isinstance(element.tag, str):
            continue
        tag = element.tag.split("}")[-1]
        if element.get("id"):
            page.ids.add(element.get("id"))
        for attribute in ("href", "src"):
            if element.get(attribute) is not None:
                page.refs.append((tag, attribute, element.get(attribute)))
    return page


def pages(site: Path) -> dict[str, Page]:
    return {p.relative_to(site).as_posix(): parse(site, p.relative_to(site).as_posix()) for p in sorted(site.rglob("*.html"))}


def resolve(page_path: str, href: str) -> tuple[str, str]:
    """(target file relative to the site root, fragment) of an internal link."""
    parts = urlsplit(href)
    base = posixpath.dirname(page_path)
    target = posixpath.normpath(posixpath.join(base, unquote(parts.path))) if parts.path else page_path
    return target, parts.fragment


def catalog_runs(site: Path) -> list[dict]:
    """Every run line of the catalog's shards, as catalog.json points at them."""
    import json

    index = json.loads((site / "catalog.json").read_text())
    return [json.loads(line) for shard in index["runShards"] for part in shard["shards"]
            for line in (site / part).read_text().splitlines()]
