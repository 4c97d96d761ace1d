"""The search's names shard: each operation and GPU page indexed by its name alone, so that a
search for the words of a name ("rms norm", "rmsnorm", "jsd h200") finds that page first.

Why a shard of its own, of stand-in pages: Pagefind ranks within one index by word counts
over the page, and the search box merges the shards' results by score. Indexed whole, an
operation page lost to the hundreds of run pages that carry its name in their titles ("jsd
h200" put the JSD page sixth; "rms norm" left the RMSNorm page past the 45th result), and
within operation pages to those that repeat the words more ("Fused residual add + RMSNorm"
mentions RMSNorm in every leader's name). Here each page is its name and short name only:
the page heading and the path's words (``rms-norm``, which Pagefind also indexes as "rms",
"norm" and "rmsnorm"), so the shortest name holding the words ranks first, and the search
box weighs this shard up (site.js). The stand-ins carry the real page's path, so a result
opens the real page; the real page is in no other shard, so it is listed once.

A stand-in changes only when a name or the page's "where" line does, so an edit of a run
leaves this shard's bundle as it was.
"""

from __future__ import annotations

import html
import re

NAMES_SHARD = "names"
# The pages of the shard, by path: an operation's page and its pages by GPU (or pass), and a GPU's first page.
_NAMED = (re.compile(r"operations/[^/]+/(?:[^/]+/)?index\.html"), re.compile(r"gpus/[^/]+/index\.html"))
_H1 = re.compile(rb"<h1[^>]*>(.*?)</h1>", re.S)
_WHERE = re.compile(rb'<p class="muted where"[^>]*>(.*?)</p>', re.S)
_TAG = re.compile(r"<[^>]+>")
_ALL_RESULTS = "All results for "


def is_named(relative: str) -> bool:
    return any(p.fullmatch(relative) for p in _NAMED)


def _text(found: re.Match | None) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", found.group(1).decode())).split()) if found else ""


def stand_in(relative: str, page: bytes) -> bytes:
    """The page ``relative`` as the names shard indexes it: its heading (as the result's title),
    the words of its name and path, and its "where" line (the result's excerpt)."""
    heading = _text(_H1.search(page))
    words = " ".join([heading.removeprefix(_ALL_RESULTS), *relative.split("/")[1:-1]])
    where = _text(_WHERE.search(page)) or heading
    quoted = lambda text: html.escape(text, quote=True)  # noqa: E731
    return (f'<!doctype html><html lang="en"><head><title>{quoted(heading)}</title></head><body>'
            f'<main data-pagefind-body><meta data-pagefind-meta="title[content]" content="{quoted(heading)}">'
            f'<meta data-pagefind-meta="summary[content]" content="{quoted(where)}"><p>{quoted(words)}</p></main>'
            "</body></html>\n").encode()
