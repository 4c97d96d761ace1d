"""`sitegen build --explain PAGE`: whether the build took PAGE unchanged from the site it
replaced or made it again, and why.

What happened is read off the files: a page taken unchanged is the old site's file (kept in
the standby as a hard link of it, or linked from it; sitegen.site.engine.write), so it keeps
its inode; a page made again with other bytes has a new one.
Why is read off the keys the decision was taken on (sitegen.site.engine.reuse): the key of the page's
group (an operation's runs, the notes on them and the operation's own pages), which folds in
the key of what every page shares (sitegen itself, the options, settings and shared
documents), or a listing page's render key (sitegen.site.engine.rendermemo). The registry files
behind a changed key are named by comparing each file's digest with the one the previous
build saw, kept in the registry's build state (sitegen.state.store) under the site's folder
and used only while the site there is the one built from the inputs it records.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.state.store import BuildState
from sitegen.site.engine.reuse import EVERYTHING, group_of

SHOWN = 8  # changed files named per page; the rest are counted


def page_path(page: str) -> str:
    """A page as a reader names it ("/runs/x/", "runs/x") → the file under --out."""
    page = page.strip().lstrip("/")
    if page == "" or page.endswith("/"):
        return page + "index.html"
    return page if "." in page.rsplit("/", 1)[-1] else page + "/index.html"


def inodes(out: Path, pages: list[str]) -> dict[str, int]:
    """Inode of each page's file now (absent pages left out)."""
    found = {}
    for page in pages:
        try:
            found[page] = os.stat(out / page).st_ino
        except OSError:
            pass
    return found


def load_state(state: BuildState, out: Path, inputs: object) -> dict:
    """What the build that made the site in ``out`` saw, its shared key and each file's digest, or {} when
    this machine's record is of another site there (``inputs``: the site's marker's inputs digest)."""
    try:
        found = json.loads(state.explained(os.fsdecode(out.resolve())) or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) and found.get("inputs") == inputs and inputs is not None else {}


def save_state(state: BuildState, out: Path, inputs: str, site_key: str, files: dict[str, str]) -> None:
    state.put_explained(os.fsdecode(out.resolve()), json.dumps({"inputs": inputs, "siteKey": site_key, "files": files}))


@dataclass
class Decisions:
    """The keys one build decided on, and the previous build's."""

    site_key: str
    keys: dict[str, str]
    previous_keys: dict
    own: dict[str, str]
    """Registry file → the operation whose group it belongs to (run files, notes on runs)."""
    files: dict[str, str]
    previous: dict
    page_keys: dict[str, str] = field(default_factory=dict)
    previous_page_keys: dict = field(default_factory=dict)
    operation_of_page: dict[str, str] = field(default_factory=dict)
    """Page → operation, for run pages and each operation's own pages."""


def _changed(decisions: Decisions, keep) -> list[str]:
    before, now = decisions.previous.get("files") or {}, decisions.files
    return sorted(f for f in set(before) | set(now) if before.get(f) != now.get(f) and keep(f))


def _named(files: list[str]) -> str:
    shown = ", ".join(files[:SHOWN])
    return shown + (f" and {len(files) - SHOWN} more" if len(files) > SHOWN else "")


def _key_unchanged(page: str, d: Decisions) -> str | None:
    """Why the build could take ``page`` without making it, or None if it had to make it."""
    operation = d.operation_of_page.get(page)
    if operation is None:
        if page in d.page_keys and isinstance(d.previous_page_keys, dict) and d.previous_page_keys.get(page) == d.page_keys[page]:
            return "its render key (its rows and settings) is the one the previous build recorded"
        return None
    group = group_of(d.keys, operation)
    if group is not None and d.previous_keys.get(group) == d.keys[group]:
        where = "every page's" if group == EVERYTHING else f"operation {operation}'s"
        return f"the key of {where} group is the one the previous build recorded"
    return None


def _why_made(page: str, d: Decisions) -> str:
    operation = d.operation_of_page.get(page)
    if operation is None:
        if page in d.page_keys:
            if not isinstance(d.previous_page_keys, dict) or page not in d.previous_page_keys:
                return "a listing page the previous site recorded no render key for"
            return "a listing page whose rows or settings changed (its render key differs from the previous build's)"
        return "a site-wide page (home, feeds, badges, catalog) is made on every build that is not a no-op"
    group = group_of(d.keys, operation)
    where = "every page's" if group == EVERYTHING else f"operation {operation}'s"
    if group is None or group not in d.previous_keys:
        return f"the previous site recorded no key for {where} group (a first build, or one by another sitegen or with other options)"
    if not d.previous:
        return f"the key of {where} group changed; this machine kept no record of the previous build's files to name why"
    if d.previous.get("siteKey") != d.site_key:
        shared = _changed(d, lambda f: f not in d.own)
        return "what every page shares changed: " + (_named(shared) if shared else "sitegen itself or the build options")
    own = _changed(d, lambda f: group == EVERYTHING or d.own.get(f) == operation)
    if own:
        return f"the runs or notes of {where} group changed: {_named(own)}"
    return f"the implementations listed with {where} group changed"


def explain(pages: list[str], before: dict[str, int], after: dict[str, int], decisions: Decisions | None) -> list[str]:
    """One line per page. ``before``/``after``: the pages' inodes in --out before and after the build;
    ``decisions`` None for a build that found the site current and changed nothing.

    A page whose bytes come out the same is linked to the old file too (SiteWriter.add), so an
    unchanged inode says the file was kept, not that it was not made: the keys say which."""
    lines = []
    for page in pages:
        if page not in after:
            lines.append(f"{page}: not a page of this site")
        elif decisions is None:
            lines.append(f"{page}: unchanged: the site was already built from the same records and options")
        elif page not in before:
            lines.append(f"{page}: made: it is new to this site")
        elif (why := _key_unchanged(page, decisions)) is not None and before[page] == after[page]:
            lines.append(f"{page}: taken unchanged from the previous site without being made: {why}")
        else:
            kept = ("; it came out with the same bytes, so the previous file was kept" if before[page] == after[page]
                    else "; its bytes changed")
            lines.append(f"{page}: made again: {why if why else _why_made(page, decisions)}{kept}")
    return lines
