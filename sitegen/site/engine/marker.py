"""The marker of a built site: which files sitegen wrote there, their digests, and from which inputs.

The marker file lists every file sitegen wrote, so a later build knows which files are
its own: it refuses an output folder without a marker, and refuses to replace one holding
files the marker does not list (someone put them there).

Format 3 keeps, beside the small marker, one list per unit of the site: one per operation
(its run pages and its own pages, which the build makes or takes as a whole) and one for the
rest (SITE). A list gives each file's path and the digest of its bytes (sha256, 128 bits), so
a build learns whether a page it made equals the copy a folder already holds without
reading that copy, and an edit rewrites only the lists of the units it changed. Format 2
(sorted shards of names, no digests) is still read, so a site built by an older sitegen is
recognised as sitegen's and replaced.
"""

from __future__ import annotations

import functools

import gzip
import hashlib
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from sitegen.core.inputfile import read_regular
from sitegen.core.problems import InputError, Problem

MARKER = ".sitegen-site"
FORMAT = 3
MAX_MARKER_BYTES = 256 * 1024 * 1024
FILE_LISTS = ".sitegen-files/"
MAX_LIST_BYTES = 64 * 1024 * 1024
SITE = ""
"""The unit of the files no operation owns: home, listings, catalog, feeds, schemas, sitemaps."""


def digest(data: bytes) -> str:
    """A file's identity in the lists: 128 bits of sha256 (hashlib's, about 1.7 GB/s here)."""
    return hashlib.sha256(data).hexdigest()[:32]


def list_name(unit: str) -> str:
    """The list of ``unit``'s files: named from the unit, so a rebuild finds it and the same unit gives the same name."""
    return f"{FILE_LISTS}{'site' if unit == SITE else hashlib.sha256(unit.encode()).hexdigest()[:16]}.txt.gz"


def list_bytes(files: dict[str, str]) -> bytes:
    """``path<TAB>digest`` lines in path order; gzip's mtime 0, so the same files give the same bytes."""
    return gzip.compress("".join(f"{path}\t{files[path]}\n" for path in sorted(files)).encode(), mtime=0)


def _inflate(data: bytes) -> bytes | None:
    # Bounded: a hand-made list must not unpack into all of memory.
    try:
        unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = unpack.decompress(data, MAX_LIST_BYTES)
    except zlib.error:
        return None
    return out if unpack.eof and not unpack.unconsumed_tail else None


def _unsafe(text: str) -> bool:
    """A path that is absolute, empty or has a ".." part, or a line that is not one path and one digest."""
    lined = "\n" + text
    return ("\n/" in lined or "\n\t" in lined or any(f"{a}..{b}" in lined for a in "\n/" for b in "/\t")
            or text.count("\t") != text.count("\n"))


def parse_list(data: bytes) -> dict[str, str] | None:
    """A list's path → digest, or None when it is not one sitegen wrote (or names a path outside its folder)."""
    raw = _inflate(data)
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return {}
    # Substring tests and one split over the whole list instead of a loop per line: the lists of
    # a 60,000-run site hold 235,000 lines.
    if not text.endswith("\n") or _unsafe(text):
        return None
    parts = text[:-1].replace("\n", "\t").split("\t")
    return dict(zip(parts[0::2], parts[1::2]))


def _list_entry(unit, entry) -> bool:
    return (isinstance(unit, str) and isinstance(entry, list) and len(entry) == 2
            and all(isinstance(part, str) for part in entry))


