"""Atom feeds of records, site-wide and per operation, and the sitemap and robots.txt.

Entries are runs, newest first by the date their source published them in the registry,
then by the date they were observed (a re-import of old measurements is news on the day it
is published). Feeds hold the newest FEED_SIZE entries; catalog.json holds every run.
"""

from __future__ import annotations

from sitegen.site.text.xmltext import attr as quoteattr
from sitegen.site.text.xmltext import text as escape

from sitegen.site.text import labels as L
from sitegen.core import units
from sitegen.facts.index import Index, RunFacts

FEED_SIZE = 50
FEED_NAME = "feed.xml"


def _base(index: Index) -> str:
    base = index.config.site.base_url
    return base if base.endswith("/") else base + "/"


def published(facts: RunFacts, index: Index) -> str:
    """The day the run was published in this registry: its source's date, else the day it was observed."""
    native = facts.run.spec.sourceNative
    source = index.config.sources.get(native.source) if native else None
    return source.published if source else facts.observed


def _entry(facts: RunFacts, index: Index) -> str:
    link = _base(index) + L.run_dir(facts.name)
    title = " · ".join([L.implementation_label(facts.implementation), L.operation_title(facts.operation),
                        L.workload_label(facts.workload), facts.timed_pass, facts.gpu])
    value = units.show(facts.value, facts.unit) if facts.value is not None else "no primary measurement"
    rank = f"rank {facts.rank}" if facts.rank is not None else "not ranked"
    summary = f"{value} {facts.statistic or ''} · {rank} · {facts.level} evidence · status {facts.run.spec.status}"
    observed = facts.run.spec.observedAt
    return "".join([
        "<entry>",
        f"<title>{escape(title)}</title>",
        f"<link rel=\"alternate\" type=\"text/html\" href={quoteattr(link)}/>",
        f"<id>{escape(link)}</id>",
        f"<published>{published(facts, index)}T00:00:00Z</published>",
        f"<updated>{escape(observed)}</updated>",
        f"<summary>{escape(' '.join(summary.split()))}</summary>",
        f"<category term={quoteattr(facts.operation.name)}/>",
        "</entry>\n",
    ])


def atom_feed(runs: list[RunFacts], index: Index, *, path: str, title: str, page: str, updated: str) -> bytes:
    """An Atom 1.0 feed of the newest FEED_SIZE of ``runs``; ``path`` is the feed's own site path."""
    base = _base(index)
    newest = sorted(runs, key=lambda f: (published(f, index), f.run.spec.observedAt, f.name), reverse=True)[:FEED_SIZE]
    head = "".join([
        '<?xml version="1.0" encoding="utf-8"?>\n',
        '<feed xmlns="http://www.w3.org/2005/Atom">\n',
        f"<title>{escape(title)}</title>\n",
        f"<id>{escape(base + path)}</id>\n",
        f"<link rel=\"self\" type=\"application/atom+xml\" href={quoteattr(base + path)}/>\n",
        f"<link rel=\"alternate\" type=\"text/html\" href={quoteattr(base + page)}/>\n",
        f"<updated>{updated}T00:00:00Z</updated>\n",
        f"<author><name>{escape(index.config.site.title)}</name></author>\n",
        "<generator>sitegen</generator>\n",
    ])
    return (head + "".join(_entry(f, index) for f in newest) + "</feed>\n").encode()


# URLs per sitemap file: the protocol allows 50,000, but at up to about 250 bytes a URL
# (long run names) this keeps every file under 300 KB, as pages are.
SITEMAP_URLS = 1000
_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n'
_XMLNS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def sitemap(index: Index, html_paths: list[str]) -> dict[str, bytes]:
    """sitemap.xml of every HTML page, by its folder URL (index.html left off, as permalinks are).

    Past SITEMAP_URLS pages, sitemap.xml is a sitemap index of sitemaps/<n>.xml files of that many each.
    """
    base = _base(index)
    urls = [f"<url><loc>{escape(base + path.removesuffix('index.html'))}</loc></url>\n" for path in sorted(html_paths)]
    chunks = [urls[i:i + SITEMAP_URLS] for i in range(0, len(urls), SITEMAP_URLS)] or [[]]
    files = {
        "sitemap.xml" if len(chunks) == 1 else f"sitemaps/{n}.xml": (f"{_HEAD}<urlset {_XMLNS}>\n" + "".join(chunk) + "</urlset>\n").encode()
        for n, chunk in enumerate(chunks, 1)
    }
    if len(chunks) > 1:
        listed = "".join(f"<sitemap><loc>{escape(base + name)}</loc></sitemap>\n" for name in files)
        files["sitemap.xml"] = f"{_HEAD}<sitemapindex {_XMLNS}>\n{listed}</sitemapindex>\n".encode()
    return files


def robots(index: Index) -> bytes:
    return f"User-agent: *\nAllow: /\nSitemap: {_base(index)}sitemap.xml\n".encode()
