"""The site being built: what each file's bytes are, and the least file-system work that puts them in place.

A built site has a standby beside it (sitegen.site.engine.standby): a second folder holding
the site as an earlier build left it, sharing every file that did not change since by hard
link. A build updates the standby to the new site and exchanges the two folders in one
renameat2 (sitegen.site.engine.swap), so ``--out`` names a complete site at every instant.
What the update costs is what changed: a file is written only where its bytes differ from
the standby's copy, linked from the live site where only the live copy is current, and an
unchanged page costs no system call at all. Each folder's marker lists its files with their
digests (sitegen.site.engine.marker), so "the same bytes" is known without reading a copy.

Files go first into a fresh staging folder beside the output: forked workers write there,
and a failure or a kill before the commit leaves both folders as they were. Where there is
no standby (a first build, or one whose standby could not be trusted), the staging folder
receives the whole site instead, as a new folder; the site it replaces becomes the standby.
"""

from __future__ import annotations

import os
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path

from sitegen.core.problems import InputError, Problem
from sitegen.site.engine import sitedirs
from sitegen.site.engine.marker import FILE_LISTS, MARKER, SITE, SiteFolder, digest, list_bytes, list_name, write_marker
from sitegen.site.engine.swap import new_staging


def _regular(path: str) -> bool:
    # lstat: a link, a FIFO or a device is never lent, only a plain file.
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _linked(old: str, new: str) -> bool:
    try:
        os.link(old, new, follow_symlinks=False)
    except OSError:
        return False  # another file system, or links not supported: write it instead
    return True


