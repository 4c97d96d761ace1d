"""One digest of everything a build's output depends on, so an unchanged build can be skipped.

The inputs are the bytes of every registry file (hidden folders aside, as the loader
skips them), the build options, SOURCE_DATE_EPOCH, sitegen's own code and templates, and
the versions of the libraries that shape the pages. File contents, not times, are hashed:
a checkout or copy that changes times but not bytes still counts as unchanged. A file's
stat stands for its bytes where sitegen.state.filestats says it may (then it is not read).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from sitegen.state.codeversion import add_code
from sitegen.state.filestats import FileStats
from sitegen.core.inputfile import outside, outside_links_allowed, real_root
from sitegen.registry.lockfile import MAX_LOCK_BYTES


def _files(root: Path, registry: str | None = None) -> list[tuple[str, str, bool]]:
    """(path, path relative to root, "/"-separated, whether a linked folder leads to it) of every file and folder,
    hidden folders aside, sorted.

    ``registry``: the real path of ``root``; a linked folder outside it is listed as a file
    (which _add_file marks as outside), not entered, unless --allow-outside-links: a link
    to / would otherwise walk the whole machine, /proc included.
    """
    found, seen, linked = [], set(), set()
    # Through linked folders, as the loader's rglob goes; each real folder once, so a link
    # loop ends.
    for folder, subfolders, names in os.walk(root, followlinks=True):
        relative = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        through = relative in linked
        # Folders count too (path ""), so a second link to a folder changes the inputs.
        found.append(("", prefix, through))
        info = os.stat(folder)
        if (info.st_dev, info.st_ino) in seen:
            subfolders[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        subfolders[:] = sorted(s for s in subfolders if not s.startswith("."))
        links = {s for s in subfolders if os.path.islink(os.path.join(folder, s))}
        linked.update(prefix + s for s in (subfolders if through else links))
        if registry is not None and not outside_links_allowed():
            away = [s for s in subfolders if s in links and not _inside(os.path.realpath(os.path.join(folder, s)), registry)]
            subfolders[:] = [s for s in subfolders if s not in away]
            names = [*names, *away]
        found.extend((os.path.join(folder, name), prefix + name, through) for name in sorted(names))
    return found


@dataclass(frozen=True)
class Inputs:
    digest: str
    """sha256 over the registry's files (each by its sha256), the options, the build date setting and sitegen itself."""
    sitegen: str
    """sha256 over the options, the build date setting and sitegen itself: the same for every registry."""
    files: dict[str, str]
    """Each registry file (relative, "/"-separated) → sha256 of its bytes, or what it is if not a regular file."""


def build_inputs(records: Path, *, stats: FileStats | None = None, **options) -> Inputs:
    """Everything a build's output depends on, as one digest and file by file (sitegen.site.engine.reuse).

    ``stats``: the files known by their stat (sitegen.state.filestats), which are not read; it
    learns the others. None reads every file (``build --full``)."""
    digest = hashlib.sha256()
    add_code(digest)
    digest.update(repr(sorted(options.items())).encode())
    digest.update(f"SOURCE_DATE_EPOCH={os.environ.get('SOURCE_DATE_EPOCH')}".encode())
    sitegen = digest.hexdigest()
    files = {}
    registry = real_root(records)
    for path, relative, through_link in _files(records, registry):
        info = known = None
        if stats is not None and path and not through_link:
            info, known = stats.lookup(path, relative)
        if known is not None:
            digest.update(f"\0{relative}\0{info.st_size}\0{known}\0".encode())
            files[relative] = known
        else:
            files[relative] = _add_file(digest, path, relative, registry, stats if info is not None else None)
    if stats is not None:
        stats.save()
    return Inputs("sha256:" + digest.hexdigest(), sitegen, files)


def _inside(real: str, registry: str) -> bool:
    return real == registry or real.startswith(registry.rstrip(os.sep) + os.sep)


# The largest bound of any input (digests.lock's): a bigger file is refused when read, so
# its bytes past the bound cannot change a good build. Bounded because /proc/self/pagemap
# is a "regular file" of 2**48 bytes.
_MAX_READ = MAX_LOCK_BYTES


def _add_file(digest, path: str, relative: str, registry: str, stats: FileStats | None = None) -> str:
    """A regular file's sha256, read in chunks; for anything else only what it is. Adds that to ``digest`` and returns it.

    ``path`` "" is a folder.

    A FIFO, a device, an unreadable file or a link out of the registry is never read here
    (a FIFO would hang the build, /dev/zero never end): the build that follows, as the
    inputs differ from any good build's, refuses it in one line (sitegen.core.inputfile.read_regular).

    ``digest`` takes each file's own sha256, not its bytes again: hashing every byte
    twice, through a buffered file object, was half of fingerprinting a 60,000-run
    registry, a second of a one-run edit's build.
    """
    if not path:
        digest.update(f"\0{relative}\0folder\0".encode())
        return "folder"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        digest.update(f"\0{relative}\0unreadable {exc.errno}\0".encode())
        return f"unreadable {exc.errno}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            digest.update(f"\0{relative}\0mode {stat.S_IFMT(info.st_mode)}\0".encode())
            return f"mode {stat.S_IFMT(info.st_mode)}"
        away = outside(fd, path, registry)
        if away is not None:
            digest.update(f"\0{relative}\0outside {away}\0".encode())
            return f"outside {away}"
        own, total = hashlib.sha256(), 0
        while total <= _MAX_READ and (chunk := os.read(fd, 1 << 20)):
            own.update(chunk)
            total += len(chunk)
        if total > _MAX_READ:
            digest.update(f"\0{relative}\0over {_MAX_READ}\0".encode())
            return f"over {_MAX_READ}"
    finally:
        os.close(fd)
    found = own.hexdigest()
    if stats is not None:
        stats.learn(relative, info, found)
    digest.update(f"\0{relative}\0{info.st_size}\0{found}\0".encode())
    return found
