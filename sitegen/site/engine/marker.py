"""The marker of a built site: which files sitegen wrote there, and from which inputs.

The marker file lists every file sitegen wrote, so a later build knows which files are
its own: it refuses an output folder without a marker, and refuses to replace one holding
files the marker does not list (someone put them there).
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from sitegen.inputfile import read_regular
from sitegen.problems import InputError, Problem

MARKER = ".sitegen-site"
MAX_MARKER_BYTES = 256 * 1024 * 1024
# The list of a site's files is kept beside the marker in gzip shards of FILES_PER_LIST
# names (about 100 KB each), so neither the marker nor any file grows with the registry.
FILE_LISTS = ".sitegen-files/"
FILES_PER_LIST = 20000
MAX_LIST_BYTES = 64 * 1024 * 1024


def marker_data(out: Path) -> dict | None:
    # Through read_regular: a marker that is a FIFO or a link to /dev/zero is no marker.
    try:
        data = json.loads(read_regular(out / MARKER, MAX_MARKER_BYTES).decode("utf-8"))
    except (InputError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_marker(out: Path) -> list[str] | None:
    """Every file the marker says sitegen wrote: those it lists itself, and those of its shards."""
    data = marker_data(out)
    if data is None:
        return None
    files, lists = data.get("files", []), data.get("fileLists", [])
    if not isinstance(files, list) or not isinstance(lists, list) or "files" not in data and "fileLists" not in data:
        return None
    files = list(files)
    for name in lists:
        if not isinstance(name, str) or not name.startswith(FILE_LISTS) or _outside(name):
            return None
        try:
            # Bounded: a hand-made shard must not unpack into all of memory.
            unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
            listed = unpack.decompress(read_regular(out / name, MAX_LIST_BYTES), MAX_LIST_BYTES)
        except (InputError, zlib.error):
            return None
        if unpack.unconsumed_tail or not unpack.eof:
            return None
        try:
            files += [name, *listed.decode("utf-8").splitlines()]
        except UnicodeDecodeError:
            return None
    return files if all(isinstance(f, str) for f in files) else None


def _outside(relative: str) -> bool:
    # sitegen writes only plain relative paths below the output; an absolute path or a
    # ".." part in the marker can only have been put there by hand, and trusting it would
    # let a rebuild delete files outside --out.
    # The same test as PurePosixPath's is_absolute() and parts, without building a path
    # for each of a large site's files.
    return relative.startswith("/") or ".." in relative.split("/")


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


def check_output(out: Path) -> set[str]:
    """Refuse an output path that is not a site sitegen built (an empty folder is fine).

    Returns the files present in it, the marker aside.
    """
    own = own_files(out)
    return set() if own is None else _none_foreign(out, own)


def own_files(out: Path) -> set[str] | None:
    """The files the marker of the site in ``out`` lists (None where there is no site yet).

    Refuses all that check_output refuses but foreign files, whose search walks every
    folder of the site (a second at 60,000 runs). A build needs that walk only where the
    site may be up to date (previous_build); otherwise the check before the swap
    (SiteWriter.commit) is the one walk. A build reads a large site's file list once for
    its up-to-date check and the files it may link.
    """
    blocker = _file_above(out)
    if blocker is not None:
        raise InputError([Problem(str(out), "$", f"cannot create the output folder: {blocker} is a file, not a folder; choose another --out")])
    if not out.exists() and not out.is_symlink():
        return None
    if out.is_symlink() or not out.is_dir():
        raise InputError([Problem(str(out), "$", "output exists and is not a folder; choose another --out")])
    if not any(out.iterdir()):
        return None
    listed = read_marker(out)
    if listed is None:
        raise InputError([Problem(str(out), "$", f"output folder was not built by sitegen (no readable {MARKER}); choose another --out or empty it")])
    outside = sorted(f for f in listed if _outside(f))
    if outside:
        raise InputError([Problem(str(out / MARKER), "$.files", f"lists {outside[0]!r}, outside the folder, so sitegen did not write it; not a site sitegen built: choose another --out")])
    return set(listed)


def _none_foreign(out: Path, own: set[str]) -> set[str]:
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


def previous_build(out: Path, inputs: str, listed: set[str] | None) -> PreviousBuild | None:
    """The site in ``out`` if it was built from ``inputs`` and still holds every file it wrote.

    ``listed``: what own_files found. Only then is the site walked, which also refuses
    files sitegen did not write, as check_output does. A file edited in place by hand is
    not noticed; deleting --out forces a full build.
    """
    marker = marker_data(out) if listed is not None else None
    if marker is None or marker.get("inputs") != inputs or not isinstance(marker.get("runs"), int):
        return None
    if _none_foreign(out, listed) != listed:
        return None
    return PreviousBuild(marker["runs"], len(listed) + 1)


def marker_files_and_lists(files: list[str], marker: dict) -> list[tuple[str, bytes]]:
    """The file-list shards of a site holding ``files``, then its marker (``marker`` plus the shards' names)."""
    files, written, lists = sorted(files), [], []
    for start in range(0, len(files), FILES_PER_LIST):
        name = f"{FILE_LISTS}{start // FILES_PER_LIST:04d}.txt.gz"
        text = "".join(f + "\n" for f in files[start:start + FILES_PER_LIST]).encode()
        # mtime 0: the same files give the same bytes.
        written.append((name, gzip.compress(text, mtime=0)))
        lists.append(name)
    written.append((MARKER, (json.dumps({"generator": "sitegen", "fileLists": lists, **marker}, indent=1) + "\n").encode()))
    return written