class SiteWriter:
    """Collects the new site; ``commit`` puts it in place, ``abort`` leaves everything as it was.

    ``live``: the marker of the site in ``out`` (sitegen.site.engine.marker.SiteFolder), whose
    files the build may link; ``standby``: the standby folder's marker, to be brought up to date,
    or None (the staging folder becomes the new site).
    """

    def __init__(self, out: Path, *, inputs: str | None = None, runs: int | None = None,
                 groups: dict[str, str] | None = None, live: SiteFolder | None = None, standby: SiteFolder | None = None):
        self.out = out
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            self._held, self.tmp = new_staging(out)
        except OSError as exc:
            raise InputError([Problem(str(out), "$", f"cannot create the site beside it in {out.parent}: {exc.strerror or exc}")]) from None
        self.inputs, self.runs, self.groups = inputs, runs, groups
        self.live, self.standby = live, standby
        self.units: dict[str, dict[str, str]] = {}
        """Unit (an operation, or SITE) → each of its files → the digest of its bytes."""
        self._log: list[tuple[str, str, str]] = []
        self._whole: set[str] = set()
        """Units taken whole from the standby: it holds them exactly, lists included."""
        self._folders: set[str] = set()
        self.previous_groups: dict = live.groups if live else {}
        """The page-group keys of the site being replaced (sitegen.site.engine.reuse)."""
        self.previous_search = live.search if live else {}
        """Search shard → the key its bundle was indexed under (sitegen.site.outputs.search)."""
        self.previous_page_keys = live.page_keys if live else {}
        self.previous_inputs = live.data.get("inputs") if live else None
        """The inputs digest the site being replaced was built from (sitegen.site.engine.explain)."""
        self.search_keys: dict[str, str] = {}
        self.page_keys: dict[str, str] = {}
        """Listing page → the key it was rendered under (sitegen.site.engine.rendermemo)."""
        self.group_files: dict[str, list[str]] = {}
        """The files of each operation's own pages (not its runs'), as the build made or took them."""
        self.current = SITE
        """The unit ``add`` files go to unless told (within)."""
        self.taken_from: dict[str, SiteFolder] = {}
        """Unit taken unchanged → the folder whose marker it was taken by (its pages' keys are that marker's)."""
        self.discarded: Path | None = None
        """A standby found untrustworthy at the commit, left for the build to remove."""

    # --- what the two folders hold ------------------------------------------------------------

    def held(self, keys_of: str, name: str, key: str) -> bool:
        """Whether the standby was made under the same key: ``keys_of`` "groups", "pageKeys" or "search"."""
        return self.standby is not None and self.standby._dict(keys_of).get(name) == key

    def live_files(self, unit: str) -> dict[str, str]:
        return (self.live.unit_files(unit) if self.live is not None and self.live.format >= 3 else None) or {}

    def standby_files(self, unit: str) -> dict[str, str]:
        return (self.standby.unit_files(unit) if self.standby is not None else None) or {}

    def path_of(self, relative: str) -> str:
        """Where the new site's bytes of ``relative`` are now: staged, else already in the standby."""
        staged = os.path.join(self.tmp, relative)
        if self.standby is None or os.path.lexists(staged):
            return staged
        return os.path.join(self.standby.path, relative)

    def digests(self) -> dict[str, str]:
        """Every file of the new site so far → the digest of its bytes."""
        merged: dict[str, str] = {}
        for unit in sorted(self.units):
            merged.update(self.units[unit])
        return merged

    @property
    def files(self) -> list[str]:
        return [f for unit in sorted(self.units) for f in self.units[unit]]

    # --- adding files ---------------------------------------------------------------------------

    def _record(self, relative: str, unit: str, found: str) -> None:
        self.units.setdefault(unit, {})[relative] = found
        self._log.append((unit, relative, found))

    @contextmanager
    def within(self, unit: str):
        """Files added meanwhile belong to ``unit``."""
        before, self.current = self.current, unit
        try:
            yield
        finally:
            self.current = before

    def add(self, relative: str, data: bytes, unit: str | None = None) -> None:
        unit = self.current if unit is None else unit
        found = digest(data)
        self._record(relative, unit, found)
        if self.standby_files(unit).get(relative) == found:
            return
        path = os.path.join(self.tmp, relative)
        self._folder(relative)
        if self.live_files(unit).get(relative) == found and _linked(os.path.join(self.out, relative), path):
            return
        with open(path, "xb") as handle:
            handle.write(data)

    def reuse(self, relatives: list[str], unit: str | None = None, held: bool = False) -> bool:
        """Take files unchanged, unread: the caller knows their bytes are current in the live site,
        and with ``held`` in the standby too. All or nothing: False (nothing added) when any is missing."""
        unit = self.current if unit is None else unit
        source = self.standby_files(unit) if held else self.live_files(unit)
        if not all(r in source for r in relatives):
            return False
        if not held:
            done = []
            for relative in relatives:
                self._folder(relative)
                path, old = os.path.join(self.tmp, relative), os.path.join(self.out, relative)
                if not _regular(old) or not _linked(old, path):
                    for made in done:
                        os.unlink(made)
                    return False
                done.append(path)
        for relative in relatives:
            self._record(relative, unit, source[relative])
        return True

    def take_unit(self, unit: str, group: str, key: str) -> list[str] | None:
        """All of ``unit``'s files (an operation's), from the standby when its ``group`` was made under ``key``
        there (no system call), else linked from the live site when it was made so there; None when neither.
        Returns the unit's own pages (not its runs')."""
        for held, folder in ((True, self.standby), (False, self.live)):
            if folder is None or folder.format < 3 or folder.groups.get(group) != key:
                continue
            files = folder.unit_files(unit)
            if files is None or not self.reuse(list(files), unit, held=held):
                continue
            if held:
                self._whole.add(unit)
            self.taken_from[unit] = folder
            return [f for f in files if not f.startswith("runs/")]
        return None

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

    def mark(self) -> int:
        return len(self._log)

    def since(self, mark: int) -> list[tuple[str, str, str]]:
        """What was added after ``mark``: handed from a forked worker to the parent (adopt)."""
        return self._log[mark:]

    def adopt(self, entries: list[tuple[str, str, str]]) -> None:
        """Count files another process added to this writer's folder."""
        for unit, relative, found in entries:
            self._record(relative, unit, found)

    # --- ending -----------------------------------------------------------------------------------

    def problem(self, exc: OSError) -> InputError:
        """A failed write (a full disk) as one line naming the file in ``out``, not the staging path."""
        where = str(exc.filename or self.out)
        for inside in (str(self.tmp), str(self.standby.path) if self.standby else None):
            if inside and where.startswith(inside):
                where = str(self.out) + where[len(inside):]
        return InputError([Problem(where, "$", f"cannot write: {exc.strerror or exc}")])

    def abort(self) -> None:
        # The staging folder and all in it are sitegen's own, created by this build.
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if self._held is not None:
            os.close(self._held)
            self._held = None

    def _lists(self) -> dict[str, tuple[bytes | None, str]]:
        """Each unit's list: its bytes (None for a unit taken whole from the standby, whose list is kept) and digest."""
        lists = {}
        for unit in sorted(self.units):
            if unit in self._whole:
                lists[unit] = (None, self.standby.list_digest(unit))
            else:
                data = list_bytes(self.units[unit])
                lists[unit] = (data, digest(data))
        return lists

    def _marker(self, lists: dict[str, tuple[bytes | None, str]]) -> dict:
        marker: dict = {}
        if self.inputs is not None:
            marker.update(inputs=self.inputs, runs=self.runs)
        marker["count"] = sum(len(files) for files in self.units.values()) + len(self.units) + 1
        marker["lists"] = {unit: [list_name(unit), found] for unit, (_, found) in lists.items()}
        # In key order: a build that took pages unchanged learns their keys in another order than one that made them.
        for name, keys in (("groups", self.groups), ("pageKeys", self.page_keys), ("search", self.search_keys)):
            if keys:
                marker[name] = dict(sorted(keys.items()))
        return marker

    def commit(self, state=None) -> Path | None:
        """Put the new site in place; returns the folder now holding the site it replaced, if any (a standby to keep).

        ``state``: the build state, where the folders of the site are recorded (sitegen.site.engine.sitedirs)."""
        try:
            if self.standby is not None and not self._standby_readable():
                self._stage_everything()
            lists = self._lists()
            marker = self._marker(lists)
            if self.standby is None:
                return self._commit_new(lists, marker, state)
            return self._update(lists, marker, state)
        finally:
            self._release()

    def _standby_readable(self) -> bool:
        """Whether every list the update compares is readable and what the standby's marker says it is."""
        return all(self.standby.unit_files(unit) is not None for unit in self.standby.lists if unit not in self._whole)

    def _stage_everything(self) -> None:
        """A standby whose lists cannot be trusted is not updated: the staging folder gets the whole site
        instead, linking from the standby what this build found there, and the standby is left to be removed."""
        for files in self.units.values():
            for relative in files:
                path = os.path.join(self.tmp, relative)
                if not os.path.lexists(path):
                    self._folder(relative)
                    if not _linked(os.path.join(self.standby.path, relative), path):
                        raise OSError(f"cannot link {relative} from the standby")
        self.discarded, self.standby, self._whole = self.standby.path, None, set()

    def _commit_new(self, lists, marker: dict, state) -> Path | None:
        from sitegen.site.engine.swap import swap_in

        os.makedirs(os.path.join(self.tmp, FILE_LISTS), exist_ok=True)
        for unit, (data, _) in lists.items():
            with open(os.path.join(self.tmp, list_name(unit)), "xb") as handle:
                handle.write(data)
        write_marker(self.tmp, marker)
        if state is not None:
            sitedirs.record(self.tmp, state, sitedirs.expected(self.all_files()), replace=True)
        return swap_in(self.tmp, self.out)

    def all_files(self) -> list[str]:
        """Every file of the new site, its marker and lists included."""
        return [*self.files, *(list_name(u) for u in self.units), MARKER]

    def _update(self, lists, marker: dict, state) -> Path:
        """Bring the standby to the new site, then exchange it with the live one."""
        from sitegen.site.engine.swap import put_in_place

        standby = self.standby
        base = Path(standby.path)
        # Units taken whole from the standby are as they were there; every other unit's list is compared.
        before = {unit: standby.unit_files(unit) for unit in standby.lists if unit not in self._whole}
        changed = sorted(u for u in (set(self.units) | set(before)) - self._whole if self.units.get(u) != before.get(u))
        old_files = {f for u in changed for f in before.get(u, {})}
        removed = sorted(old_files - {f for u in changed for f in self.units.get(u, {})})
        staged = []
        for folder, _, names in os.walk(self.tmp):
            relative = os.path.relpath(folder, self.tmp).replace(os.sep, "/")
            prefix = "" if relative == "." else relative + "/"
            staged += [prefix + n for n in names]
        changing = sitedirs.with_parents({f.rpartition("/")[0] for f in (*staged, *removed)} | {FILE_LISTS.rstrip("/")})
        if state is not None and sitedirs.check(base, state, only=changing) is not True:
            raise StandbyChanged(base)
        # Written first: if this build dies while the standby is half changed, the next one
        # finds every file it may have added named, and removes the folder as its own.
        write_marker(base, {**standby.data, "updating": sorted(set(staged) - old_files)})
        touched = {"", FILE_LISTS.rstrip("/")}
        # Removed first: a file may give way to a folder of the same name, or a folder to a file.
        emptied = set()
        for relative in removed:
            try:
                os.unlink(base / relative)
            except FileNotFoundError:
                pass
            emptied.add(relative.rpartition("/")[0])
        gone = _remove_empty(base, emptied)
        touched |= {f.rpartition("/")[0] for f in gone} | (emptied - gone)
        for relative in sorted(staged):
            folder = relative.rpartition("/")[0]
            if folder and not os.path.isdir(base / folder):
                part = folder
                while part and not os.path.isdir(base / part):
                    touched.add(part)
                    part = part.rpartition("/")[0]
                touched.add(part)
                os.makedirs(base / folder)
            touched.add(folder)
            os.rename(os.path.join(self.tmp, relative), base / relative)
        for unit in changed:
            name = list_name(unit)
            if unit in lists:
                with open(base / f"{name}.new", "wb") as handle:
                    handle.write(lists[unit][0])
                os.replace(base / f"{name}.new", base / name)
            else:
                try:
                    os.unlink(base / name)
                except FileNotFoundError:
                    pass
        write_marker(base, marker)
        if state is not None:
            sitedirs.record_scanned(base, state, sorted(touched - gone), sorted(gone))
        shutil.rmtree(self.tmp, ignore_errors=True)
        return put_in_place(base, self.out)


class StandbyChanged(Exception):
    """A folder of the standby this build would change is not as recorded: someone changed it."""


def _remove_empty(base: Path, folders: set[str]) -> set[str]:
    """Remove each of ``folders`` and its parents that are left empty; the ones removed."""
    gone = set()
    for folder in sorted(folders, key=lambda f: -f.count("/")):
        while folder and folder not in gone:
            try:
                os.rmdir(base / folder)
            except OSError:
                break
            gone.add(folder)
            folder = folder.rpartition("/")[0]
    return gone
