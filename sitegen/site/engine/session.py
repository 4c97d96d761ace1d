"""The engine's one face to a build: what is up to date, and one publication of the site.

A build (sitegen.site.build) gathers the facts and says which pages to make; everything about
where they go is here: the groups that key reuse, the standby folder updated in place or the
live site linked, the staging writer, the render memo and row tokens kept in the build state,
the swap, the standby kept for the next build, and --explain's record of decisions.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from sitegen.core.progress import Progress
from sitegen.facts.index import Index
from sitegen.site.engine import explain as E
from sitegen.site.engine.marker import SiteFolder
from sitegen.site.engine.rankcache import Rankings
from sitegen.site.engine.rendermemo import RenderMemo
from sitegen.site.engine.reuse import group_keys, group_of
from sitegen.site.engine.rowtokens import RowTokens
from sitegen.site.engine.standby import discard as discard_standby
from sitegen.site.engine.standby import find_standby, forget_all
from sitegen.site.engine.standby import keep as keep_standby
from sitegen.site.engine.standby import make as make_standby
from sitegen.site.engine.swap import remove_own
from sitegen.site.engine.uptodate import BuildResult, Checked, check, unchanged, verify_live
from sitegen.site.engine.workers import render_in_workers
from sitegen.site.engine.write import SiteWriter, StandbyChanged

__all__ = ["BuildResult", "Checked", "Publication", "Rankings", "StandbyChanged", "check", "discard_changed_standby",
           "publish", "render_in_workers", "unchanged"]


class Publication:
    """One build's writing of the site: the writer pages go to, and what carries over from the last build."""

    def __init__(self, writer: SiteWriter, memo: RenderMemo, tokens: RowTokens, keys: dict[str, str],
                 taken: dict[str, list[str]]):
        self.writer = writer
        self.memo = memo
        self.tokens = tokens
        self.keys = keys
        self.taken = taken
        """Operation → its pages, for each operation whose pages the last build made under today's key:
        taken as they are, their record pages not made again."""
        self.explained: list[str] = []
        """--explain's lines, once the site is published."""


def discard_changed_standby(changed: StandbyChanged, checked: Checked) -> None:
    """Someone changed the standby this build would have written: remove it (the build starts again without)."""
    discard_standby(changed.args[0], SiteFolder.read(changed.args[0]), checked.state)


@contextmanager
def publish(checked: Checked, index: Index, records: Path, own_pages: dict[str, list], row: Callable, rankings: Rankings, *,
            progress: Progress, use_standby: bool = True) -> Iterator[Publication]:
    """Stage the site for ``index``; on leaving, commit it into ``checked.out`` and keep a standby.

    ``own_pages``: implementation pages that go with one operation's group (the group keys and the
    pages written must agree). ``row``: the listing rows' maker, whose tokens the build state keeps;
    ``rankings``: the cohorts' rankings, kept with them once the site is in place.
    Whatever fails inside removes the staging folder, so none is left beside the site.
    """
    out, live, inputs, state, asked, before = (checked.out, checked.live, checked.inputs, checked.state,
                                               checked.asked, checked.before)
    keys, site_key, own = group_keys(index, records, inputs, own_pages)
    # The site in --out must hold only sitegen's files before it becomes the standby; the
    # standby is used only when it is as the build that wrote it left it.
    listed = verify_live(out, live, state, checked.intact) if live is not None else None
    # No site in --out (never built, or deleted to force a full build): a standby left beside it
    # would bring back what the reader deleted (it shares the old site's files), and there is
    # no site to exchange it with, so it is removed and the site is built whole.
    usable = state.usable and use_standby and live is not None
    standby = find_standby(out, state) if usable else forget_all(out, state)
    writer = SiteWriter(out, inputs=inputs.digest, runs=len(index.runs), groups=keys, live=live, standby=standby)
    previous_state = E.load_state(state, out, writer.previous_inputs) if asked else {}
    try:
        memo = RenderMemo(site_key, writer.previous_page_keys, row)
        writer.page_keys = memo.keys
        tokens = RowTokens(state, keys, row)
        publication = Publication(writer, memo, tokens, keys, _take_unchanged(index, writer, keys))
        yield publication
        progress.stage("writing files")
        replaced = writer.commit(state if state.usable else None)
    except OSError as exc:
        writer.abort()
        raise writer.problem(exc) from None
    except BaseException:
        writer.abort()
        raise
    _keep_a_standby(out, live, replaced, writer, listed, state)
    tokens.save()
    rankings.save()
    E.save_state(state, out, inputs.digest, site_key, inputs.files)
    publication.explained = E.explain(asked, before, E.inodes(out, asked), E.Decisions(
        site_key, keys, writer.previous_groups, own, inputs.files, previous_state, writer.page_keys,
        writer.previous_page_keys, _operation_of_page(index, writer))) if asked else []


def _keep_a_standby(out: Path, live, replaced: Path | None, writer: SiteWriter, listed, state) -> None:
    """After the swap: the site replaced becomes the standby, else one is made, so the next build is an update.

    Without a build state (--full, or a cache folder that cannot be written) there is none: a
    standby is used only where its folders were recorded."""
    if writer.standby is not None:
        return  # the standby, brought up to date and swapped in, now holds the site it replaced
    if writer.discarded is not None:
        discard_standby(writer.discarded, SiteFolder.read(writer.discarded), state)
    if replaced is not None:
        if state.usable and live is not None and live.format >= 3:
            keep_standby(replaced, out)
            return
        remove_own(replaced, listed if listed is not None else set(live.files() or ()) if live is not None else set())
    if state.usable:
        make_standby(out, writer.all_files(), state)


def _take_unchanged(index: Index, writer: SiteWriter, keys: dict[str, str]) -> dict[str, list[str]]:
    """Operation → its own pages, for every operation whose pages were made under the key it has now, in the
    standby (taken with no system call) or the live site (linked): their run pages are not made again."""
    taken = {}
    for operation in index.operations:
        group = group_of(keys, operation.name)
        if group is not None:
            own = writer.take_unit(operation.name, group, keys[group])
            if own is not None:
                taken[operation.name] = own
    return taken


def _operation_of_page(index: Index, writer: SiteWriter) -> dict[str, str]:
    from sitegen.site.text.labels import run_path

    pages = {run_path(f.name): f.operation.name for f in index.runs}
    for operation, files in writer.group_files.items():
        pages.update((f, operation) for f in files)
    return pages
