"""Put a built site in place without ever losing the previous one or a file sitegen did not write.

The site is written into a fresh folder beside the output, then swapped in with two
renames. The marker file lists every file sitegen wrote, so a later build knows which
files are its own: it refuses an output folder without a marker, and refuses to replace
one holding files the marker does not list (someone put them there).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sitegen.problems import InputError, Problem

MARKER = ".sitegen-site"


def _marker(out: Path) -> dict | None:
    try:
        data = json.loads((out / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _read_marker(out: Path) -> list[str] | None:
    try:
        data = json.loads((out / MARKER).read_text(encoding="utf-8"))
        files = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return files


def _outside(relative: str) -> bool:
    # sitegen writes only plain relative paths below the output; an absolute path or a
    # ".." part in the marker can only have been put there by hand, and trusting it would
    # let a rebuild delete files outside --out.
    # The same test as PurePosixPath's is_absolute() and parts, without building a path
    # for each of a large site's files.
    return relative.startswith("/") or ".." in relative.split("/")


def _marker_files(out: Path) -> set[str] | None:
    """The files the marker says sitegen wrote, without any that would lie outside ``out``."""
    files = _read_marker(out)
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


def check_output(out: Path) -> set[str]:
    """Refuse an output path that is not a site sitegen built (an empty folder is fine).

    Returns the files present in it, the marker aside.
    """
    if not out.exists() and not out.is_symlink():
        return set()
    if out.is_symlink() or not out.is_dir():
        raise InputError([Problem(str(out), "$", "output exists and is not a folder; choose another --out")])
    if not any(out.iterdir()):
        return set()
    listed = _read_marker(out)
    if listed is None:
        raise InputError([Problem(str(out), "$", f"output folder was not built by sitegen (no readable {MARKER}); choose another --out or empty it")])
    outside = sorted(f for f in listed if _outside(f))
    if outside:
        raise InputError([Problem(str(out / MARKER), "$.files", f"lists {outside[0]!r}, outside the folder, so sitegen did not write it; not a site sitegen built: choose another --out")])
    own = set(listed)
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


def previous_build(out: Path, inputs: str, present: set[str]) -> PreviousBuild | None:
    """The site in ``out`` if it was built from ``inputs`` and still holds every file it wrote.

    ``present`` is what check_output found, which has made sure that no other file is
    there. A file edited in place by hand is not noticed; deleting --out forces a full build.
    """
    marker = _marker(out)
    if marker is None or marker.get("inputs") != inputs or not isinstance(marker.get("runs"), int):
        return None
    files = _marker_files(out)
    if files is None or files != present:
        return None
    return PreviousBuild(marker["runs"], len(files) + 1)


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        if path.is_symlink() or path.stat().st_size != len(data):
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

    def __init__(self, out: Path, *, inputs: str | None = None, runs: int | None = None):
        self.out = out
        out.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
        self.files: list[str] = []
        self.inputs, self.runs = inputs, runs
        # Only a site whose marker lists a file may lend it: check_output has vouched for those.
        self.previous = _marker_files(out) if out.is_dir() else None

    def add(self, relative: str, data: bytes) -> None:
        path = self.tmp / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        old = self.out / relative
        if not (self.previous and relative in self.previous and _same_bytes(old, data) and _linked(old, path)):
            with open(path, "xb") as handle:
                handle.write(data)
        self.files.append(relative)

    def adopt(self, relatives: list[str]) -> None:
        """Count files another process added to this writer's folder."""
        self.files.extend(relatives)

    def abort(self) -> None:
        # The temporary folder and all in it are sitegen's own, created by this build.
        shutil.rmtree(self.tmp, ignore_errors=True)

    def commit(self) -> None:
        marker = {"generator": "sitegen", "files": sorted(self.files)}
        if self.inputs is not None:
            marker.update(inputs=self.inputs, runs=self.runs)
        self.add(MARKER, (json.dumps(marker, indent=1) + "\n").encode())
        for folder in sorted({p.parent for p in self.tmp.rglob("*")}):
            os.chmod(folder, 0o755)
        check_output(self.out)
        if not self.out.exists():
            os.rename(self.tmp, self.out)
            return
        if not any(self.out.iterdir()):
            self.out.rmdir()
            os.rename(self.tmp, self.out)
            return
        old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.previous-", dir=self.out.parent))
        old.rmdir()
        os.rename(self.out, old)
        os.rename(self.tmp, self.out)
        _remove_own(old)


def _linked(old: Path, new: Path) -> bool:
    try:
        os.link(old, new, follow_symlinks=False)
    except OSError:
        return False  # another file system, or links not supported: write it instead
    return True


def _remove_own(folder: Path) -> None:
    """Delete the previous site: only the files its marker lists, then empty folders."""
    own = _marker_files(folder) or set()
    inside = folder.resolve()
    for relative in sorted(own | {MARKER}):
        path = folder / relative
        # resolve() follows any link on the way, so a listed file reached through a
        # linked folder that points elsewhere is left alone.
        if path.is_file() and not path.is_symlink() and inside in path.resolve().parents:
            path.unlink()
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        try:
            sub.rmdir()
        except OSError:
            pass
    try:
        folder.rmdir()
    except OSError:
        pass
