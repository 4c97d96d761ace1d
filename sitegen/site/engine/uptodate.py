"""Whether ``--out`` already holds the site of the registry as it stands: a build's first step.

Apart from sitegen.site.build because a no-op build is only this, and the build's page
modules and pydantic models take most of a second to import: `sitegen build` checks here
first and imports the rest only when there is something to build.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.buildstate import BuildState, open_state
from sitegen.filestats import FileStats
from sitegen.problems import InputError, Problem
from sitegen.site.engine.fingerprint import Inputs, build_inputs
from sitegen.site.engine.marker import PreviousBuild, own_files, previous_build
from sitegen.site.engine.swap import clean_leftovers
from sitegen.transaction import recover


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


@dataclass
class Checked:
    """What the check found, handed on to the build (sitegen.site.build.build_site) when there is one."""

    out: Path
    listed: set[str] | None
    """The files the marker of the site in ``out`` lists (sitegen.site.engine.marker.own_files)."""
    inputs: Inputs
    state: BuildState
    """The registry's build state, open; the build closes it (and this check does, when nothing is to be built)."""
    trusted: list | None
    reviewed: list | None
    asked: list[str]
    """The site paths of --explain."""
    before: dict
    """Their inodes before the build (sitegen.site.engine.explain)."""
    previous: PreviousBuild | None
    """The site in ``out``, when it was built from these very inputs and is complete."""


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
    listed = own_files(out)
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
        from sitegen.config import load_reviewed, load_trust

        trusted, reviewed = load_trust(trust), load_reviewed(trust)
        trust_bytes = repr([[t.model_dump() for t in trusted], [r.model_dump() for r in reviewed]])
    # The build state is opened once, here, and never for --full: --full reads every file again.
    state = open_state(None if full else records)
    try:
        inputs = build_inputs(records, stats=None if full else FileStats(state), base_url=base_url,
                              exclude_dry_runs=exclude_dry_runs, search=search, unlocked=unlocked, trust=trust_bytes)
        previous = previous_build(out, inputs.digest, listed)
    except BaseException:
        state.close()
        raise
    return Checked(out, listed, inputs, state, trusted, reviewed, asked, before, previous)


def unchanged(checked: Checked) -> BuildResult:
    """The result of a build that found ``checked.previous`` up to date; closes the state."""
    checked.state.close()
    clean_leftovers(checked.out)
    explained = []
    if checked.asked:
        from sitegen.site.engine import explain as E

        explained = E.explain(checked.asked, checked.before, E.inodes(checked.out, checked.asked), None)
    return BuildResult(checked.out, checked.previous.runs, checked.previous.files, fresh=False, explained=explained)
