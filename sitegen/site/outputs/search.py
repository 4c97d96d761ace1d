"""Full-text search with Pagefind, over the finished pages of a build, in shards that a rebuild reuses.

Pagefind ships as a binary inside the ``pagefind[bin]`` wheel, so ``pip install .`` brings
it everywhere pip does. One index over every page cost a rebuild after one `attest` about
half a cold build (2-4 ms a page, every page, every time). So pages are indexed in shards,
each its own Pagefind bundle under pagefind/<shard>/, merged at query time by the search
box (Pagefind's multisite ``mergeIndex``; the list is pagefind/bundles.json):

- an operation's pages go to one of RUN_SHARDS shards, by the operation name's digest: an
  edit of one run or one note re-renders one operation's pages, so it dirties one of them.
  Record pages are not indexed (issue 49): a fragment each was 1.0 file per run, the most of any
  file kind after the record page and its twin; a search finds the operation, GPU and
  implementation pages that list a run, one link from its record;
- the pages that sum up the whole registry (SUMMARY_PAGES: the home page, which shows the
  latest runs and notes, and the top listings) to a shard of their own, since any edit changes
  one of them and it should not dirty hundreds of other pages with it;
- every other page (listings, Markdown pages) to one of SITE_SHARDS, by its path;
- except the operation and GPU pages, which the names shard holds by their names
  (sitegen.site.outputs.search_names).

A shard is indexed again only when its key changed: the index settings, its page list or
the bytes of one of its pages (each known by its digest in the site's lists,
sitegen.site.engine.marker); otherwise its bundle is taken from the standby or the live
site like any unchanged file. Pagefind's output depends only on the pages it reads, so a rebuild's index has the
same bytes as a cold build's (tests/site/test_incremental_build.py). Bundle files are part of
the site's marker like every other file.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections import defaultdict
from pathlib import Path

from sitegen.core.problems import InputError, Problem
from sitegen.site.outputs.search_names import NAMES_SHARD, is_named, stand_in

OUTPUT = "pagefind"
# What a page is about is in its headings and text. Tables list other records (each
# indexed on its own page); a record's detail sections, verdicts, rerun box, manifest and
# citation repeat operation and run names ("jsd_reference", "rerun --like liger-jsd-…"),
# so with them every record of an operation outranked the operation's own page.
EXCLUDE = "pre, table, svg, .cite, .manifest, .unranked, .sections, .verdicts, .rerun"
RUN_SHARDS = 12
SITE_SHARDS = 4
SUMMARY_PAGES = frozenset({"index.html", "operations/index.html", "implementations/index.html", "gpus/index.html"})
SUMMARY_SHARD = "site-summary"
UNINDEXED = ("compare/", "badges/", "runs/")
"""Pages kept out of search (their templates carry no data-pagefind-body): Pagefind applies that
rule per index, so a shard holding only such pages would index them whole; and each edit
changes many comparisons, which would dirty the shards they fell in."""
UI_FILES = ("pagefind-ui.js", "pagefind-ui.css")
"""Loaded by every page from pagefind/: the same in every bundle, so copied from the first."""


def _bucket(text: str, count: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % count


def shard_of(relative: str, operation_of) -> str:
    """The shard of the page at ``relative``; ``operation_of(relative)`` names the operation a run or operation page belongs to."""
    operation = operation_of(relative)
    if operation is not None:
        return f"run-{_bucket(operation, RUN_SHARDS):02d}"
    if relative in SUMMARY_PAGES:
        return SUMMARY_SHARD
    return f"site-{_bucket(relative, SITE_SHARDS)}"


def page_operation(index):
    """``relative`` → the operation whose group the page at that path belongs to (a run's page, an operation's pages), else None."""
    from sitegen.site.text import labels as L

    runs = {L.run_path(f.name): f.operation.name for f in index.runs}
    operations = {op.name for op in index.operations}

    def operation_of(relative: str) -> str | None:
        found = runs.get(relative)
        if found is None and relative.startswith("operations/"):
            name = relative.split("/")[1]
            found = name if name in operations and relative != "operations/index.html" else None
        return found

    return operation_of


def _settings() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        pagefind = version("pagefind")
    except PackageNotFoundError:
        pagefind = "unknown"
    return f"pagefind {pagefind}\0{EXCLUDE}\0{RUN_SHARDS}\0{SITE_SHARDS}\0{sorted(SUMMARY_PAGES)}\0{UNINDEXED}\0{NAMES_SHARD}"


def index_site(writer, operation_of) -> int:
    """Index the new site's HTML shard by shard and add the bundles to ``writer`` under pagefind/.

    A shard's key covers the index settings and each of its pages with the digest of its
    bytes: a bundle made under the same key is taken as it is. Returns how many pages were
    (re)indexed."""
    from sitegen.site.engine.marker import SITE

    shards: dict[str, list[str]] = defaultdict(list)
    found = writer.digests()
    stand_ins: dict[str, bytes] = {}
    for relative in found:
        if relative.endswith(".html") and not relative.startswith((f"{OUTPUT}/", *UNINDEXED)):
            if is_named(relative):
                stand_ins[relative] = stand_in(relative, Path(writer.path_of(relative)).read_bytes())
                shards[NAMES_SHARD].append(relative)
            else:
                shards[shard_of(relative, operation_of)].append(relative)
    # A names page counts by its stand-in's bytes: the real page changes with every edit of its runs.
    digests = {**found, **{r: hashlib.sha256(b).hexdigest() for r, b in stand_ins.items()}}
    settings = _settings()
    keys, dirty = {}, {}
    reused: dict[str, list[str]] = {}
    for shard, members in sorted(shards.items()):
        members.sort()
        first = shard == min(shards)
        keys[shard] = hashlib.sha256("\0".join([settings, str(first), *(f"{m}\0{digests[m]}" for m in members)]).encode()).hexdigest()
        taken = None
        for held, folder_keys, files in ((True, writer.standby, writer.standby_files), (False, writer.live, writer.live_files)):
            if folder_keys is None or folder_keys.search.get(shard) != keys[shard]:
                continue
            old_files = sorted(f for f in files(SITE) if f.startswith(f"{OUTPUT}/{shard}/"))
            if old_files and writer.reuse(old_files, SITE, held=held):
                taken = old_files
                break
        if taken is not None:
            reused[shard] = taken
        else:
            dirty[shard] = members
    written = _run_pagefind(dirty, writer, min(shards), stand_ins) if dirty else {}
    bundles = sorted(shards)
    writer.search_keys = keys
    first = (reused.get(bundles[0]) or written.get(bundles[0]) or []) if bundles else []
    for name in UI_FILES:
        source = f"{OUTPUT}/{bundles[0]}/{name}" if bundles else None
        if source in first:
            writer.add(f"{OUTPUT}/{name}", Path(writer.path_of(source)).read_bytes())
    writer.add(f"{OUTPUT}/bundles.json", (json.dumps(bundles) + "\n").encode())
    return sum(len(m) for m in dirty.values())


def _run_pagefind(dirty: dict[str, list[str]], writer, first: str, stand_ins: dict[str, bytes]) -> dict[str, list[str]]:
    # In a thread of its own: the caller may already run an event loop (serve, a test
    # driving a browser), where asyncio.run refuses to start another.
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(asyncio.run(_index(dirty, writer, first, stand_ins)))
        except BaseException as exc:  # handed to the caller's thread below
            outcome.append(exc)

    thread = threading.Thread(target=run, name="pagefind")
    thread.start()
    thread.join()
    try:
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]
    except InputError:
        raise
    except Exception as exc:  # the service is a subprocess: a missing binary or a crash surfaces here
        raise InputError([Problem("pagefind", "$", f"could not run Pagefind ({type(exc).__name__}: {exc}); "
                                  "is pagefind[bin] installed? --no-search skips search")]) from None


def _link_or_copy(source: str, target: str) -> None:
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _ui_file(name: str) -> bool:
    return name.startswith("pagefind-") and ("ui." in name or name == "pagefind-highlight.js")


async def _index(dirty: dict[str, list[str]], writer, first: str, stand_ins: dict[str, bytes]) -> dict[str, list[str]]:
    from pagefind.service import PagefindService

    written: dict[str, list[str]] = {}
    service = await PagefindService().launch()
    try:
        for shard, members in sorted(dirty.items()):
            index = await service.create_index({"exclude_selectors": [s.strip() for s in EXCLUDE.split(",")]})
            # The shard's pages, hard-linked into a folder of their own and read by Pagefind as
            # a site: one add_html_file request per page cost about 100 ms of the service's
            # message handling (1,500 pages: 158 s, against 8 s read as a folder).
            with tempfile.TemporaryDirectory(prefix="sitegen-shard-") as folder:
                for relative in members:
                    if relative in stand_ins:
                        os.makedirs(os.path.dirname(os.path.join(folder, relative)), exist_ok=True)
                        Path(folder, relative).write_bytes(stand_ins[relative])
                    else:
                        _link_or_copy(writer.path_of(relative), os.path.join(folder, relative))
                await index.add_directory(folder)
            with tempfile.TemporaryDirectory(prefix="sitegen-pagefind-") as tmp:
                await index.write_files(output_path=tmp)
                written[shard] = []
                for file in sorted(p for p in Path(tmp).rglob("*") if p.is_file()):
                    # The search box's own files are loaded from pagefind/, copied from the
                    # first bundle; the merged bundles need only their index.
                    if shard != first and _ui_file(file.name):
                        continue
                    name = f"{OUTPUT}/{shard}/{file.relative_to(tmp).as_posix()}"
                    writer.add(name, file.read_bytes())
                    written[shard].append(name)
            await index.delete_index()
    finally:
        await service.close()
    return written