def marker_data(out: Path) -> dict | None:
    # Through read_regular: a marker that is a FIFO or a link to /dev/zero is no marker.
    try:
        data = json.loads(read_regular(out / MARKER, MAX_MARKER_BYTES).decode("utf-8"))
    except (InputError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _outside(relative: str) -> bool:
    # sitegen writes only plain relative paths below the output; an absolute path or a
    # ".." part in the marker can only have been put there by hand, and trusting it would
    # let a rebuild delete files outside --out.
    return relative.startswith("/") or ".." in relative.split("/")


class SiteFolder:
    """A folder's marker, read once; its lists are read only when asked for."""

    def __init__(self, path: Path, data: dict):
        self.path = path
        self.data = data
        self._units: dict[str, dict[str, str] | None] = {}

    @classmethod
    def read(cls, path: Path) -> SiteFolder | None:
        data = marker_data(path)
        return None if data is None else cls(path, data)

    @property
    def format(self) -> int:
        found = self.data.get("format", 2)
        return found if isinstance(found, int) else 0

    def _dict(self, name: str) -> dict:
        found = self.data.get(name)
        return found if isinstance(found, dict) else {}

    @property
    def groups(self) -> dict:
        """Operation group → the key its pages were made under (sitegen.site.engine.reuse)."""
        return self._dict("groups")

    @property
    def page_keys(self) -> dict:
        """Listing page → the key it was rendered under (sitegen.site.engine.rendermemo)."""
        return self._dict("pageKeys")

    @property
    def search(self) -> dict:
        """Search shard → the key its bundle was indexed under (sitegen.site.outputs.search)."""
        return self._dict("search")

    @functools.cached_property
    def lists(self) -> dict[str, str]:
        """Unit → the name of its list (format 3). Read once: a build asks it for every unit it
        takes (300 units of 96,000 entries on the bundled registry made 0.2 s of one rebuild)."""
        return {u: entry[0] for u, entry in self._dict("lists").items() if _list_entry(u, entry)}

    def list_digest(self, unit: str) -> str | None:
        entry = self._dict("lists").get(unit)
        return entry[1] if _list_entry(unit, entry) else None

    @property
    def updating(self) -> list[str] | None:
        """While a build changes this folder: the files it may have added that no list names yet."""
        found = self.data.get("updating")
        return [f for f in found if isinstance(f, str)] if isinstance(found, list) else None

    def unit_files(self, unit: str) -> dict[str, str] | None:
        """Path → digest of ``unit``'s files, None when the folder has no such list or it is damaged."""
        if unit not in self._units:
            name, found = self.lists.get(unit), None
            if name is not None and name.startswith(FILE_LISTS) and not _outside(name):
                try:
                    data = read_regular(self.path / name, MAX_LIST_BYTES)
                except InputError:
                    data = None
                # A list whose bytes are not those the marker recorded was changed by hand or damaged.
                if data is not None and digest(data) == self.list_digest(unit):
                    found = parse_list(data)
            self._units[unit] = found
        return self._units[unit]

    def files(self) -> list[str] | None:
        """Every file the marker says sitegen wrote (its lists included), None if any list is unreadable."""
        data = self.data
        files = data.get("files", [])
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            return None
        files = list(files)
        if self.format >= 3:
            for unit, name in sorted(self.lists.items()):
                listed = self.unit_files(unit)
                if listed is None:
                    return None
                files += [name, *listed]
            return files + (self.updating or [])
        lists = data.get("fileLists", [])
        if not isinstance(lists, list) or "files" not in data and "fileLists" not in data:
            return None
        for name in lists:
            if not isinstance(name, str) or not name.startswith(FILE_LISTS) or _outside(name):
                return None
            try:
                listed = _inflate(read_regular(self.path / name, MAX_LIST_BYTES))
                if listed is None:
                    return None
                files += [name, *listed.decode("utf-8").splitlines()]
            except (InputError, UnicodeDecodeError):
                return None
        return files


def read_marker(out: Path) -> list[str] | None:
    """Every file the marker says sitegen wrote: those it lists itself, and those of its lists."""
    folder = SiteFolder.read(out)
    return None if folder is None else folder.files()


def marker_files(out: Path) -> set[str] | None:
    """The files the marker says sitegen wrote, without any that would lie outside ``out``."""
    files = read_marker(out)
    return None if files is None else {f for f in files if not _outside(f)}


def _present(out: Path) -> set[str]:
    """Every file below ``out``, relative and "/"-separated; a link counts as a file, never followed."""
    found, pending = set(), [("", str(out))]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((prefix + entry.name + "/", entry.path))
                else:
                    found.add(prefix + entry.name)
    return found


def _file_above(out: Path) -> Path | None:
    for parent in out.absolute().parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def site_folder(out: Path) -> SiteFolder | None:
    """The marker of the site in ``out`` (None where there is no site yet), refusing a folder sitegen did not build.

    Reads the marker alone, not its lists: a large site's lists are read only where a build
    needs them (sitegen.site.engine.write)."""
    blocker = _file_above(out)
    if blocker is not None:
        raise InputError([Problem(str(out), "$", f"cannot create the output folder: {blocker} is a file, not a folder; choose another --out")])
    if not out.exists() and not out.is_symlink():
        return None
    if out.is_symlink() or not out.is_dir():
        raise InputError([Problem(str(out), "$", "output exists and is not a folder; choose another --out")])
    if not any(out.iterdir()):
        return None
    folder = SiteFolder.read(out)
    if folder is None or folder.data.get("generator") != "sitegen":
        raise _not_sitegens(out)
    inline = folder.data.get("files", [])
    _refuse_outside(out, inline if isinstance(inline, list) else [])
    return folder


def _refuse_outside(out: Path, listed) -> None:
    outside = sorted(f for f in listed if isinstance(f, str) and _outside(f))
    if outside:
        raise InputError([Problem(str(out / MARKER), "$.files", f"lists {outside[0]!r}, outside the folder, so sitegen did not write it; not a site sitegen built: choose another --out")])


def _not_sitegens(out: Path) -> InputError:
    return InputError([Problem(str(out), "$", f"output folder was not built by sitegen (no readable {MARKER}); choose another --out or empty it")])


def listed_files(out: Path, folder: SiteFolder) -> set[str]:
    """Every file ``folder``'s marker lists, refusing a list that is damaged or names a path outside it."""
    listed = folder.files()
    if listed is None:
        raise _not_sitegens(out)
    _refuse_outside(out, listed)
    return set(listed)


def own_files(out: Path) -> set[str] | None:
    """The files the marker of the site in ``out`` lists (None where there is no site yet)."""
    folder = site_folder(out)
    return None if folder is None else listed_files(out, folder)


def check_output(out: Path) -> set[str]:
    """Refuse an output path that is not a site sitegen built (an empty folder is fine).

    Returns the files present in it, the marker aside.
    """
    own = own_files(out)
    return set() if own is None else none_foreign(out, own)


def none_foreign(out: Path, own: set[str]) -> set[str]:
    """The files present in ``out``, the marker aside, once sure that ``own`` lists them all."""
    # A link is never written by sitegen: count it as present (and so foreign unless
    # listed) instead of looking through it as rglob's is_dir() would.
    present = _present(out) - {MARKER}
    foreign = sorted(present - own)
    if foreign:
        raise InputError([Problem(str(out / foreign[0]), "$", f"not written by sitegen ({len(foreign)} such file(s)); move them out of {out} and build again")])
    return present


@dataclass(frozen=True)
class PreviousBuild:
    runs: int
    files: int


def marker_bytes(marker: dict) -> bytes:
    return (json.dumps({"generator": "sitegen", "format": FORMAT, **marker}, indent=1) + "\n").encode()


def write_marker(folder: Path, marker: dict) -> None:
    """Replace ``folder``'s marker in one rename: it always names lists that are there."""
    temporary = folder / f"{MARKER}.new"
    with open(temporary, "wb") as handle:
        handle.write(marker_bytes(marker))
    os.replace(temporary, folder / MARKER)
