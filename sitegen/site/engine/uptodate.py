"""Whether ``--out`` already holds the site of the registry as it stands: a build's first step.

Apart from sitegen.site.build because a no-op build is only this, and the build's page
modules and pydantic models take most of a second to import: `sitegen build` checks here
first and imports the rest only when there is something to build.

The check holds the output lock (sitegen.site.engine.swap.hold_output) from here to the end
of the build, so two builds of one site run one after the other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.state.store import BuildState, open_state
from sitegen.state.filestats import FileStats
from sitegen.core.problems import InputError, Problem
from sitegen.site.engine import sitedirs
from sitegen.site.engine.fingerprint import Inputs, build_inputs
from sitegen.site.engine.marker import MARKER, SiteFolder, listed_files, none_foreign, site_folder
from sitegen.site.engine.swap import clean_leftovers, hold_output
from sitegen.registry.transaction import recover


@dataclass(frozen=True)
class BuildResult:
    out: Path
    runs: int
    files: int
    fresh: bool = True
    """False when the site was already built from the same inputs and was left as it was."""
    heap: object = field(default=None, repr=False, compare=False)
    """The registry and index the site was built from: whoever holds the result decides when they are freed."""
    explained: list[str] = field(default_factory=list)
    """A line per page asked about (``explain``): taken unchanged or made again, and why."""


@dataclass(frozen=True)
class PreviousBuild:
    runs: int
    files: int


@dataclass
class Checked:
    """What the check found, handed on to the build (sitegen.site.build.build_site) when there is one."""

    out: Path
    live: SiteFolder | None
    """The marker of the site in ``out``, or None where there is none yet."""
    intact: bool | None
    """Whether that site's folders are as sitegen left them (sitegen.site.engine.sitedirs); None: not known yet."""
    inputs: Inputs
    state: BuildState
    """The registry's build state, open; the build closes it (and this check does, when nothing is to be built)."""
    lock: int | None
    """The output lock, held until the build ends (release)."""
    trusted: list | None
    reviewed: list | None
    asked: list[str]
    """The site paths of --explain."""
    before: dict
    """Their inodes before the build (sitegen.site.engine.explain)."""
    previous: PreviousBuild | None
    """The site in ``out``, when it was built from these very inputs and is complete."""

    def release(self) -> None:
        self.state.close()
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def verify_live(out: Path, live: SiteFolder, state: BuildState, intact: bool | None) -> set[str] | None:
    """Refuse a site holding files sitegen did not write; its file list where it had to be walked.

    Where the folders' stats say the site is as sitegen left it, nothing more is read. Otherwise
    the site is walked and compared with every list its marker names, which also names a
    foreign file in one line; what the walk found is recorded, so the next check is a stat."""
    if intact:
        return None
    listed = listed_files(out, live)
    none_foreign(out, listed)
    if live.format >= 3:
        sitedirs.record(out, state, sitedirs.expected([*listed, MARKER]), replace=True)
    return listed


def check(records: Path, out: Path, *, base_url: str | None = None, exclude_dry_runs: bool = False, search: bool = False,
          unlocked: bool = False, full: bool = False, trust: Path | None = None, explain: list[str] = ()) -> Checked:
    if out.name in ("", ".."):
        # "." or "..": the staging folder is made in out.parent, which for "." is the output
        # itself; named by its path, the folder is the same one and is taken as it would be.
        out = Path(os.path.abspath(out))
    resolved_out, resolved_records = out.resolve(), records.resolve()
    if resolved_out == resolved_records or resolved_records in resolved_out.parents or resolved_out in resolved_records.parents:
        # The site's JSON twins would be read back as records on the next build.
        raise InputError([Problem(str(out), "$", f"output must be outside the registry folder {records} (and not contain it)")])
    lock = hold_output(out)
    try:
        # A site lost in the gap of a two-rename swap is put back before the site is read.
        clean_leftovers(out)
        live = site_folder(out)
        asked, before = [], {}
        if explain:
            from sitegen.site.engine import explain as E

            asked = [E.page_path(p) for p in explain]
            before = E.inodes(out, asked)
        # An interrupted registry write is finished or undone before its files are fingerprinted,
        # as open_registry would before reading them.
        recover(records)
        trusted = reviewed = trust_bytes = None
        if trust is not None:
            # A trust list read from outside the registry (--trust) decides levels as the registry's own would.
            from sitegen.registry.config import load_reviewed, load_trust

            trusted, reviewed = load_trust(trust), load_reviewed(trust)
            trust_bytes = repr([[t.model_dump() for t in trusted], [r.model_dump() for r in reviewed]])
        # The build state is opened once, here, and never for --full: --full reads every file again.
        state = open_state(None if full else records)
    except BaseException:
        if lock is not None:
            os.close(lock)
        raise
    try:
        inputs = build_inputs(records, stats=None if full else FileStats(state), base_url=base_url,
                              exclude_dry_runs=exclude_dry_runs, search=search, unlocked=unlocked, trust=trust_bytes)
        intact = sitedirs.check(out, state) if live is not None and live.format >= 3 else None
        previous = None
        if _same_inputs(live, inputs.digest) and intact is not False:
            verify_live(out, live, state, intact)
            intact = True
            previous = PreviousBuild(live.data["runs"], _count(live))
    except BaseException:
        state.close()
        if lock is not None:
            os.close(lock)
        raise
    return Checked(out, live, intact, inputs, state, lock, trusted, reviewed, asked, before, previous)


def _same_inputs(live: SiteFolder | None, inputs: str) -> bool:
    return live is not None and live.data.get("inputs") == inputs and isinstance(live.data.get("runs"), int)


def _count(live: SiteFolder) -> int:
    count = live.data.get("count")
    if isinstance(count, int):
        return count
    listed = live.files()
    return len(listed) + 1 if listed is not None else 0


def unchanged(checked: Checked) -> BuildResult:
    """The result of a build that found ``checked.previous`` up to date; releases the state and the lock."""
    checked.release()
    explained = []
    if checked.asked:
        from sitegen.site.engine import explain as E

        explained = E.explain(checked.asked, checked.before, E.inodes(checked.out, checked.asked), None)
    return BuildResult(checked.out, checked.previous.runs, checked.previous.files, fresh=False, explained=explained)
