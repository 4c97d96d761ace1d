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
from pathlib import Path

from sitegen.problems import InputError, Problem

MARKER = ".sitegen-site"


def _marker_files(out: Path) -> set[str] | None:
    try:
        data = json.loads((out / MARKER).read_text(encoding="utf-8"))
        return set(data["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_output(out: Path) -> None:
    """Refuse an output path that is not a site sitegen built (an empty folder is fine)."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise InputError([Problem(str(out), "$", "output exists and is not a folder; choose another --out")])
    if not any(out.iterdir()):
        return
    own = _marker_files(out)
    if own is None:
        raise InputError([Problem(str(out), "$", f"output folder was not built by sitegen (no readable {MARKER}); choose another --out or empty it")])
    present = {p.relative_to(out).as_posix() for p in out.rglob("*") if not p.is_dir()} - {MARKER}
    foreign = sorted(present - own)
    if foreign:
        raise InputError([Problem(str(out / foreign[0]), "$", f"not written by sitegen ({len(foreign)} such file(s)); move them out of {out} and build again")])


class SiteWriter:
    """Collects files in a temporary folder; ``commit`` swaps it in, ``abort`` removes it."""

    def __init__(self, out: Path):
        self.out = out
        out.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
        self.files: list[str] = []

    def add(self, relative: str, data: bytes) -> None:
        path = self.tmp / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb") as handle:
            handle.write(data)
        self.files.append(relative)

    def abort(self) -> None:
        # The temporary folder and all in it are sitegen's own, created by this build.
        shutil.rmtree(self.tmp, ignore_errors=True)

    def commit(self) -> None:
        marker = {"generator": "sitegen", "files": sorted(self.files)}
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


def _remove_own(folder: Path) -> None:
    """Delete the previous site: only the files its marker lists, then empty folders."""
    own = _marker_files(folder) or set()
    for relative in sorted(own | {MARKER}):
        path = folder / relative
        if path.is_file() and not path.is_symlink():
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
