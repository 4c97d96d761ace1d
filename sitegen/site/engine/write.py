"""The site being built: files collected in a staging folder beside the output, then swapped in.

A file whose bytes equal those of the same file in the site being replaced is hard-linked
from it instead of written again. sitegen.site.engine.marker says which files of the old site are
sitegen's own; sitegen.site.engine.swap puts the new site in place.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from sitegen.problems import InputError, Problem
from sitegen.site.engine.marker import marker_data, marker_files, marker_files_and_lists
from sitegen.site.engine.swap import clean_leftovers, new_staging, swap_in


def _regular(path: Path) -> bool:
    # lstat: a link, a FIFO or a device is never lent, only a plain file.
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        # lstat: a link, a FIFO or a device is never lent, only a plain file.
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False


class SiteWriter:
    """Collects files in a temporary folder; ``commit`` swaps it in, ``abort`` removes it.

    A file whose bytes equal those of the same file in the site being replaced is
    hard-linked from it instead of written again, so a rebuild writes only what changed
    (the old site's own names are removed at the swap; the links keep the data).
    """

    def __init__(self, out: Path, *, inputs: str | None = None, runs: int | None = None,
                 groups: dict[str, str] | None = None, listed: set[str] | None = None):
        self.out = out
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            clean_leftovers(out)
            self._held, self.tmp = new_staging(out)
        except OSError as exc:
            raise InputError([Problem(str(out), "$", f"cannot create the site beside it in {out.parent}: {exc.strerror or exc}")]) from None
        self.files: list[str] = []
        self._folders: set[str] = set()
        self.inputs, self.runs, self.groups = inputs, runs, groups
        # Only a site whose marker lists a file may lend it. ``listed``: the list own_files
        # read at the start of the build. A file someone put there since (a link in place
        # of a run's folder) is refused by check_output in commit, before the swap.
        self.previous = (listed if listed is not None else marker_files(out)) if out.is_dir() else None
        before = (marker_data(out) or {}) if self.previous else {}
        self.previous_groups: dict = before.get("groups") if isinstance(before.get("groups"), dict) else {}
        """The page-group keys of the site being replaced (sitegen.site.engine.reuse)."""
        self.previous_group_files: dict = before.get("groupFiles") if isinstance(before.get("groupFiles"), dict) else {}
        self.group_files: dict[str, list[str]] = {}
        """The files of each operation's own pages (not its runs'), to be reused as a whole."""
        self.previous_search = before.get("search")
        """Search shard → the key its bundle was indexed under (sitegen.site.outputs.search)."""
        self.search_keys: dict[str, str] = {}
        self.previous_page_keys = before.get("pageKeys")
        self.previous_inputs = before.get("inputs")
        """The inputs digest the site being replaced was built from (sitegen.site.engine.explain)."""
        self.page_keys: dict[str, str] = {}
        """Listing page → the key it was rendered under (sitegen.site.engine.rendermemo)."""

    def add(self, relative: str, data: bytes) -> None:
        path = os.path.join(self.tmp, relative)
        self._folder(relative)
        old = os.path.join(self.out, relative)
        if not (self.previous and relative in self.previous and _same_bytes(old, data) and _linked(old, path)):
            with open(path, "xb") as handle:
                handle.write(data)
        self.files.append(relative)

    def _folder(self, relative: str) -> None:
        # Each folder made once per process, not looked up again for each of its files.
        folder = relative.rpartition("/")[0]
        if folder and folder not in self._folders:
            where = os.path.join(self.tmp, folder)
            # Mostly a run's own folder inside one made before: one mkdir, not makedirs'
            # walk up the path (a tenth of a one-run edit's build at 60,000 runs).
            try:
                os.mkdir(where)
            except FileNotFoundError:
                os.makedirs(where, exist_ok=True)
            except FileExistsError:
                pass
            self._folders.add(folder)

    def reuse(self, relatives: list[str]) -> bool:
        """Hard-link files of the site being replaced, unread: the caller knows their bytes are current.

        All or nothing: False (and nothing added) when any of them cannot be linked.
        """
        done = []
        for relative in relatives:
            if not (self.previous and relative in self.previous):
                break
            self._folder(relative)
            path, old = os.path.join(self.tmp, relative), os.path.join(self.out, relative)
            if not _regular(old) or not _linked(old, path):
                break
            done.append(path)
        else:
            self.files.extend(relatives)
            return True
        for path in done:
            os.unlink(path)
        return False

    def adopt(self, relatives: list[str]) -> None:
        """Count files another process added to this writer's folder."""
        self.files.extend(relatives)

    def problem(self, exc: OSError) -> InputError:
        """A failed write (a full disk) as one line naming the file in ``out``, not the staging path."""
        where = str(exc.filename or self.out)
        if where.startswith(str(self.tmp)):
            where = str(self.out) + where[len(str(self.tmp)):]
        return InputError([Problem(where, "$", f"cannot write: {exc.strerror or exc}")])

    def abort(self) -> None:
        # The temporary folder and all in it are sitegen's own, created by this build.
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if self._held is not None:
            os.close(self._held)
            self._held = None

    def commit(self) -> None:
        """Write the file lists and the marker, then swap the site in (swap.swap_in)."""
        marker: dict = {}
        if self.inputs is not None:
            marker.update(inputs=self.inputs, runs=self.runs)
        if self.groups:
            marker.update(groups=self.groups, groupFiles=self.group_files)
        if self.page_keys:
            marker.update(pageKeys=self.page_keys)
        if self.search_keys:
            marker.update(search=self.search_keys)
        for name, data in marker_files_and_lists(self.files, marker):
            self.add(name, data)
        swap_in(self.tmp, self.out)
        self._release()


def _linked(old: Path, new: Path) -> bool:
    try:
        os.link(old, new, follow_symlinks=False)
    except OSError:
        return False  # another file system, or links not supported: write it instead
    return True
