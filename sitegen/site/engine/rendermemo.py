"""Listing pages rendered only when what they show changed.

An implementation or GPU page lists 250 runs; after a one-run edit nearly all of them
show exactly what they showed before, yet rendering them all was a fifth of a rebuild.
A page's HTML is a function of its template, its page model, the value columns its run
table looks up (sitegen.site.pages.value_columns), the frame every page shares (site title,
pages in the navigation, search on or off) and sitegen itself. The page model is written
out whole as the page's JSON twin, and the rest is covered by the site key
(reuse.group_keys: sitegen, the options and every registry file but the runs). So a page
whose key, a digest over all of those, equals the one the previous build recorded for the
same path is taken from that build (sitegen.site.engine.write) instead of rendered; tests/site compare such
rebuilds with cold builds byte for byte.

A page of runs is keyed before its rows are made: by its model without them and each
run's row token (sitegen.site.engine.rowtokens), so that after a one-run edit the rows of pages
that show no change are never made.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from sitegen.site.text.jsonout import to_json, twin


class RenderMemo:
    """The keys of the pages this build writes, and those the site being replaced recorded.

    ``row``: the listing row of a run (sitegen.site.pages.listings.run_row), handed in so that the
    engine never imports the page models above it."""

    def __init__(self, site_key: str, previous: object, row):
        self.site_key = site_key.encode()
        self.row = row
        self.previous: dict = previous if isinstance(previous, dict) else {}
        self.keys: dict[str, str] = {}

    def key(self, template: str, frame: bytes, rows: list[str]) -> str:
        """Over the page's template, its model without its runs (``frame``) and its rows' tokens."""
        digest = hashlib.sha256(self.site_key)
        for part in (template.encode(), frame, repr(rows).encode()):
            digest.update(len(part).to_bytes(8, "big") + part)
        return digest.hexdigest()[:32]

    def carry(self, paths: list[str], keys: dict) -> None:
        """Keep the keys of pages taken as part of an unchanged operation group (``keys``: those of the
        folder they were taken from): their inputs are unchanged too."""
        for path in paths:
            key = keys.get(path)
            if isinstance(key, str):
                self.keys[path] = key

    def write_draft(self, writer, renderer, template: str, draft, tokens) -> None:
        """``draft`` (a page whose ``runs`` are RunFacts, listings.unmade) and its twin, made and rendered only if its key is new.

        ``tokens``: a rowtokens.RowTokens.
        """
        frame = to_json(replace(draft, runs=[]))
        key = self.key(template, frame, [tokens.token(f) for f in draft.runs])
        self.keys[draft.path] = key
        held = writer.held("pageKeys", draft.path, key)
        if (held or self.previous.get(draft.path) == key) and writer.reuse([draft.path, twin(draft.path)], held=held):
            return
        page = replace(draft, runs=[self.row(f) for f in draft.runs])
        writer.add(page.path, renderer.render(template, page))
        writer.add(twin(page.path), to_json(page))
