"""The standby: a second copy of the site beside ``--out``, which the next build brings up to date.

Why a standby rather than a new folder per build: a new complete folder costs a hard link per
file (235,000 at 60,000 runs) and the removal of the old one, however small the edit; a
standby costs only what changed (sitegen.site.engine.write). It is the site a build
replaced, kept under ``.X.standby-*`` instead of deleted: the two folders share every file
that did not change since, so it costs the disk only those that did. A first build makes it
as a copy of hard links. Nothing serves the standby: ``--out`` is always a real folder,
swapped in whole, so hosts and upload tools see plain files.

A build uses the standby only when its marker is complete (not left half updated by a build
that died: "updating") and this machine's build state recorded its folders
(sitegen.site.engine.sitedirs). Before it changes a folder of the standby, the update checks
that folder and every folder above it against that record (so no write can go through a link
someone put there; sitegen.site.engine.write); the folders it leaves alone are checked as the
live site's, at the next build, which refuses a file sitegen did not write. Any other standby
is removed as a leftover is, its own files only; without one, the build writes a whole new
folder and keeps the site it replaces.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from sitegen.site.engine import sitedirs
from sitegen.site.engine.marker import SiteFolder
from sitegen.site.engine.swap import remove_own


def _prefix(out: Path) -> str:
    return f".{out.name}.standby-"


def _candidates(out: Path) -> list[Path]:
    try:
        entries = sorted(out.parent.iterdir())
    except OSError:
        return []
    return [e for e in entries if e.name.startswith(_prefix(out)) and not e.is_symlink() and e.is_dir()]


def usable(folder: SiteFolder | None, state) -> bool:
    return (folder is not None and folder.data.get("generator") == "sitegen" and folder.format >= 3
            and folder.updating is None and sitedirs.check(folder.path, state, only={""}) is True
            and bool(state.site_dirs(sitedirs.folder_key(folder.path) or "", {""})))


def find_standby(out: Path, state) -> SiteFolder | None:
    """The standby of ``out`` that a build may bring up to date; every other one is removed."""
    chosen = None
    for path in _candidates(out):
        folder = SiteFolder.read(path)
        if chosen is None and usable(folder, state):
            chosen = folder
        else:
            discard(path, folder, state)
    return chosen


def discard(path: Path, folder: SiteFolder | None, state) -> None:
    """Remove a standby sitegen cannot trust: the files its marker lists (those a half update named too), then empty folders."""
    files = folder.files() if folder is not None else None
    sitedirs.forget(path, state)
    remove_own(path, set(files or ()))


def forget_all(out: Path, state) -> None:
    """Remove every standby of ``out`` (a --full build, which neither reads nor records the build state)."""
    for path in _candidates(out):
        discard(path, SiteFolder.read(path), state)


def keep(old: Path, out: Path) -> Path:
    """Name the folder holding the site a build replaced as ``out``'s standby."""
    kept = out.parent / f"{_prefix(out)}{secrets.token_hex(4)}"
    os.rename(old, kept)
    return kept


def make(out: Path, files: list[str], state) -> Path | None:
    """A standby of the site in ``out`` as hard links of its ``files`` (every file, its marker and lists too).

    Made as ``.X.starting-*`` (removed by the next build if this one dies) and renamed when
    complete. None where links cannot be made (another file system): the next build writes a
    whole new folder instead, as it would without one."""
    from sitegen.site.engine.swap import FOLDER_MODE, new_staging

    held, folder = new_staging(out)
    try:
        made = {""}
        for relative in files:
            parent = relative.rpartition("/")[0]
            if parent not in made:
                os.makedirs(folder / parent, exist_ok=True)
                made.add(parent)
            os.link(out / relative, folder / relative, follow_symlinks=False)
        os.chmod(folder, FOLDER_MODE)
        sitedirs.record(folder, state, sitedirs.expected(files), replace=True)
        return keep(folder, out)
    except OSError:
        sitedirs.forget(folder, state)
        remove_own(folder, set(files))
        return None
    finally:
        os.close(held)
